/*
 * runner_open.c -- opening a loop run: options, inputs, what expressions
 * and shell steps see, the run's lock and journal, and the start record.
 *
 * The start record ("loop", docs/loops.md) is journaled when the run is
 * new: {"loopId", "spec" (SHA-256 of the normalized spec), "specPath",
 * "inputs", "baseState", "startedAt", "caps", "digestKey", "parts"}.
 * digestKey (64 hex digits, random) keys the digests of the credentials in
 * its http effects' identities (effect_http.h); a run whose start has none
 * keeps plain SHA-256 digests.  parts holds the digests of the spec's parts
 * (runner_bind.c, which also compares the spec of every later open with
 * the one the run is bound to).  Its inputs are the run's for good: a
 * later open given inputs must give the same ones (state_inputs.c compares
 * them), one given none uses them.  Its startedAt is the base of the
 * wallclock meter (downtime included: docs/loopspec.md, "Caps").
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "agents/agent.h"
#include "base/alloc.h"
#include "base/hash.h"
#include "base/settings/settings.h"
#include "effects/effect_env.h"
#include "loop/runner.h"
#include "loopspec/spec.h"

static lil_status opts_check(struct lil_err *err, const lil_loop_opts *o)
{
    if (LIL_LOOP_OPT(o, record_path) && LIL_LOOP_OPT(o, replay_path))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_loop_open: record_path and replay_path exclude each "
                           "other");
    if (o && o->struct_size < offsetof(lil_loop_opts, progress_ud) + sizeof(void *))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_loop_open: opts->struct_size is too small");
    if (o && (o->flags & ~(unsigned)LIL_LOOP_KNOWN_FLAGS))
        return lil__seterr(err, LIL_E_INVAL, 0, "lil_loop_open: unknown flags 0x%x",
                           o->flags & ~(unsigned)LIL_LOOP_KNOWN_FLAGS);
    if (o && (o->max_block_ms < 0 || o->effect_timeout_ms < 0))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_loop_open: negative max_block_ms or effect_timeout_ms");
    if (o && o->n_input_pairs && !o->input_pairs)
        return lil__seterr(err, LIL_E_INVAL, 0, "lil_loop_open: input_pairs is NULL");
    return LIL_OK;
}

static char *dup_or(const struct lil_env *env, const char *s, const char *dflt)
{
    return lil__strdup(env, s ? s : dflt);
}

static lil_status copy_opts(struct lil_loop *lp, const lil_loop_opts *o)
{
    const char *user = lil__setting_raw("USER");

    lp->opt.flags = o ? o->flags : 0;
    lp->opt.actor = dup_or(
        lp->env, o && o->actor ? o->actor : (user && *user ? user : NULL), "unknown");
    lp->opt.reason = o && o->reason ? lil__strdup(lp->env, o->reason) : NULL;
    lp->opt.cwd = o && o->cwd ? lil__strdup(lp->env, o->cwd) : NULL;
    lp->opt.max_block_ms =
        o && o->max_block_ms ? o->max_block_ms : LIL_LOOP_MAX_BLOCK_MS;
    lp->opt.effect_timeout_ms =
        o && o->effect_timeout_ms ? o->effect_timeout_ms : LIL_LOOP_TIMEOUT_MS;
    lp->opt.progress = o ? o->progress : NULL;
    lp->opt.progress_ud = o ? o->progress_ud : NULL;
    lp->opt.os_user = lil__loop_os_user(lp->env);
    if (!lp->opt.actor || !lp->opt.os_user || (o && o->reason && !lp->opt.reason) ||
        (o && o->cwd && !lp->opt.cwd))
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

/* env.* of expressions: the process's environment as an object. */
static json_t *environ_object(void)
{
    json_t *o = json_object();

    for (char **e = environ; o && e && *e; e++) {
        const char *eq = strchr(*e, '=');

        if (eq && eq != *e) {
            char name[256];
            size_t n = (size_t)(eq - *e);

            if (n >= sizeof(name))
                continue;
            memcpy(name, *e, n);
            name[n] = '\0';
            if (!json_object_get(o, name))
                json_object_set_new(o, name, json_string(eq + 1));
        }
    }
    return o;
}

