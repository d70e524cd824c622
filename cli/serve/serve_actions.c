/*
 * serve_actions.c -- the actions of `lil serve` (serve.h, docs/serve.md
 * "Actions"): POST /api/runs/{id}/stop, /approve, /recover, /resume.
 *
 * The router has already checked the session, the CSRF token, the Origin
 * and --read-only.  Every action needs a reason (1 to 1000 bytes of UTF-8,
 * no control character but newline and tab) and journals it with the
 * actor web:<user>.  What each action may do is decided from the run's
 * facts (lil_run_facts), and a refusal names what the run is now (409).
 *
 * A stop is published here (lil_loop_request_stop: no lock, the loop's
 * own process honours it).  What runs a loop's steps -- approve, recover,
 * resume -- runs in a child, the `lil` binary's verb on the spec the run's
 * journal names, held under --spec-root (403 otherwise), and answers 202
 * with its job (serve_jobs.c).  A program run's uncertain effect is
 * resolved here (lil_run_resolve): the run's program goes on by itself.
 *
 * What the journal says reaches a child only as argv entries (never a
 * shell), and only once checked: the spec's path is a real path under the
 * root, a pause id has the form NAME.N, a digest is hex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../spec_root.h"
#include "serve_jobs.h"

#define REASON_MAX 1000 /* bytes of a reason, as the loop verbs take it */
#define ACTOR_MAX  256
#define ARGV_MAX   24

/* One action on one run, once its reason and the run's facts are known. */
struct action {
    struct serve_call *c;
    struct serve_answer *a;
    const char *run;
    const char *reason;
    char actor[ACTOR_MAX];
    json_t *facts; /* lil_run_facts of the run */
};

/* ---- checks ------------------------------------------------------------------ */

/* Is text (len bytes) UTF-8 without control characters but \n and \t? */
static bool reason_text_ok(const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text;

    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = cli_utf8_decode(p + i, len - i, &cp);

        if (k == 0)
            return false;
        if ((cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7f && cp <= 0x9f))
            return false;
        i += k;
    }
    return true;
}

/* The body's "reason", checked: NULL once a is answered 400. */
static const char *body_reason(struct serve_call *c, struct serve_answer *a)
{
    json_t *r = json_object_get(c->body, "reason");
    size_t len = json_string_length(r);

    if (!json_is_string(r) || len == 0) {
        serve_fail(a, 400, "a reason is required: why (journaled with the actor)");
        return NULL;
    }
    if (len > REASON_MAX) {
        serve_fail(a, 400, "the reason is %zu bytes: at most %d", len, REASON_MAX);
        return NULL;
    }
    if (!reason_text_ok(json_string_value(r), len)) {
        serve_fail(a, 400,
                   "the reason holds a control character (only newline and "
                   "tab are taken)");
        return NULL;
    }
    return json_string_value(r);
}

static unsigned status_code(lil_status rc)
{
    switch (rc) {
    case LIL_E_NOTFOUND:
        return 404;
    case LIL_E_DONE:
    case LIL_E_LOCKED:
    case LIL_E_INVAL:
    case LIL_E_UNCERTAIN:
        return 409;
    default:
        return 500;
    }
}

/* The run's facts: a new reference, or NULL once a is answered. */
static json_t *run_facts(struct serve *srv, const char *run, struct serve_answer *a)
{
    lil_bytes b = {0};
    lil_status rc = lil_run_facts(srv->store, run, &b);
    json_t *facts = NULL;

    if (rc == LIL_E_NOTFOUND) {
        serve_fail(a, 404, "no run %s in this store", run);
        return NULL;
    }
    if (rc != LIL_OK) {
        serve_fail(a, status_code(rc), "run %s: %s", run, lil_store_errmsg(srv->store));
        return NULL;
    }
    facts = json_loadb((const char *)b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!json_is_object(facts)) {
        json_decref(facts);
        serve_fail(a, 500, "run %s: its facts are not a JSON object", run);
        return NULL;
    }
    return facts;
}

/* What every action does first: the reason, the actor, the facts.  0, or
 * -1 once a is answered. */
static int action_begin(struct serve_call *c, struct serve_answer *a,
                        struct action *act)
{
    memset(act, 0, sizeof(*act));
    act->c = c;
    act->a = a;
    act->run = c->arg;
    act->reason = body_reason(c, a);
    if (!act->reason)
        return -1;
    serve_actor(c->sess, act->actor, sizeof(act->actor));
    act->facts = run_facts(c->srv, act->run, a);
    return act->facts ? 0 : -1;
}

static const char *fact_str(const struct action *act, const char *key)
{
    const char *v = json_string_value(json_object_get(act->facts, key));

    return v ? v : "";
}

