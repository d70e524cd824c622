/*
 * test_json_write.c -- lil's JSON printer (src/json/write.c) against
 * jansson's: for generated values (nested objects and arrays, keys and
 * strings with every kind of byte -- control characters, quotes,
 * backslashes, NUL, multi-byte UTF-8 --, integers at the limits, reals),
 * lil__json_dump with the journal's flags (compact, and the canonical
 * compact + sorted keys + any value) prints exactly the bytes jansson's
 * json_dumpb prints.  Also: what cannot be printed (invalid UTF-8 in a
 * string or a key, a scalar at the top without JSON_ENCODE_ANY) is
 * LIL_E_INVAL with out unchanged (jansson prints a key that is not UTF-8
 * as broken text; lil refuses it); a value nested past the printer's depth
 * and a container inside itself go to jansson (printed, or refused); a
 * print past the buffer's cap is LIL_E_TOOBIG with out unchanged.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/env.h"
#include "json/json.h"
#include "t.h"

#define VALUES 20000

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    uint64_t x = rng_state; /* xorshift64* */

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static size_t below(size_t n)
{
    return (size_t)(next() % n);
}

/* Text of n units, each a byte or sequence from a mix meant to find every
 * escape: control characters, '"', '\\', '/', NUL, DEL, 2-, 3- and 4-byte
 * UTF-8, and plain letters. */
static size_t gen_text(char *out, size_t cap) /* cap: the caller's buffer */
{
    static const char *const units[] = {
        "a",
        "Z",
        "0",
        " ",
        "\"",
        "\\",
        "/",
        "\b",
        "\f",
        "\n",
        "\r",
        "\t",
        "\x01",
        "\x1f",
        "\x7f",
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xef\xbf\xbf",
        "\xed\x9f\xbf",
        "{",
        "}",
    };
    size_t n = below(12), len = 0;

    for (size_t i = 0; i < n; i++) {
        const char *u;
        size_t ul;

        if (below(16) == 0) { /* NUL inside the text */
            if (len + 1 > cap)
                break;
            out[len++] = '\0';
            continue;
        }
        u = units[below(sizeof(units) / sizeof(units[0]))];
        ul = strlen(u);
        if (len + ul > cap)
            break;
        memcpy(out + len, u, ul);
        len += ul;
    }
    return len;
}

static json_t *gen_scalar(void)
{
    static const json_int_t ints[] = {0,
                                      1,
                                      -1,
                                      9,
                                      10,
                                      -10,
                                      123456789,
                                      INT64_MAX,
                                      INT64_MIN,
                                      INT64_MIN + 1,
                                      1000000000000000000};
    static const double reals[] = {0.0,    -0.0, 0.1,        1.0,     -2.5,    1e300,
                                   1e-300, 1e17, 123456.789, DBL_MAX, DBL_MIN, 100.0};
    char text[256];

    switch (below(7)) {
    case 0:
        return json_null();
    case 1:
        return json_boolean(below(2));
    case 2:
        return json_integer(ints[below(sizeof(ints) / sizeof(ints[0]))]);
    case 3:
        return json_integer((json_int_t)next());
    case 4:
        return json_real(reals[below(sizeof(reals) / sizeof(reals[0]))]);
    case 5:
        return json_real(ldexp((double)(next() >> 11), (int)below(200) - 100));
    default:
        return json_stringn(text, gen_text(text, sizeof(text)));
    }
}

static json_t *gen_value(int depth)
{
    json_t *v;
    size_t n;

    if (depth >= 5 || below(3) == 0)
        return gen_scalar();
    n = below(6);
    if (below(2)) {
        v = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(v, gen_value(depth + 1));
        return v;
    }
    v = json_object();
    for (size_t i = 0; i < n; i++) {
        char key[96];
        size_t len = gen_text(key, sizeof(key));

        json_object_setn_new(v, key, len, gen_value(depth + 1));
    }
    return v;
}

/* lil's bytes equal jansson's for v with flags; both must print. */
static int same_as_jansson(const struct lil_env *env, const json_t *v, size_t flags)
{
    struct lil_buf out;
    struct lil_err err;
    size_t need = json_dumpb(v, NULL, 0, flags);
    char *want = malloc(need + 1);
    int ok;

    lil__buf_init(&out, env, SIZE_MAX);
    ok = want && need > 0 && json_dumpb(v, want, need, flags) == need &&
         lil__json_dump(env, &err, v, flags, &out) == LIL_OK && out.len == need &&
         memcmp(out.data, want, need) == 0 && out.data[out.len] == '\0';
    if (!ok)
        fprintf(stderr, "jansson: %.*s\nlil:     %.*s\n", (int)need, want ? want : "",
                (int)out.len, out.data ? (const char *)out.data : "");
    free(want);
    lil__buf_free(&out);
    return ok;
}

