/*
 * lil_c.c -- the conformance workload from C (conf.h; the protocol is
 * engines/common.py's), as a program that links liblil:
 *
 *   lil_c run [--plain] [--powercut LOG]
 *       the pipeline as one lil run (CONF_RUN) of the store CONF_DIR at the
 *       default sync (full): each LLM call a lil_step, each side effect a
 *       lil_effect that sends lil_call_idempotency_key as Idempotency-Key.
 *       A run that is uncertain names its effects (exit 3); a journal the
 *       open refuses as damaged (a power cut can leave one) prints DAMAGED
 *       (exit 4) for the operator's `lil check --repair`.  --plain: the
 *       same requests without lil (the C floor of the overhead rows).
 *   lil_c resolve IDENTITY retry|assume_done [RECEIPT]
 *       the operator's decision on an uncertain effect (lil_run_resolve;
 *       the receipt the ledger holds is the assumed result).
 *   lil_c loop SPEC [--powercut LOG]
 *   lil_c loop-recover SPEC retry|assume_done [RESULT_JSON] [--powercut LOG]
 *       the loop face in this process (lil_c_loop.c): the runner `lil run`
 *       calls, for the power cuts, which only a process of ours can take.
 *   lil_c cut LOG SEED
 *       the power cut after a killed life (tests/harness/faults.h): undo the
 *       writes of LOG that no sync covered, as the seed chooses.
 *
 * --powercut LOG runs lil's system calls through the test harness's fault
 * table with change tracking on (built only where the tests are: without
 * them the option is refused).
 */
#include <lil/lil.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "conf.h"
#include "lil_c_loop.h"
#ifdef CONF_POWERCUT
#include "faults.h"
#endif

struct step_ctx {
    const struct conf_env *e;
    int i;
    const char *prev;
};

static int llm_fn(lil_call *call, void *ud)
{
    const struct step_ctx *s = ud;
    char tag[CONF_TAG_MAX];

    conf_llm(s->e, s->i, s->prev, tag);
    return lil_call_set_result(call, tag, strlen(tag)) != LIL_OK;
}

static int effect_fn(lil_call *call, void *ud)
{
    const struct step_ctx *s = ud;
    char receipt[CONF_TAG_MAX];

    conf_effect(s->e, s->i, s->prev, lil_call_idempotency_key(call), receipt);
    return lil_call_set_result(call, receipt, strlen(receipt)) != LIL_OK;
}

static int fail(const char *what, lil_status rc)
{
    fprintf(stderr, "lil_c: %s: %s: %s\n", what, lil_status_name(rc), lil_errmsg());
    return 1;
}

/* The env of a life: the fault table with tracking when log is set. */
static lil_env *life_env(const char *log)
{
#ifdef CONF_POWERCUT
    if (log) {
        t_pc_track(log);
        return t_env_faulty();
    }
#endif
    (void)log;
    return NULL;
}

static int print_uncertain(lil_run *run)
{
    for (size_t k = 0; k < lil_run_uncertain_count(run); k++)
        printf("UNCERTAIN %s\n", lil_run_uncertain_at(run, k));
    fflush(stdout);
    return CONF_EXIT_UNCERTAIN;
}

/* The open refused a journal with intact records after a bad one: the
 * operator's decision (lil check --repair).  See lil_run_open. */
static int print_damaged(lil_store *st)
{
    fprintf(stderr, "lil_c: %s\n", lil_store_errmsg(st));
    printf("DAMAGED\n");
    fflush(stdout);
    return CONF_EXIT_DAMAGED;
}

/* One step of the pipeline through lil; the LLM step's tag into prev. */
static lil_status one_step(lil_run *run, const struct conf_env *e, int i, char *prev)
{
    struct step_ctx s = {e, i, prev};
    char name[32], req[256];
    lil_bytes out = {0};
    lil_status rc;

    snprintf(name, sizeof(name), i % 2 == 0 ? "llm%d" : "effect%d", i);
    if (i % 2 == 0) {
        rc = lil_step(run, name, llm_fn, &s, &out);
        if (rc == LIL_OK)
            snprintf(prev, CONF_TAG_MAX, "%.*s", (int)out.len, (const char *)out.data);
    } else {
        snprintf(req, sizeof(req), "effect %d on %s", i, prev);
        rc = lil_effect(run, name, req, strlen(req), effect_fn, &s, &out);
    }
    lil_free(out.data);
    return rc;
}

static int run_pipeline(lil_run *run, const struct conf_env *e)
{
    char(*tags)[CONF_TAG_MAX] = calloc((size_t)e->steps, CONF_TAG_MAX);
    char prev[CONF_TAG_MAX] = "start";
    size_t n = 0;
    lil_status rc = LIL_OK;

    if (!tags)
        return 1;
    for (int i = 0; i < e->steps && rc == LIL_OK; i++) {
        rc = one_step(run, e, i, prev);
        if (rc == LIL_OK && i % 2 == 0)
            memcpy(tags[n++], prev, CONF_TAG_MAX);
    }
    if (rc == LIL_OK) {
        rc = lil_run_complete(run, "done", 4);
        rc = rc == LIL_E_DONE ? LIL_OK : rc;
    }
    if (rc == LIL_OK)
        conf_print_result(tags, n);
    free(tags);
    if (rc == LIL_E_UNCERTAIN)
        return print_uncertain(run);
    return rc == LIL_OK ? 0 : fail("step", rc);
}

