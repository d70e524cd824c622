/*
 * test_json.c -- the jansson wrapper (src/json/): where jansson's memory
 * comes from, what its failures become, and the canonical bytes.
 *
 *  - routing: inside a scope every jansson allocation comes from the bound
 *    env; a block goes back to the allocator that made it whoever frees it
 *    (another env's scope, no scope, another thread); blocks keep
 *    max_align_t alignment; with no env bound jansson still works;
 *  - scopes nest and restore, and report a failed allocation (also one
 *    jansson got past) as LIL_E_NOMEM;
 *  - parse, print, pack: a failed k-th allocation is LIL_E_NOMEM for every
 *    k, never the caller's "bad text" code; bad text is that code with a
 *    line and column; a print past the buffer's cap is LIL_E_TOOBIG;
 *  - canonical bytes for inputs that differ in spacing and key order;
 *  - threads: several threads, each with its own env, build values, hand
 *    some to another thread to release, and every allocator ends with no
 *    block live (the tsan preset runs this too).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/env.h"
#include "json/json.h"
#include "t.h"

/* ---- a counting allocator, one per env ------------------------------------ */

struct counting {
    struct lil_env env;
    long calls;   /* malloc and realloc */
    long fail_at; /* 1-based call that fails; 0: none */
    long failed;
    long live; /* atomic: blocks may be freed by other threads */
    long misaligned;
};

static void *c_malloc(void *ud, size_t n)
{
    struct counting *c = ud;
    void *p;

    if (++c->calls == c->fail_at) {
        c->failed++;
        return NULL;
    }
    p = malloc(n);
    if (p)
        __atomic_add_fetch(&c->live, 1, __ATOMIC_RELAXED);
    return p;
}

static void *c_realloc(void *ud, void *p, size_t n)
{
    struct counting *c = ud;
    void *q;

    if (++c->calls == c->fail_at) {
        c->failed++;
        return NULL;
    }
    q = realloc(p, n);
    if (q && !p)
        __atomic_add_fetch(&c->live, 1, __ATOMIC_RELAXED);
    return q;
}

static void c_free(void *ud, void *p)
{
    struct counting *c = ud;

    if (p)
        __atomic_sub_fetch(&c->live, 1, __ATOMIC_RELAXED);
    free(p);
}

static void counting_init(struct counting *c)
{
    memset(c, 0, sizeof(*c));
    lil__env_init(&c->env);
    c->env.malloc_fn = c_malloc;
    c->env.realloc_fn = c_realloc;
    c->env.free_fn = c_free;
    c->env.alloc_ud = c;
}

static long live(struct counting *c)
{
    return __atomic_load_n(&c->live, __ATOMIC_RELAXED);
}

/* ---- routing ---------------------------------------------------------------- */

T_TEST(allocations_come_from_the_bound_env)
{
    struct counting a;
    struct lil_json_scope sc;
    json_t *o;

    counting_init(&a);
    lil__json_begin(&sc, &a.env);
    o = json_pack("{s:s, s:[i, f]}", "name", "lil", "n", 1, 2.5);
    T_EQ_I64(lil__json_end(&sc), LIL_OK);
    T_REQUIRE(o);
    T_CHECK(a.calls > 3);
    T_CHECK(live(&a) > 3);
    T_EQ_I64((long)((uintptr_t)o % _Alignof(max_align_t)), 0);
    json_decref(o); /* no scope: each block still goes back to a */
    T_EQ_I64(live(&a), 0);
}

T_TEST(a_block_goes_back_to_its_own_allocator)
{
    struct counting a, b;
    struct lil_json_scope sa, sb;
    json_t *arr;

    counting_init(&a);
    counting_init(&b);
    lil__json_begin(&sa, &a.env);
    arr = json_array();
    T_REQUIRE(arr);
    lil__json_begin(&sb, &b.env); /* nested: b wins */
    for (int i = 0; i < 100; i++)
        T_EQ_I64(json_array_append_new(arr, json_integer(i)), 0);
    T_EQ_I64(lil__json_end(&sb), LIL_OK);
    T_CHECK(live(&b) >= 100); /* the integers (and the grown array storage) */
    T_EQ_I64(json_array_append_new(arr, json_string("a's")), 0); /* a again */
    T_EQ_I64(lil__json_end(&sa), LIL_OK);
    lil__json_begin(&sb, &b.env);
    json_decref(arr); /* freed under b's scope: a's blocks still go to a */
    T_EQ_I64(lil__json_end(&sb), LIL_OK);
    T_EQ_I64(live(&a), 0);
    T_EQ_I64(live(&b), 0);
}

