/*
 * test_oom_json.c -- the allocation-failure sweep (curl torture) over the
 * loop-spec loader and the JSON paths, where jansson allocates through the
 * env (src/json/json.h).  For each call below, allocation k of the call
 * fails, for every k until the call no longer reaches a k-th allocation:
 *
 *   - a call that met a failed allocation returns LIL_E_NOMEM: never
 *     LIL_E_CORRUPT, LIL_E_SPEC, LIL_E_INVAL, never a crash;
 *   - a call that met none gives exactly what a fault-free call gives
 *     (so no failure is dropped on the way: a dropped one would give a
 *     different result with LIL_OK);
 *   - nothing is left live in the test allocator (t_alloc), which also
 *     aborts on a block it did not make: a jansson block released to the
 *     wrong allocator is caught; the asan preset's LeakSanitizer checks the
 *     rest.
 *
 * The calls: lil_spec_load of the specs of examples/loops, of the
 * acceptance files of tests/data/spec (valid and invalid, YAML and JSON)
 * and of tests/data/reference-examples; lil_spec_json and lil_spec_explain
 * of each example (lil_spec_explain_at, at a fixed time: a cron
 * schedule's fire times then stay the same from call to call);
 * lil_call_set_json and lil_call_set_jsonf inside a step; lil_run_resolve
 * of an uncertain effect (retry, and assume-done with a JSON result); and
 * opening (store + run) a journal that holds RESOLVE records.
 *
 * `test_oom_json --slow` (label slow) sweeps the spec loads again with every
 * allocation from k on failing (sticky), not only the k-th.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"
#include "t.h"

/* The time explain counts fire times from: 2025-01-01T12:00:00Z. */
#define FIXED_NOW_MS INT64_C(1735732800000)
#include "workload.h"

static int slow;

#define SWEEP_MAX 1000000ul

/* ---- helpers ---------------------------------------------------------------- */

static lil_env *env_with(struct t_alloc *a)
{
    lil_env *env = NULL;

    if (lil_env_new(&env) != LIL_OK || t_alloc_install(env, a) != LIL_OK) {
        lil_env_free(env);
        return NULL;
    }
    return env;
}

/* Arm a so that the k-th allocation from now fails (and later ones too
 * when sticky); disarm with a->fail_at = 0. */
static void arm(struct t_alloc *a, unsigned long k, int sticky)
{
    a->fail_at = a->calls + k;
    a->sticky = sticky;
    a->failed = 0;
}

static int expect_status(const char *what, unsigned long k, const struct t_alloc *a,
                         lil_status rc)
{
    lil_status want = a->failed ? LIL_E_NOMEM : LIL_OK;

    if (rc == want)
        return 0;
    fprintf(stderr, "  %s, allocation #%lu%s: %s, expected %s (%s)\n", what, k,
            a->failed ? " failed" : " not reached", lil_status_name(rc),
            lil_status_name(want), lil_errmsg());
    t_fail();
    return 1;
}

static void report(const char *what, unsigned long k)
{
    printf("%s: allocations 1..%lu failed in turn\n", what, k - 1);
    T_CHECK(k > 2);
}

/* ---- loop specs ---------------------------------------------------------- */

/* What a loaded spec says: its diagnostics, and its normalized and explain
 * documents when it is valid (plain malloc; "" for a NULL spec). */
static char *spec_text(const lil_spec *spec)
{
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    lil_bytes j = {0}, x = {0};

    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; spec && i < lil_spec_diag_count(spec); i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        len +=
            (size_t)snprintf(s + len, len < cap ? cap - len : 0, "%d %s %u:%u %s\n",
                             (int)d->severity, d->code, d->line, d->column, d->message);
    }
    if (spec && lil_spec_ok(spec) && lil_spec_json(spec, &j) == LIL_OK &&
        lil_spec_explain_at(spec, FIXED_NOW_MS, &x) == LIL_OK)
        len += (size_t)snprintf(s + len, len < cap ? cap - len : 0, "%s\n%s\n",
                                (const char *)j.data, (const char *)x.data);
    lil_free(j.data);
    lil_free(x.data);
    if (len >= cap)
        s[cap - 1] = '\0'; /* cut: still compared */
    return s;
}

static char *reference_spec(const char *path)
{
    lil_spec *spec = NULL;
    char *s;

    T_OK(lil_spec_load(NULL, path, NULL, &spec));
    s = spec_text(spec);
    lil_spec_free(spec);
    return s;
}

