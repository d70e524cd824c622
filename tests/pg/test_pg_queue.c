/*
 * test_pg_queue.c -- queued loop runs and workers through lil.h
 * (lil_loop_submit, lil_worker_*, LIL_LOOP_REQUEUE; docs/postgres.md,
 * "Workers"): what each call promises, misuse included.  The processes,
 * signals and server faults are t_workers.py's and t_workers_faults.py's.
 *
 *   - a file store has no queue: submit and a new worker are refused,
 *     naming what to use, and nothing is made;
 *   - submit: the run created queued (its BEGIN only: the worker journals
 *     the start), its id handed back; an invalid spec, options that are
 *     the worker's, bad inputs and an id that exists are refused;
 *   - a worker: nothing runnable (LIL_E_NOTFOUND), a run claimed and run to
 *     its end with the result's fields, several workers on one store in
 *     threads sharing the queue (each run once), draining (LIL_E_DONE);
 *   - LIL_LOOP_REQUEUE: a queued run's approval goes back to the queue,
 *     a run that is not queued runs as without the flag;
 *   - a spec the queue keeps that no longer loads puts the run in state
 *     error, with the reason;
 *   - the registry of workers (one row per process, threads counted, gone
 *     with the last worker), lil_queue_list, and on_claim told of a claim
 *     before the run runs.
 *
 * The server is the suite's (tests/pg, LIL_TEST_PG); each test's store a
 * schema of its own (t_store).
 */
#include <lil/lil.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

static char out[8192];

#define SPEC_HEAD                                 \
    "loopspec: \"0.1\"\n"                         \
    "id: q\n"                                     \
    "pattern: react\n"                            \
    "inputs:\n"                                   \
    "  k: {type: int, default: 1}\n"              \
    "state:\n"                                    \
    "  vars:\n"                                   \
    "    n: {type: int, init: 0}\n"               \
    "body:\n"                                     \
    "  - id: bump\n"                              \
    "    kind: shell\n"                           \
    "    cmd: \"echo ${inputs.k} >> side.txt\"\n" \
    "    on_done:\n"                              \
    "      incr: n\n"

static const char spec_text[] = SPEC_HEAD "terminate:\n"
                                          "  signal: state-predicate\n"
                                          "  until: \"${state.n >= 2}\"\n"
                                          "caps:\n"
                                          "  max_iterations: 5\n";

static const char gate_text[] = SPEC_HEAD "  - id: ask\n"
                                          "    kind: breakpoint\n"
                                          "    when: \"${state.n == 1}\"\n"
                                          "    ask: \"go on?\"\n"
                                          "terminate:\n"
                                          "  signal: state-predicate\n"
                                          "  until: \"${state.n >= 2}\"\n"
                                          "caps:\n"
                                          "  max_iterations: 5\n";

static lil_spec *spec_of(const char *text)
{
    lil_spec *spec = NULL;

    if (lil_spec_parse(NULL, "q.yaml", text, strlen(text), NULL, &spec) != LIL_OK ||
        !lil_spec_ok(spec)) {
        lil_spec_free(spec);
        return NULL;
    }
    return spec;
}

static lil_loop_opts opts_for(const char *run_id)
{
    lil_loop_opts o;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = run_id;
    return o;
}

/* Run sql on the server ('@': the schema of store "st"); its output in out. */
static int sql(const char *q)
{
    int rc = t_store_sql("st", q, out, sizeof(out));

    if (rc != 0)
        fprintf(stderr, "psql: %s\n%s\n", q, out);
    return rc;
}

/* The queue state of run_id ("" when it has none), in out. */
static const char *state_of(const char *run_id)
{
    char q[256];

    snprintf(q, sizeof(q),
             "SELECT coalesce(state, '-') FROM @.runs WHERE run_id = '%s';", run_id);
    if (sql(q) != 0)
        return "?";
    out[strcspn(out, "\n")] = '\0';
    return out;
}

static int lines_of(const char *path)
{
    size_t len = 0;
    unsigned char *b = u_read_file(path, &len);
    int n = 0;

    for (size_t i = 0; b && i < len; i++)
        n += b[i] == '\n';
    free(b);
    return n;
}