static bool is_loop(const struct action *act)
{
    return strcmp(fact_str(act, "kind"), "loop") == 0;
}

/* The pid holding the run (a process runs it now), or 0. */
static json_int_t holder_pid(const struct action *act)
{
    json_t *h = json_object_get(act->facts, "holder");

    return json_is_object(h) ? json_integer_value(json_object_get(h, "pid")) : 0;
}

/* A loop run, else a answered 409 saying what verb is for. */
static bool loop_only(struct action *act, const char *verb)
{
    if (is_loop(act))
        return true;
    serve_fail(act->a, 409, "%s is for loop runs: run %s is a %s run", verb, act->run,
               *fact_str(act, "kind") ? fact_str(act, "kind") : "program");
    return false;
}

/* ---- the spec and the child --------------------------------------------------- */

/* The spec the run's journal names, held under --spec-root: a new string,
 * or NULL once a is answered 403. */
static char *run_spec(struct action *act)
{
    json_t *loop = json_object_get(act->facts, "loop");
    const char *root = act->c->srv->opts.spec_root;
    char msg[1024], *real;

    if (!root) {
        serve_fail(act->a, 403, "run %s: no --spec-root: no spec may be run", act->run);
        return NULL;
    }
    real = cli_spec_root_run_path(
        root, json_string_value(json_object_get(loop, "spec_path")),
        json_string_value(json_object_get(loop, "cwd")), msg, sizeof(msg));
    if (!real)
        serve_fail(act->a, 403, "run %s: %s", act->run, msg);
    return real;
}

/* Start `lil VERB SPEC --run-id ID --actor A --reason R EXTRA... --json
 * --progress json` as a job; a is answered 202 with it. */
static void start_child(struct action *act, const char *verb, const char *const *extra)
{
    struct serve_job_what w = {verb, act->run, act->actor, act->reason};
    const char *argv[ARGV_MAX];
    char *spec = run_spec(act), msg[512];
    json_t *job;
    size_t n = 0;

    if (!spec)
        return;
    argv[n++] = verb;
    argv[n++] = spec;
    argv[n++] = "--run-id";
    argv[n++] = act->run;
    argv[n++] = "--actor";
    argv[n++] = act->actor;
    argv[n++] = "--reason";
    argv[n++] = act->reason;
    for (size_t i = 0; extra && extra[i] && n < ARGV_MAX - 4; i++)
        argv[n++] = extra[i];
    argv[n++] = "--json";
    argv[n++] = "--progress";
    argv[n++] = "json";
    argv[n] = NULL;
    job = serve_job_start(act->c->srv, &w, argv, msg, sizeof(msg));
    free(spec);
    if (!job) {
        serve_fail(act->a, 500, "%s", msg);
        return;
    }
    serve_ok(act->a, json_pack("{s:o}", "job", job));
    if (act->a->status == 200)
        act->a->status = 202;
}

/* ---- stop ------------------------------------------------------------------------ */

/* The stop request pending for the run (a new reference), or null. */
static json_t *pending_stop(struct serve *srv, const char *run)
{
    lil_bytes b = {0};
    json_t *req = NULL;

    if (lil_loop_stop_pending(srv->store, run, &b) == LIL_OK)
        req = json_loadb((const char *)b.data, b.len, 0, NULL);
    lil_free(b.data);
    return req ? req : json_null();
}

void serve_post_stop(struct serve_call *c, struct serve_answer *a)
{
    struct action act;
    lil_status rc;

    if (action_begin(c, a, &act) != 0)
        return;
    if (loop_only(&act, "stop")) {
        rc = lil_loop_request_stop(c->srv->store, act.run, act.actor, act.reason);
        if (rc != LIL_OK) {
            serve_fail(a, status_code(rc), "run %s: %s", act.run,
                       lil_store_errmsg(c->srv->store));
        } else {
            serve_ok(a, json_pack("{s:b, s:o}", "ok", 1, "request",
                                  pending_stop(c->srv, act.run)));
            serve_index_touch(c->srv, act.run);
        }
    }
    json_decref(act.facts);
}

/* ---- approve --------------------------------------------------------------------- */

/* A pause id as the runner writes them: a lower-case word, '.', digits. */
static bool pause_id_ok(const char *id)
{
    size_t word = strspn(id, "abcdefghijklmnopqrstuvwxyz");

    return word > 0 && id[word] == '.' && id[word + 1] != '\0' &&
           strspn(id + word + 1, "0123456789") == strlen(id + word + 1) &&
           strlen(id) <= 40;
}