T_TEST(generated_values_print_as_jansson_prints_them)
{
    lil_env *env;
    int bad = 0;

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    for (int i = 0; i < VALUES && bad < 5; i++) {
        json_t *v = gen_value(0);

        T_REQUIRE(v != NULL);
        if (!same_as_jansson(env, v, JSON_COMPACT | JSON_ENCODE_ANY) ||
            !same_as_jansson(env, v, LIL_JSON_CANON_DUMP))
            bad++;
        if ((json_is_object(v) || json_is_array(v)) &&
            !same_as_jansson(env, v, JSON_COMPACT))
            bad++;
        json_decref(v);
    }
    T_EQ_I64(bad, 0);
    lil_env_free(env);
}

T_TEST(many_keys_sorted_beyond_the_stack_array)
{
    lil_env *env;
    json_t *o = json_object();

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    for (int i = 0; i < 300; i++) {
        char key[16];

        snprintf(key, sizeof(key), "k%d", (i * 7919) % 1000);
        json_object_set_new(o, key, json_integer(i));
    }
    json_object_setn_new(o, "k1\0x", 4, json_true()); /* a key with a NUL */
    json_object_setn_new(o, "k1", 2, json_false());
    T_CHECK(same_as_jansson(env, o, LIL_JSON_CANON_DUMP));
    T_CHECK(same_as_jansson(env, o, JSON_COMPACT));
    json_decref(o);
    lil_env_free(env);
}

/* What cannot be printed is refused, and out keeps what it held; jansson
 * refuses it too (but for a key that is not UTF-8: jansson prints `{":`
 * and goes on, text that is not JSON). */
static void refused(const struct lil_env *env, const json_t *v, size_t flags,
                    int jansson_refuses)
{
    struct lil_buf out;
    struct lil_err err;

    lil__buf_init(&out, env, SIZE_MAX);
    T_REQUIRE(lil__buf_addstr(&out, "kept") == LIL_OK);
    T_EQ_I64(lil__json_dump(env, &err, v, flags, &out), LIL_E_INVAL);
    T_EQ_STR((const char *)out.data, "kept");
    if (jansson_refuses)
        T_EQ_I64(json_dumpb(v, NULL, 0, flags), 0);
    lil__buf_free(&out);
}

T_TEST(what_cannot_be_printed_is_refused)
{
    lil_env *env;
    json_t *bad_text = json_stringn_nocheck("ok\xff", 3);
    json_t *bad_key = json_object();
    json_t *in_array = json_pack("[i, O]", 1, bad_text);
    json_t *scalar = json_integer(5);

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    json_object_set_new_nocheck(bad_key, "k\xc3", json_null());
    refused(env, bad_text, JSON_COMPACT | JSON_ENCODE_ANY, 1);
    refused(env, bad_key, LIL_JSON_CANON_DUMP, 0);
    refused(env, bad_key, JSON_COMPACT, 0);
    refused(env, in_array, JSON_COMPACT, 1);
    refused(env, scalar, JSON_COMPACT, 1); /* a scalar needs JSON_ENCODE_ANY */
    json_decref(bad_text);
    json_decref(bad_key);
    json_decref(in_array);
    json_decref(scalar);
    lil_env_free(env);
}

T_TEST(deep_values_and_loops_go_to_jansson)
{
    lil_env *env;
    json_t *deep = json_array(), *inner = deep, *loop = json_array(),
           *back = json_array();

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    for (int i = 0; i < 2000; i++) { /* deeper than write.c goes */
        json_t *a = json_array();

        json_array_append_new(inner, a);
        inner = a;
    }
    json_array_append_new(inner, json_string("bottom"));
    T_CHECK(same_as_jansson(env, deep, JSON_COMPACT));
    json_array_append(loop, back); /* a container inside itself: loop [back [loop]] */
    json_array_append(back, loop);
    refused(env, loop, JSON_COMPACT, 1);
    json_array_clear(back);
    json_decref(back);
    json_decref(loop);
    json_decref(deep);
    lil_env_free(env);
}

T_TEST(past_the_cap_is_toobig_and_out_is_unchanged)
{
    lil_env *env;
    struct lil_buf out;
    struct lil_err err;
    json_t *v = json_pack("{s:s, s:[i,i,i]}", "text", "0123456789abcdef", "n", 1, 2, 3);

    T_REQUIRE(lil_env_new(&env) == LIL_OK);
    for (size_t cap = 4; cap < 48; cap++) {
        lil_status rc;

        lil__buf_init(&out, env, cap);
        T_REQUIRE(lil__buf_addstr(&out, "abc") == LIL_OK);
        rc = lil__json_dump(env, &err, v, JSON_COMPACT, &out);
        if (cap >= 3 + 39) {
            T_EQ_I64(rc, LIL_OK);
        } else {
            T_EQ_I64(rc, LIL_E_TOOBIG);
            T_EQ_STR((const char *)out.data, "abc");
        }
        lil__buf_free(&out);
    }
    json_decref(v);
    lil_env_free(env);
}

T_MAIN()
