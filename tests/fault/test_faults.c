/*
 * test_faults.c -- fault injection (docs/testing.md): EIO, ENOSPC and short
 * writes at the k-th call of each kind, for every k, and the allocator
 * failing at the k-th allocation (curl torture).  Everything runs in this
 * process, so the asan preset's LeakSanitizer sees every error path; the
 * test allocator also counts live blocks, so a leak fails the dev build too.
 *
 * For each sync mode, each kind (open, pwrite, fdatasync, fsync, ftruncate,
 * fallocate, rename, link, unlink, mkdir), each fault (EIO, ENOSPC; for
 * pwrite also a short write and an ENOSPC that lasts) and every k until the
 * workload no longer reaches the k-th call:
 *   - every call returns LIL_OK, LIL_E_IO or LIL_E_POISONED (LIL_E_FAILED
 *     for the plan's failing steps); the first error is LIL_E_IO and every
 *     later call on that run, lil_run_close included, is LIL_E_POISONED;
 *   - a failed pwrite or fdatasync is never hidden: some call reports it;
 *     a short write is not an error at all (it is finished by a loop);
 *   - then the power is cut with every unsynced change dropped: every
 *     step that was acknowledged under a sync that lil promised (full: each
 *     acknowledgement; normal/off: before the last explicit sync point) is
 *     still there with its exact bytes -- so an OK for a write whose
 *     fdatasync failed is caught -- and nothing there has wrong bytes;
 *   - before the cut, every acknowledged step was there too;
 *   - the journal opens with a healthy table, the run finishes, no step
 *     function runs for a step the journal held, and a replay runs nothing;
 *   - no allocation is left.
 * The workload's marker (lil_marker) is the store's, not the run's: it may
 * fail with LIL_E_IO without poisoning the run.
 * OOM: allocation k fails (once; and from k on) over store open, run open,
 * four steps (one failing, one effect), a marker, complete and close: every
 * status is LIL_OK or LIL_E_NOMEM (or the plan's LIL_E_FAILED), nothing
 * leaks, no message formats a NULL string, the journal stays consistent and
 * the run can be finished.
 * Three small tests state single rules on their own:
 * close_after_failed_sync_is_not_ok, failed_fallocate_poisons,
 * call_fail_under_oom.
 * Group commit: threads share a run with sync=full while the k-th pwrite or
 * fdatasync fails, for every k: every thread returns (nobody waits for
 * ever), one call (lil_run_close included) says LIL_E_IO, every later call
 * of every thread says LIL_E_POISONED, and after a power cut that drops
 * everything unsynced every step that any thread was told was done replays.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "faults.h"
#include "t.h"
#include "workload.h"

#define NSTEPS 12

static const lil_sync modes[3] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL, LIL_SYNC_OFF};
static const char *const mode_names[3] = {"full", "normal", "off"};

struct fcase {
    enum t_kind kind;
    enum t_action act;
    int err;
    int sticky;
};

static const struct fcase cases[] = {
    {T_K_PWRITE, T_ACT_ERR, EIO, 0},    {T_K_PWRITE, T_ACT_ERR, ENOSPC, 0},
    {T_K_PWRITE, T_ACT_ERR, ENOSPC, 1}, {T_K_PWRITE, T_ACT_SHORT, 0, 0},
    {T_K_FDATASYNC, T_ACT_ERR, EIO, 0}, {T_K_FDATASYNC, T_ACT_ERR, ENOSPC, 0},
    {T_K_FSYNC, T_ACT_ERR, EIO, 0},     {T_K_FSYNC, T_ACT_ERR, ENOSPC, 0},
    {T_K_FTRUNCATE, T_ACT_ERR, EIO, 0}, {T_K_FTRUNCATE, T_ACT_ERR, ENOSPC, 0},
    {T_K_FALLOCATE, T_ACT_ERR, EIO, 0}, {T_K_FALLOCATE, T_ACT_ERR, ENOSPC, 0},
    {T_K_OPEN, T_ACT_ERR, EIO, 0},      {T_K_OPEN, T_ACT_ERR, ENOSPC, 0},
    {T_K_RENAME, T_ACT_ERR, EIO, 0},    {T_K_LINK, T_ACT_ERR, EIO, 0},
    {T_K_LINK, T_ACT_ERR, ENOSPC, 0},   {T_K_UNLINK, T_ACT_ERR, EIO, 0},
    {T_K_MKDIR, T_ACT_ERR, EIO, 0},     {T_K_MKDIR, T_ACT_ERR, ENOSPC, 0},
};

static bool run_call(char what)
{
    return what == 's' || what == 'y' || what == 'c' || what == 'u' || what == 'z';
}

/* The statuses the workload saw, against the rules in the header. */
static int check_statuses(const struct t_wl *w, const struct fcase *fc,
                          unsigned long fired, const char *ctx)
{
    int first = -1, errors = 0;

    for (int c = 0; c < w->ncalls; c++) {
        const struct t_callrec *r = &w->calls[c];
        bool ok = r->rc == LIL_OK || r->rc == LIL_E_FAILED;
        if (r->what == 'k') { /* the marker is the store's, not the run's */
            if (r->rc != LIL_OK && r->rc != LIL_E_IO) {
                fprintf(stderr, "  VIOLATION [%s]: lil_marker returned %s\n", ctx,
                        lil_status_name(r->rc));
                errors++;
            }
            continue;
        }
        if (first >= 0) {
            if (r->rc != LIL_E_POISONED) {
                fprintf(stderr,
                        "  VIOLATION [%s]: call %c(%d) after a failure returned %s, "
                        "not LIL_E_POISONED\n",
                        ctx, r->what, r->i, lil_status_name(r->rc));
                errors++;
            }
            continue;
        }
        if (ok)
            continue;
        if (r->rc != LIL_E_IO) {
            fprintf(stderr,
                    "  VIOLATION [%s]: call %c(%d) returned %s (first failure "
                    "must be LIL_E_IO)\n",
                    ctx, r->what, r->i, lil_status_name(r->rc));
            errors++;
        }
        if (run_call(r->what))
            first = c;
    }
    if (fc->act == T_ACT_SHORT && (w->first_err != LIL_OK || !w->completed)) {
        fprintf(stderr, "  VIOLATION [%s]: a short write is not an error, got %s\n",
                ctx, lil_status_name(w->first_err));
        errors++;
    }
    if (fired && fc->act == T_ACT_ERR &&
        (fc->kind == T_K_PWRITE || fc->kind == T_K_FDATASYNC) &&
        w->first_err == LIL_OK) {
        fprintf(stderr, "  VIOLATION [%s]: the failed %s was reported by no call\n",
                ctx, t_kind_name(fc->kind));
        errors++;
    }
    return errors;
}

