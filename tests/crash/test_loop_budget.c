/*
 * test_loop_budget.c -- a crash campaign of kind (a) (docs/testing.md) against
 * the budgets of agent calls (docs/loops.md, "Budgets"), black-box through
 * the `lil` binary: a loop of llm calls, one an iteration, against the
 * OpenAI-compatible server of the tests (tests/http/llm_server.py) in its
 * `bill` scenario -- each request is billed, the moment the server reads
 * it, as a call that used its whole limit, and written to the server's
 * ledger; the answer comes CALL_MS later, so that a kill often lands while
 * the server works on a call.
 *
 * Each round (one run, its own server, store and ledger) starts `lil run`
 * and SIGKILLs it at a seeded random moment, again and again; a run that
 * answers uncertain (exit 2) is recovered -- `lil recover --retry` mostly,
 * `--assume-done` or `--abort` sometimes (seeded) -- and those processes
 * are killed at random moments too, until the run ends: completed, failed
 * on its token budget (on_cap_exceeded: fail) or stopped by it
 * (exit-clean) or by the abort.  Budgets and actions vary by round, so that
 * some runs complete and some run out.
 *
 * After every attempt: `lil check RUN` finds the journal intact, and a
 * result that lil printed spends no more than the budget.  At the end of
 * every round:
 *   (a) the tokens the server billed (the ledger's sum) <= budget.tokens;
 *   (b) lil's spent total (the result's meters, read again by a new
 *       process; what calls without an outcome still hold reserved
 *       included: a retry refused by the budget leaves its crashed attempt
 *       so) <= budget.tokens, and >= what the server billed (lil never
 *       counts less than was spent);
 *   (c) `lil check RUN` says intact, and the run ended as it may: completed,
 *       failed on token-budget, stopped on token-budget or by the abort.
 *
 * Runs cycle through --sync full, normal and off.  Default: at least 100
 * kills.  `test_loop_budget --slow` (label slow): 2000.  LIL_CRASH_KILLS=N
 * and LIL_CRASH_SEED=S override the count and the seed; a failure prints
 * the seed and the round, and LIL_CRASH_ROUND=R replays that round alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "faults.h"
#include "loopcheck.h"
#include "workload.h"

#ifndef T_SERVER
#error "T_SERVER must name tests/http/llm_server.py"
#endif

#define NIT       8   /* iterations of the loop: one llm call each */
#define LIMIT     100 /* LIL_AGENT_MAX_TOKENS */
#define CALL_MS   8   /* the server answers this long after it billed */
#define MAX_KILLS 6   /* kills per run at most; then it may finish */
#define MAX_TRIES 80  /* attempts per run before the test gives up */
#define RUN_ID    "budgetloop"

static long kills_target = 100;
static uint64_t seed0 = 0xb0d9e7ull;

static const char *const mode_names[3] = {"full", "normal", "off"};

struct stats {
    long kills, rounds, attempts, uncertain, retries, assumed, aborted;
    long completed, capped;
    int64_t billed, spent, budget;
};

/* One run of the campaign: its files, its server, what it does next. */
struct round {
    long no;
    int mode;
    uint64_t rng;
    int64_t budget;
    bool exit_clean;
    char dir[512], store[600], spec[600], out[600], ledger[600], ctx[200];
    pid_t server;
    int server_in;
    char url[96];
};

enum next { NEXT_RUN, NEXT_RETRY, NEXT_ASSUME, NEXT_ABORT };

/* Timing of an uninterrupted run (calibrate). */
static int64_t startup_us, call_us;

/* ---- the server --------------------------------------------------------------- */

