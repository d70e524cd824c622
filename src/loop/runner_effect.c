/*
 * runner_effect.c -- shell, http and agent effects of a loop
 * (docs/loopspec.md, "Effects" and "Retry") through the engine's effects.
 *
 * Each call takes the iteration's next slot S and is the effect "I.S":
 *   1. its identity: the canonical JSON of what it will do (shell {cmd},
 *      http {method, url, headers, body, envelope} with secret headers as
 *      hashes, agent {harness, prompt, tools});
 *   2. a slot already journaled (this iteration ran before): the same kind
 *      and identity replay its result, anything else is a divergent replay
 *      (the run fails, the message shows both identities);
 *   3. otherwise the engine journals the intent -- SHA-256 of "kind
 *      identity", with that text (secrets redacted) as its note -- runs the
 *      effect with the spec's retries, all attempts inside the one intent,
 *      and journals the outcome:
 *        {"iteration", "seq", "kind", "step", "identity", "result",
 *         "usage"?}
 *      with secrets redacted from the result too; the loop goes on with the
 *      result as journaled, so that a replay sees what the first run saw.
 * Retries exhausted: the outcome is a failure with the last error, and the
 * run fails.  A fresh agent call is admitted by the token and usd budgets
 * first (runner_budget.c: its worst case reserved with its intent, each
 * retry reserved again); its outcome settles the reservation to its usage
 * and the budgets are checked (docs/loopspec.md, "Caps").
 */
#include <stdio.h>
#include <string.h>

#include "agents/agent.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/hash.h"
#include "effects/effect_http.h"
#include "effects/effect_shell.h"
#include "engine/call.h"
#include "loop/runner.h"

#define IDENTITY_SHOW 96 /* bytes of an identity shown in a message */

struct effect {
    struct iter *it;
    const char *step_id; /* NULL for on_exit's action */
    const char *kind;
    struct lil_buf identity; /* canonical JSON */
    struct lil_buf note;     /* "kind identity", secrets redacted */
    char name[LIL_LOOP_NAME_MAX];
    int64_t seq;
    /* what runs */
    lil_status (*exec)(struct effect *ef, json_t **result, json_t **usage);
    /* NULL, or: can it run here?  Asked before a fresh call's intent */
    lil_status (*ready)(struct effect *ef);
    /* NULL, or: may it start (budgets)?  Asked after ready */
    lil_status (*admit)(struct effect *ef);
    /* NULL, or: may attempt `attempt` (>= 2) start after `last` failed? */
    lil_status (*again)(struct effect *ef, int64_t attempt, lil_status last);
    struct lil_shell_cmd shell;
    json_t *request; /* http: the rendered request; agent: {harness, ...} */
    /* what the step function made */
    json_t *outcome;
};

/* The identity buffer of ef, starting with its kind: "shell {...}". */
static void identity_init(struct effect *ef)
{
    lil__buf_init(&ef->identity, ef->it->lp->env, SIZE_MAX);
    if (lil__buf_addstr(&ef->identity, ef->kind) == LIL_OK) /* checked by make_note */
        (void)lil__buf_add(&ef->identity, " ", 1);
}

/* ---- messages -----------------------------------------------------------------------
 */

static void shorten(const char *s, char out[IDENTITY_SHOW + 4])
{
    size_t n = s ? strlen(s) : 0;

    if (n > IDENTITY_SHOW)
        snprintf(out, IDENTITY_SHOW + 4, "%.*s...", IDENTITY_SHOW, s);
    else
        snprintf(out, IDENTITY_SHOW + 4, "%s", s ? s : "");
}

static lil_status diverged(struct effect *ef, const char *journaled)
{
    char was[IDENTITY_SHOW + 4], now[IDENTITY_SHOW + 4];

    shorten(journaled, was);
    shorten((const char *)ef->note.data, now);
    return lil__iter_fail(ef->it, LIL_E_NONDET,
                          "non-deterministic replay at effect %s: the journal has %s, "
                          "the spec now asks for %s",
                          ef->name, was, now);
}

/* ---- the step function: run with retries, make the outcome -------------------------
 */

void lil__loop_set_mock(struct lil_loop *lp,
                        lil_status (*fn)(void *ud, struct lil_err *err,
                                         const char *kind, json_t *request,
                                         json_t **result, json_t **usage),
                        void *ud)
{
    lp->replay.mock = fn;
    lp->replay.mock_ud = ud;
}

void lil__loop_set_recorder(struct lil_loop *lp,
                            lil_status (*fn)(void *ud, struct lil_err *err,
                                             json_t *outcome),
                            void *ud)
{
    lp->replay.recorder = fn;
    lp->replay.recorder_ud = ud;
}

