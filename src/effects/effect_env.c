/*
 * effect_env.c -- the scrubbed environment of a child (effect_env.h).
 *
 * Two passes over the source: the first counts the variables kept and
 * their bytes, the second copies them into one block laid out as the
 * pointer array followed by the strings.
 */
#include "effects/effect_env.h"

#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/settings/settings.h"

static const char *const base_names[] = {
    "PATH",  "HOME", "TMPDIR",  "TEMP", "LANG", "LC_ALL",
    "SHELL", "USER", "LOGNAME", "TERM", "TZ",
};

/* lil's own secrets: the settings of kind secret (the journal key, the llm
 * harness's key) and these, which may hold credentials (a PostgreSQL URI
 * with its password, headers with a token). */
static const char *const key_names[] = {"LIL_JOURNAL_KEY", "LOOPY_JOURNAL_KEY",
                                        "LIL_DIR", "LIL_LLM_HEADERS",
                                        "LOOPY_LLM_HEADERS"};

#define NBASE (sizeof(base_names) / sizeof(base_names[0]))
#define NKEYS (sizeof(key_names) / sizeof(key_names[0]))

static bool name_in(const char *name, size_t len, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return true;
    return false;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Does the entry [b, e) allow name?  Patterns count unless exact_only. */
static bool entry_allows(const char *b, const char *e, const char *name, size_t len,
                         bool exact_only)
{
    size_t n;

    while (b < e && blank(*b))
        b++;
    n = (size_t)(e - b);
    while (n > 0 && blank(b[n - 1]))
        n--;
    if (n == 0)
        return false;
    if (n == len && memcmp(b, name, len) == 0)
        return true;
    return !exact_only && b[n - 1] == '*' && len >= n - 1 &&
           memcmp(b, name, n - 1) == 0;
}

/* Does the comma-separated list allow name? */
static bool list_allows(const char *list, const char *name, size_t len, bool exact_only)
{
    const char *p = list;

    for (;;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if (entry_allows(p, end, name, len, exact_only))
            return true;
        if (*end == '\0')
            return false;
        p = end + 1;
    }
}

/* Is name (len bytes) one of lil's own secrets? */
static bool lil_secret(const char *name, size_t len)
{
    const struct lil_setting_def *d;
    char buf[64];

    if (name_in(name, len, key_names, NKEYS))
        return true;
    if (len >= sizeof(buf))
        return false;
    memcpy(buf, name, len);
    buf[len] = '\0';
    d = lil__setting_find(buf);
    return d && d->kind == LIL_SETK_SECRET;
}

bool lil__effect_env_keeps(const char *name, size_t len, const char *const *allow,
                           size_t n_allow)
{
    bool key = lil_secret(name, len);

    if (len == 0)
        return false;
    if (!key && (name_in(name, len, base_names, NBASE) ||
                 (len >= 3 && memcmp(name, "LC_", 3) == 0)))
        return true;
    for (size_t i = 0; i < n_allow; i++)
        if (allow[i] && list_allows(allow[i], name, len, key))
            return true;
    return false;
}

/* Length of the name of "NAME=value", or -1 without '='. */
static long name_len(const char *var)
{
    const char *eq = strchr(var, '=');

    return eq ? (long)(eq - var) : -1;
}

/* Is the variable src[i] one the child gets (and its first occurrence)? */
static bool taken(const char *const *src, size_t i, const char *const *allow,
                  size_t n_allow)
{
    long len = name_len(src[i]);

    if (len <= 0 || !lil__effect_env_keeps(src[i], (size_t)len, allow, n_allow))
        return false;
    for (size_t j = 0; j < i; j++)
        if (name_len(src[j]) == len && memcmp(src[j], src[i], (size_t)len) == 0)
            return false;
    return true;
}

lil_status lil__effect_env_build(const struct lil_env *env, struct lil_err *err,
                                 const char *const *src, const char *const *allow,
                                 size_t n_allow, const char ***out)
{
    size_t count = 0, bytes = 0, k = 0;
    const char **vars;
    char *p;

    *out = NULL;
    if (!src)
        src = (const char *const *)environ;
    for (size_t i = 0; src[i]; i++)
        if (taken(src, i, allow, n_allow)) {
            count++;
            bytes += strlen(src[i]) + 1;
        }
    vars = lil__malloc(env, (count + 1) * sizeof(*vars) + bytes);
    if (!vars)
        return lil__seterr(err, LIL_E_NOMEM, 0,
                           "out of memory building a child's "
                           "environment");
    p = (char *)(vars + count + 1);
    for (size_t i = 0; src[i]; i++)
        if (taken(src, i, allow, n_allow)) {
            size_t n = strlen(src[i]) + 1;
            memcpy(p, src[i], n);
            vars[k++] = p;
            p += n;
        }
    vars[k] = NULL;
    *out = vars;
    return LIL_OK;
}

void lil__effect_env_free(const struct lil_env *env, const char **vars)
{
    lil__free(env, vars);
}
