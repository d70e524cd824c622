/*
 * fuzz_mcp.c -- libFuzzer target: bytes as what a client sends `lil mcp`.
 *
 * The input is cut at its newlines into messages, as the stdio transport
 * cuts its input.  Each goes through mcp_rpc_decode alone, then through a
 * whole server (cli/mcp/: the method table, argument checks, the read
 * tools, resources, subscriptions, prompts) with --read-only, over the
 * memory store "mem:fuzz", one session, every message in turn on one out
 * that checks and drops what it is given; then one tick (the subscribed
 * runs looked at) and the server freed.  So a seed can initialize a session
 * and then call tools with hostile arguments.
 *
 * The store holds, made once per process: a loop run paused at a
 * breakpoint ("fz-paused"), a loop run completed ("fz-done"), a program run
 * with steps and an uncertain effect ("fz-prog").  --spec-root is a
 * directory with a valid spec (ok.yaml) and a broken one (bad.yaml).
 *
 * Invariants (a violation traps, so the fuzzer keeps the input):
 *  - mcp_rpc_decode gives exactly one of a message and an error; an error
 *    is a JSON-RPC error response with code -32700 or -32600;
 *  - everything the server sends is a JSON-RPC 2.0 message (an object with
 *    "jsonrpc": "2.0"; a response has an id and exactly one of result and
 *    error, an error a code and a message), or an array of responses;
 *  - every request is answered or dropped by the time the server is freed:
 *    nothing is left pending on the out;
 *  - no crash, no leak, no hang (ASan, LeakSanitizer, libFuzzer's timeout).
 */
#define _GNU_SOURCE
#include <lil/lil.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "mcp/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STORE      "mem:fuzz"
#define MAX_LINES  64 /* messages taken from one input */
#define FUZZ_STEPS 3

static const char SPEC_OK[] =
    "loopspec: \"0.1\"\nid: fz\npattern: react\n"
    "state:\n  vars:\n    n: {type: int, init: 0}\n"
    "body:\n  - id: think\n    kind: agent\n    harness: internal\n    prompt: noop\n"
    "    on_done:\n      incr: n\n"
    "  - id: gate\n    kind: breakpoint\n    when: \"${state.n == 1}\"\n"
    "    ask: \"go on with ${state.n}?\"\n"
    "terminate:\n  signal: state-predicate\n  until: \"${state.n >= 2}\"\n"
    "caps:\n  max_iterations: 6\n  budget: {tokens: 100000}\n"
    "  no_progress: {fingerprint: \"${state.n}\", max_repeats: 5}\n";

static const char SPEC_BAD[] =
    "loopspec: \"0.1\"\nid: fz-bad\npattern: nope\nbody: 3\n";

static char spec_root[4096];

/* ---- the store, made once ------------------------------------------------- */

static void write_file(const char *name, const char *text)
{
    char path[4200];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", spec_root, name);
    f = fopen(path, "w");
    if (!f || fputs(text, f) == EOF || fclose(f) != 0)
        fuzz_fail("cannot write %s", path);
}

/* A loop run of ok.yaml as run_id, run until it stops (the breakpoint
 * pauses it), then approved and run on when finish is set. */
static void make_loop_run(lil_store *st, const lil_spec *spec, const char *run_id,
                          bool finish)
{
    lil_loop_opts opts = {
        .struct_size = sizeof(opts), .run_id = run_id, .sync = LIL_SYNC_OFF};
    lil_loop_result res = {0};
    lil_loop *lp = NULL;

    if (lil_loop_open(st, spec, &opts, &lp) != LIL_OK ||
        lil_loop_run(lp, &res) != LIL_OK)
        fuzz_fail("loop run %s: %s", run_id, lil_store_errmsg(st));
    lil_loop_result_free(&res);
    if (finish &&
        (lil_loop_approve(lp, "fuzz", "a finished run for the seeds", &res) != LIL_OK))
        fuzz_fail("loop approve %s: %s", run_id, lil_store_errmsg(st));
    if (finish)
        lil_loop_result_free(&res);
    if (lil_loop_close(lp) != LIL_OK)
        fuzz_fail("loop close %s", run_id);
}

static int step_fn(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "{\"ok\":true}", 11) == LIL_OK ? 0 : -1;
}

/* A program run: a few steps, then an effect begun and given up (its
 * intent without an outcome: uncertain once the run is closed). */
static void make_program_run(lil_store *st)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_OFF, 0, 0};
    lil_run *run = NULL;
    lil_call *call = NULL;

    if (lil_run_open(st, "fz-prog", &ro, &run) != LIL_OK)
        fuzz_fail("run open fz-prog: %s", lil_store_errmsg(st));
    for (int i = 0; i < FUZZ_STEPS; i++)
        if (lil_step(run, "fetch", step_fn, NULL, NULL) != LIL_OK)
            fuzz_fail("step: %s", lil_run_errmsg(run));
    if (lil_effect_begin(run, "charge", "{\"usd\":1}", 9, &call, NULL) != LIL_OK ||
        lil_call_cancel(call) != LIL_OK)
        fuzz_fail("effect: %s", lil_run_errmsg(run));
    lil_run_close(run);
}