void lil__loop_set_unsent(struct lil_loop *lp,
                          void (*fn)(void *ud, const char *step, const char *why),
                          void *ud)
{
    lp->replay.unsent = fn;
    lp->replay.unsent_ud = ud;
}

/* The request a mock sees: the identity's JSON (after "kind "). */
static lil_status exec_mock(struct effect *ef, json_t **result, json_t **usage)
{
    struct lil_loop *lp = ef->it->lp;
    const char *text = (const char *)ef->identity.data + strlen(ef->kind) + 1;
    json_t *req = ef->request;
    lil_status rc = LIL_OK;

    if (!req || strcmp(ef->kind, "shell") == 0)
        rc = lil__json_parse(lp->env, &lp->err, LIL_E_INVAL, text,
                             ef->identity.len - strlen(ef->kind) - 1, 0, NULL, &req);
    else
        json_incref(req);
    /* which step asks, and the identity as journaled (a cassette's key) */
    lp->replay.mock_step = ef->step_id;
    lp->replay.mock_note = (const char *)ef->note.data;
    if (rc == LIL_OK)
        rc =
            lp->replay.mock(lp->replay.mock_ud, &lp->err, ef->kind, req, result, usage);
    lp->replay.mock_step = lp->replay.mock_note = NULL;
    json_decref(req);
    return rc;
}

static lil_status attempt_all(struct effect *ef, json_t **result, json_t **usage)
{
    struct lil_loop *lp = ef->it->lp;
    struct lil_rng rng;
    lil_status rc;

    lil__rng_seed(&rng, lil__rng_key(ef->name, strlen(ef->name), 0));
    for (int64_t made = 1;; made++) {
        lil__clearerr(&lp->err);
        rc = lp->replay.mock ? exec_mock(ef, result, usage)
                             : ef->exec(ef, result, usage);
        if (rc == LIL_OK || !lil__retry_again(&lp->fx.retry, made, rc) ||
            lil__loop_interrupted(lp))
            return rc;
        lil__loop_sleep(lp,
                        lil__retry_delay_ms(&lp->fx.retry, (uint64_t)made - 1, &rng));
        if (ef->again && ef->again(ef, made + 1, rc) != LIL_OK)
            return rc; /* lp->err says why there is no other attempt */
    }
}

static json_t *outcome_of(struct effect *ef, json_t *result, json_t *usage)
{
    json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:o}", "iteration",
                          (json_int_t)ef->it->iteration, "seq", (json_int_t)ef->seq,
                          "kind", ef->kind, "identity",
                          (const char *)ef->note.data + strlen(ef->kind) + 1, "result",
                          result ? result : json_null());

    if (o && ef->step_id)
        json_object_set_new(o, "step", json_string(ef->step_id));
    if (o && usage)
        json_object_set_new(o, "usage", usage);
    else
        json_decref(usage);
    return o;
}

static int run_effect(lil_call *call, void *ud)
{
    struct effect *ef = ud;
    struct lil_loop *lp = ef->it->lp;
    json_t *result = NULL, *usage = NULL;
    struct lil_buf text;
    lil_status rc;

    /* the intent is journaled: the call's reservation counts from here */
    if (lil__budget_intent(lp, false, ef->name) != LIL_OK) {
        lil__call_abandon(call, LIL_E_UNCERTAIN);
        return 1;
    }
    rc = attempt_all(ef, &result, &usage);

    if (lil__loop_interrupted(lp) == LIL_LOOP_INTERRUPT_KILL || rc == LIL_E_NOMEM) {
        /* killed by lil_loop_interrupt, or no memory for its result: what
           it did is unknown, so no outcome (the run is uncertain) */
        json_decref(result);
        json_decref(usage);
        lil__call_abandon(call, LIL_E_UNCERTAIN);
        return 1;
    }
    if (rc != LIL_OK) {
        json_decref(result);
        json_decref(usage);
        (void)lil__call_fail(call, NULL, "%s", lp->err.msg);
        return 1;
    }
    if (lil__redact_json(lp->fx.redact, &lp->err, &result) != LIL_OK) {
        json_decref(result);
        json_decref(usage);
        lil__call_abandon(call, LIL_E_UNCERTAIN);
        return 1;
    }
    lil__budget_mark_usage(lp, ef->name, usage);
    ef->outcome = outcome_of(ef, result, usage); /* takes result and usage */
    if (!ef->outcome) {
        lil__call_abandon(call, LIL_E_UNCERTAIN);
        return 1;
    }
    lil__buf_init(&text, lp->env, SIZE_MAX);
    rc = lil__json_dump(lp->env, &lp->err, ef->outcome, JSON_COMPACT, &text);
    if (rc == LIL_OK)
        rc = lil__call_set_result(call, NULL, text.data, text.len);
    lil__buf_free(&text);
    if (rc == LIL_E_NOMEM)
        lil__call_abandon(call, LIL_E_UNCERTAIN);
    else if (rc != LIL_OK)
        (void)lil__call_fail(call, NULL,
                             "the effect's result could not be journaled: %s",
                             lil__status_text(rc));
    return rc != LIL_OK;
}

