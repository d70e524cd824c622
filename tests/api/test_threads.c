/*
 * test_threads.c -- one run shared by 8 threads, each running 200 steps
 * with names of its own.  Every step runs exactly once and is journaled;
 * after a reopen, the same threads replay every result without calling any
 * function.  Functions of different threads overlap (checked with a
 * counter of threads inside a function), as lil.h promises.
 */
#include <lil/lil.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "api_util.h"
#include "t.h"

#define NTHREADS 8
#define NSTEPS   200

static atomic_int calls;
static atomic_int inside;
static atomic_int max_inside;

struct worker {
    lil_run *run;
    int id;
    int effects;    /* use lil_effect (request = the name) instead of lil_step */
    int errors;     /* calls that did not return LIL_OK */
    int mismatches; /* results that were not the step's own name */
};

static int fn_name(lil_call *call, void *ud)
{
    (void)ud;
    int now = atomic_fetch_add(&inside, 1) + 1;
    int m = atomic_load(&max_inside);
    while (now > m && !atomic_compare_exchange_weak(&max_inside, &m, now))
        ;
    atomic_fetch_add(&calls, 1);
    struct timespec ts = {0, 200000}; /* 0.2 ms: let the threads overlap */
    nanosleep(&ts, NULL);
    const char *id = lil_call_identity(call);
    lil_status rc = lil_call_set_result(call, id, strlen(id));
    atomic_fetch_sub(&inside, 1);
    return rc != LIL_OK;
}

static void *worker_main(void *ud)
{
    struct worker *w = ud;
    for (int i = 0; i < NSTEPS; i++) {
        char name[32];
        lil_bytes out = {0};
        snprintf(name, sizeof(name), "t%d-s%d", w->id, i);
        lil_status rc = w->effects ? lil_effect(w->run, name, name, strlen(name),
                                                fn_name, NULL, &out)
                                   : lil_step(w->run, name, fn_name, NULL, &out);
        if (rc != LIL_OK) {
            w->errors++;
            continue;
        }
        if (out.len != strlen(name) || memcmp(out.data, name, out.len) != 0)
            w->mismatches++;
        lil_free(out.data);
    }
    return NULL;
}

static void run_workers_kind(lil_run *run, int effects)
{
    pthread_t th[NTHREADS];
    struct worker w[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        w[t] = (struct worker){.run = run, .id = t, .effects = effects};
        T_EQ_I64(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        T_EQ_I64(w[t].errors, 0);
        T_EQ_I64(w[t].mismatches, 0);
    }
}

static void run_workers(lil_run *run)
{
    run_workers_kind(run, 0);
}

static int count_steps(void *ud, const lil_record *rec)
{
    if (rec->type == LIL_REC_STEP)
        (*(int *)ud)++;
    return 0;
}

T_TEST(eight_threads_share_a_run)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    atomic_store(&calls, 0);
    run_workers(run);
    T_EQ_I64(atomic_load(&calls), NTHREADS * NSTEPS);
    T_CHECK(atomic_load(&max_inside) > 1); /* functions ran in parallel */
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.steps_done, NTHREADS * NSTEPS);
    int steps = 0;
    T_OK(lil_run_foreach(run, count_steps, &steps));
    T_EQ_I64(steps, NTHREADS * NSTEPS);
    T_OK(lil_run_close(run));

    run = u_run(st, "r");
    T_REQUIRE(run);
    atomic_store(&calls, 0);
    run_workers(run);
    T_EQ_I64(atomic_load(&calls), 0);
    steps = 0;
    T_OK(lil_run_foreach(run, count_steps, &steps));
    T_EQ_I64(steps, NTHREADS * NSTEPS);
    T_OK(lil_run_close(run));

    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    lil_store_close(st);
}

T_TEST(threads_with_normal_sync)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "n", LIL_SYNC_NORMAL, 0, 0);
    T_REQUIRE(run);
    atomic_store(&calls, 0);
    run_workers(run);
    T_EQ_I64(atomic_load(&calls), NTHREADS * NSTEPS);
    T_OK(lil_run_close(run));
    run = u_run(st, "n");
    T_REQUIRE(run);
    atomic_store(&calls, 0);
    run_workers(run);
    T_EQ_I64(atomic_load(&calls), 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static int count_intents(void *ud, const lil_record *rec)
{
    if (rec->type == LIL_REC_INTENT)
        (*(int *)ud)++;
    return 0;
}

T_TEST(threads_run_effects)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "e");
    T_REQUIRE(run);
    atomic_store(&calls, 0);
    run_workers_kind(run, 1);
    T_EQ_I64(atomic_load(&calls), NTHREADS * NSTEPS);
    int intents = 0;
    T_OK(lil_run_foreach(run, count_intents, &intents));
    T_EQ_I64(intents, NTHREADS * NSTEPS);
    T_EQ_I64(lil_run_uncertain_count(run), 0);
    T_OK(lil_run_close(run));
    run = u_run(st, "e");
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    atomic_store(&calls, 0);
    run_workers_kind(run, 1);
    T_EQ_I64(atomic_load(&calls), 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_MAIN()
