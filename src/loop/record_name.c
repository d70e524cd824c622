/*
 * record_name.c -- decoding the names of a loop run's records (see
 * record_name.h; docs/loops.md, "Records").
 */
#include "loop/record_name.h"

#include <string.h>

/* 1 to 19 decimal digits at s; their value (saturated) into *out. */
static bool digits(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;

    if (n == 0 || n > 19)
        return false;
    for (size_t i = 0; i < n; i++) {
        int d;

        if (s[i] < '0' || s[i] > '9')
            return false;
        d = s[i] - '0';
        v = v > (INT64_MAX - d) / 10 ? INT64_MAX : v * 10 + d;
    }
    *out = v;
    return true;
}

static bool slot(const char *k, size_t n, struct lil_loop_name *out)
{
    const char *dot = memchr(k, '.', n);
    size_t a = dot ? (size_t)(dot - k) : 0;

    if (!dot || !digits(dot + 1, n - a - 1, &out->seq))
        return false;
    if (a == 4 && memcmp(k, "exit", 4) == 0)
        out->iteration = -1;
    else if (!digits(k, a, &out->iteration))
        return false;
    out->kind = LIL_LOOP_NAME_SLOT;
    return true;
}

static bool snap(const char *k, size_t n, struct lil_loop_name *out)
{
    if (n <= 5 || memcmp(k + n - 5, ".snap", 5) != 0 ||
        !digits(k, n - 5, &out->iteration))
        return false;
    out->kind = LIL_LOOP_NAME_SNAP;
    return true;
}

bool lil__loop_name_is_slot(const char *k, size_t n)
{
    struct lil_loop_name nm;

    return k && slot(k, n, &nm);
}

size_t lil__loop_name_control(const char *k, size_t n)
{
    const char *dot = k ? memchr(k, '.', n) : NULL;
    int64_t nth;

    if (!dot || dot == k || !digits(dot + 1, n - (size_t)(dot - k) - 1, &nth))
        return 0;
    for (const char *p = k; p < dot; p++)
        if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
            return 0;
    return (size_t)(dot - k);
}

bool lil__loop_name_parse(const char *k, size_t n, struct lil_loop_name *out)
{
    int64_t nth = 0;
    size_t a;

    memset(out, 0, sizeof(*out));
    if (!k)
        return false;
    if (slot(k, n, out))
        return true;
    memset(out, 0, sizeof(*out));
    if (n == 4 && memcmp(k, "loop", 4) == 0) {
        out->kind = LIL_LOOP_NAME_START;
        return true;
    }
    if (snap(k, n, out))
        return true;
    memset(out, 0, sizeof(*out));
    a = lil__loop_name_control(k, n);
    if (a == 0 || a >= sizeof(out->control))
        return false;
    memcpy(out->control, k, a);
    out->control[a] = '\0';
    (void)digits(k + a + 1, n - a - 1, &nth);
    out->n = (uint64_t)nth;
    out->kind = LIL_LOOP_NAME_CONTROL;
    return true;
}