T_TEST(no_env_bound_still_works)
{
    json_t *v = json_pack("[s, i]", "x", 1);
    void *p = lil__json_malloc(10);
    struct lil_json_scope sc;
    struct counting a;

    T_REQUIRE(v && p);
    memset(p, 1, 10);
    counting_init(&a);
    lil__json_begin(&sc, &a.env);
    json_decref(v); /* made with no env: back to malloc, not to a */
    lil__json_free(p);
    T_EQ_I64(lil__json_end(&sc), LIL_OK);
    T_EQ_I64(a.calls, 0);
    T_EQ_I64(live(&a), 0);
}

T_TEST(scope_reports_a_failure_jansson_got_past)
{
    struct counting a;
    struct lil_json_scope outer, inner;
    json_t *o;

    counting_init(&a);
    lil__json_begin(&outer, &a.env);
    o = json_object();
    T_REQUIRE(o);
    lil__json_begin(&inner, &a.env);
    a.fail_at = a.calls + 1;
    /* the new value cannot be made; set_new only returns -1 */
    T_EQ_I64(json_object_set_new(o, "k", json_string("v")), -1);
    T_CHECK(lil__json_failed(&inner));
    T_EQ_I64(lil__json_end(&inner), LIL_E_NOMEM);
    T_EQ_I64(lil__json_end(&outer), LIL_E_NOMEM); /* the outer one saw it too */
    lil__json_begin(&outer, &a.env);
    T_CHECK(!lil__json_failed(&outer));
    T_EQ_I64(lil__json_end(&outer), LIL_OK);
    json_decref(o);
    T_EQ_I64(live(&a), 0);
}

/* ---- parse, print, pack under failure ------------------------------------------ */

static const char doc_text[] =
    "{\"id\": \"x\", \"steps\": [{\"a\": 1, \"b\": [true, null, 2.5]}, "
    "{\"s\": \"\\u00e9t\\u00e9 \\ud83d\\ude00\"}], \"z\": {\"deep\": {\"er\": []}}}";

/* Fail allocation k of one parse, for every k: LIL_E_NOMEM whenever one
 * failed, else LIL_OK; nothing left live. */
T_TEST(parse_failure_is_nomem_never_corrupt)
{
    long k;

    for (k = 1; k < 10000; k++) {
        struct counting a;
        struct lil_err err;
        json_t *v = NULL;
        lil_status rc;

        counting_init(&a);
        a.fail_at = k;
        rc = lil__json_parse(&a.env, &err, LIL_E_CORRUPT, doc_text, strlen(doc_text), 0,
                             NULL, &v);
        T_EQ_STR(lil_status_name(rc), a.failed ? "LIL_E_NOMEM" : "LIL_OK");
        T_CHECK(a.failed ? v == NULL : v != NULL);
        json_decref(v);
        T_EQ_I64(live(&a), 0);
        if (!a.failed)
            break;
    }
    T_CHECK(k > 10);
}

/* Bad text under failure: either the failure (LIL_E_NOMEM) or the same
 * syntax error as without one. */
T_TEST(bad_text_is_the_callers_code)
{
    const char *bad = "{\"a\": [1, 2,\n \"b\" x]}";
    struct lil_err want, err;
    json_error_t jerr;
    json_t *v = NULL;
    long k;

    T_EQ_I64(
        lil__json_parse(NULL, &want, LIL_E_CORRUPT, bad, strlen(bad), 0, &jerr, &v),
        LIL_E_CORRUPT);
    T_CHECK(v == NULL);
    T_CONTAINS(want.msg, "invalid JSON at line 2, column");
    T_EQ_I64(jerr.line, 2);
    for (k = 1; k < 1000; k++) {
        struct counting a;
        lil_status rc;

        counting_init(&a);
        a.fail_at = k;
        rc =
            lil__json_parse(&a.env, &err, LIL_E_CORRUPT, bad, strlen(bad), 0, NULL, &v);
        T_CHECK(rc == (a.failed ? LIL_E_NOMEM : LIL_E_CORRUPT));
        if (rc == LIL_E_CORRUPT)
            T_EQ_STR(err.msg, want.msg);
        T_EQ_I64(live(&a), 0);
        if (!a.failed)
            break;
    }
    T_CHECK(k > 3);
}

