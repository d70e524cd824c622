/*
 * test_handles.c -- every handle type has its own magic: each handle
 * (env, store, run, spec, the call a step function receives, and a worker
 * where the store keeps a queue: PostgreSQL) passed to every call of every
 * other type is refused (LIL_E_INVAL, NULL, 0 or a no-op, as lil.h
 * documents for a bad handle), and is unharmed afterwards.
 */
#include <lil/lil.h>
#include <string.h>

#include "api_util.h"
#include "t.h"

static const char spec_text[] =
    "loopspec: \"0.1\"\n"
    "id: t\n"
    "pattern: react\n"
    "state: { vars: { done: { type: boolean, init: false } } }\n"
    "body:\n"
    "  - { id: w, kind: agent, harness: claude-code, prompt: do, on_done: { set: { done: true } } }\n"
    "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
    "caps: { max_iterations: 5, budget: { tokens: 1000, usd: 1, wallclock: 1h } }\n";

static int id_fn(void *ud, const char *id)
{
    (void)id;
    ++*(int *)ud;
    return 0;
}

static int rec_fn(void *ud, const lil_record *rec)
{
    (void)rec;
    ++*(int *)ud;
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

static int never(lil_call *call, void *ud)
{
    (void)call;
    ++*(int *)ud;
    return 0;
}

/* h is not an env. */
static void refused_as_env(void *h)
{
    lil_env *env = h;
    lil_store *st = (lil_store *)&st;
    lil_spec *spec = (lil_spec *)&spec;

    T_EQ_I64(lil_env_set_allocator(env, m_fn, r_fn, f_fn, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_env_set_log(env, log_fn, NULL, LIL_LOG_DEBUG), LIL_E_INVAL);
    T_EQ_I64(lil_store_open(env, U_STORE, &st), LIL_E_INVAL);
    T_CHECK(st == NULL);
    T_EQ_I64(lil_spec_parse(env, "h.yaml", spec_text, strlen(spec_text), NULL, &spec),
             LIL_E_INVAL);
    T_CHECK(spec == NULL);
    lil_env_free(env); /* a no-op */
}

/* h is not a store. */
static void refused_as_store(void *h)
{
    lil_store *st = h;
    lil_run *run = (lil_run *)&run;
    lil_worker *w = (lil_worker *)&w;
    lil_check_report rep = {sizeof(rep)};
    int n = 0;

    T_CHECK(lil_store_path(st) == NULL);
    T_CHECK(lil_store_errmsg(st) != NULL);
    T_EQ_I64(lil_store_set_key(st, "k", 1), LIL_E_INVAL);
    T_EQ_I64(lil_store_foreach_run(st, id_fn, &n), LIL_E_INVAL);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_INVAL);
    T_CHECK(run == NULL);
    T_EQ_I64(lil_marker(st, "m", LIL_MARKER_RETRY, never, &n, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_marker_reset(st, "m"), LIL_E_INVAL);
    T_EQ_I64(lil_run_check(st, "r", 0, &rep), LIL_E_INVAL);
    T_EQ_I64(lil_loop_submit(st, NULL, NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_worker_new(st, NULL, &w), LIL_E_INVAL);
    T_CHECK(w == NULL);
    T_EQ_I64(n, 0);
    lil_store_close(st); /* a no-op */
}

/* h is not a worker. */
static void refused_as_worker(void *h)
{
    lil_worker *w = h;
    lil_worker_result r;

    T_EQ_I64(lil_worker_next(w, &r), LIL_E_INVAL);
    T_CHECK(lil_worker_errmsg(w) != NULL);
    lil_worker_drain(w); /* no-ops */
    lil_worker_free(w);
}

/* h is not a run. */
static void refused_as_run(void *h)
{
    lil_run *run = h;
    lil_run_info info = {sizeof(info)};
    lil_bytes out = {0};
    int n = 0;

    T_CHECK(lil_run_id(run) == NULL);
    T_CHECK(lil_run_errmsg(run) != NULL);
    T_EQ_I64(lil_run_errno(run), 0);
    T_EQ_I64(lil_run_sync(run), LIL_E_INVAL);
    T_EQ_I64(lil_step(run, "s", never, &n, &out), LIL_E_INVAL);
    T_EQ_I64(lil_effect(run, "e", "q", 1, never, &n, &out), LIL_E_INVAL);
    T_EQ_I64((int64_t)lil_run_uncertain_count(run), 0);
    T_CHECK(lil_run_uncertain_at(run, 0) == NULL);
    T_EQ_I64(lil_run_resolve(run, "e", LIL_RESOLVE_RETRY, NULL, 0, "a", "r"),
             LIL_E_INVAL);
    T_EQ_I64(lil_run_complete(run, "x", 1), LIL_E_INVAL);
    T_EQ_I64(lil_run_fail(run, "x"), LIL_E_INVAL);
    T_EQ_I64(lil_run_result(run, &out), LIL_E_INVAL);
    T_EQ_I64(lil_run_foreach(run, rec_fn, &n), LIL_E_INVAL);
    T_EQ_I64(lil_run_get_info(run, &info), LIL_E_INVAL);
    T_EQ_I64(lil_loop_facts(run, &out), LIL_E_INVAL);
    T_EQ_I64(lil_run_close(run), LIL_E_INVAL);
    T_EQ_I64(n, 0);
    T_CHECK(out.data == NULL);
}

/* h is not a spec. */
static void refused_as_spec(void *h)
{
    lil_spec *spec = h;
    lil_bytes out = {0};

    T_EQ_I64(lil_spec_ok(spec), 0);
    T_EQ_I64((int64_t)lil_spec_diag_count(spec), 0);
    T_CHECK(lil_spec_diag(spec, 0) == NULL);
    T_EQ_I64(lil_spec_json(spec, &out), LIL_E_INVAL);
    T_EQ_I64(lil_spec_explain(spec, &out), LIL_E_INVAL);
    T_EQ_I64(lil_spec_explain_at(spec, 0, &out), LIL_E_INVAL);
    T_CHECK(out.data == NULL);
    lil_spec_free(spec); /* a no-op */
}

/* h is not a call. */
static void refused_as_call(void *h)
{
    lil_call *call = h;

    T_EQ_I64(lil_call_set_result(call, "x", 1), LIL_E_INVAL);
    T_EQ_I64(lil_call_set_json(call, "{}"), LIL_E_INVAL);
    T_EQ_I64(lil_call_set_jsonf(call, "%d", 1), LIL_E_INVAL);
    T_EQ_I64(lil_call_fail(call, "%s", "x"), LIL_E_INVAL);
    T_CHECK(lil_call_identity(call) == NULL);
    T_CHECK(lil_call_idempotency_key(call) == NULL);
    T_EQ_I64(lil_call_attempt(call), 0);
}

struct world {
    lil_env *env;
    lil_store *st;
    lil_run *run;
    lil_spec *spec;
    lil_worker *w; /* a PostgreSQL store's; NULL in a file store */
};

/* Inside a step: the call refused as every other type, every other
 * handle refused as a call. */
static int inside_step(lil_call *call, void *ud)
{
    struct world *w = ud;

    refused_as_env(call);
    refused_as_store(call);
    refused_as_run(call);
    refused_as_spec(call);
    refused_as_call(w->env);
    refused_as_call(w->st);
    refused_as_call(w->run);
    refused_as_call(w->spec);
    refused_as_worker(call);
    if (w->w)
        refused_as_call(w->w);
    T_EQ_I64(lil_call_set_result(call, "ok", 2), LIL_OK); /* unharmed */
    return 0;
}

T_TEST(every_handle_refused_by_every_other_type)
{
    struct world w = {0};
    lil_bytes out = {0};
    int n = 0;

    T_OK(lil_env_new(&w.env));
    T_OK(lil_store_open(w.env, U_STORE, &w.st));
    T_OK(lil_run_open(w.st, "r", NULL, &w.run));
    T_OK(lil_spec_parse(w.env, "h.yaml", spec_text, strlen(spec_text), NULL, &w.spec));
    T_CHECK(lil_spec_ok(w.spec) == 1);

    refused_as_env(w.st);
    refused_as_env(w.run);
    refused_as_env(w.spec);
    refused_as_store(w.env);
    refused_as_store(w.run);
    refused_as_store(w.spec);
    refused_as_run(w.env);
    refused_as_run(w.st);
    refused_as_run(w.spec);
    refused_as_spec(w.env);
    refused_as_spec(w.st);
    refused_as_spec(w.run);
    refused_as_worker(w.env);
    refused_as_worker(w.st);
    refused_as_worker(w.run);
    refused_as_worker(w.spec);
    if (t_store_pg()) {
        T_OK(lil_worker_new(w.st, NULL, &w.w));
        refused_as_env(w.w);
        refused_as_store(w.w);
        refused_as_run(w.w);
        refused_as_spec(w.w);
    }
    T_OK(lil_step(w.run, "inside", inside_step, &w, &out));
    T_EQ_MEM(out.data, out.len, "ok", 2);
    lil_free(out.data);

    /* every handle still works */
    T_CHECK(lil_spec_ok(w.spec) == 1);
    if (w.w) {
        lil_worker_result r;
        T_EQ_I64(lil_worker_next(w.w, &r), LIL_E_NOTFOUND);
        lil_worker_free(w.w);
    }
    T_OK(lil_run_complete(w.run, "done", 4));
    T_OK(lil_run_close(w.run));
    T_OK(lil_store_foreach_run(w.st, id_fn, &n));
    T_EQ_I64(n, 1);
    lil_spec_free(w.spec);
    lil_store_close(w.st);
    lil_env_free(w.env);
}

T_MAIN()