static lil_status surroundings(struct lil_loop *lp, const lil_loop_opts *o)
{
    const char *allow[2] = {o ? o->env_allow : NULL,
                            lil__setting_raw("LIL_EFFECT_ENV")};
    lil_status rc;

    lp->fx.environ = environ_object();
    if (!lp->fx.environ)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; i < 2; i++)
        if (allow[i] && !(lp->fx.env_allow[i] = lil__strdup(lp->env, allow[i])))
            return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__state_meta(lp->env, &lp->err, lp->ir, &lp->fx.meta);
    if (rc == LIL_OK)
        rc = lil__effect_env_build(lp->env, &lp->err, NULL, allow, 2,
                                   &lp->fx.effect_envp);
    if (rc == LIL_OK)
        rc = lil__redact_new(lp->env, &lp->err, NULL, &lp->fx.redact);
    lil__retry_policy_from_ir(lp->ir, &lp->fx.retry);
    return rc;
}

/* The inputs given in o (NULL *out when none were given). */
static lil_status given_inputs(struct lil_loop *lp, const lil_loop_opts *o,
                               json_t **out)
{
    json_t *obj = NULL;
    lil_status rc = LIL_OK;

    *out = NULL;
    if (!o || (!o->inputs_json && o->n_input_pairs == 0))
        return LIL_OK;
    if (o->inputs_json) {
        rc = lil__json_parse(lp->env, &lp->err, LIL_E_INVAL, o->inputs_json,
                             strlen(o->inputs_json), JSON_DECODE_ANY, NULL, &obj);
        if (rc == LIL_OK && !json_is_object(obj))
            rc = lil__seterr(&lp->err, LIL_E_INVAL, 0,
                             "the inputs are not a JSON object");
    }
    if (rc == LIL_OK)
        rc = lil__inputs_resolve(lp->env, &lp->err, lp->ir, obj, o->input_pairs,
                                 o->n_input_pairs, out);
    json_decref(obj);
    return rc;
}

static lil_status open_run(struct lil_loop *lp, bool readonly)
{
    unsigned verify = lp->opt.flags & LIL_LOOP_UNATTENDED ? LIL_OPEN_VERIFY_CHAIN : 0u;
    lil_run_opts ro = {sizeof(ro), lp->opt.sync,
                       (readonly ? (unsigned)(LIL_OPEN_READONLY | LIL_OPEN_EXISTING |
                                              LIL__OPEN_LIVE_SEGMENT)
                                 : 0u) |
                           verify,
                       0};

    return lil__run_open(lp->st, &lp->err, lp->run_id, &ro, &lp->run);
}

void lil__loop_forget(struct lil_loop *lp)
{
    lp->started = false;
    json_decref(lp->start);
    lp->start = NULL;
    lp->started_ms = 0;
    json_decref(lp->committed);
    lp->committed = NULL;
    memset(&lp->meters, 0, sizeof(lp->meters));
    lp->nctl = 0;
    lp->end = LOOP_LIVE;
    lil__free(lp->env, lp->end_reason);
    lp->end_reason = NULL;
    lil__free(lp->env, lp->cap_detail);
    lp->cap_detail = NULL;
    lp->cap_detail_of = LIL_CAP_NONE;
    json_decref(lp->stop);
    lp->stop = NULL;
    lil__free(lp->env, lp->pause.step);
    lil__free(lp->env, lp->pause.ask);
    lil__free(lp->env, lp->pause.reason);
    memset(&lp->pause, 0, sizeof(lp->pause));
    lp->terminated = false;
    lp->retried = false;
    lp->observer_started = false;
    lp->has_start_caps = false;
    lp->parked = false;
    lp->wake_at_ms = 0;
    json_decref(lp->notified);
    lp->notified = NULL;
    json_decref(lp->artifacts);
    lp->artifacts = NULL;
    lil__loop_bind_forget(lp);
    lil__loop_slots_clear(lp);
}

