/*
 * test_loop_sigkill.c -- crash tests of kind (a) (docs/testing.md) for loop runs,
 * black-box through the `lil` binary: `lil run` of the loop of loopcheck.h
 * is SIGKILLed at a seeded random moment, again and again; each time the
 * killed process's shell child is either killed too or left to finish
 * (seeded), then the run is started again; when it answers uncertain (exit
 * 2) it is recovered with `lil recover --retry` or `--assume-done`
 * (seeded), and those processes are killed at random moments as well,
 * until the run completes.
 *
 * After every attempt (killed or not): the journal opens read-only (a
 * SIGKILL never damages what was written), `lil_run_check` finds it intact
 * or with only a torn tail, its records come in the only order they may
 * (loopcheck.h), and the side file shows no effect that ran more often
 * than it has intents, none with an outcome that never ran.  At the end of
 * every run: the same read from `lil log RUN --jsonl`, every effect of
 * every iteration has its outcome and ran exactly once unless a retry
 * allowed more (at most once per intent), `lil check RUN` says intact, and
 * `lil --json run` answers completed with the expected state.
 *
 * Runs cycle through --sync full, normal and off (a process crash loses
 * nothing in any mode).  Default: at least 200 kills.  `test_loop_sigkill
 * --slow` (label slow): 3000.  LIL_CRASH_KILLS=N and LIL_CRASH_SEED=S
 * override the count and the seed; a failure prints the seed and the
 * round, and LIL_CRASH_ROUND=R replays that round alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "faults.h"
#include "loopcheck.h"
#include "t.h"
#include "workload.h"

#define NIT       5  /* iterations of the loop */
#define MAX_KILLS 8  /* kills per run at most; then it may finish */
#define MAX_TRIES 60 /* attempts per run before the test gives up */

static long kills_target = 200;
static uint64_t seed0 = 0x10095eed;

static const char *const mode_names[3] = {"full", "normal", "off"};

struct stats {
    long kills, rounds, attempts, early, recover_retry, recover_assume, uncertain;
    long orphans_killed, orphans_finished, torn, parked;
    struct t_lj_stats lj;
};

/* One run of the campaign: its files and what it does next. */
struct round {
    long no;
    int mode;
    uint64_t rng;
    char dir[512], store[600], spec[600], side[600], out[600];
    char tok[32], tokarg[48], ctx[200];
    int done; /* effects with an outcome, as last seen */
};

enum next { NEXT_RUN, NEXT_RETRY, NEXT_ASSUME };

/* Timing of an uninterrupted run (calibrate). */
static int64_t startup_us, effect_us;

static void round_init(struct round *r, long no)
{
    memset(r, 0, sizeof(*r));
    r->no = no;
    r->mode = (int)(no % 3);
    r->rng = seed0 ^ ((uint64_t)(no + 1) * 0x9e3779b97f4a7c15ull);
    (void)t_rand(&r->rng);
    snprintf(r->dir, sizeof(r->dir), "%s", t_path("round"));
    snprintf(r->store, sizeof(r->store), "%s/store", r->dir);
    snprintf(r->spec, sizeof(r->spec), "%s/loop.yaml", r->dir);
    snprintf(r->side, sizeof(r->side), "%s/side.txt", r->dir);
    snprintf(r->out, sizeof(r->out), "%s/out.txt", r->dir);
    snprintf(r->tok, sizeof(r->tok), "r%ld", no);
    snprintf(r->tokarg, sizeof(r->tokarg), "tok=%s", r->tok);
    snprintf(r->ctx, sizeof(r->ctx), "loop sigkill seed=%#llx round=%ld sync=%s",
             (unsigned long long)seed0, no, mode_names[r->mode]);
}

/* The command of the next attempt. */
static void argv_of(struct round *r, enum next next, char **argv)
{
    static char dir_opt[] = "--dir", json_opt[] = "--json", run[] = "run",
                recover[] = "recover", input[] = "--input", sync[] = "--sync",
                wait[] = "--wait", retry[] = "--retry", assume[] = "--assume-done",
                result[] = "--result-json", reason[] = "--reason", why[] = "crash test",
                assumed[] = T_LOOP_ASSUMED;
    static char mode[3][8] = {"full", "normal", "off"};
    static char bin[4096];
    int i = 0;

    snprintf(bin, sizeof(bin), "%s", t_lil_bin());
    argv[i++] = bin;
    argv[i++] = dir_opt;
    argv[i++] = r->store;
    argv[i++] = json_opt;
    argv[i++] = next == NEXT_RUN ? run : recover;
    argv[i++] = r->spec;
    if (next == NEXT_RUN) {
        argv[i++] = input;
        argv[i++] = r->tokarg;
        argv[i++] = sync;
        argv[i++] = mode[r->mode];
        argv[i++] = wait;
    } else {
        argv[i++] = next == NEXT_RETRY ? retry : assume;
        if (next == NEXT_ASSUME) {
            argv[i++] = result;
            argv[i++] = assumed;
        }
        argv[i++] = reason;
        argv[i++] = why;
    }
    argv[i] = NULL;
}

