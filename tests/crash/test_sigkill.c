/*
 * test_sigkill.c -- crash tests of kind (a) (docs/testing.md): fork the workload,
 * SIGKILL it after a seeded random delay, look at the journal, let the next
 * attempt resume, again and again, then let it finish.
 *
 * After every kill: the journal opens read-only (a SIGKILL never damages
 * what was written: LIL_E_CORRUPT is a failure), lil_run_check finds it
 * intact or with only a torn tail, every step acknowledged so far is there
 * with its exact bytes, and no attempt ever ran the function of a step the
 * journal held when it began.  At the end: the run is completed, every step
 * is there once, and a replay runs nothing.
 *
 * Default: at least 200 kills, runs cycling through sync full/normal/off.
 * `test_sigkill --slow` (label slow): 5000 kills.
 * LIL_CRASH_KILLS=N and LIL_CRASH_SEED=S override the count and the seed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "faults.h"
#include "t.h"
#include "workload.h"

#define NSTEPS   24
#define BIG_SIZE 70000
#define DELAY_US 150 /* each step function sleeps: room for kills between steps */

static long kills_target = 200;
static uint64_t seed0 = 0x5161c1a5;

static const lil_sync modes[3] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL, LIL_SYNC_OFF};
static const char *const mode_names[3] = {"full", "normal", "off"};

static int64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* How long one uninterrupted workload takes in a child (µs), and when its
 * run was open (*open_us); also checks that an uninterrupted run is right. */
static int64_t calibrate(const struct t_plan *p, int m, int64_t *open_us)
{
    struct t_evlog log = {0};
    struct t_child c = {NULL, NULL, -1};
    struct t_child_res res;
    struct t_wl w;
    const char *store = t_path("calib");
    int64_t t0, best = INT64_MAX;

    for (int k = 0; k < 3; k++) {
        t_rmtree(store);
        t_wl_init(&w, p, store, "run", modes[m], NULL);
        w.step_delay_us = DELAY_US;
        t0 = mono_us();
        if (t_child_run(&w, &c, &log, &res) != 0) {
            fprintf(stderr, "fork failed\n");
            t_fail();
            break;
        }
        if (mono_us() - t0 < best) {
            best = mono_us() - t0;
            *open_us = log.n ? log.ev[0].us : 0; /* 'O' comes first */
        }
        T_EQ_I64(res.exited, 1);
        T_EQ_I64(res.code, 0);
        T_EQ_I64(t_evlog_count(&log, 'R', -1), p->n);
        T_EQ_I64(t_verify_final(p, store, "run", modes[m], "calibration"), 0);
        t_evlog_clear(&log);
    }
    t_evlog_free(&log);
    return best;
}

struct stats {
    long kills, rounds, torn, attempts, uncertain, early;
};

