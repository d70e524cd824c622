/*
 * fuzz_loopfold.c -- libFuzzer target: a loop run's records, mutated in
 * what they say but written through lil.h, so framing, sequence and chain
 * are always valid and every input reaches the readers above the journal:
 * the runner's fold (lil_loop_open, which resumes it), the read API
 * (lil_run_facts, lil_run_events_with, full, brief and the last
 * iterations) and one lil_loop_step of the resumed run.
 *
 * The input is text, one record per line (the seeds in corpus/loopfold/
 * are real runs written this way):
 *
 *   S<name>\t<payload>           a step (lil_step)
 *   F<name>\t<reason>            a failed step
 *   E<name>\t<request>\t<result> an effect that completed (lil_effect)
 *   U<name>\t<request>           an effect left without an outcome
 *   R<name>\t<action>            a resolution (retry, assume-done, abort)
 *   D<payload> / X<reason>       the run's end: completed / failed
 *
 * Lines that do not parse, and calls the engine refuses (a name used
 * twice, a step after the end), are skipped: what is written is always a
 * journal lil could have written.  The spec is fixed (loop id "fz", one
 * no-op agent step, a token budget and a fingerprint), and a start
 * record's "spec" and "loopId" are set to its digest and id, so the fold
 * gets past the open's comparison of the spec.
 *
 * Oracle: clean statuses only (fuzz_check_status), every JSON the read API
 * returns parses, and ASan/UBSan see no error in the `fuzz` preset.
 * FUZZ_VERBOSE=1 prints how far each input went (the loop's open and step).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RUN_ID   "fz"
#define LINE_MAX 65536

static const char SPEC[] =
    "loopspec: \"0.1\"\nid: fz\npattern: react\n"
    "state:\n  vars:\n    n: {type: int, init: 0}\n    s: {type: string, init: \"\"}\n"
    "body:\n  - id: think\n    kind: agent\n    harness: internal\n    prompt: noop\n"
    "    on_done:\n      incr: n\n"
    "terminate:\n  signal: state-predicate\n  until: \"${state.n >= 3}\"\n"
    "caps:\n  max_iterations: 6\n  budget: {tokens: 100000}\n"
    "  no_progress: {fingerprint: \"${state.s}\", max_repeats: 5}\n";

static char store_dir[4096];
static lil_store *store;
static lil_spec *spec;

static void close_store(void)
{
    lil_spec_free(spec);
    lil_store_close(store);
}

static void set_up(void)
{
    if (store)
        return;
    snprintf(store_dir, sizeof(store_dir), "%s", fuzz_temp_dir("lil-fuzz-loopfold"));
    atexit(close_store);
    if (lil_store_open(fuzz_env(), store_dir, &store) != LIL_OK)
        fuzz_fail("lil_store_open %s: %s", store_dir, lil_errmsg());
    if (lil_spec_parse(fuzz_env(), "fz.yaml", SPEC, sizeof(SPEC) - 1, NULL, &spec) !=
            LIL_OK ||
        !lil_spec_ok(spec))
        fuzz_fail("the target's own spec does not load");
}

/* A loop call's status: LIL_OK, or a refusal that records lil could have
 * written may bring (damage, a spec or inputs the run did not start with,
 * a replay that diverges, an uncertain or ended run). */
static void check_loop_status(const char *where, lil_status s)
{
    switch (s) {
    case LIL_E_INVAL:
    case LIL_E_NONDET:
    case LIL_E_UNCERTAIN:
    case LIL_E_FAILED:
    case LIL_E_DONE:
        return;
    default:
        fuzz_check_status(where, s);
    }
}

/* ---- writing the records -------------------------------------------------- */

struct text {
    const char *s;
    size_t n;
};

static int give(lil_call *call, void *ud)
{
    const struct text *t = ud;

    return lil_call_set_result(call, t->s, t->n) == LIL_OK ? 0 : 1;
}

static int give_failure(lil_call *call, void *ud)
{
    const struct text *t = ud;

    (void)lil_call_fail(call, "%.*s", (int)t->n, t->s);
    return 1;
}