lil_status lil__loop_writable(struct lil_loop *lp, bool *refolded)
{
    lil_status rc;

    *refolded = false;
    if (!lp->run->readonly)
        return LIL_OK;
    lil__run_close(lp->run, NULL);
    lp->run = NULL;
    rc = open_run(lp, false);
    if (rc != LIL_OK)
        return rc;
    lil__loop_forget(lp);
    *refolded = true;
    return lil__loop_load(lp);
}

/* A read-only look at a run that is not over while another process holds
 * it would mistake that process's effect in flight for an uncertain one. */
static lil_status held_elsewhere(struct lil_loop *lp)
{
    lil_run_info info;

    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (lp->end != LOOP_LIVE || lil__run_info(lp->run, &lp->err, &info) != LIL_OK ||
        info.holder_pid == 0)
        return LIL_OK;
    if (info.holder_pid > 0)
        return lil__seterr(&lp->err, LIL_E_LOCKED, 0, "run %s is held by pid %d",
                           lp->run_id, info.holder_pid);
    return lil__seterr(&lp->err, LIL_E_LOCKED, 0, "run %s is held by another process",
                       lp->run_id);
}

/* The caps in force, journaled with the start so that tools show what is
 * left of each budget without the spec (lil__cap_limits_json). */
static json_t *caps_record(struct lil_loop *lp)
{
    struct lil_cap_limits lim;

    if (lil__cap_limits_from_ir(lp->ir, &lp->err, &lim) != LIL_OK)
        return json_null();
    return lil__cap_limits_json(&lim);
}

/* 32 random bytes from the kernel into key, and as hex into hex. */
static lil_status new_digest_key(struct lil_err *err,
                                 uint8_t key[LIL_LOOP_DIGEST_KEY_LEN], char *hex)
{
    ssize_t r;

    do
        r = getrandom(key, LIL_LOOP_DIGEST_KEY_LEN, 0);
    while (r < 0 && errno == EINTR);
    if (r != LIL_LOOP_DIGEST_KEY_LEN)
        return lil__seterr(err, LIL_E_IO, errno, "cannot make a digest key: %s",
                           lil__errstr(errno));
    lil__hex(key, LIL_LOOP_DIGEST_KEY_LEN, hex);
    return LIL_OK;
}

static json_t *start_record(struct lil_loop *lp, const lil_spec *spec, json_t *base,
                            const char *digest_key, json_t *sealed)
{
    char hex[2 * LIL_SHA256_LEN + 1] = "";
    char path[PATH_MAX], cwd[PATH_MAX];
    const char *name = lil__spec_name(spec);
    json_t *parts = NULL;

    if (lil__loop_spec_digest(spec, &lp->err, hex, &parts) != LIL_OK)
        return NULL;
    if (!realpath(name, path))
        snprintf(path, sizeof(path), "%s", name);
    if (!lp->opt.cwd && !getcwd(cwd, sizeof(cwd)))
        cwd[0] = '\0';
    return json_pack("{s:s, s:s, s:s, s:s, s:O, s:O, s:I, s:o, s:s, s:o}", "loopId",
                     lp->ir->id.s, "spec", hex, "specPath", path, "cwd",
                     lp->opt.cwd ? lp->opt.cwd : cwd, "inputs", sealed, "baseState",
                     base, "startedAt", (json_int_t)lil__loop_now(lp), "caps",
                     caps_record(lp), "digestKey", digest_key, "parts", parts);
}

