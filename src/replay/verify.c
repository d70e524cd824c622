/*
 * verify.c -- dry runs of a loop spec with mocked effects, their verdicts
 * and the scorecard (verify.h; docs/loops.md, "Verify and score"), and the
 * report behind lil_spec_verify (its checks: src/api/specs.c).
 *
 * The dry runs use the runner's whole calls (loop/runner_call.c) on a
 * temporary store, plus the runner's one hook for this (lil__loop_set_mock).  Each loop
 * handle is stepped one iteration at a time, so that the ceiling can stop a spec with a
 * large max_iterations without touching its caps.
 */
#include "replay/verify.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/env.h"
#include "base/handles.h"
#include "base/settings/settings.h"
#include "loop/caps.h"
#include "loop/runner.h"
#include "loopspec/ir/ir.h"
#include "loopspec/spec.h"
#include "loopspec/values/ident.h"
#include "os/os.h"
#include "store/store.h"

#define VERIFY_MAX_BLOCK_MS INT64_MAX /* every sleep waits, on the dry run's clock */
#define VERIFY_TICK_MS      1000      /* the dry run's clock advances per read */
#define VERIFY_DIR_MAX      4096
#define VERIFY_ACTOR        "lil verify"

/* ---- fixtures
 * ------------------------------------------------------------------------ */

static const char *const fixture_keys[] = {"shell", "http", "agent"};

void lil__verify_fixtures_free(struct lil_verify_fixtures *fx)
{
    json_decref(fx->shell);
    json_decref(fx->http);
    json_decref(fx->agent);
    memset(fx, 0, sizeof(*fx));
}

/* "unknown verification fixture key(s): a, b" when obj has other keys. */
static lil_status unknown_keys(struct lil_err *err, json_t *obj)
{
    char list[LIL_ERRMSG_MAX] = "";
    size_t used = 0;
    const char *key;
    json_t *v;

    json_object_foreach(obj, key, v)
    {
        bool known = false;

        for (size_t i = 0; i < 3; i++)
            known = known || strcmp(key, fixture_keys[i]) == 0;
        if (!known && used < sizeof(list)) {
            int n = snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
                             key);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    if (!used)
        return LIL_OK;
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "unknown verification fixture key(s): %s (expected shell, http, "
                       "agent)",
                       list);
}