/* The effect's outcome is unknown (abandoned, lil__call_abandon): the
 * slot keeps its note for the uncertain result, and the iteration stops. */
static lil_status left_uncertain(struct effect *ef)
{
    struct lil_loop *lp = ef->it->lp;
    struct loop_slot *s = lil__loop_slot_get(lp, ef->name);

    if (s && (!s->note || s->note_cut)) {
        lil__free(lp->env, s->note);
        s->note = lil__strdup(lp->env, (const char *)ef->note.data);
        s->note_cut = false;
    }
    return lil__iter_stop(ef->it, WHY_UNCERTAIN);
}

/* The slot's journaled note names ef's: the same text, or, for a note
 * over 4 KiB that its intent keeps only the first bytes of, the same
 * length and SHA-256. */
static bool same_note(const struct loop_slot *s, const struct effect *ef)
{
    uint8_t digest[LIL_SHA256_LEN];

    if (!s->note_cut)
        return strcmp(s->note, (const char *)ef->note.data) == 0;
    if (s->note_len != ef->note.len)
        return false;
    lil__sha256(ef->note.data, ef->note.len, digest);
    return memcmp(digest, s->note_hash, LIL_SHA256_LEN) == 0;
}

/* ---- the slot
 * -------------------------------------------------------------------------- */

/* The journaled outcome o is of ef: the same kind and identity ("kind
 * identity" is ef's note, which may be megabytes long). */
static bool same_outcome(const struct effect *ef, const json_t *o)
{
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const json_t *id = json_object_get(o, "identity");
    const char *note = (const char *)ef->note.data;
    size_t klen = kind ? strlen(kind) : 0;

    return kind && json_is_string(id) && klen < ef->note.len &&
           memcmp(note, kind, klen) == 0 && note[klen] == ' ' &&
           json_string_length(id) == ef->note.len - klen - 1 &&
           memcmp(json_string_value(id), note + klen + 1, json_string_length(id)) == 0;
}

/* The journaled slot: replay it, or say it diverged.  *done when replayed. */
static lil_status replay_slot(struct effect *ef, json_t **result, bool *done)
{
    struct loop_slot *s = lil__loop_slot(ef->it->lp, ef->name);
    char was[LIL_LOOP_NAME_MAX + IDENTITY_SHOW + 8];
    const char *kind, *identity;

    *done = false;
    if (!s)
        return LIL_OK;
    if (!s->outcome) {
        if (s->note && !same_note(s, ef))
            return diverged(ef, s->note);
        return LIL_OK; /* retried after a recovery: runs again */
    }
    /* journaled before an accepted change of spec: it stands as journaled */
    if (!same_outcome(ef, s->outcome) &&
        !lil__loop_lenient(ef->it->lp, ef->it->iteration)) {
        kind = json_string_value(json_object_get(s->outcome, "kind"));
        identity = json_string_value(json_object_get(s->outcome, "identity"));
        snprintf(was, sizeof(was), "%s %.*s", kind ? kind : "?", IDENTITY_SHOW + 4,
                 identity ? identity : "?");
        return diverged(ef, was);
    }
    *result = json_incref(json_object_get(s->outcome, "result"));
    *done = true;
    return LIL_OK;
}

/* The outcome (NULL: a failure) settles the effect's reservation, or adds
 * its usage; then the budgets are checked. */
static lil_status add_usage(struct effect *ef, json_t *outcome)
{
    struct iter *it = ef->it;
    struct lil_loop *lp = it->lp;
    bool moved = false;
    lil_status rc = lil__budget_outcome(lp, false, ef->name, outcome, &moved);

    if (rc != LIL_OK)
        return lil__iter_fail(it, rc, "%s", lp->err.msg);
    if (!moved || !outcome)
        return LIL_OK;
    it->cap = lil__meters_check_budgets(&lp->meters, lil__loop_now(lp));
    return it->cap.cap != LIL_CAP_NONE ? lil__iter_stop(it, WHY_CAP) : LIL_OK;
}

