/*
 * fuzz_jsonpath.c -- libFuzzer target: the JSONPath subset of `save`
 * (src/lang/jsonpath.h).
 *
 * Input: a JSON text, then a NUL or newline, then a path (up to the next
 * NUL).  The JSON is loaded with jansson (its parser stops at depth 2048);
 * when it does not parse, or as well, the path runs against a fixed source
 * (the one of docs/loopspec.md, "JSONPath in `save`"), so every input exercises the
 * path code.  Checked on every result, with __builtin_trap() on violation:
 *
 *   - the result is NULL (undefined) or a non-null value json_dumps prints;
 *   - the same call again gives an equal result;
 *   - a path P not starting with '$' reads the same as "$" P;
 *   - when lil__jsonpath_supported says false and P has no '*' and no
 *     whitespace (the two "reads a literal key" reasons), the result is
 *     undefined; its reason is never empty then, and always NUL-terminated;
 *   - a string result's "<P>.length" is an integer between 0 and the
 *     string's byte length.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "lang/jsonpath.h"

#define PATH_MAX_LEN 4096 /* longer paths are cut (no new behaviour beyond) */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char FIXED_SOURCE[] =
    "{\"a\":{\"b\":[10,[20,21],{\"c\":\"x\"}],\"d.e\":1,\"n\":null,\"z\":0,\"f\":false,"
    "\"s\":\"h\\u00e9\\ud83d\\ude00\"},\"arr\":[1,2],\"length\":{\"*\":[\"\"]}}";

static void fail(const char *what, const char *path)
{
    fprintf(stderr, "FUZZ FAILURE: %s (path '%s')\n", what, path);
    __builtin_trap();
}

/* The result is undefined or printable, and stable. */
static void check_result(json_t *src, const char *path, json_t *r)
{
    json_t *again;
    char *text;

    if (!r)
        return;
    if (json_is_null(r))
        fail("JSON null returned (must be undefined)", path);
    text = json_dumps(r, JSON_ENCODE_ANY);
    if (!text)
        fail("result json_dumps cannot print", path);
    lil__json_free(text);
    again = lil__jsonpath_get(src, path);
    if (!again || !json_equal(r, again))
        fail("a second call differs", path);
    json_decref(again);
}

/* "$" + path reads the same as path, when path has no '$' in front. */
static void check_dollar(json_t *src, const char *path, json_t *r)
{
    size_t n = strlen(path);
    char *with = NULL;
    json_t *r2;

    if (path[0] == '$')
        return;
    with = malloc(n + 2);
    if (!with)
        return;
    with[0] = '$';
    memcpy(with + 1, path, n + 1);
    r2 = lil__jsonpath_get(src, with);
    if ((r == NULL) != (r2 == NULL) || (r && !json_equal(r, r2)))
        fail("'$' + path differs from path", path);
    json_decref(r2);
    free(with);
}

/* supported() == false means undefined, unless a literal-key reason. */
static void check_supported(const char *path, const json_t *r)
{
    char why[200], small[5];
    bool ok = lil__jsonpath_supported(path, why, sizeof(why));

    if (strnlen(why, sizeof(why)) == sizeof(why))
        fail("reason not terminated", path);
    if (lil__jsonpath_supported(path, small, sizeof(small)) != ok ||
        lil__jsonpath_supported(path, NULL, 0) != ok)
        fail("supported() depends on the reason buffer", path);
    if (strnlen(small, sizeof(small)) == sizeof(small))
        fail("short reason not terminated", path);
    if (ok)
        return;
    if (why[0] == '\0')
        fail("unsupported without a reason", path);
    if (r && !strpbrk(path, "* \t\n\v\f\r"))
        fail("unsupported path has a value", path);
}

/* A string result's length through the path itself. */
static void check_length(json_t *src, const char *path, json_t *r)
{
    size_t n = strlen(path);
    char *with;
    json_t *len;

    if (!json_is_string(r))
        return;
    with = malloc(n + sizeof(".length"));
    if (!with)
        return;
    memcpy(with, path, n);
    memcpy(with + n, ".length", sizeof(".length"));
    len = lil__jsonpath_get(src, with);
    if (!json_is_integer(len) || json_integer_value(len) < 0 ||
        (size_t)json_integer_value(len) > json_string_length(r))
        fail("string result without a sane .length", path);
    json_decref(len);
    free(with);
}

static void run(json_t *src, const char *path)
{
    json_t *r = lil__jsonpath_get(src, path);

    check_result(src, path, r);
    check_dollar(src, path, r);
    check_supported(path, r);
    check_length(src, path, r);
    json_decref(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *fixed;
    size_t cut = 0, plen;
    char *path;
    json_t *src;

    if (!fixed)
        fixed = json_loads(FIXED_SOURCE, 0, NULL);
    while (cut < size && data[cut] != '\0' && data[cut] != '\n')
        cut++;
    plen = cut < size ? strnlen((const char *)data + cut + 1, size - cut - 1) : 0;
    if (plen > PATH_MAX_LEN)
        plen = PATH_MAX_LEN;
    path = malloc(plen + 1);
    if (!path)
        return 0;
    if (plen)
        memcpy(path, data + cut + 1, plen);
    path[plen] = '\0';
    src = json_loadb((const char *)data, cut, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (src)
        run(src, path);
    run(fixed, path);
    json_decref(src);
    free(path);
    return 0;
}