/* Read the journal and the side file, check them; count what is done. */
static int look(struct round *r, bool killed, struct stats *st)
{
    struct t_lj j;
    int errors = 0;

    t_lj_init(&j, NIT);
    t_lj_read_api(&j, r->store, T_LOOP_RUN, r->ctx);
    if (j.open_rc != LIL_OK && j.open_rc != LIL_E_NOTFOUND) {
        fprintf(stderr, "  VIOLATION [%s] the journal does not open: %s %s\n", r->ctx,
                lil_status_name(j.open_rc), j.msg);
        errors++;
    }
    if (j.open_rc == LIL_OK &&
        (j.check_rc != LIL_OK || !(j.rep.intact || j.rep.torn_tail))) {
        fprintf(stderr, "  VIOLATION [%s] check: %s: %s\n", r->ctx,
                lil_status_name(j.check_rc), j.rep.message);
        errors++;
    }
    if (killed && j.open_rc == LIL_E_NOTFOUND)
        st->early++;
    st->torn += j.rep.torn_tail;
    errors += t_side_read(&j, r->side, r->tok, r->ctx);
    errors += t_lj_check(&j, false, r->ctx);
    r->done = 0;
    for (int it = 0; it < NIT; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++)
            r->done += t_loop_is_effect(s) && j.slot[it][s].at == T_SLOT_DONE;
    t_lj_free(&j);
    return errors;
}

/* The checks at the end of a run, through the lil command. */
static int verify_final(struct round *r, struct stats *st)
{
    char cmd[2048], out[8192];
    struct t_lj j;
    json_t *res, *want;
    const char *status;
    int errors = 0, rc;

    t_lj_init(&j, NIT);
    if (t_lj_read_cli(&j, r->store, T_LOOP_RUN, r->ctx) != 0)
        errors++;
    errors += t_side_read(&j, r->side, r->tok, r->ctx);
    errors += t_lj_check(&j, true, r->ctx);
    t_lj_stats_add(&j, &st->lj);
    st->parked += j.parked;
    want = json_incref(j.state);
    t_lj_free(&j);
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' check %s", t_lil_bin(), r->store,
             T_LOOP_RUN);
    rc = t_run(cmd, out, sizeof(out), 1);
    if (rc != 0 || !strstr(out, "intact")) {
        fprintf(stderr, "  VIOLATION [%s] lil check: exit %d: %s\n", r->ctx, rc, out);
        errors++;
    }
    snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' --dir '%s' --json run '%s' --input %s",
             r->dir, t_lil_bin(), r->store, r->spec, r->tokarg);
    rc = t_run(cmd, out, sizeof(out), 0);
    res = json_loads(out, 0, NULL);
    status = json_string_value(json_object_get(res, "status"));
    if (rc != 0 || !status || strcmp(status, "completed") != 0 || !want ||
        !json_equal(json_object_get(res, "state"), want)) {
        fprintf(stderr, "  VIOLATION [%s] lil run of the completed run: exit %d: %s\n",
                r->ctx, rc, out);
        errors++;
    }
    json_decref(res);
    json_decref(want);
    return errors;
}

/* When to kill the next attempt: anywhere in what is left of the run. */
static int64_t kill_time(struct round *r)
{
    int64_t left = startup_us + (int64_t)(NIT * T_LOOP_EFFECTS - r->done) * effect_us;

    return (int64_t)t_rand_below(&r->rng, (uint64_t)(left + left / 8 + 1));
}

/* What comes after an attempt that ended by itself.  -1: the run failed. */
static int after_exit(struct round *r, const struct t_exec_res *x, enum next *next,
                      struct stats *st)
{
    switch (x->code) {
    case 0:
        return 1;
    case 2:
        st->uncertain++;
        *next = t_rand_below(&r->rng, 2) ? NEXT_RETRY : NEXT_ASSUME;
        return 0;
    case 4: /* parked on the sleep by a recovery (no --wait there) */
        *next = NEXT_RUN;
        return 0;
    default:
        fprintf(stderr, "  VIOLATION [%s] lil exited %d (signal %d):\n", r->ctx,
                x->code, x->sig);
        t_dump_file(r->out);
        return -1;
    }
}

