/*
 * test_steps.c -- lil_step and the lil_call_* calls: memoization across
 * close and reopen (the function is not called again and the bytes come
 * back identical, binary and empty ones included, with a NUL after them),
 * occurrence numbering, replay in journal order and out of it, failures
 * journaled and replayed, step name rules,
 * JSON results (canonical bytes, syntax errors with a position), identity
 * and idempotency keys, and the max_record limit.
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "t.h"

static const unsigned char BIN[] = {0x00, 0x01, 0xff, 0x00, 'a', 0x80, 0x00};

/* The NUL the library promises after every result. */
static int nul_after(const lil_bytes *b)
{
    return b->data != NULL && ((const char *)b->data)[b->len] == '\0';
}

T_TEST(memoized_across_reopen_binary_empty_text)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx bin = {.result = BIN, .result_len = sizeof(BIN)};
    struct fn_ctx empty = {0};
    struct fn_ctx text = {.result = "hello", .result_len = 5};
    lil_bytes o1 = {0}, o2 = {0}, o3 = {0};
    T_OK(lil_step(run, "bin", fn_generic, &bin, &o1));
    T_OK(lil_step(run, "empty", fn_generic, &empty, &o2));
    T_OK(lil_step(run, "text", fn_generic, &text, &o3));
    T_EQ_I64(bin.calls + empty.calls + text.calls, 3);
    T_EQ_MEM(o1.data, o1.len, BIN, sizeof(BIN));
    T_EQ_I64(o2.len, 0);
    T_EQ_MEM(o3.data, o3.len, "hello", 5);
    T_CHECK(nul_after(&o1) && nul_after(&o2) && nul_after(&o3));
    lil_free(o1.data);
    lil_free(o2.data);
    lil_free(o3.data);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    T_OK(lil_step(run, "bin", fn_never, &never, &o1));
    T_OK(lil_step(run, "empty", fn_never, &never, &o2));
    T_OK(lil_step(run, "text", fn_never, &never, &o3));
    T_EQ_I64(never, 0);
    T_EQ_MEM(o1.data, o1.len, BIN, sizeof(BIN));
    T_EQ_I64(o2.len, 0);
    T_EQ_MEM(o3.data, o3.len, "hello", 5);
    T_CHECK(nul_after(&o1) && nul_after(&o2) && nul_after(&o3));
    lil_free(o1.data);
    lil_free(o2.data);
    lil_free(o3.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(memoized_large_result)
{
    size_t n = 1u << 20;
    unsigned char *big = malloc(n);
    T_REQUIRE(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (unsigned char)(i * 2654435761u >> 13);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {.result = big, .result_len = n};
    lil_bytes out = {0};
    T_OK(lil_step(run, "big", fn_generic, &c, &out));
    T_EQ_MEM(out.data, out.len, big, n);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    T_OK(lil_step(run, "big", fn_never, &never, &out));
    T_EQ_I64(never, 0);
    T_EQ_MEM(out.data, out.len, big, n);
    T_CHECK(nul_after(&out));
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(big);
}

T_TEST(occurrence_numbering)
{
    static const char *want_id[] = {"fetch", "fetch#2", "fetch#3"};
    static const char *res[] = {"r1", "r2", "r3"};
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    for (int i = 0; i < 3; i++) {
        struct fn_ctx c = {.result = res[i], .result_len = 2};
        struct fn_ctx o = {.result = "o", .result_len = 1};
        T_OK(lil_step(run, "fetch", fn_generic, &c, NULL));
        T_EQ_I64(c.calls, 1);
        T_EQ_STR(c.identity, want_id[i]);
        if (i == 0) {
            T_OK(lil_step(run, "other", fn_generic, &o, NULL));
            T_EQ_STR(o.identity, "other");
        }
    }
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    for (int i = 0; i < 3; i++) {
        lil_bytes out = {0};
        T_OK(lil_step(run, "fetch", fn_never, &never, &out));
        T_EQ_MEM(out.data, out.len, res[i], 2);
        lil_free(out.data);
    }
    T_EQ_I64(never, 0);
    struct fn_ctx c4 = {.result = "r4", .result_len = 2};
    T_OK(lil_step(run, "fetch", fn_generic, &c4, NULL));
    T_EQ_I64(c4.calls, 1);
    T_EQ_STR(c4.identity, "fetch#4");
    T_EQ_I64(c4.attempt, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Replay follows the journal while calls come in its order and builds the
 * index at the first call that does not: both must give the same answers. */
struct replay_want {
    const char *name;
    const char *result; /* NULL: the step failed with "boom" */
};

static void replay_all(lil_run *run, const struct replay_want *w, int n)
{
    int never = 0;
    for (int i = 0; i < n; i++) {
        lil_bytes out = {0};
        lil_status rc = lil_step(run, w[i].name, fn_never, &never, &out);
        if (w[i].result) {
            T_OK(rc);
            T_EQ_MEM(out.data, out.len, w[i].result, strlen(w[i].result));
        } else {
            T_EQ_I64(rc, LIL_E_FAILED);
            T_CONTAINS(lil_run_errmsg(run), "boom");
        }
        lil_free(out.data);
    }
    T_EQ_I64(never, 0);
}

static void new_step(lil_run *run, const char *name, const char *want_identity)
{
    struct fn_ctx c = {.result = name, .result_len = strlen(name)};
    T_OK(lil_step(run, name, fn_generic, &c, NULL));
    T_EQ_I64(c.calls, 1);
    T_EQ_STR(c.identity, want_identity);
}

T_TEST(replay_in_journal_order_and_out_of_it)
{
    static const struct replay_want first[] = {{"a", "a"}, {"b", "b"},  {"a", "a"},
                                               {"c", "c"}, {"d", NULL}, {"e", "e"}};
    static const struct replay_want in_order[] = {{"a", "a"}, {"b", "b"},  {"a", "a"},
                                                  {"c", "c"}, {"d", NULL}, {"e", "e"},
                                                  {"f", "f"}};
    static const struct replay_want shuffled[] = {{"c", "c"}, {"a", "a"}, {"f", "f"},
                                                  {"b", "b"}, {"a", "a"}, {"e", "e"},
                                                  {"e", "e"}, {"d", NULL}};
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    for (int i = 0; i < 6; i++) {
        struct fn_ctx c = {.result = first[i].name,
                           .result_len = 1,
                           .fail_msg = first[i].result ? NULL : "boom"};
        lil_status rc = lil_step(run, first[i].name, fn_generic, &c, NULL);
        T_EQ_I64(rc, first[i].result ? LIL_OK : LIL_E_FAILED);
    }
    T_OK(lil_run_close(run));

    run = u_run(st, "r"); /* in order, then a new step at the end */
    T_REQUIRE(run);
    replay_all(run, first, 6);
    new_step(run, "f", "f");
    T_OK(lil_run_close(run));

    run = u_run(st, "r"); /* in order again, then a name seen before */
    T_REQUIRE(run);
    replay_all(run, in_order, 7);
    new_step(run, "e", "e#2");
    T_OK(lil_run_close(run));

    run = u_run(st, "r"); /* out of order from the first call */
    T_REQUIRE(run);
    replay_all(run, shuffled, 8);
    new_step(run, "c", "c#2");
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static int fn_replace(lil_call *call, void *ud)
{
    (void)ud;
    if (lil_call_set_result(call, "x", 1) != LIL_OK)
        return 1;
    return lil_call_set_result(call, "yy", 2) != LIL_OK;
}

T_TEST(set_result_replaces)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    lil_bytes out = {0};
    T_OK(lil_step(run, "s", fn_replace, NULL, &out));
    T_EQ_MEM(out.data, out.len, "yy", 2);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(failed_step_journaled_and_replayed)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {.fail_msg = "boom 7"};
    lil_bytes out = {(void *)"garbage", 99};
    T_EQ_I64(lil_step(run, "f", fn_generic, &c, &out), LIL_E_FAILED);
    T_EQ_I64(c.calls, 1);
    T_CHECK(out.data == NULL && out.len == 0);
    T_CONTAINS(lil_run_errmsg(run), "step 'f' failed: boom 7");
    T_CONTAINS(lil_errmsg(), "step 'f' failed: boom 7");
    struct fn_ctx g = {.ret = 3};
    T_EQ_I64(lil_step(run, "g", fn_generic, &g, NULL), LIL_E_FAILED);
    T_CONTAINS(lil_run_errmsg(run), "step 'g' failed");
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    out = (lil_bytes){(void *)"garbage", 99};
    T_EQ_I64(lil_step(run, "f", fn_never, &never, &out), LIL_E_FAILED);
    T_EQ_I64(never, 0);
    T_CHECK(out.data == NULL && out.len == 0);
    T_CONTAINS(lil_run_errmsg(run), "step 'f' failed: boom 7");
    T_CONTAINS(lil_errmsg(), "step 'f' failed: boom 7");
    T_EQ_I64(lil_step(run, "g", fn_never, &never, NULL), LIL_E_FAILED);
    T_EQ_I64(never, 0);
    /* the run goes on after a failed step */
    T_OK(u_step_text(run, "h", "ok"));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(step_name_rules)
{
    char ctl[] = "a\x01";
    char nl[] = "a\nb";
    char del[] = "\x7f";
    char tab[] = "x\ty";
    const char *bad[] = {"", "#", "a#b", "fetch#2", ctl, nl, del, tab};
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    lil_run_info before = {.struct_size = sizeof(before)};
    T_OK(lil_run_get_info(run, &before));
    int never = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        T_EQ_I64(lil_step(run, bad[i], fn_never, &never, NULL), LIL_E_INVAL);
        T_EQ_I64(lil_effect(run, bad[i], "q", 1, fn_never, &never, NULL), LIL_E_INVAL);
    }
    T_EQ_I64(lil_step(run, NULL, fn_never, &never, NULL), LIL_E_INVAL);
    lil_status rc = lil_step(run, u_repeat('n', 201), fn_never, &never, NULL);
    T_CHECK(rc == LIL_E_INVAL || rc == LIL_E_TOOBIG);
    T_EQ_I64(never, 0);
    lil_run_info after = {.struct_size = sizeof(after)};
    T_OK(lil_run_get_info(run, &after));
    T_EQ_I64(after.records, before.records); /* nothing journaled */

    struct fn_ctx c = {0};
    T_OK(lil_step(run, u_repeat('n', 200), fn_generic, &c, NULL));
    T_EQ_STR(c.identity, u_repeat('n', 200));
    T_OK(lil_step(run, "\xc3\xa9tape \xe6\xad\xa5", fn_generic, &c, NULL));
    T_OK(lil_step(run, "with space.and-punct!", fn_generic, &c, NULL));
    T_EQ_I64(c.calls, 3);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(out_may_be_null)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {.result = "v", .result_len = 1};
    T_OK(lil_step(run, "s", fn_generic, &c, NULL));
    T_EQ_I64(c.calls, 1);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    T_OK(lil_step(run, "s", fn_never, &never, NULL));
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(set_json_canonical)
{
    const char *a = "{ \"b\" : 1 ,\n \"a\" : [ 1, 2, { \"d\": null, \"c\": true } ],"
                    " \"s\": \"x y\" }";
    const char *b = "{\"s\":\"x y\",\"a\":[1,2,{\"c\":true,\"d\":null}],\"b\":1}";
    const char *want = "{\"a\":[1,2,{\"c\":true,\"d\":null}],\"b\":1,\"s\":\"x y\"}";
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx ca = {.json = a}, cb = {.json = b};
    lil_bytes oa = {0}, ob = {0};
    T_OK(lil_step(run, "ja", fn_generic, &ca, &oa));
    T_OK(lil_step(run, "jb", fn_generic, &cb, &ob));
    T_EQ_I64(ca.set_rc, LIL_OK);
    T_EQ_I64(cb.set_rc, LIL_OK);
    T_EQ_MEM(oa.data, oa.len, want, strlen(want));
    T_EQ_MEM(ob.data, ob.len, want, strlen(want));
    T_CHECK(nul_after(&oa));
    lil_free(oa.data);
    lil_free(ob.data);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    T_OK(lil_step(run, "ja", fn_never, &never, &oa));
    T_EQ_STR((const char *)oa.data, want);
    T_EQ_I64(never, 0);
    lil_free(oa.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

struct json_err {
    const char *text;
    lil_status rc;
    char msg[512];
};

static int fn_bad_json(lil_call *call, void *ud)
{
    struct json_err *e = ud;
    e->rc = lil_call_set_json(call, e->text);
    snprintf(e->msg, sizeof(e->msg), "%s", lil_errmsg());
    return 0;
}

T_TEST(set_json_rejects_invalid_with_position)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct json_err e = {.text = "{\n  \"a\": 1,\n  \"b\" 2\n}"};
    T_OK(lil_step(run, "j", fn_bad_json, &e, NULL));
    T_EQ_I64(e.rc, LIL_E_INVAL);
    T_CONTAINS(e.msg, "line 3");
    T_CONTAINS(e.msg, "column");
    const char *bad[] = {"", "[1,]", "{\"a\":}", "nul", "{\"a\":1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct json_err f = {.text = bad[i]};
        char name[16];
        snprintf(name, sizeof(name), "bad%zu", i);
        T_OK(lil_step(run, name, fn_bad_json, &f, NULL));
        T_EQ_I64(f.rc, LIL_E_INVAL);
        T_CONTAINS(f.msg, "line");
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static int fn_jsonf(lil_call *call, void *ud)
{
    lil_status *rc = ud;
    rc[0] =
        lil_call_set_jsonf(call, "{s:s, s:i, s:[i,b]}", "z", "last", "a", 3, "m", 1, 1);
    return rc[0] != LIL_OK;
}

static int fn_jsonf_bad(lil_call *call, void *ud)
{
    lil_status *rc = ud;
    rc[0] = lil_call_set_jsonf(call, "{s:i", "a", 1);
    return 0;
}

T_TEST(set_jsonf_builds_canonical)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    lil_status rc[1] = {99};
    lil_bytes out = {0};
    T_OK(lil_step(run, "jf", fn_jsonf, rc, &out));
    T_EQ_I64(rc[0], LIL_OK);
    const char *want = "{\"a\":3,\"m\":[1,true],\"z\":\"last\"}";
    T_EQ_MEM(out.data, out.len, want, strlen(want));
    lil_free(out.data);
    rc[0] = 99;
    T_OK(lil_step(run, "bad", fn_jsonf_bad, rc, NULL));
    T_CHECK(rc[0] != LIL_OK && rc[0] != 99);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Child: run step "pay" and die inside it after writing its key. */
static int child_dies_in_step(void *ud)
{
    (void)ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    if (lil_run_open(st, "r", NULL, &run) != LIL_OK)
        return 11;
    struct fn_ctx c = {.key_file = "child.key", .die = 1};
    lil_step(run, "pay", fn_generic, &c, NULL);
    return 12; /* not reached */
}

T_TEST(idempotency_key_stable_across_crash)
{
    pid_t pid = u_fork(child_dies_in_step, NULL);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 0);
    size_t klen = 0;
    unsigned char *child_key = u_read_file("child.key", &klen);
    T_REQUIRE(child_key);
    T_CHECK(u_is_idem_key((const char *)child_key));

    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {.result = "paid", .result_len = 4};
    T_OK(lil_step(run, "pay", fn_generic, &c, NULL));
    T_EQ_I64(c.calls, 1); /* the step never completed: it runs */
    T_EQ_STR(c.identity, "pay");
    T_EQ_STR(c.key, (const char *)child_key);
    struct fn_ctx c2 = {0};
    T_OK(lil_step(run, "pay", fn_generic, &c2, NULL));
    T_EQ_STR(c2.identity, "pay#2");
    T_CHECK(u_is_idem_key(c2.key));
    T_CHECK(strcmp(c2.key, c.key) != 0);
    T_OK(lil_run_close(run));

    run = u_run(st, "other");
    T_REQUIRE(run);
    struct fn_ctx c3 = {0};
    T_OK(lil_step(run, "pay", fn_generic, &c3, NULL));
    T_CHECK(u_is_idem_key(c3.key));
    T_CHECK(strcmp(c3.key, c.key) != 0); /* the run id is part of it */
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(child_key);
}

T_TEST(max_record_toobig)
{
    static unsigned char big[8192];
    memset(big, 'b', sizeof(big));
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, 0, 4096);
    T_REQUIRE(run);
    struct fn_ctx c = {.result = big, .result_len = sizeof(big)};
    lil_bytes out = {0};
    lil_step(run, "big", fn_generic, &c, &out);
    T_EQ_I64(c.set_rc, LIL_E_TOOBIG);
    lil_free(out.data);
    struct fn_ctx s = {.result = big, .result_len = 100};
    T_OK(lil_step(run, "small", fn_generic, &s, &out));
    T_EQ_I64(s.set_rc, LIL_OK);
    T_EQ_MEM(out.data, out.len, big, 100);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(call_context_values)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c = {0};
    T_OK(lil_step(run, "ctx", fn_generic, &c, NULL));
    T_EQ_STR(c.identity, "ctx");
    T_CHECK(u_is_idem_key(c.key));
    T_EQ_I64(c.attempt, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(longest_name_occurrences)
{
    char name[201], id2[210];
    snprintf(name, sizeof(name), "%s", u_repeat('L', 200));
    snprintf(id2, sizeof(id2), "%s#2", name);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct fn_ctx c1 = {.result = "1", .result_len = 1};
    struct fn_ctx c2 = {.result = "2", .result_len = 1};
    T_OK(lil_step(run, name, fn_generic, &c1, NULL));
    T_OK(lil_step(run, name, fn_generic, &c2, NULL));
    T_EQ_STR(c2.identity, id2);
    T_OK(lil_run_close(run));
    run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_step(run, name, fn_never, &never, NULL));
    T_OK(lil_step(run, name, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "2", 1);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_MAIN()