static void announce(struct effect *ef)
{
    struct lil_loop *lp = ef->it->lp;
    lil_loop_event ev = {0};

    if (!lp->opt.progress)
        return;
    ev.kind = LIL_LOOP_EV_EFFECT;
    ev.iteration = ef->it->iteration;
    ev.step = ef->step_id;
    ev.effect = ef->kind;
    ev.tokens = lp->meters.tokens;
    ev.usd = lp->meters.usd;
    ev.elapsed_ms = lil__loop_now(lp) - lp->meters.wallclock_base_ms;
    lp->opt.progress(lp->opt.progress_ud, &ev);
}

static lil_status fresh(struct effect *ef, json_t **result)
{
    struct lil_loop *lp = ef->it->lp;
    struct lil_step_req req = {0};
    lil_bytes out = {0};
    bool ran;
    int64_t t0;
    lil_status rc;

    req.effect = true;
    req.exact = true;
    req.request = ef->identity.data; /* "kind identity", hashed */
    req.request_len = ef->identity.len;
    req.note = ef->note.data; /* the same, secrets redacted */
    req.note_len = ef->note.len;
    if (ef->ready && (rc = ef->ready(ef)) != LIL_OK)
        return rc;
    if (ef->admit && (rc = ef->admit(ef)) != LIL_OK)
        return rc;
    announce(ef);
    t0 = lil__loop_now(lp);
    rc = lil__run_step_req(lp->run, &lp->err, ef->name, &req, run_effect, ef, &out);
    if (rc == LIL_E_FAILED) {
        char why[LIL_ERRMSG_MAX];
        struct loop_slot *s = lil__loop_slot_get(lp, ef->name);

        if (s) /* what a retry of the failed run runs again */
            s->failed = true;

        snprintf(why, sizeof(why), "%s", lp->err.msg);
        lil__loop_effect_end(lp, ef->it->iteration, ef->step_id, ef->kind,
                             lil__loop_now(lp) - t0, NULL, why);
        (void)add_usage(ef, NULL); /* a failed call counts at its reservation */
        return lil__iter_fail(ef->it, rc, "%s", why);
    }
    if (rc == LIL_E_NONDET)
        return diverged(ef, "another request");
    if (rc == LIL_E_UNCERTAIN) {
        lil__loop_effect_end(lp, ef->it->iteration, ef->step_id, ef->kind,
                             lil__loop_now(lp) - t0, NULL, NULL);
        return left_uncertain(ef);
    }
    if (rc != LIL_OK)
        return lil__iter_fail(ef->it, rc, "%s", lp->err.msg);
    ran = ef->outcome != NULL; /* made by run_effect in this call */
    if (!ran)                  /* the engine held it: parse what it returned */
        rc = lil__json_parse(lp->env, &lp->err, LIL_E_CORRUPT, out.data, out.len, 0,
                             NULL, &ef->outcome);
    lil__export_free(out.data);
    if (rc == LIL_OK)
        rc = lil__loop_slot_put(lp, ef->name, json_incref(ef->outcome));
    /* recording: the outcome as journaled, once (a replayed one was told
       when it was fresh, or when the recorder was attached) */
    if (rc == LIL_OK && ran && lp->replay.recorder)
        rc = lp->replay.recorder(lp->replay.recorder_ud, &lp->err, ef->outcome);
    if (rc != LIL_OK)
        return lil__iter_fail(ef->it, rc, "%s", lp->err.msg);
    if (ran)
        lil__loop_effect_end(lp, ef->it->iteration, ef->step_id, ef->kind,
                             lil__loop_now(lp) - t0, ef->outcome, NULL);
    *result = json_incref(json_object_get(ef->outcome, "result"));
    return add_usage(ef, ef->outcome);
}

static lil_status make_note(struct effect *ef)
{
    struct lil_loop *lp = ef->it->lp;
    lil_status rc;

    lil__buf_init(&ef->note, lp->env, SIZE_MAX);
    rc = lil__redact_text(lp->fx.redact, &lp->err, (const char *)ef->identity.data,
                          ef->identity.len, &ef->note);
    if (rc == LIL_OK)
        rc = lil__buf_add(&ef->note, "", 1);
    if (rc == LIL_OK)
        ef->note.len--; /* NUL-terminated, not counted */
    return rc;
}