struct stats {
    long iterations, fired, errors_seen, poisoned_seen, completed;
};

/* One (mode, case, k).  Returns 1 if the fault fired, 0 if not, -1 on a
 * violation. */
static int one(const struct t_plan *p, int mi, const struct fcase *fc, unsigned long k,
               struct stats *st)
{
    const char *store = t_path("store"), *pclog = t_path("pc.log");
    struct t_fault f = {fc->kind, k, fc->act, fc->err, fc->sticky, k};
    struct t_alloc a = {0};
    struct t_evlog log = {0};
    struct t_model m;
    struct t_seen s;
    struct t_wl w;
    lil_env *env;
    unsigned long fired;
    char ctx[200];
    int errors = 0;

    snprintf(ctx, sizeof(ctx), "fault sync=%s %s #%lu %s%s errno=%d", mode_names[mi],
             t_kind_name(fc->kind), k, t_action_name(fc->act),
             fc->sticky ? "(sticky)" : "", fc->err);
    t_rmtree(store);
    t_store_prepare(store);
    t_pc_forget(pclog);
    env = t_env_faulty();
    if (!env || t_alloc_install(env, &a) != LIL_OK)
        return -1;
    t_pc_track(pclog);
    t_faults_arm(&f);
    t_wl_init(&w, p, store, "run", modes[mi], &log);
    w.env = env;
    w.keep_going = 1;
    w.quiet = 1;
    t_wl_run(&w);
    fired = t_faults_fired();
    t_faults_reset();
    t_pc_untrack();
    lil_env_free(env);
    st->iterations++;
    st->fired += fired ? 1 : 0;
    st->errors_seen += w.first_err != LIL_OK;
    st->completed += w.completed;
    for (int c = 0; c < w.ncalls; c++)
        st->poisoned_seen += w.calls[c].rc == LIL_E_POISONED;
    if (a.live != 0) {
        fprintf(stderr, "  VIOLATION [%s]: %ld allocation(s) leaked\n", ctx, a.live);
        errors++;
    }
    if (w.bad)
        errors++;
    errors += check_statuses(&w, fc, fired, ctx);

