/*
 * test_jsonpath.c -- the JSONPath subset of `save` (src/lang/jsonpath.h):
 * every case of tests/data/jsonpath/subset.test (the vectors of
 * docs/loopspec.md, "JSONPath in `save`", and edge cases), the reasons
 * lil__jsonpath_supported gives, and reference counting of results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "lang/jsonpath.h"
#include "t.h"

#ifndef T_DATA_DIR
#error "T_DATA_DIR must name tests/data"
#endif

/* The current source and counters of one data file run. */
struct run {
    json_t *source;
    char path[4096];
    bool have_path;
    int cases, failed;
    int lineno;
};

static json_t *load(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);

    if (!j)
        fprintf(stderr, "bad JSON '%s': %s\n", text, err.text);
    return j;
}

static char *dump(json_t *j)
{
    return j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
}

/* A path with no '*' and no whitespace that the subset calls unsupported
 * must read as undefined on every source. */
static bool unsupported_means_undefined(const char *path, json_t *got)
{
    char why[200];

    if (lil__jsonpath_supported(path, why, sizeof(why)))
        return true;
    if (strpbrk(path, "* \t\r\n\v\f"))
        return true;
    return got == NULL;
}

static void check_case(struct run *r, const char *want_text)
{
    json_t *want = strcmp(want_text, "undefined") == 0 ? NULL : load(want_text);
    json_t *got = lil__jsonpath_get(r->source, r->path);
    bool same = want ? got && json_equal(want, got) : got == NULL;

    r->cases++;
    if (!same || !unsupported_means_undefined(r->path, got)) {
        char *g = dump(got);
        fprintf(stderr, "subset.test:%d: path '%s': got %s, want %s\n", r->lineno,
                r->path, g ? g : "undefined", want_text);
        lil__json_free(g);
        r->failed++;
    }
    json_decref(want);
    json_decref(got);
}

static void run_line(struct run *r, char *line)
{
    size_t n = strlen(line);

    if (n && line[n - 1] == '\n')
        line[--n] = '\0';
    if (n == 0 || line[0] == '#')
        return;
    if (strncmp(line, "source:", 7) == 0) {
        json_decref(r->source);
        r->source = load(line + 7);
    } else if (strncmp(line, "path:", 5) == 0) {
        snprintf(r->path, sizeof(r->path), "%s", line[5] == ' ' ? line + 6 : line + 5);
        r->have_path = true;
    } else if (strncmp(line, "result: ", 8) == 0 && r->have_path) {
        check_case(r, line + 8);
        r->have_path = false;
    } else {
        fprintf(stderr, "subset.test:%d: cannot read '%s'\n", r->lineno, line);
        r->failed++;
    }
}

T_TEST(data_file_vectors)
{
    FILE *f = fopen(T_DATA_DIR "/jsonpath/subset.test", "r");
    struct run r = {0};
    char *line = NULL;
    size_t cap = 0;

    T_REQUIRE(f != NULL);
    while (getline(&line, &cap, f) > 0) {
        r.lineno++;
        run_line(&r, line);
    }
    free(line);
    fclose(f);
    json_decref(r.source);
    T_EQ_I64(r.failed, 0);
    T_CHECK(r.cases >= 110);
    T_CHECK(!r.have_path);
}

/* supported(path) and its reason. */
static void expect_supported(const char *path, bool want, const char *want_why)
{
    char why[200] = "garbage";
    bool got = lil__jsonpath_supported(path, why, sizeof(why));

    if (got != want || strcmp(why, want_why) != 0) {
        fprintf(stderr, "supported('%s') = %d '%s', want %d '%s'\n", path, got, why,
                want, want_why);
        T_CHECK(0);
    }
}

T_TEST(supported_plain_paths)
{
    expect_supported("$", true, "");
    expect_supported("", true, "");
    expect_supported("$.", true, "");
    expect_supported("$.a.b[0]", true, "");
    expect_supported("$.a.b.2", true, "");
    expect_supported("a.b", true, "");
    expect_supported("$a", true, "");
    expect_supported("$[0]", true, "");
    expect_supported("$.a.b[02].c", true, "");
    expect_supported("$.a b", true, ""); /* a key with an inner space is a real key */
    expect_supported("$.a.", true, "");
}