static int server_start(struct round *r)
{
    int in[2], out[2];
    char line[32] = {0};
    FILE *f;

    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        return -1;
    r->server = fork();
    if (r->server == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execlp("python3", "python3", T_SERVER, "--ledger", r->ledger, "--max-tokens",
               "100", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    r->server_in = in[1];
    f = fdopen(out[0], "r");
    if (!f || !fgets(line, sizeof(line), f) || atoi(line) <= 0) {
        fprintf(stderr, "  [%s] the llm server did not start\n", r->ctx);
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    snprintf(r->url, sizeof(r->url), "http://127.0.0.1:%d/bill/%d/v1", atoi(line),
             CALL_MS);
    return setenv("LIL_LLM_BASE_URL", r->url, 1);
}

static void server_stop(struct round *r)
{
    if (r->server_in >= 0)
        close(r->server_in);
    r->server_in = -1;
    if (r->server > 0)
        while (waitpid(r->server, NULL, 0) < 0 && errno == EINTR)
            ;
    r->server = 0;
}

/* The ledger's sum of billed tokens; *requests counts its lines. */
static int64_t billed(const struct round *r, long *requests)
{
    FILE *f = fopen(r->ledger, "r");
    char line[512];
    int64_t sum = 0;

    *requests = 0;
    while (f && fgets(line, sizeof(line), f)) {
        json_t *v = json_loads(line, 0, NULL);

        sum += json_integer_value(json_object_get(v, "prompt_tokens")) +
               json_integer_value(json_object_get(v, "completion_tokens"));
        (*requests)++;
        json_decref(v);
    }
    if (f)
        fclose(f);
    return sum;
}

/* ---- the round ----------------------------------------------------------------- */

static int spec_write(const struct round *r)
{
    FILE *f = fopen(r->spec, "w");

    if (!f)
        return -1;
    fprintf(f,
            "loopspec: \"0.1\"\n"
            "id: budgetloop\n"
            "pattern: react\n"
            "state: {vars: {n: {type: int, init: 0}}}\n"
            "body:\n"
            "  - id: think\n"
            "    kind: agent\n"
            "    harness: llm\n"
            "    prompt: \"round ${state.n}\"\n"
            "    on_done: {incr: n}\n"
            "terminate: {signal: state-predicate, until: \"${state.n >= %d}\"}\n"
            "caps:\n"
            "  max_iterations: 50\n"
            "  on_cap_exceeded: %s\n"
            "  budget: {tokens: %lld}\n",
            NIT, r->exit_clean ? "exit-clean" : "fail", (long long)r->budget);
    return fclose(f);
}

static void round_init(struct round *r, long no)
{
    static const int64_t budgets[] = {1500, 1900, 2300, 2600};

    memset(r, 0, sizeof(*r));
    r->no = no;
    r->mode = (int)(no % 3);
    r->rng = seed0 ^ ((uint64_t)(no + 1) * 0x9e3779b97f4a7c15ull);
    (void)t_rand(&r->rng);
    r->budget = budgets[t_rand_below(&r->rng, 4)];
    r->exit_clean = t_rand_below(&r->rng, 2) == 0;
    r->server_in = -1;
    snprintf(r->dir, sizeof(r->dir), "%s", t_path("round"));
    snprintf(r->store, sizeof(r->store), "%s/store", r->dir);
    snprintf(r->spec, sizeof(r->spec), "%s/loop.yaml", r->dir);
    snprintf(r->out, sizeof(r->out), "%s/out.txt", r->dir);
    snprintf(r->ledger, sizeof(r->ledger), "%s/ledger.jsonl", r->dir);
    snprintf(r->ctx, sizeof(r->ctx),
             "loop budget seed=%#llx round=%ld sync=%s budget=%lld %s",
             (unsigned long long)seed0, no, mode_names[r->mode], (long long)r->budget,
             r->exit_clean ? "exit-clean" : "fail");
}

/* The command of the next attempt. */
static void argv_of(const struct round *r, enum next next, char **argv)
{
    static char dir_opt[] = "--dir", json_opt[] = "--json", run[] = "run",
                recover[] = "recover", sync[] = "--sync", retry[] = "--retry",
                assume[] = "--assume-done", abort_opt[] = "--abort",
                result[] = "--result-json", assumed[] = "{\"ok\":true}",
                reason[] = "--reason", why[] = "crash test";
    static char mode[3][8] = {"full", "normal", "off"};
    static char bin[4096], store[600], spec[600];
    int i = 0;

    snprintf(bin, sizeof(bin), "%s", t_lil_bin());
    snprintf(store, sizeof(store), "%s", r->store);
    snprintf(spec, sizeof(spec), "%s", r->spec);
    argv[i++] = bin;
    argv[i++] = dir_opt;
    argv[i++] = store;
    argv[i++] = json_opt;
    argv[i++] = next == NEXT_RUN ? run : recover;
    argv[i++] = spec;
    if (next == NEXT_RUN) {
        argv[i++] = sync;
        argv[i++] = mode[r->mode];
    } else {
        argv[i++] = next == NEXT_RETRY    ? retry
                    : next == NEXT_ASSUME ? assume
                                          : abort_opt;
        if (next == NEXT_ASSUME) {
            argv[i++] = result;
            argv[i++] = assumed;
        }
        argv[i++] = reason;
        argv[i++] = why;
    }
    argv[i] = NULL;
}

/* The result lil printed (its one JSON line in out), or NULL. */
static json_t *result_of(const char *out)
{
    FILE *f = fopen(out, "r");
    char line[16384];
    json_t *v = NULL;

    while (f && !v && fgets(line, sizeof(line), f))
        if (line[0] == '{')
            v = json_loads(line, 0, NULL);
    if (f)
        fclose(f);
    return v;
}

/* The token meter of a result: spent (used, since no approval moves the
 * base) and reserved; false when it has none. */
static bool spent_of(json_t *res, int64_t *spent, int64_t *reserved)
{
    json_t *t = json_object_get(json_object_get(res, "meters"), "tokens");

    *spent = json_integer_value(json_object_get(t, "used")) +
             json_integer_value(json_object_get(t, "base"));
    *reserved = json_integer_value(json_object_get(t, "reserved"));
    return json_is_object(t);
}

/* `lil check RUN`: intact (or no journal yet). */
static int check_journal(const struct round *r)
{
    char cmd[2048], out[4096], path[700];
    struct stat sb;
    int rc;

    snprintf(path, sizeof(path), "%s/%s.lil", r->store, RUN_ID);
    if (stat(path, &sb) != 0)
        return 0;
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' check %s", t_lil_bin(), r->store,
             RUN_ID);
    rc = t_run(cmd, out, sizeof(out), 1);
    if (rc == 0 && strstr(out, "intact"))
        return 0;
    fprintf(stderr, "  VIOLATION [%s] lil check: exit %d: %s\n", r->ctx, rc, out);
    return 1;
}

/* How a run may end: completed, failed on its token budget (fail),
 * stopped on it (exit-clean) or by an abort. */
static bool ended_as_it_may(int code, const char *reason)
{
    if (code == 0)
        return true;
    if (!reason || (code != 1 && code != 5))
        return false;
    return strcmp(reason, "token-budget") == 0 ||
           (code == 5 && strncmp(reason, "aborted by", 10) == 0);
}

/* An attempt that lil finished: what comes next (0: go on with *next, 1:
 * the run ended, -1: a violation, printed). */
static int after_exit(struct round *r, const struct t_exec_res *x, enum next *next,
                      struct stats *st)
{
    json_t *res = result_of(r->out);
    int64_t spent = 0, reserved = 0;
    int end;

    if (res && spent_of(res, &spent, &reserved) && spent > r->budget) {
        fprintf(stderr, "  VIOLATION [%s] lil spent %lld of %lld\n", r->ctx,
                (long long)spent, (long long)r->budget);
        end = -1;
    } else if (x->code == 2) {
        uint64_t d = t_rand_below(&r->rng, 10);

        st->uncertain++;
        *next = d < 7 ? NEXT_RETRY : d < 9 ? NEXT_ASSUME : NEXT_ABORT;
        end = 0;
    } else if (ended_as_it_may(x->code,
                               json_string_value(json_object_get(res, "reason")))) {
        end = 1;
    } else {
        fprintf(stderr, "  VIOLATION [%s] lil exited %d (signal %d):\n", r->ctx,
                x->code, x->sig);
        t_dump_file(r->out);
        end = -1;
    }
    json_decref(res);
    return end;
}

/* The checks at the end of a run. */
static int verify_final(struct round *r, struct stats *st)
{
    char cmd[2048], out[16384];
    int64_t spent = 0, reserved = 0, bill;
    long requests;
    json_t *res;
    const char *status;
    int errors = check_journal(r), rc;

    snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' --dir '%s' --json run '%s'", r->dir,
             t_lil_bin(), r->store, r->spec);
    rc = t_run(cmd, out, sizeof(out), 0);
    res = json_loads(out, 0, NULL);
    status = json_string_value(json_object_get(res, "status"));
    server_stop(r); /* every request it read is in the ledger */
    bill = billed(r, &requests);
    if (!status || !spent_of(res, &spent, &reserved) ||
        strcmp(status, "uncertain") == 0 || strcmp(status, "paused") == 0) {
        fprintf(stderr, "  VIOLATION [%s] the ended run reads back as: exit %d: %s\n",
                r->ctx, rc, out);
        errors++;
    }
    if (bill > r->budget || spent > r->budget || bill > spent) {
        fprintf(stderr,
                "  VIOLATION [%s] the server billed %lld tokens in %ld requests, lil "
                "counts %lld spent, the budget is %lld\n",
                r->ctx, (long long)bill, requests, (long long)spent,
                (long long)r->budget);
        errors++;
    }
    st->completed += status && strcmp(status, "completed") == 0;
    st->capped +=
        json_is_string(json_object_get(res, "reason")) &&
        strcmp(json_string_value(json_object_get(res, "reason")), "token-budget") == 0;
    st->billed += bill;
    st->spent += spent;
    st->budget += r->budget;
    json_decref(res);
    return errors;
}

/* When to kill the next attempt: anywhere in a run. */
static int64_t kill_time(struct round *r)
{
    int64_t span = startup_us + NIT * call_us;

    return (int64_t)t_rand_below(&r->rng, (uint64_t)(span + span / 8 + 1));
}

/* Attempts until the run ends.  Returns problems. */
static int attempts(struct round *r, struct stats *st)
{
    enum next next = NEXT_RUN;
    char *argv[16];
    int errors = 0, kills = 0;

    for (int attempt = 1; errors == 0; attempt++) {
        struct t_exec_res x;
        int64_t when = kills < MAX_KILLS ? kill_time(r) : -1;
        int end;

        if (attempt > MAX_TRIES) {
            fprintf(stderr, "  [%s] no end after %d attempts\n", r->ctx, MAX_TRIES);
            return errors + 1;
        }
        argv_of(r, next, argv);
        st->retries += next == NEXT_RETRY;
        st->assumed += next == NEXT_ASSUME;
        st->aborted += next == NEXT_ABORT;
        if (t_exec(argv, r->dir, r->out, when, &x) != 0)
            return errors + 1;
        st->attempts++;
        errors += check_journal(r);
        if (x.killed) {
            kills++;
            st->kills++;
            next = NEXT_RUN;
            continue;
        }
        end = after_exit(r, &x, &next, st);
        if (end < 0)
            errors++;
        if (end != 0)
            break;
    }
    return errors;
}

/* The run's records, as `lil log` shows them (a failure's evidence). */
static void dump_log(const struct round *r)
{
    char cmd[2048], out[65536];

    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' log %s", t_lil_bin(), r->store, RUN_ID);
    (void)t_run(cmd, out, sizeof(out), 1);
    fprintf(stderr, "  [%s] the journal:\n%s\n", r->ctx, out);
}

static int one_round(long no, struct stats *st)
{
    struct round r;
    int errors;

    round_init(&r, no);
    t_rmtree(r.dir);
    if (mkdir(r.dir, 0700) != 0 || spec_write(&r) != 0 || server_start(&r) != 0) {
        server_stop(&r);
        return 1;
    }
    errors = attempts(&r, st);
    if (errors == 0)
        errors += verify_final(&r, st);
    server_stop(&r);
    if (errors) {
        dump_log(&r);
        fprintf(stderr,
                "  [%s] failed: LIL_CRASH_SEED=%#llx LIL_CRASH_ROUND=%ld replays it\n",
                r.ctx, (unsigned long long)seed0, no);
    }
    return errors;
}

/* Time an uninterrupted run and a run of an ended loop. */
static void calibrate(void)
{
    struct round r;
    struct t_exec_res x;
    char *argv[16];

    round_init(&r, 1000000);
    r.budget = 100000; /* room for every call */
    t_rmtree(r.dir);
    T_CHECK(mkdir(r.dir, 0700) == 0 && spec_write(&r) == 0 && server_start(&r) == 0);
    argv_of(&r, NEXT_RUN, argv);
    T_CHECK(t_exec(argv, r.dir, r.out, -1, &x) == 0 && x.exited && x.code == 0);
    call_us = x.us;
    T_CHECK(t_exec(argv, r.dir, r.out, -1, &x) == 0 && x.exited && x.code == 0);
    startup_us = x.us;
    server_stop(&r);
    call_us = (call_us - startup_us) / NIT;
    if (call_us < CALL_MS * 1000)
        call_us = CALL_MS * 1000;
}

static void environment(void)
{
    static const char *const drop[] = {"http_proxy",
                                       "HTTP_PROXY",
                                       "all_proxy",
                                       "ALL_PROXY",
                                       "OPENAI_API_KEY",
                                       "ANTHROPIC_API_KEY",
                                       "GEMINI_API_KEY",
                                       "GROQ_API_KEY",
                                       "OPENROUTER_API_KEY",
                                       "AI_GATEWAY_API_KEY",
                                       "LIL_LLM_HEADERS",
                                       "LIL_LLM_STREAM",
                                       "LOOPY_LLM_MODEL",
                                       "LIL_LLM_PRICE_IN",
                                       "LIL_LLM_PRICE_OUT",
                                       "LIL_DIR",
                                       "LOOPY_AGENT_MAX_TOKENS",
                                       "LIL_SYNC",
                                       "LIL_JOURNAL_KEY"};

    for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
        unsetenv(drop[i]);
    setenv("LIL_LLM_API_KEY", "sk-crash-test", 1);
    setenv("LIL_LLM_MODEL", "gpt-4o-mini", 1);
    setenv("LIL_AGENT_MAX_TOKENS", "100", 1);
}

T_TEST(loop_budget_campaign)
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
    environment();
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
    T_CHECK(only >= 0 || st.uncertain > 0);
    printf("loop budget: seed %#llx, %ld kills over %ld runs, %ld attempts; %ld "
           "uncertain answers, recovered %ld with retry, %ld with assume-done, %ld "
           "aborted; %ld runs completed, %ld ended on their token budget; billed "
           "%lld tokens, lil counted %lld spent, of %lld budgeted; run %lld us, call "
           "%lld us, start %lld us\n",
           (unsigned long long)seed0, st.kills, st.rounds, st.attempts, st.uncertain,
           st.retries, st.assumed, st.aborted, st.completed, st.capped,
           (long long)st.billed, (long long)st.spent, (long long)st.budget,
           (long long)(startup_us + NIT * call_us), (long long)call_us,
           (long long)startup_us);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        kills_target = 2000;
        return t_main(argc - 1, argv + 1);
    }
    return t_main(argc, argv);
}