/* Run effect ef in the iteration's next slot; its result in *result. */
static lil_status effect_slot(struct effect *ef, json_t **result)
{
    struct iter *it = ef->it;
    bool done = false;
    lil_status rc;

    ef->seq = it->seq++;
    lil__loop_slot_name(ef->name, it->iteration, ef->seq);
    rc = make_note(ef);
    if (rc != LIL_OK)
        return lil__iter_fail(it, rc, "%s", it->lp->err.msg);
    rc = replay_slot(ef, result, &done);
    if (rc == LIL_OK && !done)
        rc = fresh(ef, result);
    if (rc == LIL_OK && lil__loop_interrupted(it->lp))
        rc = lil__iter_stop(it, WHY_STOP);
    return rc;
}

static void effect_free(struct effect *ef)
{
    lil__buf_free(&ef->identity);
    lil__buf_free(&ef->note);
    json_decref(ef->request);
    json_decref(ef->outcome);
}

/* ---- shell
 * ------------------------------------------------------------------------------ */

static lil_status exec_shell(struct effect *ef, json_t **result, json_t **usage)
{
    struct lil_loop *lp = ef->it->lp;
    struct lil_shell_opts o = {0};

    (void)usage;
    o.cwd = lp->opt.cwd;
    o.envp = lp->fx.effect_envp;
    o.timeout_ms =
        (int)(lp->opt.effect_timeout_ms > INT32_MAX ? INT32_MAX
                                                    : lp->opt.effect_timeout_ms);
    o.running_pgid = &lp->child_pgid;
    return lil__shell_run(lp->env, &lp->err, &ef->shell, &o, NULL, result);
}

static lil_status render(struct iter *it, const struct lil_ir_tmpl *t,
                         struct lil_buf *out)
{
    struct lil_eval ev;
    lil_status rc;

    if (!t->tmpl)
        return lil__iter_fail(it, LIL_E_SPEC, "template '%s' did not parse",
                              t->src.s ? t->src.s : "");
    lil__loop_eval(it, &ev);
    rc = lil__tmpl_render(t->tmpl, &ev, out);
    if (rc == LIL_OK)
        rc = lil__buf_add(out, "", 1);
    if (rc == LIL_OK)
        out->len--;
    lil__eval_free(&ev);
    return rc == LIL_OK ? rc
                        : lil__iter_fail(it, rc, "rendering '%s': %s", t->src.s,
                                         lil__status_text(rc));
}

/* The rendered strings of a shell step: bufs[0] the command, then args. */
static lil_status render_shell(struct iter *it, const struct lil_ir_shell *sh,
                               struct lil_buf *bufs, const char **argv)
{
    lil_status rc = render(it, &sh->cmd, &bufs[0]);

    for (size_t i = 0; rc == LIL_OK && sh->has_args && i < sh->nargs; i++) {
        rc = render(it, &sh->args[i], &bufs[i + 1]);
        argv[i] = (const char *)bufs[i + 1].data;
    }
    return rc;
}

static lil_status shell_with(struct iter *it, const struct lil_ir_shell *sh,
                             const char *step_id, json_t **result)
{
    struct lil_loop *lp = it->lp;
    size_t n = sh->has_args ? sh->nargs : 0;
    struct lil_buf *bufs = lil__calloc(lp->env, n + 1, sizeof(*bufs));
    const char **argv = lil__calloc(lp->env, n + 1, sizeof(*argv));
    struct effect ef = {0};
    lil_status rc = bufs && argv ? LIL_OK : LIL_E_NOMEM;

    for (size_t i = 0; bufs && i <= n; i++)
        lil__buf_init(&bufs[i], lp->env, 16u << 20);
    if (rc == LIL_OK)
        rc = render_shell(it, sh, bufs, argv);
    ef.it = it;
    ef.step_id = step_id;
    ef.kind = "shell";
    ef.exec = exec_shell;
    if (rc != LIL_OK) {
        /* nothing to run */
    } else if (sh->has_args) {
        ef.shell.command = (const char *)bufs[0].data;
        ef.shell.args = argv;
        ef.shell.n_args = n;
    } else {
        ef.shell.script = (const char *)bufs[0].data;
    }
    identity_init(&ef);
    if (rc == LIL_OK &&
        lil__shell_identity(lp->env, &lp->err, &ef.shell, &ef.identity) != LIL_OK)
        rc = lil__iter_fail(it, lp->err.code, "%s", lp->err.msg);
    if (rc == LIL_OK)
        rc = effect_slot(&ef, result);
    else if (rc == LIL_E_NOMEM)
        rc = lil__iter_fail(it, rc, "out of memory");
    effect_free(&ef);
    for (size_t i = 0; bufs && i <= n; i++)
        lil__buf_free(&bufs[i]);
    lil__free(lp->env, bufs);
    lil__free(lp->env, argv);
    return rc;
}