T_TEST(supported_recursive_descent_note)
{
    const char *note = "'..' is not recursive descent: empty segments are skipped, so "
                       "'$..c' reads '$.c'";

    expect_supported("$..c", true, note);
    expect_supported("a..b", true, note);
}

T_TEST(unsupported_forms_say_why)
{
    expect_supported("$.a[*]", false,
                     "'[*]' is not supported: only one [n] index per segment");
    expect_supported("$[*].x", false,
                     "'[*]' is not supported: only one [n] index per segment");
    expect_supported("$.a[?(@.x)]", false, "filters '[?(...)]' are not supported");
    expect_supported("$['a']", false,
                     "quoted keys like ['a'] are not supported: use .a");
    expect_supported("$.a[\"b\"]", false,
                     "quoted keys like ['a'] are not supported: use .a");
    expect_supported("$.a.b[-1]", false,
                     "negative indices like [-1] are not supported");
    expect_supported("$.a.b[1][0]", false,
                     "only one [n] index per segment: 'b[1][0]' is always undefined");
    expect_supported("$.a.b[ 0 ]", false,
                     "spaces inside [] are not supported in 'b[ 0 ]'");
    expect_supported("$.a[1", false,
                     "segment 'a[1' is not KEY or KEY[n] (n a whole number)");
    expect_supported("$.a[x]", false,
                     "segment 'a[x]' is not KEY or KEY[n] (n a whole number)");
    expect_supported("$.a.*", false,
                     "wildcards are not supported: '*' reads a key with a '*' in it");
    expect_supported("$.a*b[0]", false,
                     "wildcards are not supported: 'a*b' reads a key with a '*' in it");
    expect_supported("$ .a", false,
                     "key ' ' has leading or trailing spaces (a space in the path?)");
    expect_supported("$.a .b", false,
                     "key 'a ' has leading or trailing spaces (a space in the path?)");
    expect_supported(NULL, false, "no path");
}

T_TEST(supported_without_a_buffer)
{
    T_CHECK(!lil__jsonpath_supported("$[*]", NULL, 0));
    T_CHECK(lil__jsonpath_supported("$.a", NULL, 0));
}

T_TEST(supported_reason_is_truncated_safely)
{
    char why[8];

    T_CHECK(!lil__jsonpath_supported("$.a[*]", why, sizeof(why)));
    T_EQ_STR(why, "'[*]' i");
}

T_TEST(results_are_new_references)
{
    json_t *src = load("{\"a\":{\"b\":[1,{\"c\":2}]}}");
    json_t *b = json_object_get(json_object_get(src, "a"), "b");
    json_t *r;

    T_REQUIRE(src != NULL);
    r = lil__jsonpath_get(src, "$.a.b");
    T_CHECK(r == b); /* the node itself, not a copy */
    T_EQ_I64(r->refcount, 2);
    json_decref(r);
    T_EQ_I64(b->refcount, 1);
    r = lil__jsonpath_get(src, "$");
    T_CHECK(r == src);
    T_EQ_I64(src->refcount, 2);
    json_decref(r);
    T_EQ_I64(src->refcount, 1);
    json_decref(src);
}

T_TEST(null_arguments_are_undefined)
{
    json_t *src = load("{\"a\":1}");

    T_CHECK(lil__jsonpath_get(NULL, "$") == NULL);
    T_CHECK(lil__jsonpath_get(src, NULL) == NULL);
    json_decref(src);
}

T_TEST(long_paths_and_deep_sources)
{
    char path[3 * 2000 + 2] = "$";
    json_t *deep = json_integer(42), *r;

    for (int i = 0; i < 2000; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "k", deep);
        deep = o;
        strcat(path, ".k");
    }
    r = lil__jsonpath_get(deep, path);
    T_CHECK(json_is_integer(r) && json_integer_value(r) == 42);
    json_decref(r);
    strcat(path, ".k");
    T_CHECK(lil__jsonpath_get(deep, path) == NULL);
    json_decref(deep);
}

T_MAIN()