/* lil_spec_load with allocation k failing (from k on when sticky). */
static void sweep_spec_load(const char *path, int sticky)
{
    char *want = reference_spec(path), *got;
    unsigned long k;
    char what[512];

    snprintf(what, sizeof(what), "lil_spec_load %s%s", path, sticky ? " (sticky)" : "");
    for (k = 1; k < SWEEP_MAX; k++) {
        struct t_alloc a = {0};
        lil_env *env = env_with(&a);
        lil_spec *spec = NULL;
        lil_status rc;
        int bad;

        T_REQUIRE(env);
        arm(&a, k, sticky);
        rc = lil_spec_load(env, path, NULL, &spec);
        a.fail_at = 0;
        bad = expect_status(what, k, &a, rc);
        if (rc == LIL_OK) {
            got = spec_text(spec);
            T_EQ_STR(got, want);
            free(got);
        }
        T_CHECK(rc == LIL_OK || spec == NULL);
        lil_spec_free(spec);
        lil_env_free(env);
        T_EQ_I64(a.live, 0);
        if (bad || !a.failed)
            break;
    }
    free(want);
    report(what, k);
}

/* lil_spec_json or lil_spec_explain on a loaded spec, allocation k
 * failing. */
static void sweep_spec_output(const char *path, int explain)
{
    const char *what = explain ? "lil_spec_explain" : "lil_spec_json";
    struct t_alloc a = {0};
    lil_env *env = env_with(&a);
    lil_spec *spec = NULL;
    lil_bytes want = {0};
    unsigned long k;

    T_REQUIRE(env);
    T_OK(lil_spec_load(env, path, NULL, &spec));
    T_OK(explain ? lil_spec_explain_at(spec, FIXED_NOW_MS, &want)
                 : lil_spec_json(spec, &want));
    for (k = 1; k < SWEEP_MAX; k++) {
        lil_bytes out = {0};
        long live = a.live;
        lil_status rc;
        int bad;

        arm(&a, k, 0);
        rc = explain ? lil_spec_explain_at(spec, FIXED_NOW_MS, &out)
                     : lil_spec_json(spec, &out);
        a.fail_at = 0;
        bad = expect_status(what, k, &a, rc);
        if (rc == LIL_OK)
            T_EQ_MEM(out.data, out.len, want.data, want.len);
        else
            T_CHECK(out.data == NULL);
        lil_free(out.data);
        T_EQ_I64(a.live, live);
        if (bad || !a.failed)
            break;
    }
    lil_free(want.data);
    lil_spec_free(spec);
    lil_env_free(env);
    T_EQ_I64(a.live, 0);
    report(what, k);
}

static const char *const example_specs[] = {
    "cron.yaml",       "evaluator-optimizer.yaml",  "loop-until-dry.yaml",
    "map-reduce.yaml", "plan-execute-reflect.yaml", "poll-until.yaml",
    "react.yaml",
};

#define NEXAMPLES (sizeof(example_specs) / sizeof(example_specs[0]))

static const char *example_path(size_t i)
{
    static char path[1024];

    snprintf(path, sizeof(path), "%s/%s", T_EXAMPLES_DIR, example_specs[i]);
    return path;
}

/* Every .yaml and .json file of dir. */
static void sweep_dir(const char *dir, int sticky)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024];

    T_REQUIRE(d);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || (strcmp(e->d_name + n - 5, ".yaml") != 0 &&
                      strcmp(e->d_name + n - 5, ".json") != 0))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        sweep_spec_load(path, sticky);
    }
    closedir(d);
}

/* The examples, and the acceptance files (valid and invalid specs, YAML
 * and JSON) and the reference project's examples of tests/data; sticky:
 * every allocation from k on fails. */
static void sweep_all_specs(int sticky)
{
    char dir[1024];

    for (size_t i = 0; i < NEXAMPLES; i++)
        sweep_spec_load(example_path(i), sticky);
    snprintf(dir, sizeof(dir), "%s/spec", T_DATA_DIR);
    sweep_dir(dir, sticky);
    snprintf(dir, sizeof(dir), "%s/reference-examples", T_DATA_DIR);
    sweep_dir(dir, sticky);
}

T_TEST(spec_load)
{
    sweep_all_specs(0);
}

T_TEST(spec_json_and_explain)
{
    for (size_t i = 0; i < NEXAMPLES; i++) {
        sweep_spec_output(example_path(i), 0);
        sweep_spec_output(example_path(i), 1);
    }
}

T_TEST(spec_load_sticky_slow)
{
    if (slow)
        sweep_all_specs(1);
}

/* ---- JSON step results ---------------------------------------------------- */

static const char json_in[] =
    "{ \"z\": [1, 2.5, {\"b\": null, \"a\": \"\\u00e9\"}], \"a\": {\"k\": true},"
    "  \"m\": \"text\" }";