/* An object of 40 keys under "wide" in v (more keys than the printer
 * sorts without allocating). */
static lil_status add_wide_object(struct counting *a, json_t *v)
{
    struct lil_json_scope sc;
    json_t *wide;

    lil__json_begin(&sc, &a->env);
    wide = json_object();
    for (int i = 0; wide && i < 40; i++) {
        char key[8];

        snprintf(key, sizeof(key), "w%02d", 39 - i);
        json_object_set_new(wide, key, json_integer(i));
    }
    json_object_set_new(v, "wide", wide);
    return lil__json_end(&sc);
}

T_TEST(print_failure_is_nomem_and_keeps_the_buffer)
{
    struct counting a;
    struct lil_err err;
    json_t *v = NULL;
    long k;

    counting_init(&a);
    T_OK(lil__json_parse(&a.env, &err, LIL_E_INVAL, doc_text, strlen(doc_text), 0, NULL,
                         &v));
    T_REQUIRE(add_wide_object(&a, v) == LIL_OK); /* keys sorted off the stack */
    for (k = 1; k < 10000; k++) {
        struct lil_buf b;
        lil_status rc;

        lil__buf_init(&b, &a.env, SIZE_MAX);
        T_OK(lil__buf_add(&b, "pre:", 4));
        a.failed = 0;
        a.fail_at = a.calls + k;
        rc = lil__json_canon(&a.env, &err, v, &b);
        a.fail_at = 0;
        T_EQ_STR(lil_status_name(rc), a.failed ? "LIL_E_NOMEM" : "LIL_OK");
        if (rc != LIL_OK)
            T_EQ_MEM(b.data, b.len, "pre:", 4);
        lil__buf_free(&b);
        if (!a.failed)
            break;
    }
    T_CHECK(k > 2);
    json_decref(v);
    T_EQ_I64(live(&a), 0);
}

T_TEST(print_past_the_cap_is_toobig_scalar_needs_encode_any)
{
    struct lil_env env;
    struct lil_err err;
    struct lil_buf b;
    json_t *v = json_pack("{s:s}", "k", "0123456789");

    T_REQUIRE(v);
    lil__env_init(&env);
    lil__buf_init(&b, &env, 8);
    T_EQ_I64(lil__json_canon(&env, &err, v, &b), LIL_E_TOOBIG);
    T_EQ_I64(b.len, 0);
    T_EQ_I64(lil__json_dump(&env, &err, json_null(), JSON_COMPACT, &b), LIL_E_INVAL);
    T_EQ_I64(lil__json_dump(&env, &err, json_null(), JSON_ENCODE_ANY, &b), LIL_OK);
    T_EQ_STR((const char *)b.data, "null");
    lil__buf_free(&b);
    json_decref(v);
}

T_TEST(pack_failure_is_nomem_bad_format_inval)
{
    long k;
    struct lil_err err;
    struct lil_buf b;
    struct lil_env env;

    lil__env_init(&env);
    lil__buf_init(&b, &env, SIZE_MAX);
    T_EQ_I64(lil__json_canon_pack(&env, &err, &b, "{s:i", "a", 1), LIL_E_INVAL);
    T_CONTAINS(err.msg, "JSON pack format '{s:i'");
    T_EQ_I64(lil__json_canon_pack(&env, &err, &b, "[s]", "\xff"), LIL_E_INVAL);
    T_EQ_I64(b.len, 0);
    lil__buf_free(&b);
    for (k = 1; k < 1000; k++) {
        struct counting a;
        lil_status rc;

        counting_init(&a);
        lil__buf_init(&b, &a.env, SIZE_MAX);
        a.fail_at = k;
        rc = lil__json_canon_pack(&a.env, &err, &b, "{s:s, s:s, s:s}", "action",
                                  "retry", "actor", "me", "reason", "why");
        T_EQ_STR(lil_status_name(rc), a.failed ? "LIL_E_NOMEM" : "LIL_OK");
        if (rc == LIL_OK)
            T_EQ_STR((const char *)b.data,
                     "{\"action\":\"retry\",\"actor\":\"me\",\"reason\":\"why\"}");
        lil__buf_free(&b);
        T_EQ_I64(live(&a), 0);
        if (!a.failed)
            break;
    }
    T_CHECK(k > 3);
}

/* ---- canonical bytes ---------------------------------------------------------- */