    /* Before the cut: what was acknowledged is there (page cache). */
    t_model_init(&m, p, modes[mi], ctx);
    t_model_begin(&m, NULL);
    t_model_feed(&m, &log);
    t_inspect(p, store, "run", NULL, &s);
    if (s.open_rc != LIL_OK && !(s.open_rc == LIL_E_NOTFOUND && !m.opened)) {
        fprintf(stderr,
                "  VIOLATION [%s]: journal does not open after the fault: %s %s\n", ctx,
                lil_status_name(s.open_rc), s.msg);
        errors++;
    }
    t_model_end(&m, T_END_PROCESS, &s);
    /* The cut: everything unsynced is lost. */
    t_pc_apply(pclog, k, T_PC_DROP_ALL, NULL);
    t_inspect(p, store, "run", NULL, &s);
    if (s.open_rc != LIL_OK && !(s.open_rc == LIL_E_NOTFOUND && !m.opened) &&
        modes[mi] != LIL_SYNC_OFF) {
        fprintf(stderr,
                "  VIOLATION [%s]: journal does not open after the cut: %s %s\n", ctx,
                lil_status_name(s.open_rc), s.msg);
        errors++;
    }
    t_model_end(&m, T_END_POWER, &s);
    if (s.open_rc == LIL_OK || s.open_rc == LIL_E_NOTFOUND) {
        /* Resume with a healthy table and finish. */
        t_model_begin(&m, &s);
        t_evlog_clear(&log);
        t_wl_init(&w, p, store, "run", modes[mi], &log);
        w.attempt = 2;
        if (t_wl_run(&w) != 0 || !w.completed) {
            fprintf(stderr,
                    "  VIOLATION [%s]: resuming with a healthy table failed: %s\n", ctx,
                    lil_status_name(w.first_err));
            errors++;
        }
        t_model_feed(&m, &log);
        t_inspect(p, store, "run", NULL, &s);
        t_model_end(&m, T_END_CLEAN, &s);
        errors += t_verify_final(p, store, "run", modes[mi], ctx);
    }
    errors += m.errors;
    t_evlog_free(&log);
    if (errors)
        return -1;
    return fired ? 1 : 0;
}

static void sweep(int mi)
{
    struct t_plan plan;
    struct stats st = {0};
    long points = 0;

    t_plan_init(&plan, NSTEPS, 70000);
    for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        int failures = 0;
        for (unsigned long k = 1; k < 100000; k++) {
            int r = one(&plan, mi, &cases[ci], k, &st);
            if (r < 0) {
                T_CHECK(r >= 0);
                /* Go on with the next case: one bug should not hide others. */
                if (++failures == 3)
                    break;
                continue;
            }
            if (r == 0)
                break;
            points++;
        }
    }
    printf(
        "faults sync=%s: %ld faults injected over %zu cases (%ld iterations), "
        "%ld surfaced as an error, %ld POISONED returns, %ld runs completed anyway\n",
        mode_names[mi], points, sizeof(cases) / sizeof(cases[0]), st.iterations,
        st.errors_seen, st.poisoned_seen, st.completed);
    T_CHECK(points > 0 && st.errors_seen > 0 && st.poisoned_seen > 0);
}