static int run_plain(const struct conf_env *e)
{
    char(*tags)[CONF_TAG_MAX] = calloc((size_t)e->steps, CONF_TAG_MAX);
    char prev[CONF_TAG_MAX] = "start", receipt[CONF_TAG_MAX];
    size_t n = 0;

    if (!tags)
        return 1;
    for (int i = 0; i < e->steps; i++) {
        if (i % 2 == 0) {
            conf_llm(e, i, prev, prev);
            memcpy(tags[n++], prev, CONF_TAG_MAX);
        } else {
            conf_effect(e, i, prev, NULL, receipt);
        }
    }
    conf_print_result(tags, n);
    free(tags);
    return 0;
}

/* Open the store and the run; then either run the pipeline or resolve. */
static int with_run(const struct conf_env *e, const char *log, int argc, char **argv)
{
    lil_env *env = life_env(log);
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_status rc;
    int code;

    rc = lil_store_open(env, e->dir, &st);
    if (rc != LIL_OK)
        return fail("store", rc);
    rc = lil_run_open(st, e->run, NULL, &run);
    if (rc == LIL_E_CORRUPT) {
        code = print_damaged(st);
    } else if (rc != LIL_OK) {
        code = fail("open", rc);
    } else if (argc >= 4 && strcmp(argv[1], "resolve") == 0) {
        bool done = strcmp(argv[3], "assume_done") == 0;
        const char *r = done && argc >= 5 ? argv[4] : NULL;
        rc = lil_run_resolve(run, argv[2],
                             done ? LIL_RESOLVE_ASSUME_DONE : LIL_RESOLVE_RETRY, r,
                             r ? strlen(r) : 0, "conformance",
                             "the operator looked the effect up in the ledger");
        code = rc == LIL_OK ? 0 : fail("resolve", rc);
    } else if (lil_run_status(run) == LIL_RUN_UNCERTAIN) {
        code = print_uncertain(run);
    } else {
        code = run_pipeline(run, e);
    }
    if (lil_run_close(run) != LIL_OK && code == 0)
        code = fail("close", LIL_E_IO);
    lil_store_close(st);
    lil_env_free(env);
    return code;
}

static int cut(const char *log, const char *seed)
{
#ifdef CONF_POWERCUT
    struct t_pc_stats ps;

    if (access(log, F_OK) != 0) { /* killed before its first write: nothing to undo */
        printf("CUT entries=0\n");
        return 0;
    }
    if (t_pc_apply(log, strtoull(seed, NULL, 10), T_PC_RANDOM, &ps) != 0) {
        fprintf(stderr, "lil_c: cannot read the power-cut log %s\n", log);
        return 1;
    }
    printf("CUT entries=%lu unsynced=%lu dropped=%lu torn=%lu garbled=%lu\n",
           ps.entries, ps.unsynced, ps.dropped, ps.torn, ps.garbled);
    return 0;
#else
    (void)log;
    (void)seed;
    fprintf(stderr, "lil_c: built without the test harness: no power cuts\n");
    return 64;
#endif
}

/* --powercut LOG anywhere in argv: removed, LOG returned. */
static const char *take_powercut(int *argc, char **argv)
{
    for (int k = 1; k + 1 < *argc; k++) {
        if (strcmp(argv[k], "--powercut") == 0) {
            const char *log = argv[k + 1];
            memmove(argv + k, argv + k + 2, sizeof(*argv) * (size_t)(*argc - k - 1));
            *argc -= 2;
            return log;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct conf_env e;
    const char *log = take_powercut(&argc, argv);
    int code;

#ifndef CONF_POWERCUT
    if (log)
        return cut(log, "0");
#endif
    if (argc == 4 && strcmp(argv[1], "cut") == 0)
        return cut(argv[2], argv[3]);
    if (argc < 2 || conf_env_read(&e) != 0) {
        fprintf(stderr,
                "usage: lil_c run [--plain] | resolve ID retry|assume_done [R] | "
                "loop SPEC | loop-recover SPEC HOW [R] | cut LOG SEED "
                "[--powercut LOG]\n");
        return 64;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (strcmp(argv[1], "run") == 0 && argc == 3 && strcmp(argv[2], "--plain") == 0)
        code = run_plain(&e);
    else if (strcmp(argv[1], "loop") == 0 && argc == 3)
        code = conf_loop_run(&e, life_env(log), argv[2], NULL, NULL);
    else if (strcmp(argv[1], "loop-recover") == 0 && argc >= 4)
        code = conf_loop_run(&e, life_env(log), argv[2], argv[3],
                             argc >= 5 ? argv[4] : NULL);
    else if (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "resolve") == 0)
        code = with_run(&e, log, argc, argv);
    else
        code = 64;
    curl_global_cleanup();
    return code;
}