lil_status lil__loop_shell(struct iter *it, const struct lil_ir_step *step,
                           json_t **result)
{
    return shell_with(it, &step->shell, step->id, result);
}

/* ---- http
 * -------------------------------------------------------------------------------- */

static lil_status exec_http(struct effect *ef, json_t **result, json_t **usage)
{
    struct lil_loop *lp = ef->it->lp;
    struct lil_http_opts o;

    (void)usage;
    lil__http_opts_init(&o);
    o.timeout_ms = lp->opt.effect_timeout_ms;
    return lil__http_perform(lp->env, &lp->err, ef->request, &o, result);
}

static json_t *render_json(struct iter *it, const struct lil_ir_tmpl *t)
{
    struct lil_buf b;
    json_t *s = NULL;

    lil__buf_init(&b, it->lp->env, 16u << 20);
    if (render(it, t, &b) == LIL_OK)
        s = json_stringn((const char *)b.data, b.len);
    lil__buf_free(&b);
    return s;
}

/* The identity of ef's http request (lp->err says why not), its secrets as
 * digests under the run's digest key (its start record's "digestKey"; none:
 * plain SHA-256, as the run was started): a request a real run would refuse
 * is refused, unless a mock answers it and the unsent hook is told
 * (lil__loop_set_unsent). */
static lil_status http_identity(struct effect *ef)
{
    struct lil_loop *lp = ef->it->lp;
    uint8_t key[LIL_LOOP_DIGEST_KEY_LEN];
    const uint8_t *k = lil__loop_digest_key(lp, key) ? key : NULL;
    lil_status rc;

    if (!lp->replay.mock || !lp->replay.unsent) {
        rc = lil__http_identity(lp->env, &lp->err, ef->request, k, sizeof(key),
                                &ef->identity);
    } else {
        if (lil__http_check(&lp->err, ef->request) != LIL_OK) {
            lp->replay.unsent(lp->replay.unsent_ud, ef->step_id, lp->err.msg);
            lil__clearerr(&lp->err);
        }
        rc = lil__http_identity_unsent(lp->env, &lp->err, ef->request, k, sizeof(key),
                                       &ef->identity);
    }
    explicit_bzero(key, sizeof(key));
    return rc;
}

static json_t *http_request(struct iter *it, const struct lil_ir_http *h, bool envelope)
{
    json_t *req = json_object(), *headers;

    if (!req)
        return NULL;
    json_object_set_new(
        req, "method", json_string(lil__ir_enum_name(LIL_ENUM_METHOD, (int)h->method)));
    json_object_set_new(req, "url", render_json(it, &h->url));
    if (h->has_headers) {
        headers = json_object();
        for (size_t i = 0; headers && i < h->nheaders; i++)
            json_object_set_new(headers, h->headers[i].name,
                                render_json(it, &h->headers[i].value));
        json_object_set_new(req, "headers", headers);
    }
    if (h->body)
        json_object_set_new(req, "body",
                            json_is_string(h->body) ? render_json(it, &h->body_tmpl)
                                                    : json_deep_copy(h->body));
    if (envelope)
        json_object_set_new(req, "envelope", json_true());
    return req;
}

static lil_status http_with(struct iter *it, const struct lil_ir_http *h, bool envelope,
                            const char *step_id, json_t **result)
{
    struct lil_loop *lp = it->lp;
    struct effect ef = {0};
    lil_status rc = LIL_OK;

    ef.it = it;
    ef.step_id = step_id;
    ef.kind = "http";
    ef.exec = exec_http;
    identity_init(&ef);
    ef.request = http_request(it, h, envelope);
    if (it->why == WHY_FAIL)
        rc = lp->err.code;
    else if (!ef.request)
        rc = lil__iter_fail(it, LIL_E_NOMEM, "out of memory");
    else if (http_identity(&ef) != LIL_OK)
        rc = lil__iter_fail(it, lp->err.code, "%s", lp->err.msg);
    if (rc == LIL_OK)
        rc = effect_slot(&ef, result);
    effect_free(&ef);
    return rc;
}

lil_status lil__loop_http(struct iter *it, const struct lil_ir_step *step,
                          json_t **result)
{
    return http_with(it, &step->http, step->envelope, step->id, result);
}

/* ---- agent
 * --------------------------------------------------------------------------------- */

