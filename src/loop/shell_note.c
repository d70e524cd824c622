/*
 * shell_note.c -- a shell result's exit 127 or 126 in words (shell_note.h).
 */
#include "loop/shell_note.h"

#include <stdio.h>
#include <string.h>

#define NAME_MAX_SHOWN 120 /* bytes of a command's name shown */

/* The start of the line of text (len bytes) holding at, and its end. */
static const char *line_start(const char *text, const char *at)
{
    while (at > text && at[-1] != '\n')
        at--;
    return at;
}

/* NAME of "...: NAME: <suffix>" in stderr, the last line that says so: its
 * bytes in *name, *len.  false when no line does. */
static bool name_in_stderr(const char *err, const char *suffix, const char **name,
                           size_t *len)
{
    const char *hit = NULL, *p = err, *start, *end;
    size_t n = strlen(suffix);

    while ((p = strstr(p, suffix)) != NULL) {
        if (p - err >= 2 && p[-2] == ':' && p[-1] == ' ')
            hit = p;
        p += n;
    }
    if (!hit)
        return false;
    end = hit - 2; /* the ": " before the suffix */
    start = line_start(err, end);
    for (const char *q = start; q + 1 < end; q++)
        if (q[0] == ':' && q[1] == ' ')
            start = q + 2;
    if (end <= start)
        return false;
    *name = start;
    *len = (size_t)(end - start);
    return true;
}

/* The first word of cmd. */
static void first_word(const char *cmd, const char **name, size_t *len)
{
    const char *p = cmd ? cmd : "";

    while (*p == ' ' || *p == '\t')
        p++;
    *name = p;
    *len = strcspn(p, " \t\n;|&()<>");
}

bool lil__shell_note(const json_t *result, const char *cmd, char *buf, size_t cap)
{
    json_t *code = json_object_get(result, "code");
    const char *err = json_string_value(json_object_get(result, "stderr"));
    const char *what, *name = NULL;
    size_t len = 0;
    bool found;

    if (!json_is_integer(code) ||
        (json_integer_value(code) != 127 && json_integer_value(code) != 126))
        return false;
    found = json_integer_value(code) == 127;
    what = found ? "command not found" : "not executable";
    if (!err || !((found && (name_in_stderr(err, "not found", &name, &len) ||
                             name_in_stderr(err, "command not found", &name, &len))) ||
                  (!found && name_in_stderr(err, "Permission denied", &name, &len))))
        first_word(cmd, &name, &len);
    if (len > NAME_MAX_SHOWN)
        len = NAME_MAX_SHOWN;
    if (len == 0)
        snprintf(buf, cap, "%s (exit %d)", what, found ? 127 : 126);
    else
        snprintf(buf, cap, "%s: %.*s", what, (int)len, name);
    return true;
}