/* One run killed up to MAX_KILLS times, then finished.  Returns problems. */
static int one_round(long no, struct stats *st)
{
    struct round r;
    enum next next = NEXT_RUN;
    char *argv[16];
    int errors = 0, kills = 0;

    round_init(&r, no);
    t_rmtree(r.dir);
    if (mkdir(r.dir, 0700) != 0 || t_loop_spec_write(r.spec, NIT) != 0)
        return 1;
    for (int attempt = 1; errors == 0; attempt++) {
        struct t_exec_res x;
        int64_t when = kills < MAX_KILLS ? kill_time(&r) : -1;
        bool kill_orphans;
        int end;

        if (attempt > MAX_TRIES) {
            fprintf(stderr, "  [%s] no end after %d attempts\n", r.ctx, MAX_TRIES);
            return errors + 1;
        }
        argv_of(&r, next, argv);
        st->recover_retry += next == NEXT_RETRY;
        st->recover_assume += next == NEXT_ASSUME;
        if (t_exec(argv, r.dir, r.out, when, &x) != 0)
            return errors + 1;
        st->attempts++;
        kill_orphans = x.killed && t_rand_below(&r.rng, 2) == 0;
        if (kill_orphans)
            st->orphans_killed += t_orphans_reap(true);
        else if (x.killed)
            st->orphans_finished += t_orphans_reap(false);
        else
            (void)t_orphans_reap(false);
        errors += look(&r, x.killed, st);
        if (x.killed) {
            kills++;
            st->kills++;
            next = NEXT_RUN;
            continue;
        }
        end = after_exit(&r, &x, &next, st);
        if (end < 0)
            errors++;
        if (end != 0)
            break;
    }
    if (errors == 0)
        errors += verify_final(&r, st);
    if (errors)
        fprintf(stderr,
                "  [%s] failed: LIL_CRASH_SEED=%#llx LIL_CRASH_ROUND=%ld replays it\n",
                r.ctx, (unsigned long long)seed0, no);
    return errors;
}

/* Time an uninterrupted run and a run of a completed loop. */
static void calibrate(void)
{
    struct round r;
    struct t_exec_res x;
    char *argv[16];
    int64_t best = INT64_MAX;

    for (int k = 0; k < 2; k++) {
        round_init(&r, 1000000 + k);
        r.mode = 0;
        t_rmtree(r.dir);
        T_CHECK(mkdir(r.dir, 0700) == 0 && t_loop_spec_write(r.spec, NIT) == 0);
        argv_of(&r, NEXT_RUN, argv);
        T_CHECK(t_exec(argv, r.dir, r.out, -1, &x) == 0 && x.exited && x.code == 0);
        (void)t_orphans_reap(false);
        if (x.us < best)
            best = x.us;
        T_CHECK(t_exec(argv, r.dir, r.out, -1, &x) == 0 && x.exited && x.code == 0);
        startup_us = x.us;
    }
    effect_us = (best - startup_us) / (NIT * T_LOOP_EFFECTS);
    if (effect_us < 100)
        effect_us = 100;
}

T_TEST(loop_sigkill_campaign)
{
    struct stats st;
    long only = -1;
    int errors = 0;

    if (getenv("LIL_CRASH_KILLS"))
        kills_target = atol(getenv("LIL_CRASH_KILLS"));
    if (getenv("LIL_CRASH_SEED"))
        seed0 = strtoull(getenv("LIL_CRASH_SEED"), NULL, 0);
    if (getenv("LIL_CRASH_ROUND"))
        only = atol(getenv("LIL_CRASH_ROUND"));
    memset(&st, 0, sizeof(st));
    t_orphans_adopt();
    calibrate();
    if (only >= 0) {
        errors = one_round(only, &st);
        st.rounds = 1;
    }
    while (only < 0 && st.kills < kills_target && errors == 0) {
        errors += one_round(st.rounds, &st);
        st.rounds++;
    }
    T_EQ_I64(errors, 0);
    T_CHECK(only >= 0 || st.kills >= kills_target);
    T_CHECK(only >= 0 || st.recover_retry + st.recover_assume > 0);
    printf(
        "loop sigkill: seed %#llx, %ld kills (%ld before the journal existed) over %ld "
        "runs, %ld attempts; %ld uncertain answers, recovered %ld with retry, %ld "
        "with assume-done; effects retried %ld (the killed attempt had run too: %ld), "
        "assumed done %ld (%ld assume-done decisions lost with their process); orphaned shells killed %ld, left to finish %ld; %ld torn "
        "tails seen, %ld parks; run %lld us, effect %lld us, start %lld us\n",
        (unsigned long long)seed0, st.kills, st.early, st.rounds, st.attempts,
        st.uncertain, st.recover_retry, st.recover_assume, st.lj.retried,
        st.lj.ran_twice, st.lj.assumed, st.lj.assumed_lost, st.orphans_killed,
        st.orphans_finished, st.torn, st.parked,
        (long long)(startup_us + NIT * T_LOOP_EFFECTS * effect_us),
        (long long)effect_us, (long long)startup_us);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        kills_target = 3000;
        return t_main(argc - 1, argv + 1);
    }
    return t_main(argc, argv);
}