/* The agent call of ef (harness, prompt, tools from ef->request). */
static void agent_call_of(struct effect *ef, struct lil_agent_call *c,
                          const char **tools, size_t cap)
{
    json_t *list = json_object_get(ef->request, "tools"), *t;
    size_t i;

    memset(c, 0, sizeof(*c));
    c->harness = json_string_value(json_object_get(ef->request, "harness"));
    c->prompt = json_string_value(json_object_get(ef->request, "prompt"));
    c->tools = tools;
    json_array_foreach(list, i, t) if (i < cap) tools[c->ntools++] =
        json_string_value(t);
    c->cwd = ef->it->lp->opt.cwd;
    c->env_allow = (const char *const *)ef->it->lp->fx.env_allow;
    c->n_env_allow = 2;
    c->running_pgid = &ef->it->lp->child_pgid;
}

/* The usage journaled with the outcome: {"tokens", "usd"?, "estimated"?,
 * "model"?, "unreported"?: why}, or none when the harness reported nothing
 * and nothing was estimated. */
static json_t *usage_json(const struct lil_agent_usage *u)
{
    json_t *o;

    if (!u->has_tokens && !u->has_usd)
        return NULL;
    o = json_object();
    if (o && u->has_tokens)
        json_object_set_new(o, "tokens", json_integer(u->tokens));
    if (o && u->has_usd)
        json_object_set_new(o, "usd", json_real(u->usd));
    if (o && u->estimated)
        json_object_set_new(o, "estimated", json_true());
    if (o && u->model[0])
        json_object_set_new(o, "model", json_string(u->model));
    if (o && u->unreported[0])
        json_object_set_new(o, "unreported", json_string(u->unreported));
    return o;
}

/* A streamed call's running tokens, for the progress callback. */
struct call_tokens {
    struct effect *ef;
    int64_t told; /* -1: none yet */
};

static void on_call_tokens(void *ud, int64_t tokens)
{
    struct call_tokens *ct = ud;

    lil__loop_call_tokens(ct->ef->it->lp, ct->ef->it->iteration, ct->ef->step_id,
                          tokens, &ct->told);
}

static lil_status exec_agent(struct effect *ef, json_t **result, json_t **usage)
{
    struct lil_loop *lp = ef->it->lp;
    struct lil_agent_call c;
    struct lil_agent_usage u;
    struct call_tokens ct = {ef, -1};
    const char *tools[64];
    lil_status rc;

    agent_call_of(ef, &c, tools, sizeof(tools) / sizeof(*tools));
    if (lp->opt.progress) {
        c.on_tokens = on_call_tokens;
        c.tokens_ud = &ct;
    }
    /* the result holds the reported usage, never what the model wrote */
    rc = lil__agent_call(lp->env, &lp->err, &c, result, &u);
    if (rc == LIL_OK)
        *usage = usage_json(&u);
    return rc;
}

/* A harness that cannot run here (not configured, not available) fails
 * the step before a fresh call's intent is journaled: nothing is left in
 * doubt.  A replayed call needs no harness. */
static lil_status agent_ready(struct effect *ef)
{
    struct lil_loop *lp = ef->it->lp;
    struct lil_agent_call c;
    const char *tools[64];

    if (lp->replay.mock)
        return LIL_OK;
    agent_call_of(ef, &c, tools, sizeof(tools) / sizeof(*tools));
    if (lil__agent_ready(lp->env, &lp->err, &c) != LIL_OK)
        return lil__iter_fail(ef->it, lp->err.code, "%s", lp->err.msg);
    return LIL_OK;
}

/* The budgets admit a fresh call (runner_budget.c). */
static lil_status agent_admit(struct effect *ef)
{
    struct lil_agent_call c;
    const char *tools[64];

    agent_call_of(ef, &c, tools, sizeof(tools) / sizeof(*tools));
    return lil__budget_admit(ef->it, ef->name, ef->step_id, &c);
}

/* The budgets admit another attempt inside the call's intent. */
static lil_status agent_again(struct effect *ef, int64_t attempt, lil_status last)
{
    struct lil_agent_call c;
    const char *tools[64];

    agent_call_of(ef, &c, tools, sizeof(tools) / sizeof(*tools));
    return lil__budget_retry(ef->it->lp, ef->name, ef->step_id, &c, attempt, last);
}

static lil_status check_harness(struct iter *it, const char *h)
{
    return lil__agent_known(h)
               ? LIL_OK
               : lil__iter_fail(it, LIL_E_INVAL, "unknown agent harness '%s'", h);
}