static const char json_canon[] =
    "{\"a\":{\"k\":true},\"m\":\"text\",\"z\":[1,2.5,{\"a\":\"\xc3\xa9\",\"b\":null}]}";
static const char jsonf_canon[] = "{\"l\":[1,2,{\"t\":true}],\"n\":\"x\",\"r\":0.5}";

struct set_case {
    struct t_alloc *a;
    unsigned long k;
    int packed; /* lil_call_set_jsonf */
    lil_status rc;
    unsigned long failed;
    char msg[256];
};

static int fn_set_json(lil_call *call, void *ud)
{
    struct set_case *c = ud;

    arm(c->a, c->k, 0);
    c->rc = c->packed ? lil_call_set_jsonf(call, "{s:s, s:[i,i,{s:b}], s:f}", "n", "x",
                                           "l", 1, 2, "t", 1, "r", 0.5)
                      : lil_call_set_json(call, json_in);
    c->failed = c->a->failed;
    c->a->fail_at = 0;
    snprintf(c->msg, sizeof(c->msg), "%s", c->rc ? lil_errmsg() : "");
    return 0;
}

static void sweep_set_json(int packed)
{
    const char *what = packed ? "lil_call_set_jsonf" : "lil_call_set_json";
    const char *want = packed ? jsonf_canon : json_canon;
    struct t_alloc a = {0};
    lil_env *env = env_with(&a);
    lil_run_opts o = {.struct_size = sizeof(o), .sync = LIL_SYNC_OFF};
    lil_store *st = NULL;
    lil_run *run = NULL;
    unsigned long k;

    T_REQUIRE(env);
    T_OK(lil_store_open(env, t_path("store"), &st));
    T_OK(lil_run_open(st, what, &o, &run));
    for (k = 1; k < SWEEP_MAX; k++) {
        struct set_case c = {&a, k, packed, LIL_OK, 0, ""};
        lil_bytes out = {0};
        char name[32];
        int bad;

        snprintf(name, sizeof(name), "s%lu", k);
        T_OK(lil_step(run, name, fn_set_json, &c, &out));
        a.failed = c.failed;
        bad = expect_status(what, k, &a, c.rc);
        if (c.rc == LIL_OK)
            T_EQ_MEM(out.data, out.len, want, strlen(want));
        else
            T_CONTAINS(c.msg, "out of memory");
        lil_free(out.data);
        if (bad || !c.failed)
            break;
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
    lil_env_free(env);
    T_EQ_I64(a.live, 0);
    report(what, k);
}

T_TEST(set_json_results)
{
    sweep_set_json(0);
    sweep_set_json(1);
}

/* ---- uncertain effects and RESOLVE records --------------------------------- */

static int fn_die(lil_call *call, void *ud)
{
    (void)call;
    (void)ud;
    _exit(0); /* the outcome of the effect is never journaled */
}

static int fn_ok(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "ok", 2) != LIL_OK;
}

/* In a child: run effect e1 (e1 completes unless it is the one to die),
 * then die inside effect `dies`. */
static void child_leaves_uncertain(const char *store, const char *dies)
{
    pid_t pid = fork();
    int status = -1;

    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        lil_store *st = NULL;
        lil_run *run = NULL;

        if (lil_store_open(NULL, store, &st) != LIL_OK ||
            lil_run_open(st, "r", NULL, &run) != LIL_OK)
            _exit(10);
        lil_effect(run, "e1", "req1", 4, strcmp(dies, "e1") == 0 ? fn_die : fn_ok, NULL,
                   NULL);
        lil_effect(run, dies, "req2", 4, fn_die, NULL, NULL);
        _exit(11);
    }
    T_REQUIRE(waitpid(pid, &status, 0) == pid);
    T_EQ_I64(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
}

static void resolve_now(const char *store, const char *identity, lil_resolution how)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    const char *res = how == LIL_RESOLVE_ASSUME_DONE ? "{\"paid\":true}" : NULL;

    T_OK(lil_store_open(NULL, store, &st));
    T_OK(lil_run_open(st, "r", NULL, &run));
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_OK(lil_run_resolve(run, identity, how, res, res ? strlen(res) : 0, "ops",
                         "checked by hand"));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static void copy_file(const char *from, const char *to)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ssize_t n;

    T_REQUIRE(in >= 0 && out >= 0);
    while ((n = read(in, buf, sizeof(buf))) > 0)
        T_REQUIRE(write(out, buf, (size_t)n) == n);
    close(in);
    close(out);
}

/* A fresh store `to` holding the journal of run r of store `from`, with
 * the store's own key and the run's rollback record (a keyed store's). */
