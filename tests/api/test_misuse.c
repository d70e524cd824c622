/*
 * test_misuse.c -- every call with NULL or out-of-range arguments returns
 * LIL_E_INVAL (or the value lil.h documents) and never crashes; closing
 * and freeing NULL is harmless; the name and text of every status code,
 * run state and record type; a run opened twice in one process.
 */
#include <lil/lil.h>
#include <string.h>

#include "api_util.h"
#include "t.h"

static int id_fn(void *ud, const char *id)
{
    (void)ud;
    (void)id;
    return 0;
}

static int rec_fn(void *ud, const lil_record *rec)
{
    (void)ud;
    (void)rec;
    return 0;
}

static void log_fn(void *ud, int level, const char *msg)
{
    (void)ud;
    (void)level;
    (void)msg;
}

static void *m_fn(void *ud, size_t n)
{
    (void)ud;
    (void)n;
    return NULL;
}

static void *r_fn(void *ud, void *p, size_t n)
{
    (void)ud;
    (void)p;
    (void)n;
    return NULL;
}

static void f_fn(void *ud, void *p)
{
    (void)ud;
    (void)p;
}

T_TEST(null_env_and_store_calls)
{
    T_EQ_I64(lil_env_new(NULL), LIL_E_INVAL);
    T_EQ_I64(lil_env_set_allocator(NULL, m_fn, r_fn, f_fn, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_env_set_log(NULL, log_fn, NULL, LIL_LOG_INFO), LIL_E_INVAL);
    lil_env *env = NULL;
    T_OK(lil_env_new(&env));
    T_REQUIRE(env);
    T_EQ_I64(lil_env_set_allocator(env, NULL, r_fn, f_fn, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_env_set_allocator(env, m_fn, NULL, f_fn, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_env_set_allocator(env, m_fn, r_fn, NULL, NULL), LIL_E_INVAL);
    lil_env_free(env);
    lil_env_free(NULL);

    T_EQ_I64(lil_store_open(NULL, "st", NULL), LIL_E_INVAL);
    lil_store_close(NULL);
    (void)lil_store_path(NULL);
    (void)lil_store_errmsg(NULL);
    T_EQ_I64(lil_store_foreach_run(NULL, id_fn, NULL), LIL_E_INVAL);
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    T_EQ_I64(lil_store_foreach_run(st, NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_id_check(NULL), LIL_E_INVAL);
    lil_free(NULL);
    lil_store_close(st);
}

T_TEST(null_run_calls)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = (lil_run *)st;
    lil_run_opts o = {.struct_size = sizeof(o)};
    T_EQ_I64(lil_run_open(NULL, "r", NULL, &run), LIL_E_INVAL);
    T_CHECK(run == NULL);
    T_EQ_I64(lil_run_open(st, NULL, NULL, &run), LIL_E_INVAL);
    T_EQ_I64(lil_run_open(st, "r", NULL, NULL), LIL_E_INVAL);
    o.struct_size = 0;
    T_EQ_I64(lil_run_open(st, "r", &o, &run), LIL_E_INVAL);
    o.struct_size = sizeof(o);
    o.sync = (lil_sync)99;
    T_EQ_I64(lil_run_open(st, "r", &o, &run), LIL_E_INVAL);
    T_EQ_I64(lil_run_close(NULL), LIL_OK);
    (void)lil_run_id(NULL);
    (void)lil_run_errmsg(NULL);
    T_EQ_I64(lil_run_errno(NULL), 0);
    T_EQ_I64(lil_run_status(NULL), 0);
    T_EQ_I64(lil_run_sync(NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_uncertain_count(NULL), 0);
    T_CHECK(lil_run_uncertain_at(NULL, 0) == NULL);
    T_EQ_I64(lil_run_complete(NULL, "x", 1), LIL_E_INVAL);
    T_EQ_I64(lil_run_fail(NULL, "x"), LIL_E_INVAL);
    lil_bytes out = {(void *)"garbage", 7};
    T_EQ_I64(lil_run_result(NULL, &out), LIL_E_INVAL);
    T_CHECK(out.data == NULL && out.len == 0);
    T_EQ_I64(lil_run_resolve(NULL, "x", LIL_RESOLVE_RETRY, NULL, 0, "a", "b"),
             LIL_E_INVAL);
    T_EQ_I64(lil_run_foreach(NULL, rec_fn, NULL), LIL_E_INVAL);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_EQ_I64(lil_run_get_info(NULL, &info), LIL_E_INVAL);
    lil_store_close(st);
}

T_TEST(bad_arguments_on_open_run)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    int never = 0;
    T_EQ_I64(lil_step(NULL, "s", fn_never, &never, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_step(run, NULL, fn_never, &never, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_step(run, "s", NULL, NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_effect(NULL, "e", "q", 1, fn_never, &never, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_effect(run, NULL, "q", 1, fn_never, &never, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_effect(run, "e", NULL, 5, fn_never, &never, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_effect(run, "e", "q", 1, NULL, NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_complete(run, NULL, 5), LIL_E_INVAL);
    T_EQ_I64(lil_run_fail(run, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_result(run, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_foreach(run, NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_get_info(run, NULL), LIL_E_INVAL);
    lil_run_info info;
    memset(&info, 0, sizeof(info)); /* struct_size 0 */
    T_EQ_I64(lil_run_get_info(run, &info), LIL_E_INVAL);
    T_CHECK(lil_run_uncertain_at(run, 0) == NULL);
    T_EQ_I64(never, 0);
    /* none of it was journaled, and the run is still usable */
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    struct fn_ctx c = {0};
    T_OK(lil_step(run, "s", fn_generic, &c, NULL));
    T_EQ_STR(c.identity, "s");
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(bad_arguments_marker_and_check)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    int never = 0;
    lil_bytes out = {0};
    T_EQ_I64(lil_marker(NULL, "m", LIL_MARKER_RETRY, fn_never, &never, &out),
             LIL_E_INVAL);
    T_EQ_I64(lil_marker(st, NULL, LIL_MARKER_RETRY, fn_never, &never, &out),
             LIL_E_INVAL);
    T_EQ_I64(lil_marker(st, "m", LIL_MARKER_RETRY, NULL, NULL, &out), LIL_E_INVAL);
    T_EQ_I64(lil_marker(st, "m", 7, fn_never, &never, &out), LIL_E_INVAL);
    T_EQ_I64(lil_marker(st, "m", -1, fn_never, &never, &out), LIL_E_INVAL);
    T_EQ_I64(lil_marker_reset(NULL, "m"), LIL_E_INVAL);
    T_EQ_I64(lil_marker_reset(st, NULL), LIL_E_INVAL);
    T_EQ_I64(never, 0);

    lil_check_report rep;
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    T_EQ_I64(lil_run_check(NULL, "r", 0, &rep), LIL_E_INVAL);
    T_EQ_I64(lil_run_check(st, NULL, 0, &rep), LIL_E_INVAL);
    T_EQ_I64(lil_run_check(st, "a/b", 0, &rep), LIL_E_INVAL);
    T_EQ_I64(lil_run_check(st, "r", 0, NULL), LIL_E_INVAL);
    rep.struct_size = 0;
    T_EQ_I64(lil_run_check(st, "r", 0, &rep), LIL_E_INVAL);
    rep.struct_size = sizeof(rep);
    T_EQ_I64(lil_run_check(st, "missing", 0, &rep), LIL_E_NOTFOUND);
    lil_store_close(st);
}

/* lil_call_* with a NULL call: no crash, and INVAL where a status is due. */
T_TEST(null_call_context)
{
    T_EQ_I64(lil_call_set_result(NULL, "x", 1), LIL_E_INVAL);
    T_EQ_I64(lil_call_set_json(NULL, "{}"), LIL_E_INVAL);
    T_EQ_I64(lil_call_set_jsonf(NULL, "{}"), LIL_E_INVAL);
    T_EQ_I64(lil_call_fail(NULL, "x"), LIL_E_INVAL);
    (void)lil_call_identity(NULL); /* undocumented value: must not crash */
    (void)lil_call_idempotency_key(NULL);
    (void)lil_call_attempt(NULL);
}

struct call_misuse {
    lil_status rc[3];
};

static int fn_call_misuse(lil_call *call, void *ud)
{
    struct call_misuse *m = ud;
    m->rc[0] = lil_call_set_result(call, NULL, 3);
    m->rc[1] = lil_call_set_json(call, NULL);
    m->rc[2] = lil_call_set_jsonf(call, NULL);
    return 0;
}

T_TEST(bad_arguments_inside_step)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    struct call_misuse m;
    lil_bytes out = {0};
    T_OK(lil_step(run, "s", fn_call_misuse, &m, &out));
    T_EQ_I64(m.rc[0], LIL_E_INVAL);
    T_EQ_I64(m.rc[1], LIL_E_INVAL);
    T_EQ_I64(m.rc[2], LIL_E_INVAL);
    T_EQ_I64(out.len, 0);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static const lil_status all_codes[] = {
    LIL_OK,       LIL_E_INVAL,    LIL_E_NOMEM,    LIL_E_IO,     LIL_E_CORRUPT,
    LIL_E_LOCKED, LIL_E_POISONED, LIL_E_TOOBIG,   LIL_E_SPEC,   LIL_E_HTTP,
    LIL_E_CHILD,  LIL_E_PG,       LIL_E_VERSION,  LIL_E_FAILED, LIL_E_UNCERTAIN,
    LIL_E_NONDET, LIL_E_KEY,      LIL_E_NOTFOUND, LIL_E_DONE,
};

static const char *all_names[] = {
    "LIL_OK",        "LIL_E_INVAL",    "LIL_E_NOMEM",     "LIL_E_IO",
    "LIL_E_CORRUPT", "LIL_E_LOCKED",   "LIL_E_POISONED",  "LIL_E_TOOBIG",
    "LIL_E_SPEC",    "LIL_E_HTTP",     "LIL_E_CHILD",     "LIL_E_PG",
    "LIL_E_VERSION", "LIL_E_FAILED",   "LIL_E_UNCERTAIN", "LIL_E_NONDET",
    "LIL_E_KEY",     "LIL_E_NOTFOUND", "LIL_E_DONE",
};

#define NCODES (sizeof(all_codes) / sizeof(all_codes[0]))

T_TEST(status_names_and_texts)
{
    for (size_t i = 0; i < NCODES; i++) {
        const char *name = lil_status_name(all_codes[i]);
        const char *text = lil_strerror(all_codes[i]);
        T_EQ_STR(name, all_names[i]);
        T_CHECK(text != NULL && text[0] != '\0');
        for (size_t j = 0; j < i; j++) {
            T_CHECK(strcmp(lil_strerror(all_codes[j]), text ? text : "") != 0);
            T_CHECK(strcmp(lil_status_name(all_codes[j]), name ? name : "") != 0);
        }
    }
    T_CHECK(lil_strerror((lil_status)-99) != NULL);
    T_CHECK(lil_strerror((lil_status)5) != NULL);
    T_CHECK(lil_status_name((lil_status)-99) != NULL);
    T_CHECK(lil_status_name((lil_status)12345) != NULL);
}

T_TEST(state_and_record_type_names)
{
    T_EQ_STR(lil_run_state_name(LIL_RUN_RUNNING), "running");
    T_EQ_STR(lil_run_state_name(LIL_RUN_COMPLETED), "completed");
    T_EQ_STR(lil_run_state_name(LIL_RUN_FAILED), "failed");
    T_EQ_STR(lil_run_state_name(LIL_RUN_UNCERTAIN), "uncertain");
    T_EQ_STR(lil_run_state_name(LIL_RUN_STOPPED), "stopped");
    T_EQ_STR(lil_run_state_name((lil_run_state)0), "unknown");
    T_EQ_STR(lil_run_state_name((lil_run_state)77), "unknown");
    static const char *types[] = {"begin",  "open",    "step",     "step-failed",
                                  "intent", "resolve", "run-done", "run-failed",
                                  "close",  "request", "fork"};
    for (int t = 1; t <= 11; t++)
        T_EQ_STR(lil_record_type_name(t), types[t - 1]);
    T_EQ_STR(lil_record_type_name(0), "unknown");
    T_EQ_STR(lil_record_type_name(12), "unknown");
    T_EQ_STR(lil_record_type_name(-1), "unknown");
}

T_TEST(run_opened_twice_in_one_process)
{
    lil_store *st = u_store(NULL);
    lil_store *st2 = u_store(NULL);
    T_REQUIRE(st && st2);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    lil_run *again = (lil_run *)st;
    T_EQ_I64(lil_run_open(st, "r", NULL, &again), LIL_E_LOCKED);
    T_CHECK(again == NULL);
    T_EQ_I64(lil_run_open(st2, "r", NULL, &again), LIL_E_LOCKED);
    T_CHECK(again == NULL);
    /* the first handle is unharmed */
    T_OK(u_step_text(run, "a", "A"));
    T_OK(lil_run_close(run));
    T_OK(lil_run_open(st2, "r", NULL, &again));
    T_OK(lil_run_close(again));
    lil_store_close(st);
    lil_store_close(st2);
}

T_MAIN()
