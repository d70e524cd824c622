/*
 * artifact.c -- safety rules of `artifacts.include/exclude` patterns and
 * `notify.channels` names (artifact.h; docs/loopspec.md, "Validation",
 * unsafe-artifact-include, unsafe-artifact-exclude, unsafe-notify-channel).
 *
 * The rules are the reference validator's, checked in its order (rule 1
 * on the whole pattern, then rule 2 on every part, then 3, 4, 5); the first
 * one broken is reported.  `why` starts with the reference's message
 * ("must not traverse outside the artifact root") and names the rule in
 * parentheses ("('..' path part)"), so a validator can print
 * "artifacts.include[0] '../x' <why>.".
 *
 *  1. A repository-relative POSIX glob: no backslash; does not start with
 *     '/', '~' or a drive letter "X:" (any ASCII letter then ':').
 *  2. No path part (split on '/') is ".." or ".".
 *  3. No control character (bytes 0x01-0x1f and 0x7f; a C string holds no
 *     NUL).
 *  4. Include only, case-insensitive (the reference's
 *     /(^|\/)(?:\.env|\.git(?:\/|$)|node_modules(?:\/|$)|
 *       [^/]*(?:secret|credential|private[-_]?key)[^/]*$)/i):
 *     - a path part that is ".env" or starts with ".env" (".env",
 *       ".env.local", ".env*" after any directory glob, as in the V38
 *       example, "config/.env.example", ".envrc" are all refused: the
 *       reference's regex has no end anchor after \.env);
 *     - a path part that is exactly ".git" (".git/", "a/.git", not
 *       ".github/" nor ".gitignore");
 *     - a path part that is exactly "node_modules";
 *     - a last path part containing "secret", "credential", "privatekey",
 *       "private-key" or "private_key".
 *  5. Include only, case-insensitive: ".htm", ".html", ".svg", ".xml" or
 *     ".xhtml" followed by the end, '?' or '*' -- anywhere, as in the
 *     reference (so "x.html*" followed by "/b" is refused too).
 */
#include "loopspec/values/artifact.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define CHANNEL_MAX 64

#define MSG_RELATIVE "must be a repository-relative POSIX glob"
#define MSG_TRAVERSE "must not traverse outside the artifact root"
#define MSG_CONTROL  "must not contain control characters"
#define MSG_SECRET   "must not allowlist secret or dependency paths"
#define MSG_ACTIVE   "must not allow active-content formats"

static bool say(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write the reason; always returns false (the pattern is unsafe). */
static bool say(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;

    if (!why || why_len == 0)
        return false;
    va_start(ap, fmt);
    (void)vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return false;
}

static bool is_letter(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Rule 1. */
static bool check_relative(const char *p, char *why, size_t why_len)
{
    if (strchr(p, '\\'))
        return say(why, why_len, MSG_RELATIVE " (contains a backslash)");
    if (p[0] == '/')
        return say(why, why_len, MSG_RELATIVE " (starts with '/')");
    if (p[0] == '~')
        return say(why, why_len, MSG_RELATIVE " (starts with '~')");
    if (is_letter(p[0]) && p[1] == ':')
        return say(why, why_len, MSG_RELATIVE " (starts with the drive letter '%c:')",
                   p[0]);
    return true;
}

/* Does the part [s, s+len) equal word, ignoring case? */
static bool part_is(const char *s, size_t len, const char *word)
{
    return len == strlen(word) && strncasecmp(s, word, len) == 0;
}

/* Does the part [s, s+len) contain word, ignoring case? */
static bool part_has(const char *s, size_t len, const char *word)
{
    size_t wl = strlen(word);

    for (size_t i = 0; i + wl <= len; i++)
        if (strncasecmp(s + i, word, wl) == 0)
            return true;
    return false;
}

/* Rule 2. */
static bool check_part_traversal(const char *s, size_t len, char *why, size_t why_len)
{
    if (part_is(s, len, ".."))
        return say(why, why_len, MSG_TRAVERSE " ('..' path part)");
    if (part_is(s, len, "."))
        return say(why, why_len, MSG_TRAVERSE " ('.' path part)");
    return true;
}

/* Rule 4 on one part; last: is it the last part? */
static bool check_part_secret(const char *s, size_t len, bool last, char *why,
                              size_t why_len)
{
    static const char *const words[] = {"secret", "credential", "privatekey",
                                        "private-key", "private_key"};

    if (len >= 4 && strncasecmp(s, ".env", 4) == 0)
        return say(why, why_len, MSG_SECRET " (allowlists .env files)");
    if (part_is(s, len, ".git"))
        return say(why, why_len, MSG_SECRET " (allowlists .git/)");
    if (part_is(s, len, "node_modules"))
        return say(why, why_len, MSG_SECRET " (allowlists node_modules/)");
    for (size_t i = 0; last && i < sizeof(words) / sizeof(words[0]); i++)
        if (part_has(s, len, words[i]))
            return say(why, why_len, MSG_SECRET " (last path part names a %s)",
                       words[i]);
    return true;
}

/* Rule 2 (secrets false) or rule 4 (secrets true), part by part. */
static bool check_parts(const char *p, bool secrets, char *why, size_t why_len)
{
    const char *s = p;

    for (;;) {
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t)(slash - s) : strlen(s);
        bool ok = secrets ? check_part_secret(s, len, slash == NULL, why, why_len)
                          : check_part_traversal(s, len, why, why_len);
        if (!ok)
            return false;
        if (!slash)
            return true;
        s = slash + 1;
    }
}

/* Rule 3. */
static bool check_control(const char *p, char *why, size_t why_len)
{
    for (const unsigned char *u = (const unsigned char *)p; *u; u++)
        if (*u < 0x20 || *u == 0x7f)
            return say(why, why_len, MSG_CONTROL " (byte 0x%02x)", *u);
    return true;
}

/* Rule 5. */
static bool check_active(const char *p, char *why, size_t why_len)
{
    static const char *const exts[] = {"xhtml", "html", "htm", "svg", "xml"};

    for (const char *dot = strchr(p, '.'); dot; dot = strchr(dot + 1, '.')) {
        for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
            size_t n = strlen(exts[i]);
            char after;
            if (strncasecmp(dot + 1, exts[i], n) != 0)
                continue;
            after = dot[1 + n];
            if (after == '\0' || after == '?' || after == '*')
                return say(why, why_len, MSG_ACTIVE " (.%.*s)", (int)n, dot + 1);
        }
    }
    return true;
}

bool lil__artifact_pattern_safe(const char *pattern, bool include, char *why,
                                size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    if (!pattern)
        return say(why, why_len, "no pattern");
    return check_relative(pattern, why, why_len) &&
           check_parts(pattern, false, why, why_len) &&
           check_control(pattern, why, why_len) &&
           (!include || check_parts(pattern, true, why, why_len)) &&
           (!include || check_active(pattern, why, why_len));
}

static bool is_alnum(char c)
{
    return is_letter(c) || (c >= '0' && c <= '9');
}

bool lil__notify_channel_safe(const char *channel)
{
    size_t n = 0;

    if (!channel || !is_alnum(channel[0]))
        return false;
    for (n = 1; channel[n]; n++)
        if (n >= CHANNEL_MAX || (!is_alnum(channel[n]) && channel[n] != '.' &&
                                 channel[n] != '_' && channel[n] != '-'))
            return false;
    return true;
}