/* 8 to 64 hex digits. */
static bool digest_ok(const char *d)
{
    size_t n = strlen(d);

    return n >= 8 && n <= 64 && strspn(d, "0123456789abcdef") == n;
}

/* The flag naming the pause approved (--pause ID or --digest D) in
 * extra[0..1]: 0, or -1 once a is answered (400: neither or both given;
 * 409: not paused, or paused at another pause, named). */
static int pause_named(struct action *act, const char **extra)
{
    json_t *paused = json_object_get(act->facts, "paused");
    const char *id = json_string_value(json_object_get(paused, "id"));
    const char *digest = json_string_value(json_object_get(paused, "digest"));
    const char *want_id = json_string_value(json_object_get(act->c->body, "pause_id"));
    const char *want_d = json_string_value(json_object_get(act->c->body, "digest"));

    if (!want_id == !want_d) {
        serve_fail(act->a, 400, "name the pause approved: pause_id (or digest)");
        return -1;
    }
    if (!json_is_object(paused) || !id || !digest) {
        serve_fail(act->a, 409, "run %s is not paused (status %s)", act->run,
                   fact_str(act, "status"));
        return -1;
    }
    if (!pause_id_ok(id) || !digest_ok(digest) ||
        (want_id
             ? strcmp(want_id, id) != 0
             : !digest_ok(want_d) || strncmp(want_d, digest, strlen(want_d)) != 0)) {
        serve_fail(act->a, 409,
                   "run %s waits at pause %.40s (digest %.16s), not at %.80s", act->run,
                   id, digest, want_id ? want_id : want_d);
        return -1;
    }
    extra[0] = want_id ? "--pause" : "--digest";
    extra[1] = want_id ? id : want_d;
    return 0;
}

void serve_post_approve(struct serve_call *c, struct serve_answer *a)
{
    const char *extra[3] = {NULL, NULL, NULL};
    struct action act;

    if (action_begin(c, a, &act) != 0)
        return;
    if (loop_only(&act, "approve") && pause_named(&act, extra) == 0)
        start_child(&act, "approve", extra);
    json_decref(act.facts);
}

/* ---- recover ----------------------------------------------------------------------
 */

/* What recover was asked: how, and the result of assume-done. */
struct recovery {
    lil_resolution how;
    const char *flag; /* --retry, --assume-done, --abort */
    char *result;     /* the result's text (assume-done), or NULL */
};

/* The body's "how" and "result": 0, or -1 once a is answered 400.  A
 * string result is taken as it is, any other value as its JSON text. */
static int recovery_of(struct action *act, struct recovery *r)
{
    const char *how = json_string_value(json_object_get(act->c->body, "how"));
    json_t *result = json_object_get(act->c->body, "result");

    memset(r, 0, sizeof(*r));
    if (!how || (strcmp(how, "retry") != 0 && strcmp(how, "assume-done") != 0 &&
                 strcmp(how, "abort") != 0)) {
        serve_fail(act->a, 400, "how: retry, assume-done or abort");
        return -1;
    }
    r->how = how[0] == 'r'   ? LIL_RESOLVE_RETRY
             : how[1] == 's' ? LIL_RESOLVE_ASSUME_DONE
                             : LIL_RESOLVE_ABORT;
    r->flag = how[0] == 'r' ? "--retry" : how[1] == 's' ? "--assume-done" : "--abort";
    if (result && r->how != LIL_RESOLVE_ASSUME_DONE) {
        serve_fail(act->a, 400, "a result goes only with how assume-done");
        return -1;
    }
    if (!result)
        return 0;
    r->result = json_is_string(result)
                    ? strdup(json_string_value(result))
                    : json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!r->result) {
        serve_fail(act->a, 500, "out of memory");
        return -1;
    }
    return 0;
}

/* A loop run's uncertain effect decided by `lil recover` in a child. */
static void recover_loop(struct action *act, const struct recovery *r)
{
    const char *extra[4] = {r->flag, NULL, NULL, NULL};
    json_t *parsed;

    if (strcmp(fact_str(act, "status"), "uncertain") != 0) {
        serve_fail(act->a, 409,
                   "run %s is not uncertain (status %s): nothing to recover", act->run,
                   fact_str(act, "status"));
        return;
    }
    if (r->how == LIL_RESOLVE_ASSUME_DONE) {
        parsed = r->result ? json_loads(r->result, JSON_DECODE_ANY, NULL) : NULL;
        if (!parsed) {
            serve_fail(act->a, 400,
                       "assume-done takes a result: JSON text, the effect's result");
            return;
        }
        json_decref(parsed);
        extra[1] = "--result-json";
        extra[2] = r->result;
    }
    start_child(act, "recover", extra);
}

