/*
 * test_oom_facts.c -- lil_loop_facts under allocation failures (curl
 * torture): allocation k of opening the store, the run (read-only) and
 * reading its facts fails, for every k until the calls no longer reach a
 * k-th allocation.  Each time the calls return LIL_OK (and then the same
 * document as without failures) or LIL_E_NOMEM, never crash, and nothing
 * is left live in the test allocator (ASan/LSan see the rest).
 *
 * The run read is a loop run of agent calls through the `cli` harness (a
 * script that answers) against token and usd budgets, made by a child
 * process: its journal holds the start record with its caps, reservations,
 * intents, outcomes with usage and snapshots -- every kind of record the
 * fold reads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"
#include "t.h"

static const char spec_text[] =
    "loopspec: \"0.1\"\n"
    "id: oomfacts\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: think, kind: agent, harness: cli, prompt: \"round ${state.n}\", "
    "on_done: { incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 2}\" }\n"
    "caps: { max_iterations: 5, budget: { tokens: 1000, usd: 1.0, wallclock: 1h } }\n";

/* Make the run in a child (the agent's script answers "fine"). */
static void make_run(void)
{
    static const char script[] = "#!/bin/sh\necho fine\n";
    FILE *f = fopen(t_path("agent.sh"), "w");
    int status = -1;
    pid_t pid;

    T_REQUIRE(f && fwrite(script, 1, sizeof(script) - 1, f) == sizeof(script) - 1);
    T_REQUIRE(fclose(f) == 0 && chmod(t_path("agent.sh"), 0755) == 0);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        lil_store *st = NULL;
        lil_spec *spec = NULL;
        lil_loop *lp = NULL;
        lil_loop_result res;

        memset(&res, 0, sizeof(res));
        setenv("LIL_AGENT_CMD", t_path("agent.sh"), 1);
        setenv("LIL_AGENT_MAX_TOKENS", "100", 1);
        if (lil_store_open(NULL, t_path("st"), &st) != LIL_OK ||
            lil_spec_parse(NULL, "oom.yaml", spec_text, strlen(spec_text), NULL,
                           &spec) != LIL_OK ||
            lil_loop_open(st, spec, NULL, &lp) != LIL_OK ||
            lil_loop_run(lp, &res) != LIL_OK)
            _exit(9);
        _exit(res.status == LIL_LOOP_COMPLETED ? 0 : 8);
    }
    T_REQUIRE(waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Open the store and the run with env, read the facts into *out. */
static lil_status read_facts(lil_env *env, lil_bytes *out)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_status rc = lil_store_open(env, t_path("st"), &st);

    if (rc == LIL_OK)
        rc = lil_run_open(st, "oomfacts", &ro, &run);
    if (rc == LIL_OK)
        rc = lil_loop_facts(run, out);
    lil_run_close(run);
    lil_store_close(st);
    return rc;
}

/* The facts with allocation k failing; 1 when no k-th allocation came. */
static int facts_failing_at(unsigned long k, const lil_bytes *want)
{
    struct t_alloc a = {0};
    lil_env *env = NULL;
    lil_bytes out = {NULL, 0};
    lil_status rc;
    int over;

    if (lil_env_new(&env) != LIL_OK || t_alloc_install(env, &a) != LIL_OK) {
        t_fail();
        lil_env_free(env);
        return 1;
    }
    a.fail_at = k;
    rc = read_facts(env, &out);
    over = a.failed == 0;
    if (!(rc == LIL_OK || (a.failed && rc == LIL_E_NOMEM))) {
        fprintf(stderr, "  allocation #%lu: %s (%s)\n", k, lil_status_name(rc),
                lil_errmsg());
        t_fail();
    }
    /* the wallclock's elapsed counts to the last record: the run has ended */
    if (rc == LIL_OK &&
        (out.len != want->len || memcmp(out.data, want->data, out.len) != 0)) {
        fprintf(stderr, "  allocation #%lu: other facts:\n    %s\n", k,
                (const char *)out.data);
        t_fail();
    }
    lil_free(out.data);
    lil_env_free(env);
    if (a.live != 0) {
        fprintf(stderr, "  allocation #%lu: %ld blocks left\n", k, a.live);
        t_fail();
    }
    return over;
}

T_TEST(allocation_failures)
{
    lil_bytes want = {NULL, 0};
    unsigned long k = 1;

    make_run();
    T_OK(read_facts(NULL, &want));
    T_REQUIRE(want.data && strstr(want.data, "\"status\":\"completed\""));
    while (k < 100000ul && !facts_failing_at(k, &want))
        k++;
    printf("lil_loop_facts: allocations 1..%lu failed in turn\n", k - 1);
    T_CHECK(k > 50); /* the sweep reached the fold */
    lil_free(want.data);
}

T_MAIN()