static void set_up(void)
{
    lil_store *st = NULL;
    lil_spec *spec = NULL;

    if (spec_root[0])
        return;
    snprintf(spec_root, sizeof(spec_root), "%s", fuzz_temp_dir("lil-fuzz-mcp"));
    write_file("ok.yaml", SPEC_OK);
    write_file("bad.yaml", SPEC_BAD);
    if (lil_store_open(fuzz_env(), STORE, &st) != LIL_OK)
        fuzz_fail("lil_store_open %s: %s", STORE, lil_errmsg());
    if (lil_spec_parse(fuzz_env(), "ok.yaml", SPEC_OK, sizeof(SPEC_OK) - 1, NULL,
                       &spec) != LIL_OK ||
        !lil_spec_ok(spec))
        fuzz_fail("the target's own spec does not load");
    make_loop_run(st, spec, "fz-paused", false);
    make_loop_run(st, spec, "fz-done", true);
    make_program_run(st);
    lil_spec_free(spec);
    lil_store_close(st);
}

/* ---- what the server sends ------------------------------------------------ */

struct fuzz_out {
    struct mcp_out base;
    size_t done_calls;
};

static void check_error_object(json_t *err)
{
    if (!json_is_integer(json_object_get(err, "code")) ||
        !json_is_string(json_object_get(err, "message")))
        fuzz_fail("an error without an integer code and a message");
}

/* One JSON-RPC 2.0 message: a response or a notification. */
static void check_message(json_t *msg)
{
    json_t *result, *error;

    if (!json_is_object(msg))
        fuzz_fail("sent something that is no JSON object");
    if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0)
        fuzz_fail("sent a message without \"jsonrpc\": \"2.0\"");
    if (json_is_string(json_object_get(msg, "method")))
        return; /* a notification (progress, resources/updated, ...) */
    if (!json_object_get(msg, "id"))
        fuzz_fail("a response without an id");
    result = json_object_get(msg, "result");
    error = json_object_get(msg, "error");
    if ((result != NULL) == (error != NULL))
        fuzz_fail("a response needs exactly one of result and error");
    if (error)
        check_error_object(error);
    else if (!json_is_object(result))
        fuzz_fail("a result that is no object");
}

/* FUZZ_VERBOSE=1: what the server sends, on stderr (to see how far a seed
 * goes). */
static void show(const char *what, json_t *msg)
{
    char *text;

    if (!getenv("FUZZ_VERBOSE"))
        return;
    text = json_dumps(msg, JSON_COMPACT);
    fprintf(stderr, "%s %.600s\n", what, text ? text : "?");
    free(text);
}

static void out_send(struct mcp_out *o, json_t *msg)
{
    (void)o;
    show("<-", msg);
    if (!json_is_array(msg)) {
        check_message(msg);
        return;
    }
    if (json_array_size(msg) == 0)
        fuzz_fail("sent an empty batch");
    for (size_t i = 0; i < json_array_size(msg); i++)
        check_message(json_array_get(msg, i));
}

static void out_done(struct mcp_out *o)
{
    ((struct fuzz_out *)o)->done_calls++;
}

static void session_notify(struct mcp_session *s, json_t *msg)
{
    (void)s;
    show("<~", msg);
    check_message(msg);
}

/* ---- one input ------------------------------------------------------------ */

/* mcp_rpc_decode alone: exactly one of a message and an error. */
static void check_decode(const char *buf, size_t len)
{
    json_t *msg = NULL, *err = NULL, *code;
    enum mcp_kind kind;

    mcp_rpc_decode(buf, len, &msg, &kind, &err);
    if ((msg != NULL) == (err != NULL))
        fuzz_fail("decode gave %s", msg ? "a message and an error" : "nothing");
    if (err) {
        check_message(err);
        code = json_object_get(json_object_get(err, "error"), "code");
        if (json_integer_value(code) != MCP_PARSE_ERROR &&
            json_integer_value(code) != MCP_INVALID_REQUEST)
            fuzz_fail("decode error %lld", (long long)json_integer_value(code));
    }
    json_decref(msg);
    json_decref(err);
}

static struct mcp_server *new_server(void)
{
    struct mcp_opts opts = {0};
    struct mcp_server *srv = NULL;
    lil_store *st = NULL;

    opts.store = STORE;
    opts.read_only = true;
    opts.spec_root = spec_root;
    opts.lil_exe = "/nonexistent/lil"; /* read-only: no child is ever started */
    if (lil_store_open(fuzz_env(), STORE, &st) != LIL_OK)
        fuzz_fail("lil_store_open %s: %s", STORE, lil_errmsg());
    if (mcp_server_new(&opts, st, &srv) != 0)
        fuzz_fail("mcp_server_new");
    return srv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data, *end = buf + size;
    struct fuzz_out out = {{out_send, out_done, 0, 0}, 0};
    struct mcp_server *srv;
    struct mcp_session *s;
    int lines = 0;

    set_up();
    srv = new_server();
    s = mcp_session_new(srv);
    if (!s)
        fuzz_fail("mcp_session_new");
    s->notify = session_notify;
    while (buf < end && lines++ < MAX_LINES) {
        const char *nl = memchr(buf, '\n', (size_t)(end - buf));
        size_t len = (size_t)((nl ? nl : end) - buf);

        check_decode(buf, len);
        mcp_receive(srv, s, buf, len, &out.base);
        buf += len + (nl != NULL);
    }
    mcp_server_tick(srv);
    mcp_server_free(srv);
    if (out.base.pending != 0)
        fuzz_fail("%zu requests neither answered nor dropped", out.base.pending);
    return 0;
}