/* The fields of a line (its kind byte left out), split at tabs. */
static size_t split(char *line, char **f, size_t max)
{
    size_t n = 0;

    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

static lil_resolution resolution_of(const char *s)
{
    if (strcmp(s, "assume-done") == 0)
        return LIL_RESOLVE_ASSUME_DONE;
    if (strcmp(s, "abort") == 0)
        return LIL_RESOLVE_ABORT;
    return LIL_RESOLVE_RETRY;
}

/* A start record is bound to the target's spec: its "spec" and "loopId"
 * are set to the spec's (lil_spec_digest), so that the open's comparison
 * (docs/loops.md, "What a run is bound to") lets the fold go on; the
 * rest of the record is the input's.  *t then points into `bound`. */
static char *bound;

static void bind_start(struct text *t)
{
    json_t *v = json_loadb(t->s, t->n, 0, NULL);
    char digest[65];

    if (json_is_object(v) && lil_spec_digest(spec, digest) == LIL_OK) {
        json_object_set_new(v, "spec", json_string(digest));
        json_object_set_new(v, "loopId", json_string("fz"));
        bound = json_dumps(v, JSON_COMPACT);
        if (bound) {
            t->s = bound;
            t->n = strlen(bound);
        }
    }
    json_decref(v);
}

static void write_line(lil_run *run, char kind, char *rest)
{
    char *f[3] = {NULL, NULL, NULL};
    size_t n = split(rest, f, 3);
    struct text a = {n > 1 ? f[1] : "", n > 1 ? strlen(f[1]) : 0};
    struct text b = {n > 2 ? f[2] : "", n > 2 ? strlen(f[2]) : 0};
    lil_call *call = NULL;

    switch (kind) {
    case 'S':
        if (strcmp(f[0], "loop") == 0)
            bind_start(&a);
        (void)lil_step(run, f[0], give, &a, NULL);
        free(bound);
        bound = NULL;
        break;
    case 'F':
        (void)lil_step(run, f[0], give_failure, &a, NULL);
        break;
    case 'E':
        (void)lil_effect(run, f[0], a.s, a.n, give, &b, NULL);
        break;
    case 'U':
        if (lil_effect_begin(run, f[0], a.s, a.n, &call, NULL) == LIL_OK && call)
            (void)lil_call_cancel(call);
        break;
    case 'R':
        (void)lil_run_resolve(run, f[0], resolution_of(a.s), "{}", 2, "fuzz", "fuzz");
        break;
    case 'D':
        (void)lil_run_complete(run, f[0], strlen(f[0]));
        break;
    case 'X':
        (void)lil_run_fail(run, f[0]);
        break;
    default:
        break;
    }
}

static void write_run(const uint8_t *data, size_t size)
{
    lil_run_opts opts = {.struct_size = sizeof(opts), .sync = LIL_SYNC_OFF};
    lil_run *run = NULL;
    char *line = malloc(LINE_MAX);
    size_t at = 0;

    if (!line)
        fuzz_fail("out of memory");
    fuzz_check_status("open to write", lil_run_open(store, RUN_ID, &opts, &run));
    while (run && at < size) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (data + at)) : size - at;

        if (len > 1 && len < LINE_MAX && !memchr(data + at, '\0', len)) {
            memcpy(line, data + at + 1, len - 1);
            line[len - 1] = '\0';
            write_line(run, (char)data[at], line);
        }
        at += len + 1;
    }
    free(line);
    fuzz_check_status("close after writing", lil_run_close(run));
}

/* ---- reading it back ------------------------------------------------------ */

static void parses(const char *what, lil_status rc, lil_bytes *b)
{
    json_t *v;

    fuzz_check_status(what, rc);
    if (rc != LIL_OK)
        return;
    v = json_loadb(b->data, b->len, 0, NULL);
    if (!v)
        fuzz_fail("%s: not JSON: %.*s", what, (int)(b->len < 200 ? b->len : 200),
                  (const char *)b->data);
    json_decref(v);
    lil_free(b->data);
    b->data = NULL;
}

static void read_api(void)
{
    lil_events_opts brief = {.struct_size = sizeof(brief), .flags = LIL_EVENTS_BRIEF};
    lil_events_opts last = {.struct_size = sizeof(last), .last_iterations = 2};
    lil_events_opts state = {.struct_size = sizeof(state), .flags = LIL_EVENTS_STATE};
    lil_bytes b = {NULL, 0};

    parses("facts", lil_run_facts(store, RUN_ID, &b), &b);
    parses("events", lil_run_events(store, RUN_ID, 0, 0, &b), &b);
    parses("brief events", lil_run_events_with(store, RUN_ID, &brief, &b), &b);
    parses("last iterations", lil_run_events_with(store, RUN_ID, &last, &b), &b);
    parses("states", lil_run_events_with(store, RUN_ID, &state, &b), &b);
}

/* Resume the run as a loop: the fold, its facts, one iteration. */
static void resume_loop(void)
{
    lil_loop_opts opts = {
        .struct_size = sizeof(opts), .run_id = RUN_ID, .sync = LIL_SYNC_OFF};
    lil_loop_result res = {0};
    lil_loop *lp = NULL;
    lil_status rc = lil_loop_open(store, spec, &opts, &lp);

    /* a journal bound to another spec (a spec_changed.N naming one) is
       refused, cleanly */
    if (!(rc == LIL_E_INVAL && strstr(lil_store_errmsg(store), "is bound to spec")))
        check_loop_status("loop open", rc);
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "loop open: %s %s\n", lil_status_name(rc),
                rc == LIL_OK ? "" : lil_store_errmsg(store));
    if (rc != LIL_OK)
        return;
    check_loop_status("loop step", lil_loop_step(lp, &res));
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "loop step: %s at %lld\n", lil_loop_status_name(res.status),
                (long long)res.iteration);
    lil_loop_result_free(&res);
    check_loop_status("loop close", lil_loop_close(lp));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4200];

    set_up();
    snprintf(path, sizeof(path), "%s/%s.lil", store_dir, RUN_ID);
    (void)unlink(path);
    write_run(data, size);
    read_api();
    resume_loop();
    return 0;
}