static lil_status parse_fixtures(const struct lil_env *env, struct lil_err *err,
                                 const char *text, size_t len, json_t **out)
{
    lil_status rc;

    if (len > LIL_VERIFY_FIXTURES_MAX)
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "verification fixtures are larger than 1 MiB (%zu bytes)",
                           len);
    rc = lil__json_parse(env, err, LIL_E_INVAL, text, len,
                         JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL, out);
    if (rc == LIL_E_INVAL) {
        char why[LIL_ERRMSG_MAX];

        snprintf(why, sizeof(why), "%s", err->msg);
        return lil__seterr(err, rc, 0, "invalid verification fixture JSON: %s", why);
    }
    if (rc == LIL_OK && !json_is_object(*out))
        rc = lil__seterr(err, LIL_E_INVAL, 0,
                         "verification fixtures must be a JSON object with keys shell, "
                         "http, agent");
    if (rc == LIL_OK)
        rc = unknown_keys(err, *out);
    if (rc != LIL_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

lil_status lil__verify_fixtures(const struct lil_env *env, struct lil_err *err,
                                const char *text, size_t len,
                                struct lil_verify_fixtures *fx)
{
    json_t *obj = NULL, **slot[3];
    lil_status rc = LIL_OK;

    memset(fx, 0, sizeof(*fx));
    slot[0] = &fx->shell;
    slot[1] = &fx->http;
    slot[2] = &fx->agent;
    if (text)
        rc = parse_fixtures(env, err, text, len, &obj);
    for (size_t i = 0; rc == LIL_OK && i < 3; i++) {
        json_t *v = json_object_get(obj, fixture_keys[i]);

        fx->given[i] = v != NULL;
        *slot[i] = v ? json_incref(v) : json_object();
        if (!*slot[i])
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    json_decref(obj);
    if (rc != LIL_OK)
        lil__verify_fixtures_free(fx);
    return rc;
}

/* ---- sample inputs
 * ----------------------------------------------------------------------- */

static json_t *sample_of(const struct lil_ir_input *in)
{
    const char *s = NULL;
    size_t len = 0;

    switch (in->type.kind) {
    case LIL_TYPE_INT:
    case LIL_TYPE_NUMBER:
        return json_integer(0);
    case LIL_TYPE_BOOLEAN:
        return json_false();
    case LIL_TYPE_JSON:
    case LIL_TYPE_LIST:
        return json_array();
    case LIL_TYPE_ENUM:
        if (lil__type_member(&in->type, 0, &s, &len))
            return json_stringn(s, len);
        return json_string("x");
    default:
        return json_string("x");
    }
}

json_t *lil__verify_inputs(const struct lil_ir_spec *ir)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < ir->ninputs; i++) {
        const struct lil_ir_input *in = &ir->inputs[i];

        if (in->def || !in->type_ok)
            continue;
        if (json_object_set_new(o, in->name, sample_of(in)) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* ---- the mock
 * ---------------------------------------------------------------------------- */

static lil_status mock(void *ud, struct lil_err *err, const char *kind, json_t *request,
                       json_t **result, json_t **usage)
{
    const struct lil_verify_fixtures *fx = ud;
    bool agent = strcmp(kind, "agent") == 0;
    json_t *src = agent ? fx->agent : strcmp(kind, "http") == 0 ? fx->http : fx->shell;
    json_t *u = agent ? json_object_get(src, "usage") : NULL;

    (void)request;
    *usage = NULL;
    *result = json_deep_copy(src);
    if (*result && json_is_object(u))
        *usage = json_deep_copy(u); /* metered, as a harness's usage is */
    if (!*result || (json_is_object(u) && !*usage)) {
        json_decref(*result);
        *result = NULL;
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    return LIL_OK;
}

/* ---- the temporary store
 * ------------------------------------------------------------------ */

static lil_status temp_dir(struct lil_err *err, char dir[VERIFY_DIR_MAX])
{
    const char *tmp = lil__setting_raw("TMPDIR");
    int n;

    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    n = snprintf(dir, VERIFY_DIR_MAX, "%s/lil-verify-XXXXXX", tmp);
    if (n < 0 || n >= VERIFY_DIR_MAX)
        return lil__seterr(err, LIL_E_TOOBIG, 0, "TMPDIR is too long");
    if (!mkdtemp(dir))
        return lil__seterr(err, LIL_E_IO, errno, "mkdtemp %s: %s", dir,
                           lil__errstr(errno));
    return LIL_OK;
}

/* rm -r of what the store made (journals, stop files, markers/), best
 * effort: a directory holds files and, one level down, a directory. */
static void remove_tree(const struct lil_env *env, const char *dir, int depth)
{
    struct dirent **names = NULL;
    char path[VERIFY_DIR_MAX + 256];
    int n = scandir(dir, &names, NULL, NULL);

    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;

        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            snprintf(path, sizeof(path), "%s/%s", dir, name);
            if (env->os->unlink(path) != 0 && depth < 2)
                remove_tree(env, path, depth + 1);
        }
        free(names[i]);
    }
    free(names);
    (void)rmdir(dir);
}

/* ---- dry runs
 * ------------------------------------------------------------------------------ */

struct verify {
    lil_env *env;
    struct lil_err *err;
    const lil_spec *spec;
    const struct lil_ir_spec *ir;
    struct lil_verify_fixtures fx; /* borrowed references */
    lil_store *st;
    char dir[VERIFY_DIR_MAX];
    struct lil_buf inputs; /* the sample inputs as JSON text */
    int64_t limit;         /* iterations a dry run may commit */
    bool clamped;          /* max_iterations is above the ceiling */
    int64_t clock_ms;      /* the dry run's clock: from 0, +1 s a read */
    bool sampled;          /* some input has a sample value */
    json_t *unsent;        /* {"step\nwhy": true}: requests a real run refuses */
};

/* The runner's unsent hook: remember a request the mock answered that a
 * real run would refuse (once per step and reason, for the issues). */
static void note_unsent(void *ud, const char *step, const char *why)
{
    struct verify *v = ud;
    char key[1024]; /* a step id and an error message */

    snprintf(key, sizeof(key), "%s\n%s", step ? step : "", why);
    if (v->unsent && !json_object_get(v->unsent, key))
        (void)json_object_set_new(v->unsent, key, json_true()); /* best effort */
}

static int64_t dry_now(void *ud)
{
    struct verify *v = ud;
    int64_t now = v->clock_ms;

    v->clock_ms += VERIFY_TICK_MS;
    return now;
}

struct dry {
    const char *run_id;
    lil_loop_status status;
    int64_t iteration;
    char *reason; /* or NULL */
    json_t *state;
    int64_t wake_at;
    bool has_next;
    bool ceiling; /* stopped at the ceiling */
    int64_t steps;
};

static void dry_free(const struct lil_env *env, struct dry *d)
{
    lil__free(env, d->reason);
    json_decref(d->state);
}

static lil_status open_loop(struct verify *v, const char *run_id, lil_loop **lp)
{
    lil_loop_opts o;
    struct lil_err e;
    lil_status rc;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = run_id;
    o.sync = LIL_SYNC_OFF;
    o.flags = LIL_LOOP_YES;
    o.inputs_json = (const char *)v->inputs.data;
    o.cwd = v->dir;
    o.actor = VERIFY_ACTOR;
    o.reason = "dry run";
    o.max_block_ms = VERIFY_MAX_BLOCK_MS;
    rc = lil__loop_open_call(v->st, &e, v->spec, &o, lp);
    if (rc != LIL_OK)
        return lil__seterr(v->err, rc, 0, "dry run %s: %s", run_id, e.msg);
    lil__loop_set_mock(*lp, mock, &v->fx);
    lil__loop_set_unsent(*lp, note_unsent, v);
    lil__loop_set_clock(*lp, dry_now, NULL, v); /* sleeps take no time */
    return LIL_OK;
}

/* Keep what one step returned in d. */
static lil_status take_result(struct verify *v, struct dry *d,
                              const lil_loop_result *res)
{
    const char *state = res->state_json ? res->state_json : "{}";
    json_t *s = NULL;
    lil_status rc;

    rc = lil__json_parse(v->env, v->err, LIL_E_CORRUPT, state, strlen(state), 0, NULL,
                         &s);
    if (rc != LIL_OK)
        return rc;
    json_decref(d->state);
    d->state = s;
    lil__free(v->env, d->reason);
    d->reason = res->reason ? lil__strdup(v->env, res->reason) : NULL;
    if (res->reason && !d->reason)
        return lil__seterr(v->err, LIL_E_NOMEM, 0, "out of memory");
    d->status = res->status;
    d->iteration = res->iteration;
    d->wake_at = res->wake_at_ms;
    d->has_next = res->status == LIL_LOOP_WAITING && res->has_next;
    return LIL_OK;
}

/* One step of d's loop (opened when *lp is NULL). */
static lil_status step_once(struct verify *v, struct dry *d, lil_loop **lp)
{
    lil_loop_result res;
    lil_status rc = *lp ? LIL_OK : open_loop(v, d->run_id, lp);

    if (rc != LIL_OK)
        return rc;
    memset(&res, 0, sizeof(res));
    rc = lil__loop_step_call(*lp, &res);
    if (rc != LIL_OK)
        return lil__seterr(v->err, rc, 0, "dry run %s: %s", d->run_id, (*lp)->err.msg);
    d->steps++;
    rc = take_result(v, d, &res);
    lil__loop_result_free(&res);
    return rc;
}

/* Step d's loop until it ends, parks or reaches the ceiling; restart: a
 * new loop handle for every step. */
static lil_status dry_run(struct verify *v, struct dry *d, bool restart)
{
    lil_loop *lp = NULL;
    lil_status rc = LIL_OK, closed;

    v->clock_ms = 0;
    while (rc == LIL_OK && d->steps < v->limit + 3) {
        rc = step_once(v, d, &lp);
        if (restart) {
            closed = lil__loop_close_call(lp);
            lp = NULL;
            if (rc == LIL_OK && closed != LIL_OK)
                rc = lil__seterr(v->err, closed, 0, "dry run %s: %s", d->run_id,
                                 lil__thread_errmsg());
        }
        if (rc != LIL_OK || !d->has_next)
            break;
        if (v->clamped && d->iteration >= v->limit) {
            d->ceiling = true;
            break;
        }
    }
    closed = lil__loop_close_call(lp);
    return rc == LIL_OK && closed != LIL_OK
               ? lil__seterr(v->err, closed, 0, "dry run %s: %s", d->run_id,
                             lil__thread_errmsg())
               : rc;
}

/* ---- verdicts
 * ------------------------------------------------------------------------------ */

static bool cap_reason(const char *reason)
{
    enum lil_cap cap;

    return reason && lil__cap_from_reason(reason, strlen(reason), &cap);
}

/* Ended cleanly: a terminal state, a pause, a cap, or the ceiling. */
static bool clean_end(const struct dry *d)
{
    if (d->ceiling)
        return true;
    switch (d->status) {
    case LIL_LOOP_COMPLETED:
    case LIL_LOOP_STOPPED:
    case LIL_LOOP_PAUSED:
        return true;
    case LIL_LOOP_FAILED:
        return cap_reason(d->reason);
    default:
        return false;
    }
}

static bool same_end(const struct dry *a, const struct dry *b)
{
    return a->status == b->status && a->ceiling == b->ceiling &&
           json_equal(a->state, b->state);
}

struct verdicts {
    bool bounded, deterministic, resume_stable, natural;
};

static struct verdicts judge(const struct verify *v, const struct dry *a,
                             const struct dry *b, const struct dry *s)
{
    struct verdicts vd;

    vd.bounded = clean_end(a) && a->iteration <= v->limit + 1;
    vd.deterministic = same_end(a, b);
    vd.resume_stable = same_end(a, s);
    vd.natural = a->status == LIL_LOOP_COMPLETED && !a->ceiling;
    return vd;
}

/* ---- issues
 * ------------------------------------------------------------------------------- */

static void issue(json_t *issues, const char *severity, const char *code,
                  const char *fmt, ...) LIL_PRINTF(4, 5);

static void issue(json_t *issues, const char *severity, const char *code,
                  const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_array_append_new(issues, json_pack("{s:s, s:s, s:s}", "severity", severity,
                                            "code", code, "message", msg));
}

/* "status=waiting, iterations=3" and why, for the unbounded error. */
static void describe_end(const struct dry *d, char *out, size_t cap)
{
    const char *st = lil__loop_status_name(d->status);

    if (d->status == LIL_LOOP_FAILED)
        snprintf(out, cap, "crashed (%s)", d->reason ? d->reason : "no reason");
    else if (d->wake_at)
        snprintf(
            out, cap,
            "status=%s, iterations=%lld: it parked until %lld on a sleep.until whose "
            "guard stays false under the fixtures",
            st, (long long)d->iteration, (long long)d->wake_at);
    else
        snprintf(out, cap, "status=%s, iterations=%lld%s%s", st,
                 (long long)d->iteration, d->reason ? ": " : "",
                 d->reason ? d->reason : "");
}

static const char *end_reason(const struct dry *d)
{
    if (d->reason)
        return d->reason;
    return d->status == LIL_LOOP_COMPLETED ? "terminate.until held" : "no reason";
}

static void verdict_issues(const struct verify *v, const struct verdicts *vd,
                           const struct dry *a, json_t *issues)
{
    char what[512];

    if (!vd->bounded) {
        describe_end(a, what, sizeof(what));
        issue(issues, "error", "unbounded",
              "loop did not reach a clean terminal state within caps \u2014 %s", what);
    }
    if (!vd->deterministic)
        issue(issues, "error", "non-deterministic",
              "non-deterministic: two fresh dry runs produced different final state");
    if (!vd->resume_stable)
        issue(issues, "error", "resume-instability",
              "resume-instability: restarting between every iteration produced a "
              "different result than a single run");
    if (vd->bounded && !vd->natural) {
        bool fixtures = v->fx.given[0] || v->fx.given[1] || v->fx.given[2];

        char how[512];

        if (a->ceiling)
            snprintf(how, sizeof(how), "within the verify ceiling of %d iterations",
                     LIL_VERIFY_CEILING);
        else
            snprintf(how, sizeof(how), "(ended '%s' via %s)",
                     lil__loop_status_name(a->status), end_reason(a));
        issue(issues, "info", "no-natural-exit",
              "did not reach 'completed' under %s %s; it relies on caps or real effect "
              "values to stop \u2014 confirm a real exit signal exists",
              fixtures ? "the fixtures" : "empty mocks", how);
    }
}

/* One issue per step and reason of note_unsent: info when inputs were
 * sampled (they may be what makes the request unsendable: a real run gets
 * real values), else a warning (a real run would fail there). */
static void unsent_issues(const struct verify *v, json_t *issues)
{
    static const char prefix[] = "http request: ";
    const char *key;
    json_t *val;

    json_object_foreach(v->unsent, key, val)
    {
        const char *why = strchr(key, '\n') + 1;
        int step_len = (int)(why - 1 - key);

        if (strncmp(why, prefix, sizeof(prefix) - 1) == 0)
            why += sizeof(prefix) - 1;
        issue(issues, v->sampled ? "info" : "warning", "unsendable-request",
              "%s%.*s%s: a real run would refuse to send its http request%s (%s); "
              "the dry run's mock answered it",
              step_len ? "step '" : "on_exit or the completion hook", step_len, key,
              step_len ? "'" : "", v->sampled ? " with the sample inputs" : "", why);
    }
}

static void spec_issues(const struct verify *v, json_t *issues)
{
    const struct lil_ir_spec *ir = v->ir;

    if (ir->caps.injected)
        issue(issues, "warning", "caps-injected",
              "relying on caps injected for pattern '%s' (max_iterations %lld); set "
              "explicit caps (`lil explain` shows the injected ones)",
              lil__ir_enum_name(LIL_ENUM_PATTERN, (int)ir->pattern),
              ir->caps.max_iterations);
    if (v->clamped)
        issue(issues, "info", "verify-ceiling",
              "verify used a reduced ceiling of %d iterations (max_iterations is %lld)",
              LIL_VERIFY_CEILING, ir->caps.max_iterations);
}

/* ---- the scorecard
 * ----------------------------------------------------------------------- */

static double signal_value(enum lil_ir_signal s)
{
    switch (s) {
    case LIL_SIG_ORACLE:
        return 1.0;
    case LIL_SIG_STATE_PREDICATE:
        return 0.85;
    case LIL_SIG_LLM_JUDGE:
        return 0.55;
    case LIL_SIG_SELF_ASSESS:
        return 0.35;
    default:
        return 0.3;
    }
}

static double grounding_ceiling(enum lil_ir_grounding g)
{
    switch (g) {
    case LIL_GROUND_STRUCTURAL:
        return 0.9;
    case LIL_GROUND_MIXED:
        return 0.7;
    case LIL_GROUND_AGENT:
        return 0.4;
    default: /* external, none */
        return 1.0;
    }
}

/* "[a, b]": the exit vars the predicate reads that agents write. */
static void agent_fed(const struct lil_ir_spec *ir, const struct lil_ir_exit *x,
                      char *out, size_t cap)
{
    size_t used = 0;

    out[0] = '\0';
    for (size_t i = 0; i < x->nreads && used < cap; i++) {
        size_t var = x->reads[i];
        int n;

        if (!x->agent[var])
            continue;
        n = snprintf(out + used, cap - used, "%s%s", used ? ", " : "",
                     ir->state.vars[var].name);
        used += n > 0 ? (size_t)n : 0;
    }
}

static json_t *dimension(const char *name, int weight, double score, const char *note)
{
    return json_pack("{s:s, s:i, s:f, s:f, s:s}", "name", name, "weight", weight,
                     "score", score, "points", score * weight, "note", note);
}

static json_t *termination_dim(const struct lil_ir_spec *ir,
                               const struct lil_ir_exit *x)
{
    enum lil_ir_signal sig = ir->terminate.signal;
    double score = signal_value(sig), ceil = grounding_ceiling(x->grounding);
    char note[512], vars[256];
    int n = snprintf(note, sizeof(note), "signal: %s \u00b7 grounding: %s",
                     lil__ir_enum_name(LIL_ENUM_SIGNAL, (int)sig),
                     lil__ir_grounding_name(x->grounding));

    if ((sig == LIL_SIG_ORACLE || sig == LIL_SIG_STATE_PREDICATE) && ceil < score) {
        score = ceil;
        agent_fed(ir, x, vars, sizeof(vars));
        if (n > 0 && (size_t)n < sizeof(note) && vars[0])
            snprintf(note + n, sizeof(note) - (size_t)n,
                     " (downgraded: exit fed by agent output [%s])", vars);
        else if (n > 0 && (size_t)n < sizeof(note))
            snprintf(note + n, sizeof(note) - (size_t)n,
                     " (downgraded by its grounding)");
    }
    return dimension("termination safety", 30, score, note);
}

static json_t *caps_dim(const struct lil_ir_spec *ir)
{
    bool np = ir->caps.no_progress.present, budget = ir->caps.budget.present;
    double score =
        (ir->caps.injected ? 0.0 : 0.5) + (np ? 0.25 : 0.0) + (budget ? 0.25 : 0.0);
    char note[128];

    snprintf(note, sizeof(note), "%s \u00b7 no_progress %s \u00b7 budget %s",
             ir->caps.injected ? "injected caps" : "explicit caps",
             np ? "set" : "missing", budget ? "set" : "missing");
    return dimension("caps", 25, score, note);
}

/* Only what runs counts: the journal (lil journals every run, so
 * `observe.trace: none` earns nothing less and nothing more), the
 * completion hook, and a notify that sends (a policy other than never and
 * a channel: runner_notify.c). */
static json_t *observability_dim(const struct lil_ir_spec *ir)
{
    bool notify = ir->notify.present && ir->notify.policy != LIL_NOTIFY_NEVER &&
                  ir->notify.channels.n > 0;
    bool hook = ir->observe.completed.present;
    char note[160];

    snprintf(note, sizeof(note), "trace: journal%s \u00b7 %s",
             ir->observe.trace == LIL_TRACE_NONE ? " (trace: none is not honoured)"
                                                 : "",
             hook     ? "completion hook"
             : notify ? "active notify"
                      : "no completion hook or active notify");
    return dimension("observability", 15, 0.7 + (hook || notify ? 0.3 : 0.0), note);
}

static const char *grade_of(long long total)
{
    return total >= 90   ? "A"
           : total >= 80 ? "B"
           : total >= 70 ? "C"
           : total >= 60 ? "D"
                         : "F";
}

/* The dimensions' points summed and rounded (half up: all are >= 0). */
static long long total_of(json_t *dims)
{
    double sum = 0;
    size_t i;
    json_t *d;

    json_array_foreach(dims, i, d)
    {
        sum += json_real_value(json_object_get(d, "points"));
    }
    return (long long)(sum + 0.5 + 1e-9);
}

json_t *lil__verify_score(const struct lil_ir_spec *ir, struct lil_err *err,
                          bool deterministic, bool resume_stable)
{
    struct lil_ir_exit x;
    json_t *dims = NULL, *o = NULL;
    long long total;

    if (lil__ir_exit_analyse(ir, &x) == LIL_OK)
        dims = json_pack(
            "[o, o, o, o, o]", termination_dim(ir, &x), caps_dim(ir),
            observability_dim(ir),
            dimension("resumability", 15, resume_stable ? 1.0 : 0.0,
                      resume_stable
                          ? "a restart between iterations changes nothing"
                          : "a restart between iterations changes the result"),
            dimension("determinism", 15, deterministic ? 1.0 : 0.0,
                      deterministic ? "two dry runs agree" : "two dry runs differ"));
    lil__ir_exit_free(ir->env, &x);
    if (dims) {
        total = total_of(dims);
        o = json_pack("{s:I, s:s, s:o}", "total", (json_int_t)total, "grade",
                      grade_of(total), "dimensions", dims);
    }
    if (!o)
        lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return o;
}

/* ---- the report
 * --------------------------------------------------------------------------- */

static json_t *dry_json(const struct dry *d)
{
    json_t *o = json_pack("{s:s, s:I}", "status", lil__loop_status_name(d->status),
                          "iteration", (json_int_t)d->iteration);

    if (o && d->reason)
        json_object_set_new(o, "reason", json_string(d->reason));
    if (o && d->wake_at)
        json_object_set_new(o, "wakeAt", json_integer(d->wake_at));
    if (o) {
        json_object_set_new(o, "ceilingReached", json_boolean(d->ceiling));
        json_object_set_new(o, "steps", json_integer(d->steps));
        json_object_set(o, "state", d->state ? d->state : json_null());
    }
    return o;
}

static json_t *report_of(const struct verify *v, const struct verdicts *vd,
                         const struct dry runs[3], json_t *issues, json_t *score)
{
    const struct lil_verify_fixtures *fx = &v->fx;

    return json_pack(
        "{s:b, s:b, s:b, s:b, s:b, s:I, s:i, s:b, s:b, s:{s:b, s:b, s:b}, "
        "s:o, s:o, s:o, s:O, s:O}",
        "ok", vd->bounded && vd->deterministic && vd->resume_stable, "bounded",
        vd->bounded, "deterministic", vd->deterministic, "resumeStable",
        vd->resume_stable, "terminatedNaturally", vd->natural, "maxIterations",
        (json_int_t)v->ir->caps.max_iterations, "ceiling", LIL_VERIFY_CEILING,
        "clamped", v->clamped, "capsInjected", v->ir->caps.injected, "fixtures",
        "shell", fx->given[0], "http", fx->given[1], "agent", fx->given[2], "dryRun",
        dry_json(&runs[0]), "rerun", dry_json(&runs[1]), "stepped", dry_json(&runs[2]),
        "issues", issues, "score", score);
}

static lil_status judge_and_report(struct verify *v, const struct dry runs[3],
                                   json_t **report)
{
    struct verdicts vd = judge(v, &runs[0], &runs[1], &runs[2]);
    json_t *issues = json_array();
    json_t *score =
        lil__verify_score(v->ir, v->err, vd.deterministic, vd.resume_stable);

    if (issues) {
        verdict_issues(v, &vd, &runs[0], issues);
        unsent_issues(v, issues);
        spec_issues(v, issues);
    }
    *report = issues && score ? report_of(v, &vd, runs, issues, score) : NULL;
    json_decref(issues);
    json_decref(score);
    return *report ? LIL_OK : lil__seterr(v->err, LIL_E_NOMEM, 0, "out of memory");
}

/* ---- the three dry runs
 * ------------------------------------------------------------------- */

static lil_status setup(struct verify *v)
{
    struct lil_err e;
    json_t *inputs = lil__verify_inputs(v->ir);
    lil_status rc =
        inputs ? lil__json_dump(v->env, v->err, inputs, JSON_COMPACT, &v->inputs)
               : lil__seterr(v->err, LIL_E_NOMEM, 0, "out of memory");

    v->sampled = json_object_size(inputs) > 0;
    json_decref(inputs);
    if (rc != LIL_OK)
        return rc;
    v->unsent = json_object();
    if (!v->unsent)
        return lil__seterr(v->err, LIL_E_NOMEM, 0, "out of memory");
    v->clamped = v->ir->caps.max_iterations > LIL_VERIFY_CEILING;
    v->limit = v->clamped ? LIL_VERIFY_CEILING : v->ir->caps.max_iterations;
    rc = temp_dir(v->err, v->dir);
    if (rc != LIL_OK)
        return rc;
    rc = lil__store_open(v->env, &e, v->dir, 0, &v->st);
    if (rc == LIL_OK) {
        lil__env_store_opened(v->env);
        rc = lil__store_set_key(v->st, &e, NULL, 0); /* never $LIL_JOURNAL_KEY */
    }
    if (rc != LIL_OK)
        return lil__seterr(v->err, rc, 0, "the temporary store %s: %s", v->dir, e.msg);
    return LIL_OK;
}

static void teardown(struct verify *v)
{
    if (v->st) {
        lil__store_close(v->st);
        lil__env_store_closed(v->env);
    }
    v->st = NULL;
    if (v->dir[0])
        remove_tree(v->env, v->dir, 0);
    lil__buf_free(&v->inputs);
    json_decref(v->unsent);
}

lil_status lil__verify(lil_env *env, struct lil_err *err, const lil_spec *spec,
                       const struct lil_verify_fixtures *fx, json_t **report)
{
    struct verify v;
    struct dry runs[3];
    lil_status rc;

    *report = NULL;
    memset(&v, 0, sizeof(v));
    memset(runs, 0, sizeof(runs));
    v.env = env;
    v.err = err;
    v.spec = spec;
    v.ir = lil__spec_ir(spec);
    v.fx = *fx;
    lil__buf_init(&v.inputs, env, SIZE_MAX);
    runs[0].run_id = "verify-run";
    runs[1].run_id = "verify-rerun";
    runs[2].run_id = "verify-stepped";
    rc = setup(&v);
    for (int i = 0; rc == LIL_OK && i < 3; i++)
        rc = dry_run(&v, &runs[i], i == 2);
    if (rc == LIL_OK)
        rc = judge_and_report(&v, runs, report);
    for (int i = 0; i < 3; i++)
        dry_free(env, &runs[i]);
    teardown(&v);
    return rc;
}

/* ---- the report as JSON (lil_spec_verify)
 * ----------------------------------------------------------- */

lil_status lil__spec_verify(lil_env *env, struct lil_err *err, const lil_spec *spec,
                            const char *fixtures_json, lil_bytes *out)
{
    struct lil_verify_fixtures fx;
    struct lil_buf text;
    json_t *report = NULL;
    lil_status rc;

    rc = lil__verify_fixtures(env, err, fixtures_json,
                              fixtures_json ? strlen(fixtures_json) : 0, &fx);
    if (rc != LIL_OK)
        return rc;
    rc = lil__verify(env, err, spec, &fx, &report);
    lil__verify_fixtures_free(&fx);
    lil__buf_init(&text, env, SIZE_MAX);
    if (rc == LIL_OK)
        rc = lil__json_dump(env, err, report, JSON_COMPACT, &text);
    if (rc == LIL_OK && lil__buf_export(&text, out) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    lil__buf_free(&text);
    json_decref(report);
    return rc;
}