static void check_canon(const char *in, const char *want)
{
    struct lil_env env;
    struct lil_err err;
    struct lil_buf b;

    lil__env_init(&env);
    lil__buf_init(&b, &env, SIZE_MAX);
    T_OK(lil__json_canon_text(&env, &err, in, strlen(in), &b));
    T_EQ_STR(b.data ? (const char *)b.data : "", want);
    lil__buf_free(&b);
}

T_TEST(canonical_bytes)
{
    struct lil_env env;
    struct lil_err err;
    struct lil_buf b;

    check_canon(" { \"b\" : [ 1 , 2 ] ,\n\t\"a\" : { \"y\" : null , \"x\" : true } } ",
                "{\"a\":{\"x\":true,\"y\":null},\"b\":[1,2]}");
    check_canon("{\"b\":1,\"a\":2,\"ab\":3,\"B\":4}",
                "{\"B\":4,\"a\":2,\"ab\":3,\"b\":1}");
    check_canon("\"a/b \\u00e9\\u0001\"", "\"a/b \xc3\xa9\\u0001\"");
    check_canon("[0.1, 1.0, 1E+2, -0.0, 12]",
                "[0.10000000000000001,1.0,100.0,-0.0,12]");
    check_canon("7", "7");
    lil__env_init(&env);
    lil__buf_init(&b, &env, SIZE_MAX);
    T_EQ_I64(lil__json_canon_text(&env, &err, "{\"a\":1,\"a\":2}", 13, &b),
             LIL_E_INVAL);
    T_CONTAINS(err.msg, "duplicate");
    T_EQ_I64(lil__json_canon_text(&env, &err, "[1,]", 4, &b), LIL_E_INVAL);
    T_CONTAINS(err.msg, "line 1");
    lil__buf_free(&b);
}

/* ---- threads -------------------------------------------------------------------- */

#define NTHREADS 4
#define ROUNDS   300

struct worker {
    pthread_t th;
    struct counting a;
    json_t *handoff[ROUNDS]; /* values for the next thread to release */
    int ok;
};

static void *work(void *ud)
{
    struct worker *w = ud;
    struct lil_err err;
    struct lil_json_scope sc;

    w->ok = 1;
    for (int i = 0; i < ROUNDS; i++) {
        struct lil_buf b;
        json_t *v = NULL;

        lil__buf_init(&b, &w->a.env, SIZE_MAX);
        if (lil__json_parse(&w->a.env, &err, LIL_E_INVAL, doc_text, strlen(doc_text), 0,
                            NULL, &v) != LIL_OK ||
            lil__json_canon(&w->a.env, &err, v, &b) != LIL_OK)
            w->ok = 0;
        lil__buf_free(&b);
        lil__json_begin(&sc, &w->a.env);
        w->handoff[i] = json_pack("{s:i, s:O}", "i", i, "doc", v);
        if (lil__json_end(&sc) != LIL_OK || !w->handoff[i])
            w->ok = 0;
        json_decref(v);
    }
    return NULL;
}

/* Release, from this thread and inside its own env's scope, the values
 * another thread made: pair[0] is this thread's worker, pair[1] the maker. */
static void *release(void *ud)
{
    struct worker **pair = ud;
    struct lil_json_scope sc;

    lil__json_begin(&sc, &pair[0]->a.env);
    for (int i = 0; i < ROUNDS; i++) {
        json_decref(pair[1]->handoff[i]);
        pair[1]->handoff[i] = NULL;
    }
    if (lil__json_end(&sc) != LIL_OK)
        pair[0]->ok = 0;
    return NULL;
}

T_TEST(threads_each_with_its_env)
{
    static struct worker w[NTHREADS];
    struct worker *pair[NTHREADS][2];
    pthread_t rel[NTHREADS];

    for (int t = 0; t < NTHREADS; t++) {
        counting_init(&w[t].a);
        T_REQUIRE(pthread_create(&w[t].th, NULL, work, &w[t]) == 0);
    }
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(w[t].th, NULL);
        T_CHECK(w[t].ok);
        T_CHECK(live(&w[t].a) >= ROUNDS);
    }
    for (int t = 0; t < NTHREADS; t++) { /* thread t releases t+1's values */
        pair[t][0] = &w[t];
        pair[t][1] = &w[(t + 1) % NTHREADS];
        T_REQUIRE(pthread_create(&rel[t], NULL, release, pair[t]) == 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(rel[t], NULL);
    for (int t = 0; t < NTHREADS; t++) {
        T_CHECK(w[t].ok);
        T_EQ_I64(live(&w[t].a), 0);
    }
}

T_MAIN()