T_TEST(faults_full)
{
    sweep(0);
}

T_TEST(faults_normal)
{
    sweep(1);
}

T_TEST(faults_off)
{
    sweep(2);
}

/* ---- the rules, one at a time ------------------------------------------------ */

static int small_fn(lil_call *call, void *ud)
{
    size_t len = ud ? *(const size_t *)ud : 3;
    char *buf = calloc(1, len);
    lil_status rc;

    if (!buf)
        return 1;
    memcpy(buf, "abc", len < 3 ? len : 3);
    rc = lil_call_set_result(call, buf, len);
    free(buf);
    return rc == LIL_OK ? 0 : 1;
}

/* Open run "r" of store dir with a faulty env; the fault is armed after the
 * open, so its k counts from the first call after lil_run_open. */
static lil_run *open_faulty(lil_env **env, lil_store **st, lil_sync sync,
                            const struct t_fault *f)
{
    lil_run_opts o;
    lil_run *run = NULL;

    *env = t_env_faulty();
    if (!*env || lil_store_open(*env, t_path("store"), st) != LIL_OK)
        return NULL;
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.sync = sync;
    if (lil_run_open(*st, "r", &o, &run) != LIL_OK)
        return NULL;
    t_faults_arm(f);
    return run;
}

/* lil_run_close on a run whose fdatasync failed must not say LIL_OK: under
 * sync=normal that OK is the promise that everything is durable. */
T_TEST(close_after_failed_sync_is_not_ok)
{
    struct t_fault f = {T_K_FDATASYNC, 1, T_ACT_ERR, EIO, 0, 1};
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_run *run = open_faulty(&env, &st, LIL_SYNC_NORMAL, &f);

    T_REQUIRE(run != NULL);
    T_OK(lil_step(run, "a", small_fn, NULL, NULL));
    T_EQ_STR(lil_status_name(lil_run_sync(run)), "LIL_E_IO");
    T_EQ_STR(lil_status_name(lil_step(run, "b", small_fn, NULL, NULL)),
             "LIL_E_POISONED");
    T_EQ_STR(lil_status_name(lil_run_close(run)), "LIL_E_POISONED");
    lil_store_close(st);
    lil_env_free(env);
    t_faults_reset();
}

/* A failed fallocate (the disk is full) fails the append: the run must be
 * poisoned like after a failed write, or the program goes on, completes
 * the run without that step, and can never replay it (LIL_E_DONE). */
T_TEST(failed_fallocate_poisons)
{
    struct t_fault f = {T_K_FALLOCATE, 1, T_ACT_ERR, ENOSPC, 0, 1};
    size_t big = 70000; /* past the first 64 KiB chunk */
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_run *run = open_faulty(&env, &st, LIL_SYNC_FULL, &f);

    T_REQUIRE(run != NULL);
    T_EQ_STR(lil_status_name(lil_step(run, "big", small_fn, &big, NULL)), "LIL_E_IO");
    T_EQ_I64(t_faults_fired(), 1);
    T_EQ_STR(lil_status_name(lil_step(run, "next", small_fn, NULL, NULL)),
             "LIL_E_POISONED");
    T_EQ_STR(lil_status_name(lil_run_complete(run, "x", 1)), "LIL_E_POISONED");
    T_EQ_STR(lil_status_name(lil_run_close(run)), "LIL_E_POISONED");
    lil_store_close(st);
    lil_env_free(env);
    t_faults_reset();
}