static void copy_store(const char *from, const char *to)
{
    static const char *const files[] = {"r.lil", "journal.key", "r.head"};
    char a[1024], b[1024];

    t_rmtree(to);
    T_REQUIRE(mkdir(to, 0700) == 0);
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(a, sizeof(a), "%s/%s", from, files[i]);
        snprintf(b, sizeof(b), "%s/%s", to, files[i]);
        if (i == 0 || access(a, F_OK) == 0)
            copy_file(a, b);
    }
}

/* After a resolve that returned rc: the journal opens with a healthy env,
 * and the effect is either still uncertain (nothing was decided) or
 * decided as asked (assume-done replays the given result). */
static void check_after_resolve(const char *store, lil_resolution how, lil_status rc)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_run_state s;

    T_OK(lil_store_open(NULL, store, &st));
    T_OK(lil_run_open(st, "r", NULL, &run));
    s = lil_run_status(run);
    T_CHECK(s == LIL_RUN_RUNNING || (rc != LIL_OK && s == LIL_RUN_UNCERTAIN));
    if (s == LIL_RUN_RUNNING && how == LIL_RESOLVE_ASSUME_DONE) {
        lil_bytes out = {0};
        T_OK(lil_effect(run, "e1", "req1", 4, fn_die, NULL, &out)); /* replays */
        T_EQ_STR((const char *)out.data, "{\"paid\":true}");
        lil_free(out.data);
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static void sweep_resolve(const char *tmpl, lil_resolution how)
{
    const char *what = how == LIL_RESOLVE_RETRY ? "lil_run_resolve retry"
                                                : "lil_run_resolve assume-done";
    const char *res = how == LIL_RESOLVE_ASSUME_DONE ? "{\"paid\":true}" : NULL;
    const char *store = t_path("store");
    unsigned long k;

    for (k = 1; k < SWEEP_MAX; k++) {
        struct t_alloc a = {0};
        lil_env *env = env_with(&a);
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_status rc;
        int bad;

        T_REQUIRE(env);
        copy_store(tmpl, store);
        T_OK(lil_store_open(env, store, &st));
        T_OK(lil_run_open(st, "r", NULL, &run));
        arm(&a, k, 0);
        rc = lil_run_resolve(run, "e1", how, res, res ? strlen(res) : 0, "ops",
                             "checked by hand");
        a.fail_at = 0;
        bad = expect_status(what, k, &a, rc);
        lil_run_close(run);
        lil_store_close(st);
        lil_env_free(env);
        T_EQ_I64(a.live, 0);
        check_after_resolve(store, how, rc);
        if (bad || !a.failed)
            break;
    }
    report(what, k);
}

T_TEST(resolve_uncertain_effect)
{
    const char *tmpl = t_path("uncertain");

    child_leaves_uncertain(tmpl, "e1");
    sweep_resolve(tmpl, LIL_RESOLVE_ASSUME_DONE);
    sweep_resolve(tmpl, LIL_RESOLVE_RETRY);
}

/* A journal with two RESOLVE records (e1 retried and then done, e2 assumed
 * done), opened with allocation k failing: every failure is LIL_E_NOMEM,
 * never LIL_E_CORRUPT. */
T_TEST(open_journal_with_resolve_records)
{
    const char *store = t_path("resolved");
    lil_run_opts ro = {.struct_size = sizeof(ro), .flags = LIL_OPEN_READONLY};
    unsigned long k;

    child_leaves_uncertain(store, "e1");
    resolve_now(store, "e1", LIL_RESOLVE_RETRY);
    child_leaves_uncertain(store, "e2"); /* e1 runs again and completes */
    resolve_now(store, "e2", LIL_RESOLVE_ASSUME_DONE);
    for (k = 1; k < SWEEP_MAX; k++) {
        struct t_alloc a = {0};
        lil_env *env = env_with(&a);
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_status rc;
        int bad;

        T_REQUIRE(env);
        arm(&a, k, 0);
        rc = lil_store_open(env, store, &st);
        if (rc == LIL_OK)
            rc = lil_run_open(st, "r", &ro, &run);
        a.fail_at = 0;
        bad = expect_status("open with RESOLVE records", k, &a, rc);
        if (rc == LIL_OK) {
            T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
            T_EQ_I64(lil_run_uncertain_count(run), 0);
        }
        lil_run_close(run);
        lil_store_close(st);
        lil_env_free(env);
        T_EQ_I64(a.live, 0);
        if (bad || !a.failed)
            break;
    }
    report("open with RESOLVE records", k);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        slow = 1;
        return t_main(argc - 1, argv + 1);
    }
    return t_main(argc, argv);
}
