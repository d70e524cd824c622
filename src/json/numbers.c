/*
 * numbers.c -- numbers read back from a journal, checked against their
 * range before anything adds or multiplies them (json.h).
 */
#include <math.h>

#include "json/json.h"

bool lil__json_int_in(const json_t *o, const char *key, int64_t lo, int64_t hi,
                      int64_t *out)
{
    const json_t *v = json_object_get(o, key);
    json_int_t n;

    *out = 0;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_integer(v))
        return false;
    n = json_integer_value(v);
    if (n < lo || n > hi)
        return false;
    *out = (int64_t)n;
    return true;
}

bool lil__json_num_in(const json_t *o, const char *key, double lo, double hi,
                      double *out)
{
    const json_t *v = json_object_get(o, key);
    double d;

    *out = 0;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v))
        return false;
    d = json_number_value(v);
    if (!isfinite(d) || d < lo || d > hi)
        return false;
    *out = d;
    return true;
}