static lil_status agent_with(struct iter *it, const char *harness,
                             const struct lil_ir_tmpl *prompt,
                             const struct lil_ir_strlist *tools, const char *step_id,
                             json_t **result)
{
    struct lil_loop *lp = it->lp;
    struct effect ef = {0};
    json_t *list = json_array();
    lil_status rc = check_harness(it, harness);

    ef.it = it;
    ef.step_id = step_id;
    ef.kind = "agent";
    ef.exec = exec_agent;
    ef.ready = agent_ready;
    ef.admit = agent_admit;
    ef.again = agent_again;
    identity_init(&ef);
    for (size_t i = 0; tools && list && i < tools->n; i++)
        json_array_append_new(list, json_string(tools->v[i].s));
    if (rc == LIL_OK) {
        ef.request = json_pack("{s:s, s:o}", "harness", harness, "prompt",
                               render_json(it, prompt));
        if (ef.request && tools && tools->present)
            json_object_set(ef.request, "tools", list);
        rc = it->why == WHY_FAIL ? lp->err.code
             : !ef.request       ? lil__iter_fail(it, LIL_E_NOMEM, "out of memory")
                                 : LIL_OK;
    }
    if (rc == LIL_OK &&
        lil__json_canon(lp->env, &lp->err, ef.request, &ef.identity) != LIL_OK)
        rc = lil__iter_fail(it, lp->err.code, "%s", lp->err.msg);
    if (rc == LIL_OK)
        rc = effect_slot(&ef, result);
    json_decref(list);
    effect_free(&ef);
    return rc;
}

lil_status lil__loop_agent(struct iter *it, const struct lil_ir_step *step,
                           json_t **result)
{
    return agent_with(it, step->agent.harness.s ? step->agent.harness.s : "internal",
                      &step->agent.prompt, &step->agent.allowed_tools, step->id,
                      result);
}

/* ---- exit actions and the completion hook
 * ------------------------------------------------- */

/* The completion hook's result told to the recorder like an effect's
 * outcome (a copy, secrets redacted; iteration -1, no seq). */
static lil_status record_hook(struct effect *ef, json_t *result)
{
    struct lil_loop *lp = ef->it->lp;
    json_t *copy = json_deep_copy(result), *o;
    lil_status rc =
        copy ? lil__redact_json(lp->fx.redact, &lp->err, &copy) : LIL_E_NOMEM;

    if (rc != LIL_OK) {
        json_decref(copy);
        return rc == LIL_E_NOMEM ? lil__seterr(&lp->err, rc, 0, "out of memory") : rc;
    }
    o = outcome_of(ef, copy, json_incref(ef->outcome)); /* takes both */
    if (!o)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    json_object_del(o, "seq");
    rc = lp->replay.recorder(lp->replay.recorder_ud, &lp->err, o);
    json_decref(o);
    return rc;
}

static lil_status hook_direct(struct iter *it, const struct lil_ir_action *act,
                              json_t **result)
{
    struct lil_loop *lp = it->lp;
    struct effect ef = {0};
    struct lil_buf cmd;
    lil_status rc = LIL_OK;

    ef.it = it;
    ef.kind = act->kind == LIL_ACT_SHELL ? "shell" : "http";
    lil__buf_init(&cmd, lp->env, 16u << 20);
    identity_init(&ef);
    if (act->kind == LIL_ACT_SHELL) {
        rc = render(it, &act->cmd, &cmd);
        ef.shell.script = (const char *)cmd.data;
        ef.exec = exec_shell;
        if (rc == LIL_OK)
            rc = lil__shell_identity(lp->env, &lp->err, &ef.shell, &ef.identity);
    } else {
        ef.request = http_request(it, &act->request, false);
        ef.exec = exec_http;
        rc = it->why == WHY_FAIL ? lp->err.code : ef.request ? LIL_OK : LIL_E_NOMEM;
        if (rc == LIL_OK) /* the note a cassette matches */
            rc = http_identity(&ef);
    }
    if (rc == LIL_OK)
        rc = make_note(&ef);
    if (rc == LIL_OK)
        rc = attempt_all(&ef, result, &ef.outcome);
    if (rc == LIL_OK && lp->replay.recorder)
        rc = record_hook(&ef, *result);
    lil__buf_free(&cmd);
    effect_free(&ef);
    return rc;
}

lil_status lil__loop_action(struct iter *it, const struct lil_ir_action *act,
                            bool journaled, json_t **result)
{
    if (!journaled)
        return hook_direct(it, act, result);
    switch (act->kind) {
    case LIL_ACT_SHELL: {
        struct lil_ir_shell sh = {0};

        sh.cmd = act->cmd;
        return shell_with(it, &sh, NULL, result);
    }
    case LIL_ACT_HTTP:
        return http_with(it, &act->request, act->has_envelope && act->envelope, NULL,
                         result);
    case LIL_ACT_AGENT:
    default:
        return agent_with(it, act->harness.s ? act->harness.s : "llm", &act->prompt,
                          NULL, NULL, result);
    }
}