/* The identity of the program run's uncertain effect to resolve: the
 * body's "step", or the only one.  NULL once a is answered. */
static const char *uncertain_step(struct action *act)
{
    json_t *list = json_object_get(act->facts, "uncertain");
    const char *want = json_string_value(json_object_get(act->c->body, "step"));
    const char *first;
    size_t i, n = json_array_size(list);
    json_t *u;

    if (n == 0) {
        serve_fail(act->a, 409, "run %s has no uncertain effect (status %s)", act->run,
                   fact_str(act, "status"));
        return NULL;
    }
    json_array_foreach(list, i, u)
    {
        const char *step = json_string_value(json_object_get(u, "step"));

        if (step && (want ? strcmp(step, want) == 0 : n == 1))
            return step;
    }
    first = json_string_value(json_object_get(json_array_get(list, 0), "step"));
    if (want)
        serve_fail(act->a, 409,
                   "run %s has no uncertain effect %.200s (its first: %.200s)",
                   act->run, want, first ? first : "?");
    else
        serve_fail(act->a, 400,
                   "run %s has %zu uncertain effects: name one as step (the first: "
                   "%.200s)",
                   act->run, n, first ? first : "?");
    return NULL;
}

/* A program run's uncertain effect resolved here; a answered 200 with its
 * job, ended. */
static void recover_program(struct action *act, const struct recovery *r)
{
    struct serve_job_what w = {"resolve", act->run, act->actor, act->reason};
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT, LIL_OPEN_EXISTING, 0};
    struct serve *srv = act->c->srv;
    const char *step = uncertain_step(act);
    lil_run *run = NULL;
    lil_status rc;

    if (!step)
        return;
    rc = lil_run_open(srv->store, act->run, &o, &run);
    if (rc != LIL_OK) {
        serve_fail(act->a, status_code(rc), "run %s: %s", act->run,
                   lil_store_errmsg(srv->store));
        return;
    }
    rc = lil_run_resolve(run, step, r->how, r->result,
                         r->result ? strlen(r->result) : 0, act->actor, act->reason);
    if (rc != LIL_OK) /* LIL_E_NOTFOUND: decided since the facts were read */
        serve_fail(act->a, rc == LIL_E_NOTFOUND ? 409 : status_code(rc), "run %s: %s",
                   act->run, lil_run_errmsg(run));
    else
        serve_ok(act->a, json_pack("{s:o?}", "job",
                                   serve_job_done(
                                       srv, &w, lil_run_state_name(lil_run_status(run)),
                                       NULL)));
    lil_run_close(run);
}

void serve_post_recover(struct serve_call *c, struct serve_answer *a)
{
    struct recovery r;
    struct action act;

    if (action_begin(c, a, &act) != 0)
        return;
    if (recovery_of(&act, &r) == 0) {
        if (is_loop(&act))
            recover_loop(&act, &r);
        else
            recover_program(&act, &r);
    }
    free(r.result);
    json_decref(act.facts);
}

/* ---- resume ------------------------------------------------------------------------
 */

/* Why the run cannot be resumed (retry_failed: a failed run from its
 * failed iteration), or NULL when it can. */
static const char *not_resumable(const struct action *act, bool retry_failed)
{
    const char *status = fact_str(act, "status");
    bool ended = json_is_true(json_object_get(act->facts, "ended"));

    if (holder_pid(act) != 0)
        return "is running: another process holds it";
    if (strcmp(status, "failed") == 0)
        return retry_failed
                   ? NULL
                   : "failed: resume with retry_failed goes on from its failed "
                     "iteration";
    if (retry_failed)
        return "has not failed: retry_failed is for a failed run";
    if (strcmp(status, "paused") == 0)
        return "is paused: approve its pause";
    if (strcmp(status, "uncertain") == 0)
        return "is uncertain: recover its effect first";
    if (ended)
        return "has ended";
    if (strcmp(status, "stopped") != 0 && strcmp(status, "waiting") != 0 &&
        strcmp(status, "running") != 0)
        return "cannot go on";
    return NULL;
}

void serve_post_resume(struct serve_call *c, struct serve_answer *a)
{
    static const char *const retry[] = {"--retry-failed", NULL};
    bool retry_failed = json_is_true(json_object_get(c->body, "retry_failed"));
    struct action act;

    if (action_begin(c, a, &act) != 0)
        return;
    if (loop_only(&act, "resume")) {
        const char *why = not_resumable(&act, retry_failed);

        if (why)
            serve_fail(a, 409, "run %s %s (status %s)", act.run, why,
                       fact_str(&act, "status"));
        else
            start_child(&act, "resume", retry_failed ? retry : NULL);
    }
    json_decref(act.facts);
}