/* One run killed up to 8 times, then finished.  Returns the problems. */
static int one_round(const struct t_plan *p, int m, int64_t dur, int64_t open_us,
                     uint64_t *rng, struct stats *stt)
{
    struct t_evlog log = {0};
    struct t_model model;
    struct t_seen s;
    struct t_child_res res;
    struct t_wl w;
    const char *store = t_path("store");
    char ctx[160];
    int errors = 0;

    snprintf(ctx, sizeof(ctx), "sigkill seed=%#llx round=%ld sync=%s",
             (unsigned long long)seed0, stt->rounds, mode_names[m]);
    t_rmtree(store);
    t_model_init(&model, p, modes[m], ctx);
    t_model_begin(&model, NULL);
    for (int attempt = 1;; attempt++) {
        struct t_child c = {NULL, NULL, -1};
        /* One kill in five lands anywhere (most of those while the store
         * and the journal are being opened or created), the others while
         * steps run. */
        if (attempt <= 8 && t_rand_below(rng, 5) == 0)
            c.kill_after_us = (long)t_rand_below(rng, (uint64_t)(dur + dur / 4 + 300));
        else if (attempt <= 8)
            c.kill_after_us =
                (long)(open_us +
                       (int64_t)t_rand_below(rng, (uint64_t)(dur - open_us) + 300));
        t_wl_init(&w, p, store, "run", modes[m], NULL);
        w.attempt = attempt;
        w.step_delay_us = DELAY_US;
        t_evlog_clear(&log);
        if (t_child_run(&w, &c, &log, &res) != 0)
            return errors + 1;
        stt->attempts++;
        stt->uncertain += (long)t_evlog_count(&log, 'U', -1);
        t_model_feed(&model, &log);
        t_inspect(p, store, "run", NULL, &s);
        if (res.signaled && res.sig == SIGKILL) {
            stt->kills++;
            if (!model.opened)
                stt->early++;
            if (s.open_rc != LIL_OK &&
                !(s.open_rc == LIL_E_NOTFOUND && !model.opened)) {
                fprintf(stderr,
                        "  [%s attempt %d] journal does not open after SIGKILL: "
                        "%s %s\n",
                        ctx, attempt, lil_status_name(s.open_rc), s.msg);
                errors++;
            }
            if (s.open_rc == LIL_OK &&
                (s.check_rc != LIL_OK || !(s.rep.intact || s.rep.torn_tail))) {
                fprintf(stderr, "  [%s attempt %d] check after SIGKILL: %s: %s\n", ctx,
                        attempt, lil_status_name(s.check_rc), s.rep.message);
                errors++;
            }
            stt->torn += s.rep.torn_tail;
            t_model_end(&model, T_END_PROCESS, &s);
            t_model_begin(&model, &s);
            if (errors || model.errors)
                break;
            continue;
        }
        if (!res.exited || res.code != 0) {
            fprintf(stderr, "  [%s attempt %d] workload failed: exit %d signal %d\n",
                    ctx, attempt, res.code, res.sig);
            errors++;
            break;
        }
        t_model_end(&model, T_END_CLEAN, &s);
        errors += t_verify_final(p, store, "run", modes[m], ctx);
        break;
    }
    t_evlog_free(&log);
    return errors + model.errors;
}

T_TEST(sigkill_campaign)
{
    struct t_plan plan;
    struct stats stt;
    int64_t dur[3], open_us[3];
    uint64_t rng;
    int errors = 0;

    if (getenv("LIL_CRASH_KILLS"))
        kills_target = atol(getenv("LIL_CRASH_KILLS"));
    if (getenv("LIL_CRASH_SEED"))
        seed0 = strtoull(getenv("LIL_CRASH_SEED"), NULL, 0);
    rng = seed0;
    memset(&stt, 0, sizeof(stt));
    t_plan_init(&plan, NSTEPS, BIG_SIZE);
    for (int m = 0; m < 3; m++)
        dur[m] = calibrate(&plan, m, &open_us[m]);
    while (stt.kills < kills_target && errors == 0) {
        int m = (int)(stt.rounds % 3);
        errors += one_round(&plan, m, dur[m], open_us[m], &rng, &stt);
        stt.rounds++;
    }
    T_EQ_I64(errors, 0);
    T_CHECK(stt.kills >= kills_target);
    printf(
        "sigkill: seed %#llx, %ld kills (%ld before the run was open) over %ld runs, "
        "%ld attempts, %ld torn tails seen, %ld uncertain effects resolved; "
        "workload %lld/%lld/%lld us (full/normal/off), open after %lld/%lld/%lld us\n",
        (unsigned long long)seed0, stt.kills, stt.early, stt.rounds, stt.attempts,
        stt.torn, stt.uncertain, (long long)dur[0], (long long)dur[1],
        (long long)dur[2], (long long)open_us[0], (long long)open_us[1],
        (long long)open_us[2]);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        kills_target = 5000;
        return t_main(argc - 1, argv + 1);
    }
    return t_main(argc, argv);
}
