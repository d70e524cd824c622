/*
 * bench_group.c -- group commit: T threads share one run with sync=full,
 * each running new steps under its own name for a fixed time.  With one
 * fdatasync per step and no sharing, T threads could not beat one thread;
 * with group commit one fdatasync makes the records of every waiting thread
 * durable, so the total rate should grow with T.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

/* Threads wait here until all exist, then start together. */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
};

struct worker {
    pthread_t tid;
    lil_run *run;
    char name[16];
    size_t payload_len;
    uint64_t deadline_ns;
    struct gate *gate;
    uint64_t steps;
    lil_status rc;
    char msg[256];
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct bench_payload p = {bench_payload_bytes(w->payload_len), w->payload_len, 0};

    pthread_mutex_lock(&w->gate->mu);
    while (!w->gate->open)
        pthread_cond_wait(&w->gate->cv, &w->gate->mu);
    pthread_mutex_unlock(&w->gate->mu);
    while (bench_now_ns() < w->deadline_ns) {
        lil_status rc = lil_step(w->run, w->name, bench_fill_fn, &p, NULL);
        if (rc != LIL_OK) {
            w->rc = rc;
            snprintf(w->msg, sizeof(w->msg), "%s", lil_errmsg());
            break;
        }
        w->steps++;
    }
    return NULL;
}

/* One slice: nthreads threads run steps on run for seconds; the steps done
 * and the time taken are added to *steps and *secs. */
static void group_slice(const struct bench_cfg *cfg, lil_run *run, int nthreads,
                        double seconds, uint64_t *steps, double *secs)
{
    struct worker w[16];
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

    for (int i = 0; i < nthreads; i++) {
        w[i] = (struct worker){.run = run,
                               .payload_len = cfg->payload_len,
                               .deadline_ns = UINT64_MAX,
                               .gate = &gate};
        snprintf(w[i].name, sizeof(w[i].name), "t%d", i);
        if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]))
            bench_die_errno("pthread_create");
    }
    uint64_t t0 = bench_now_ns();
    uint64_t deadline = t0 + (uint64_t)(seconds * 1e9);
    pthread_mutex_lock(&gate.mu);
    for (int i = 0; i < nthreads; i++)
        w[i].deadline_ns = deadline;
    gate.open = 1;
    pthread_cond_broadcast(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
    for (int i = 0; i < nthreads; i++)
        pthread_join(w[i].tid, NULL);
    *secs += (double)(bench_now_ns() - t0) / 1e9;
    for (int i = 0; i < nthreads; i++) {
        if (w[i].rc != LIL_OK)
            bench_die("lil_step (group)", w[i].rc, w[i].msg);
        *steps += w[i].steps;
    }
}

#define NPOINTS 5
#define ROUNDS  4

void bench_group(const struct bench_cfg *cfg, lil_store *st)
{
    static const int counts[NPOINTS] = {1, 2, 4, 8, 16};
    lil_run *runs[NPOINTS];
    uint64_t steps[NPOINTS] = {0};
    double secs[NPOINTS] = {0};
    char buf[160], what[96];

    for (int i = 0; i < NPOINTS; i++) {
        char id[32];
        snprintf(id, sizeof(id), "group-%d", counts[i]);
        runs[i] = bench_open_run(st, id, LIL_SYNC_FULL);
    }
    /* Interleaved rounds, so that every point sees the same disk. */
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < NPOINTS; i++)
            group_slice(cfg, runs[i], counts[i], cfg->group_seconds / ROUNDS, &steps[i],
                        &secs[i]);
    bench_section("group commit (sync=full, T threads, one run)");
    double one = (double)steps[0] / secs[0];
    for (int i = 0; i < NPOINTS; i++) {
        lil_status rc = lil_run_close(runs[i]);
        if (rc != LIL_OK)
            bench_die("lil_run_close", rc, "");
        double rate = (double)steps[i] / secs[i];
        snprintf(what, sizeof(what), "%d thread%s", counts[i],
                 counts[i] > 1 ? "s" : "");
        snprintf(buf, sizeof(buf), "%.0f steps/s, %.2f× 1 thread", rate, rate / one);
        if (counts[i] == 8)
            bench_row(what, buf, "≥ 5× 1 thread", rate >= 5.0 * one);
        else
            bench_row(what, buf, "", -1);
    }
}