T_TEST(a_file_store_has_no_queue)
{
    char dir[512];
    lil_store *st = NULL;
    lil_spec *spec = spec_of(spec_text);
    lil_worker *w = (lil_worker *)&w;
    char *id = (char *)&id;
    lil_bytes b = {NULL, 0};

    T_REQUIRE(spec);
    snprintf(dir, sizeof(dir), "files");
    T_OK(lil_store_open(NULL, dir, &st));
    T_EQ_I64(lil_loop_submit(st, spec, NULL, &id), LIL_E_INVAL);
    T_CHECK(id == NULL);
    T_CONTAINS(lil_store_errmsg(st), "PostgreSQL store");
    T_EQ_I64(lil_worker_new(st, NULL, &w), LIL_E_INVAL);
    T_CHECK(w == NULL);
    T_CONTAINS(lil_errmsg(), "postgresql://");
    T_OK(lil_queue_list(st, &b)); /* no queue: no run queued */
    T_EQ_STR((const char *)b.data, "{\"queue\":false,\"runs\":[]}");
    lil_free(b.data);
    T_EQ_I64(lil_workers_list(st, &b), LIL_E_INVAL);
    T_CHECK(b.data == NULL);
    T_CONTAINS(lil_store_errmsg(st), "no workers");
    T_CONTAINS(lil_store_errmsg(st), "postgresql://");
    lil_store_close(st);
    lil_spec_free(spec);
}

/* on_claim: the claim before the run runs, with the queue saying so. */
struct claim_seen {
    int calls;
    char run_id[LIL_RUN_ID_MAX + 1], state[16], queue_state[64];
    int64_t epoch;
};

static void on_claim(void *ud, const lil_worker_result *claim)
{
    struct claim_seen *c = ud;

    c->calls++;
    snprintf(c->run_id, sizeof(c->run_id), "%s", claim->run_id);
    snprintf(c->state, sizeof(c->state), "%s", claim->state);
    snprintf(c->queue_state, sizeof(c->queue_state), "%s", state_of(claim->run_id));
    c->epoch = claim->epoch;
}

static int count_workers(lil_store *st, char *doc, size_t cap)
{
    lil_bytes b = {NULL, 0};
    int n = -1;

    if (lil_workers_list(st, &b) == LIL_OK) {
        snprintf(doc, cap, "%s", (const char *)b.data);
        n = 0;
        for (const char *p = doc; (p = strstr(p, "\"owner\":")) != NULL; p++)
            n++;
    }
    lil_free(b.data);
    return n;
}