/* A new run: resolve the inputs (defaults too), journal the start. */
static lil_status start(struct lil_loop *lp, const lil_spec *spec, json_t *given)
{
    struct lil_loop_state init;
    uint8_t key[LIL_LOOP_DIGEST_KEY_LEN];
    char hex[2 * LIL_LOOP_DIGEST_KEY_LEN + 1];
    json_t *rec, *sealed = NULL;
    lil_status rc = LIL_OK;

    lp->fx.inputs = given;
    if (!lp->fx.inputs)
        rc = lil__inputs_resolve(lp->env, &lp->err, lp->ir, NULL, NULL, 0,
                                 &lp->fx.inputs);
    if (rc == LIL_OK && !lp->fx.given) /* the defaults: unsealed from here */
        lp->fx.given = json_incref(lp->fx.inputs);
    if (rc == LIL_OK)
        rc = new_digest_key(&lp->err, key, hex);
    if (rc == LIL_OK && !(sealed = lil__inputs_sealed(lp, lp->fx.inputs, key)))
        rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    explicit_bzero(key, sizeof(key));
    if (rc == LIL_OK)
        rc = lil__state_init(&init, lp->env, lp->ir, &lp->err);
    if (rc != LIL_OK) {
        json_decref(sealed);
        return rc;
    }
    rec = start_record(lp, spec, init.vars, hex, sealed);
    json_decref(sealed);
    explicit_bzero(hex, sizeof(hex));
    lil__state_free(&init);
    if (!rec)
        return lp->err.code ? lp->err.code
                            : lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__loop_plain(lp, "loop", json_incref(rec), false, NULL);
    if (rc == LIL_OK)
        rc = lil__loop_load(lp); /* the facts of the start, as a resume reads them */
    json_decref(rec);
    return rc;
}

static lil_status not_a_loop(struct lil_loop *lp)
{
    lil_run_info info;

    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);

    if (lil__run_info(lp->run, &lp->err, &info) != LIL_OK)
        return lp->err.code;
    if (info.steps_done + info.steps_failed > 0 || info.state != LIL_RUN_RUNNING)
        return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                           "run %s holds steps but no loop start: it is not a loop run",
                           lp->run_id);
    return LIL_OK;
}

/* A queued run that no worker started yet (lil_loop_submit made it with its
 * first record only): its start -- with the inputs it was submitted with --
 * is the worker's that claims it (its state is then running). */
static lil_status queued_not_started(struct lil_loop *lp)
{
    enum lil_sq_state state = LIL_SQ_QUEUED;
    lil_status rc;

    rc = lil__queue_state(lp->st, &lp->err, lp->run_id, &state);
    if (rc == LIL_E_NOTFOUND || (rc == LIL_OK && state == LIL_SQ_RUNNING)) {
        lil__clearerr(&lp->err);
        return LIL_OK;
    }
    if (rc != LIL_OK)
        return rc;
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "run %s is queued (%s) and has not started: a worker (`lil "
                       "worker`) starts it, with the inputs it was submitted with",
                       lp->run_id, lil__sq_state_name(state));
}

/* ---- configuration checked before a new run is created ---- */

/* Can harness run here (lil__agent_ready, with this loop's surroundings)?
 * Unknown harnesses are the iteration's to report, as before. */
static lil_status harness_ready(struct lil_loop *lp, const char *harness,
                                const char *where)
{
    struct lil_agent_call c;
    char why[LIL_ERRMSG_MAX];

    if (!harness || !lil__agent_known(harness))
        return LIL_OK;
    memset(&c, 0, sizeof(c));
    c.harness = harness;
    c.prompt = "";
    c.cwd = lp->opt.cwd;
    c.env_allow = (const char *const *)lp->fx.env_allow;
    c.n_env_allow = 2;
    if (lil__agent_ready(lp->env, &lp->err, &c) == LIL_OK)
        return LIL_OK;
    snprintf(why, sizeof(why), "%s", lp->err.msg);
    return lil__seterr(&lp->err, lp->err.code, 0,
                       "run %s not created, nothing journaled (set it, then run "
                       "again): %s: %s",
                       lp->run_id, where, why);
}

/* Can the budgets ever admit a call of agent step s (runner_budget_admit.c)? */
static lil_status step_admitted(struct lil_loop *lp, const struct lil_ir_step *s)
{
    char where[160];

    snprintf(where, sizeof(where), "agent step '%s'", s->id ? s->id : "?");
    return lil__budget_preflight(lp, s->agent.harness.s, where);
}