struct oom_fail {
    struct t_alloc *a;
    lil_status rc;
};

static int fail_while_oom(lil_call *call, void *ud)
{
    struct oom_fail *o = ud;

    o->a->fail_at = o->a->calls + 1; /* every allocation from now on fails */
    o->a->sticky = 1;
    o->rc = lil_call_fail(call, "boom-%d", 7);
    o->a->fail_at = 0;
    return 1;
}

static int reason_of(void *ud, const lil_record *r)
{
    if (r->type == LIL_REC_STEP_FAILED)
        snprintf(ud, 64, "%.*s", (int)r->payload_len, (const char *)r->payload);
    return 0;
}

/* lil_call_fail must record the reason or say it could not
 * (LIL_E_NOMEM); the step's error message must never format NULL. */
T_TEST(call_fail_under_oom)
{
    struct t_alloc a = {0};
    struct oom_fail o = {&a, LIL_OK};
    lil_run_opts opts;
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_run *run = NULL;
    char reason[64] = "";

    T_REQUIRE(lil_env_new(&env) == LIL_OK && t_alloc_install(env, &a) == LIL_OK);
    T_REQUIRE(lil_store_open(env, t_path("store"), &st) == LIL_OK);
    memset(&opts, 0, sizeof(opts));
    opts.struct_size = sizeof(opts);
    T_REQUIRE(lil_run_open(st, "r", &opts, &run) == LIL_OK);
    T_EQ_STR(lil_status_name(lil_step(run, "s", fail_while_oom, &o, NULL)),
             "LIL_E_FAILED");
    T_CHECK(strstr(lil_errmsg(), "(null)") == NULL);
    if (o.rc == LIL_OK) {
        T_CONTAINS(lil_errmsg(), "boom-7");
        T_OK(lil_run_foreach(run, reason_of, reason));
        T_EQ_STR(reason, "boom-7");
    } else {
        T_EQ_STR(lil_status_name(o.rc), "LIL_E_NOMEM");
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
    lil_env_free(env);
    T_EQ_I64(a.live, 0);
}

/* ---- OOM torture ------------------------------------------------------------- */

static int oom_one(const struct t_plan *p, unsigned long k, int sticky, long *failed)
{
    const char *store = t_path("store");
    struct t_alloc a = {k, sticky, 0, 0, 0};
    struct t_evlog log = {0};
    struct t_model m;
    struct t_seen s;
    struct t_wl w;
    lil_env *env = NULL;
    unsigned char tolerate[T_WL_MAX];
    char ctx[120];
    int errors = 0, first = -1;

    snprintf(ctx, sizeof(ctx), "oom allocation #%lu%s", k, sticky ? " and later" : "");
    t_rmtree(store);
    if (lil_env_new(&env) != LIL_OK || t_alloc_install(env, &a) != LIL_OK)
        return -1;
    t_wl_init(&w, p, store, "run", LIL_SYNC_FULL, &log);
    w.env = env;
    w.keep_going = 1;
    w.quiet = 1;
    t_wl_run(&w);
    lil_env_free(env);
    *failed = (long)a.failed;
    if (a.live != 0) {
        fprintf(stderr, "  VIOLATION [%s]: %ld allocation(s) leaked\n", ctx, a.live);
        errors++;
    }
    if (w.bad)
        errors++;
    for (int c = 0; c < w.ncalls; c++) {
        lil_status rc = w.calls[c].rc;
        if (rc == LIL_OK || rc == LIL_E_FAILED || rc == LIL_E_NOMEM ||
            (rc == LIL_E_POISONED && first >= 0)) {
            if (rc != LIL_OK && rc != LIL_E_FAILED && first < 0)
                first = c;
            continue;
        }
        fprintf(stderr, "  VIOLATION [%s]: call %c(%d) returned %s\n", ctx,
                w.calls[c].what, w.calls[c].i, lil_status_name(rc));
        errors++;
    }
    memcpy(tolerate, w.fn_nomem, sizeof(tolerate));
    t_model_init(&m, p, LIL_SYNC_FULL, ctx);
    t_model_begin(&m, NULL);
    t_model_feed(&m, &log);
    t_inspect(p, store, "run", tolerate, &s);
    if (s.open_rc != LIL_OK && s.open_rc != LIL_E_NOTFOUND) {
        fprintf(stderr, "  VIOLATION [%s]: journal does not open: %s %s\n", ctx,
                lil_status_name(s.open_rc), s.msg);
        errors++;
    }
    t_model_end(&m, T_END_PROCESS, &s);
    t_model_begin(&m, &s);
    t_evlog_clear(&log);
    t_wl_init(&w, p, store, "run", LIL_SYNC_FULL, &log);
    w.attempt = 2;
    w.tolerate_fail = tolerate;
    if (t_wl_run(&w) != 0 || !w.completed) {
        fprintf(stderr, "  VIOLATION [%s]: the run cannot be finished: %s\n", ctx,
                lil_status_name(w.first_err));
        errors++;
    }
    t_model_feed(&m, &log);
    t_inspect(p, store, "run", tolerate, &s);
    t_model_end(&m, T_END_CLEAN, &s);
    errors += m.errors;
    t_evlog_free(&log);
    return errors ? -1 : 0;
}

static void oom(int sticky)
{
    struct t_plan plan;
    unsigned long k;
    long failed = 0;

    t_plan_init(&plan, 4, 0);
    for (k = 1; k < 100000; k++) {
        T_REQUIRE(oom_one(&plan, k, sticky, &failed) == 0);
        if (failed == 0)
            break;
    }
    printf("oom%s: allocations 1..%lu failed in turn (the workload makes %lu)\n",
           sticky ? " (sticky)" : "", k - 1, k - 1);
    T_CHECK(k > 10);
}

T_TEST(oom_each)
{
    oom(0);
}

T_TEST(oom_from)
{
    oom(1);
}

/* ---- group commit: a failed write or sync with threads waiting ------------- */

#define GC_THREADS 4
#define GC_STEPS   25

struct gc_worker {
    pthread_t th;
    lil_run *run;
    int id;
    lil_status rc[GC_STEPS];
};

static void gc_name(char *buf, size_t cap, int id, int i)
{
    snprintf(buf, cap, "t%d-s%d", id, i);
}

static void *gc_main(void *ud)
{
    struct gc_worker *w = ud;
    char name[32];

    for (int i = 0; i < GC_STEPS; i++) {
        gc_name(name, sizeof(name), w->id, i);
        w->rc[i] = lil_step(w->run, name, small_fn, NULL, NULL);
    }
    return NULL;
}

/* A thread's statuses: OK, then (from its first failure on) only
 * LIL_E_IO or LIL_E_POISONED, and after that first one only POISONED.
 * Counts the LIL_E_IO. */
static int gc_check_statuses(const struct gc_worker *w, int *io, const char *ctx)
{
    int errors = 0, failed = 0;

    for (int i = 0; i < GC_STEPS; i++) {
        lil_status rc = w->rc[i];
        bool fine = failed ? rc == LIL_E_POISONED
                           : rc == LIL_OK || rc == LIL_E_IO || rc == LIL_E_POISONED;
        if (!fine) {
            fprintf(stderr, "  VIOLATION [%s]: thread %d step %d returned %s\n", ctx,
                    w->id, i, lil_status_name(rc));
            errors++;
        }
        *io += rc == LIL_E_IO;
        failed |= rc != LIL_OK;
    }
    return errors;
}

static int gc_fn_ran(lil_call *call, void *ud)
{
    (*(int *)ud)++;
    return small_fn(call, NULL);
}

/* After the cut, with a healthy table: every acknowledged step replays
 * with its result, and its function does not run. */
static int gc_check_replay(const struct gc_worker *w, const char *ctx)
{
    lil_run_opts o = {.struct_size = sizeof(o), .sync = LIL_SYNC_FULL};
    lil_store *st = NULL;
    lil_run *run = NULL;
    int errors = 0;

    if (lil_store_open(NULL, t_path("store"), &st) != LIL_OK ||
        lil_run_open(st, "r", &o, &run) != LIL_OK) {
        fprintf(stderr, "  VIOLATION [%s]: the run does not open after the cut: %s\n",
                ctx, lil_errmsg());
        lil_store_close(st);
        return 1;
    }
    for (int t = 0; t < GC_THREADS; t++)
        for (int i = 0; i < GC_STEPS && w[t].rc[i] == LIL_OK; i++) {
            char name[32];
            lil_bytes out = {0};
            int ran = 0;
            gc_name(name, sizeof(name), t, i);
            lil_status rc = lil_step(run, name, gc_fn_ran, &ran, &out);
            if (rc != LIL_OK || ran || out.len != 3 ||
                memcmp(out.data, "abc", 3) != 0) {
                fprintf(stderr,
                        "  VIOLATION [%s]: acknowledged step %s is lost (%s, ran %d)\n",
                        ctx, name, lil_status_name(rc), ran);
                errors++;
            }
            lil_free(out.data);
        }
    lil_run_close(run);
    lil_store_close(st);
    return errors;
}

/* One k: returns 1 if the fault fired, 0 if not, -1 on a violation. */
static int gc_one(enum t_kind kind, unsigned long k)
{
    struct t_fault f = {kind, k, T_ACT_ERR, EIO, 0, k};
    struct gc_worker w[GC_THREADS];
    const char *pclog = t_path("pc.log");
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_run *run;
    unsigned long fired;
    int errors = 0, io = 0;
    char ctx[96];

    snprintf(ctx, sizeof(ctx), "group commit, %s #%lu fails", t_kind_name(kind), k);
    t_rmtree(t_path("store"));
    t_store_prepare(t_path("store"));
    t_pc_forget(pclog);
    t_pc_track(pclog);
    run = open_faulty(&env, &st, LIL_SYNC_FULL, &f);
    if (!run)
        return -1;
    for (int t = 0; t < GC_THREADS; t++) {
        w[t] = (struct gc_worker){.run = run, .id = t};
        if (pthread_create(&w[t].th, NULL, gc_main, &w[t]) != 0)
            return -1;
    }
    for (int t = 0; t < GC_THREADS; t++)
        pthread_join(w[t].th, NULL);
    fired = t_faults_fired();
    io = lil_run_close(run) == LIL_E_IO; /* the fault may hit the last sync */
    lil_store_close(st);
    lil_env_free(env);
    t_faults_reset();
    t_pc_untrack();
    t_pc_apply(pclog, k, T_PC_DROP_ALL, NULL);
    for (int t = 0; t < GC_THREADS; t++)
        errors += gc_check_statuses(&w[t], &io, ctx);
    if (fired && io != 1) {
        fprintf(stderr, "  VIOLATION [%s]: %d calls said LIL_E_IO, not 1\n", ctx, io);
        errors++;
    }
    errors += gc_check_replay(w, ctx);
    return errors ? -1 : fired ? 1 : 0;
}

static const enum t_kind gc_kinds[] = {T_K_PWRITE, T_K_FDATASYNC};

T_TEST(group_commit_faults)
{
    long points = 0;

    for (size_t i = 0; i < sizeof(gc_kinds) / sizeof(gc_kinds[0]); i++)
        for (unsigned long k = 1; k < 10000; k++) {
            int r = gc_one(gc_kinds[i], k);
            T_CHECK(r >= 0);
            if (r <= 0)
                break;
            points++;
        }
    printf("group commit: %ld faults injected with %d threads\n", points, GC_THREADS);
    T_CHECK(points > 10);
}

T_MAIN()