T_TEST(workers_are_registered_and_queued_runs_listed)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(spec_text);
    lil_loop_opts o = opts_for("l1");
    struct claim_seen seen = {0};
    lil_worker_opts wo = {sizeof(wo), "lister", NULL,     NULL, NULL,
                          0,          0,        on_claim, &seen};
    lil_worker_opts old = {
        offsetof(lil_worker_opts, on_claim), "old", NULL, NULL, NULL, 0, 0, NULL, NULL};
    lil_worker *w = NULL, *w2 = NULL, *w3 = NULL;
    lil_worker_result r;
    lil_bytes b = {NULL, 0};
    char doc[4096];

    T_REQUIRE(st && spec);
    T_EQ_I64(count_workers(st, doc, sizeof(doc)), 0);
    T_CONTAINS(doc, "\"workers\":[]");
    T_OK(lil_loop_submit(st, spec, &o, NULL));
    T_OK(lil_queue_list(st, &b));
    T_EQ_STR((const char *)b.data,
             "{\"queue\":true,\"runs\":[{\"run\":\"l1\",\"state\":\"queued\","
             "\"wake_at_ms\":null,\"attempts\":0,\"worker\":null,\"owner\":null,"
             "\"held\":false,\"error\":null}]}");
    lil_free(b.data);
    /* two workers of one process: one row, two threads */
    T_OK(lil_worker_new(st, &wo, &w));
    T_OK(lil_worker_new(st, &wo, &w2));
    T_EQ_I64(count_workers(st, doc, sizeof(doc)), 1);
    T_CONTAINS(doc, "\"name\":\"lister\"");
    T_CONTAINS(doc, "\"threads\":2");
    T_CONTAINS(doc, "\"state\":\"live\"");
    lil_worker_free(w2);
    T_EQ_I64(count_workers(st, doc, sizeof(doc)), 1);
    T_CONTAINS(doc, "\"threads\":1");
    /* the claim is told before the run runs: the queue says running */
    T_OK(lil_worker_next(w, &r));
    T_EQ_I64(seen.calls, 1);
    T_EQ_STR(seen.run_id, "l1");
    T_EQ_STR(seen.state, "claimed");
    T_EQ_STR(seen.queue_state, "running");
    T_EQ_I64(seen.epoch, 1);
    T_EQ_STR(r.state, "completed");
    T_OK(lil_queue_list(st, &b));
    T_CONTAINS((const char *)b.data, "\"state\":\"completed\"");
    T_CONTAINS((const char *)b.data, "\"worker\":\"lister\"");
    T_CONTAINS((const char *)b.data, "\"attempts\":1");
    lil_free(b.data);
    /* a caller built before on_claim: its smaller options are taken */
    T_OK(lil_worker_new(st, &old, &w3));
    lil_worker_free(w3);
    lil_worker_free(w);
    T_EQ_I64(count_workers(st, doc, sizeof(doc)), 0); /* the last one left */
    T_EQ_I64(lil_workers_list(NULL, &b), LIL_E_INVAL);
    T_EQ_I64(lil_workers_list(st, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_queue_list(st, NULL), LIL_E_INVAL);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(submit_queues_a_run_and_refuses_what_it_cannot)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(spec_text), *bad = NULL;
    lil_loop_opts o = opts_for("s1");
    const char *pairs[] = {"k=seven"};
    lil_run *run = NULL;
    lil_run_info info = {.struct_size = sizeof(info)};
    char *id = NULL;

    T_REQUIRE(st && spec);
    T_OK(lil_loop_submit(st, spec, &o, &id));
    T_EQ_STR(id, "s1");
    lil_free(id);
    T_OK(lil_loop_submit(st, spec, NULL, NULL)); /* the spec's id; no id back */
    T_EQ_STR(state_of("q"), "queued");
    T_EQ_STR(state_of("s1"), "queued");
    /* created with its BEGIN only: the start is the worker's */
    run = u_run_opts(st, "s1", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(run);
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64((int64_t)info.records, 1);
    T_OK(lil_run_close(run));
    /* refused */
    T_EQ_I64(lil_loop_submit(st, spec, &o, NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "run s1 exists");
    o = opts_for("s2");
    o.flags = LIL_LOOP_YES;
    T_EQ_I64(lil_loop_submit(st, spec, &o, NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "worker's");
    o = opts_for("s2");
    o.input_pairs = pairs;
    o.n_input_pairs = 1;
    T_EQ_I64(lil_loop_submit(st, spec, &o, NULL), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "seven");
    o = opts_for("s2");
    o.inputs_json = "[1]";
    T_EQ_I64(lil_loop_submit(st, spec, &o, NULL), LIL_E_INVAL);
    o = opts_for("bad/id");
    T_EQ_I64(lil_loop_submit(st, spec, &o, NULL), LIL_E_INVAL);
    T_OK(lil_spec_parse(NULL, "bad.yaml", "id: x\n", 6, NULL, &bad));
    T_EQ_I64(lil_loop_submit(st, bad, NULL, NULL), LIL_E_SPEC);
    T_EQ_I64(lil_loop_submit(NULL, spec, NULL, NULL), LIL_E_INVAL);
    T_EQ_STR(state_of("s2"), "");
    lil_spec_free(bad);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(a_worker_claims_runs_until_none_is_left)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(spec_text);
    lil_loop_opts o = opts_for("w1");
    const char *pairs[] = {"k=7"};
    lil_worker_opts wo = {sizeof(wo), "test-worker", NULL, NULL, NULL, 0,
                          0,          NULL,          NULL};
    lil_worker *w = NULL;
    lil_worker_result r;

    T_REQUIRE(st && spec);
    T_OK(lil_worker_new(st, &wo, &w));
    T_EQ_I64(lil_worker_next(w, &r), LIL_E_NOTFOUND);
    o.input_pairs = pairs;
    o.n_input_pairs = 1;
    T_OK(lil_loop_submit(st, spec, &o, NULL));
    T_OK(lil_worker_next(w, &r));
    T_EQ_STR(r.run_id, "w1");
    T_EQ_STR(r.state, "completed");
    T_EQ_I64(r.status, LIL_LOOP_COMPLETED);
    T_EQ_I64(r.epoch, 1);
    T_EQ_I64(r.attempt, 1);
    T_EQ_I64(r.takeover, 0);
    T_EQ_I64(r.iterations, 2);
    T_EQ_STR(r.message, "");
    T_EQ_I64(lines_of("side.txt"), 2);
    T_EQ_STR(state_of("w1"), "completed");
    T_REQUIRE(sql("SELECT claimed_by FROM @.runs WHERE run_id = 'w1';") == 0);
    T_CONTAINS(out, "test-worker");
    T_EQ_I64(lil_worker_next(w, &r), LIL_E_NOTFOUND);
    lil_worker_drain(w);
    T_EQ_I64(lil_worker_next(w, &r), LIL_E_DONE);
    T_CONTAINS(lil_worker_errmsg(w), "draining");
    lil_worker_free(w);
    lil_worker_free(NULL);
    lil_spec_free(spec);
    lil_store_close(st);
}

struct thread_ctx {
    lil_worker *w;
    int runs;
    lil_status last;
};

static void *work(void *ud)
{
    struct thread_ctx *x = ud;
    lil_worker_result r;

    while ((x->last = lil_worker_next(x->w, &r)) == LIL_OK)
        x->runs += strcmp(r.state, "completed") == 0;
    return NULL;
}

T_TEST(workers_in_threads_share_the_queue)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(spec_text);
    struct thread_ctx x[4];
    pthread_t t[4];
    int total = 0;

    T_REQUIRE(st && spec);
    for (int i = 0; i < 24; i++) {
        char id[16];
        lil_loop_opts o;

        snprintf(id, sizeof(id), "t%02d", i);
        o = opts_for(id);
        T_OK(lil_loop_submit(st, spec, &o, NULL));
    }
    for (int i = 0; i < 4; i++) {
        memset(&x[i], 0, sizeof(x[i]));
        T_OK(lil_worker_new(st, NULL, &x[i].w));
        T_REQUIRE(pthread_create(&t[i], NULL, work, &x[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        T_EQ_I64(x[i].last, LIL_E_NOTFOUND);
        total += x[i].runs;
        lil_worker_free(x[i].w);
    }
    T_EQ_I64(total, 24);
    T_EQ_I64(lines_of("side.txt"), 48); /* two effects each, once */
    T_REQUIRE(sql("SELECT count(*) FROM @.runs WHERE state = 'completed' AND "
                  "lease_epoch = 1 AND holder_pid IS NULL;") == 0);
    T_CONTAINS(out, "24");
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(requeue_sends_a_queued_approval_back_and_runs_the_others)
{
    lil_store *st = u_store(NULL);
    lil_spec *gate = spec_of(gate_text);
    lil_loop_opts o = opts_for("g");
    lil_worker *w = NULL;
    lil_worker_result r;
    lil_loop_result res;
    lil_loop *lp = NULL;

    T_REQUIRE(st && gate);
    T_OK(lil_loop_submit(st, gate, &o, NULL));
    T_OK(lil_worker_new(st, NULL, &w));
    T_OK(lil_worker_next(w, &r));
    T_EQ_STR(r.state, "paused");
    T_CONTAINS(r.message, "go on?");
    o.flags = LIL_LOOP_REQUEUE;
    T_OK(lil_loop_open(st, gate, &o, &lp));
    T_OK(lil_loop_approve(lp, "tester", "fine", &res));
    T_EQ_I64(res.status, LIL_LOOP_WAITING);
    T_CONTAINS(res.json, "\"queued\":true");
    lil_loop_result_free(&res);
    T_OK(lil_loop_close(lp));
    T_EQ_STR(state_of("g"), "queued");
    T_EQ_I64(lines_of("side.txt"), 1); /* nothing ran in the approver */
    T_OK(lil_worker_next(w, &r));
    T_EQ_STR(r.state, "completed");
    T_EQ_I64(lines_of("side.txt"), 2);
    /* a run that is not queued: approved and run here, as without the flag */
    o = opts_for("here");
    T_OK(lil_loop_open(st, gate, &o, &lp));
    T_OK(lil_loop_run(lp, &res));
    T_EQ_I64(res.status, LIL_LOOP_PAUSED);
    lil_loop_result_free(&res);
    T_OK(lil_loop_close(lp));
    o.flags = LIL_LOOP_REQUEUE;
    T_OK(lil_loop_open(st, gate, &o, &lp));
    T_OK(lil_loop_approve(lp, "tester", "fine", &res));
    T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
    T_CHECK(strstr(res.json, "queued") == NULL);
    lil_loop_result_free(&res);
    T_OK(lil_loop_close(lp));
    T_EQ_STR(state_of("here"), "-");
    lil_worker_free(w);
    lil_spec_free(gate);
    lil_store_close(st);
}

T_TEST(a_spec_that_no_longer_loads_is_an_error_state)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(spec_text);
    lil_loop_opts o = opts_for("e");
    lil_worker *w = NULL;
    lil_worker_result r;

    T_REQUIRE(st && spec);
    T_OK(lil_loop_submit(st, spec, &o, NULL));
    T_REQUIRE(sql("UPDATE @.runs SET payload = convert_to(jsonb_set(convert_from("
                  "payload, 'UTF8')::jsonb, '{spec}', '\"id: 7\"')::text, 'UTF8') "
                  "WHERE run_id = 'e';") == 0);
    T_OK(lil_worker_new(st, NULL, &w));
    T_OK(lil_worker_next(w, &r));
    T_EQ_STR(r.run_id, "e");
    T_EQ_STR(r.state, "error");
    T_CONTAINS(r.message, "has errors");
    T_EQ_STR(state_of("e"), "error");
    T_REQUIRE(sql("SELECT last_error, holder_pid IS NULL FROM @.runs WHERE run_id = "
                  "'e';") == 0);
    T_CONTAINS(out, "has errors");
    T_CONTAINS(out, "|t"); /* the lease let go */
    T_EQ_I64(lil_worker_next(w, &r), LIL_E_NOTFOUND);
    T_EQ_I64(lines_of("side.txt"), 0);
    lil_worker_free(w);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* A run queued under schema 2 (the spec, its digest and the inputs in
 * columns of their own) is kept by the migration to 3 (one payload): a
 * worker claims it and runs it with the inputs it was submitted with. */
T_TEST(a_run_queued_under_schema_2_runs_after_the_migration)
{
    lil_store *st = u_store(NULL);
    lil_spec *spec = spec_of(spec_text);
    lil_loop_opts o = opts_for("old");
    const char *pairs[] = {"k=7"};
    lil_schema_info info;
    lil_worker *w = NULL;
    lil_worker_result r;
    char *side;
    size_t len = 0;

    T_REQUIRE(st && spec);
    o.input_pairs = pairs;
    o.n_input_pairs = 1;
    T_OK(lil_loop_submit(st, spec, &o, NULL));
    lil_store_close(st);
    /* back to the layout of schema 2 */
    T_REQUIRE(sql("ALTER TABLE @.runs ADD COLUMN spec_name text, ADD COLUMN spec_text "
                  "text, ADD COLUMN spec_sha256 text, ADD COLUMN inputs text; UPDATE "
                  "@.runs SET spec_name = j->>'name', spec_text = j->>'spec', "
                  "spec_sha256 = j->>'sha256', inputs = (j->'inputs')::text FROM "
                  "(SELECT run_id AS id, convert_from(payload, 'UTF8')::json AS j FROM "
                  "@.runs) AS p WHERE run_id = p.id; ALTER TABLE @.runs DROP COLUMN "
                  "payload; DROP TABLE @.workers, @.schedules; UPDATE @.lil_meta "
                  "SET value = '2' WHERE key = 'schema_version';") == 0);
    T_EQ_I64(lil_store_open(NULL, U_STORE, &st), LIL_E_PG);
    T_CONTAINS(lil_errmsg(), "run `lil db migrate`");
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    T_OK(lil_store_schema(NULL, U_STORE, LIL_SCHEMA_MIGRATE, &info));
    T_CONTAINS(info.message, "from version 2 to 4");
    T_EQ_STR(state_of("old"), "queued");
    st = u_store(NULL);
    T_REQUIRE(st);
    T_OK(lil_worker_new(st, NULL, &w));
    T_OK(lil_worker_next(w, &r));
    T_EQ_STR(r.run_id, "old");
    T_EQ_STR(r.state, "completed");
    T_EQ_STR(state_of("old"), "completed");
    side = (char *)u_read_file("side.txt", &len);
    T_CHECK(side && len == 4 && memcmp(side, "7\n7\n", 4) == 0); /* k=7 */
    free(side);
    lil_worker_free(w);
    lil_spec_free(spec);
    lil_store_close(st);
}

T_TEST(misuse)
{
    lil_worker_result r;
    lil_worker *w = (lil_worker *)&w;
    lil_store *st = u_store(NULL);
    lil_worker_opts wo = {sizeof(wo) - 1, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL};

    T_EQ_I64(lil_worker_new(NULL, NULL, &w), LIL_E_INVAL);
    T_CHECK(w == NULL);
    T_EQ_I64(lil_worker_new(st, NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_worker_new(st, &wo, &w), LIL_E_INVAL);
    wo.struct_size = sizeof(wo);
    wo.max_block_ms = -1;
    T_EQ_I64(lil_worker_new(st, &wo, &w), LIL_E_INVAL);
    T_EQ_I64(lil_worker_next(NULL, &r), LIL_E_INVAL);
    T_CHECK(lil_worker_errmsg(NULL) != NULL);
    lil_worker_drain(NULL);
    T_OK(lil_worker_new(st, NULL, &w));
    T_EQ_I64(lil_worker_next(w, NULL), LIL_E_INVAL);
    lil_worker_free(w);
    lil_store_close(st);
}

T_MAIN()