static lil_status steps_ready(struct lil_loop *lp, const struct lil_ir_step *steps,
                              size_t n, int depth)
{
    lil_status rc = LIL_OK;

    for (size_t i = 0; rc == LIL_OK && i < n && depth < 64; i++) {
        const struct lil_ir_step *s = &steps[i];

        if (s->kind == LIL_STEP_AGENT)
            rc = harness_ready(lp, s->agent.harness.s, s->path ? s->path : s->id);
        if (rc == LIL_OK && s->kind == LIL_STEP_AGENT)
            rc = step_admitted(lp, s);
        else if (s->kind == LIL_STEP_REDUCE)
            rc = steps_ready(lp, s->reduce.body, s->reduce.nbody, depth + 1);
    }
    return rc;
}

/* A new run whose agent steps (or on_exit agent) cannot run here is
 * refused before anything is created (docs/loops.md: an unconfigured
 * harness "is refused before anything is journaled"): fixing the setting
 * and running again starts the run.  A replay runs no harness. */
static lil_status config_ready(struct lil_loop *lp, const lil_loop_opts *o)
{
    const struct lil_ir_action *ex = &lp->ir->terminate.on_exit;
    lil_status rc;

    if (!lp->check_config || LIL_LOOP_OPT(o, replay_path))
        return LIL_OK;
    rc = steps_ready(lp, lp->ir->body, lp->ir->nbody, 0);
    if (rc == LIL_OK && ex->present && ex->kind == LIL_ACT_AGENT)
        rc = harness_ready(lp, ex->harness.s, "terminate.on_exit");
    if (rc == LIL_OK && ex->present && ex->kind == LIL_ACT_AGENT)
        rc = lil__budget_preflight(lp, ex->harness.s, "the exit action's agent call");
    return rc;
}

/* Open the run read-only and fold it; a new run (none yet, or one whose
 * start was never journaled) is opened for writing and started. */
static lil_status journal_facts(struct lil_loop *lp, const lil_spec *spec,
                                const lil_loop_opts *o)
{
    json_t *given = NULL;
    bool refolded;
    lil_status rc = given_inputs(lp, o, &given);

    lp->fx.given = json_incref(given); /* secret inputs unsealed from it */
    if (rc == LIL_OK)
        rc = open_run(lp, true);
    if (rc == LIL_E_NOTFOUND) {
        lil__clearerr(&lp->err);
        rc = config_ready(lp, o);
    }
    if (rc == LIL_OK && !lp->run)
        rc = open_run(lp, false);
    if (rc == LIL_OK)
        rc = lil__loop_load(lp);
    if (rc == LIL_OK && !lp->started) {
        rc = not_a_loop(lp);
        if (rc == LIL_OK)
            rc = queued_not_started(lp);
        if (rc == LIL_OK)
            rc = lil__loop_writable(lp, &refolded);
        if (rc == LIL_OK && !lp->started)
            return start(lp, spec, given); /* takes given */
    }
    if (rc == LIL_OK && (lp->opt.flags & LIL_LOOP_NEW_RUN))
        rc = lil__seterr(&lp->err, LIL_E_DONE, 0, "run %s exists already", lp->run_id);
    if (rc == LIL_OK) /* the spec, before anything is written */
        rc = lil__loop_bind_check(lp, spec);
    if (rc == LIL_OK && given) {
        rc = lil__inputs_compare(lp->env, &lp->err, lp->fx.inputs, given, NULL);
        if (rc != LIL_OK) {
            char why[LIL_ERRMSG_MAX];

            snprintf(why, sizeof(why), "%s", lp->err.msg);
            lil__seterr(&lp->err, rc, 0, "run %s: %s; give the same inputs or none",
                        lp->run_id, why);
        }
    }
    json_decref(given);
    return rc == LIL_OK && lp->run->readonly ? held_elsewhere(lp) : rc;
}

/* The run id: opts' run_id, else the spec's id -- with "-replay" after it
 * for a replay, which so keeps off the real run (made in buf). */
static const char *run_id_of(const lil_loop_opts *o, const struct lil_ir_spec *ir,
                             char *buf, size_t cap)
{
    if (o && o->run_id)
        return o->run_id;
    if (!ir || !ir->id.s || !LIL_LOOP_OPT(o, replay_path))
        return ir ? ir->id.s : NULL;
    snprintf(buf, cap, "%s-replay", ir->id.s);
    return buf;
}

static lil_status open_loop(struct lil_store *st, struct lil_err *err,
                            const lil_spec *spec, const lil_loop_opts *o, bool check,
                            struct lil_loop **out)
{
    const struct lil_ir_spec *ir = lil__spec_ir(spec);
    char replay_id[256];
    const char *id = run_id_of(o, ir, replay_id, sizeof(replay_id));
    struct lil_loop *lp;
    lil_status rc = opts_check(err, o);

    *out = NULL;
    if (rc != LIL_OK)
        return rc;
    if (!ir || !lil__spec_ok(spec))
        return lil__seterr(err, LIL_E_SPEC, 0, "the spec has errors: it cannot run");
    if (!id || lil__run_id_check(NULL, id) != LIL_OK)
        return lil__seterr(err, LIL_E_INVAL, 0, "invalid run id '%s'", id ? id : "");
    lp = lil__calloc(st->env, 1, sizeof(*lp));
    if (!lp)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    lp->magic = LIL_LOOP_MAGIC;
    lp->st = st;
    lp->env = st->env;
    lp->ir = ir;
    lp->spec_path = lil__spec_name(spec);
    lp->run_id = lil__strdup(lp->env, id);
    lp->opt.sync = o ? o->sync : LIL_SYNC_DEFAULT;
    lp->check_config = check;
    rc = lp->run_id ? copy_opts(lp, o) : LIL_E_NOMEM;
    if (rc == LIL_OK)
        rc = surroundings(lp, o);
    if (rc == LIL_OK)
        rc = journal_facts(lp, spec, o);
    if (rc != LIL_OK) {
        lil__copyerr(err, &lp->err);
        if (rc == LIL_E_NOMEM && !err->msg[0])
            lil__seterr(err, rc, 0, "out of memory");
        lil__loop_close(lp);
        return rc;
    }
    *out = lp;
    return LIL_OK;
}

lil_status lil__loop_open(struct lil_store *st, struct lil_err *err,
                          const lil_spec *spec, const lil_loop_opts *o,
                          struct lil_loop **out)
{
    return open_loop(st, err, spec, o, true, out);
}

lil_status lil__loop_open_unchecked(struct lil_store *st, struct lil_err *err,
                                    const lil_spec *spec, const lil_loop_opts *o,
                                    struct lil_loop **out)
{
    return open_loop(st, err, spec, o, false, out);
}

lil_status lil__loop_close(struct lil_loop *lp)
{
    const struct lil_env *env = lp->env;
    lil_status rc = lp->run ? lil__run_close(lp->run, &lp->err) : LIL_OK;

    lp->magic = 0;
    if (lp->replay.cassette_close)
        lp->replay.cassette_close(lp);
    lil__loop_slots_clear(lp);
    lil__free(env, lp->slots);
    json_decref(lp->fx.inputs);
    json_decref(lp->fx.given);
    json_decref(lp->fx.environ);
    json_decref(lp->fx.meta);
    json_decref(lp->committed);
    json_decref(lp->start);
    json_decref(lp->stop);
    json_decref(lp->notified);
    json_decref(lp->artifacts);
    lil__effect_env_free(env, lp->fx.effect_envp);
    lil__free(env, lp->fx.env_allow[0]);
    lil__free(env, lp->fx.env_allow[1]);
    lil__redact_free(lp->fx.redact);
    lil__free(env, lp->pause.step);
    lil__free(env, lp->pause.ask);
    lil__free(env, lp->pause.reason);
    lil__free(env, lp->end_reason);
    lil__free(env, lp->cap_detail);
    lil__free(env, lp->run_id);
    lil__free(env, lp->opt.actor);
    lil__free(env, lp->opt.reason);
    lil__free(env, lp->opt.cwd);
    lil__free(env, lp->opt.os_user);
    lil__loop_bind_forget(lp);
    lil__loop_respec_forget(lp);
    lil__free(env, lp);
    return rc;
}
