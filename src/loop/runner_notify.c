/*
 * runner_notify.c -- the spec's `notify` key acted on (docs/loops.md,
 * "Notifications"): after an operation left the run at an event, each
 * channel the key names is told, once.
 *
 * Events and the policy that sends them:
 *   completed, failed, stopped   the run reached that status
 *   paused                       a breakpoint or gate waits for approval
 *   cap                          a cap tripped and waits for approval
 *   always: every event; on-failure: failed and cap; on-change: an event
 *   other than the last one this run notified; never: none.
 * Each event has a key that names it in the journal: the pause's record
 * ("pause.N", "cap.N") or "<event>.<iteration>".
 *
 * A channel's action is the operator's, never the spec's: the environment
 * variable LIL_NOTIFY_<CHANNEL> (upper case, '.' and '-' read as '_').  A
 * value starting with http:// or https:// is a URL that gets a POST of
 * the event as JSON; any other value is a command run by /bin/sh -c in
 * the run's working directory with the environment of shell steps plus
 * LIL_NOTIFY_EVENT, LIL_NOTIFY_CHANNEL, LIL_NOTIFY_RUN, LIL_NOTIFY_LOOP,
 * LIL_NOTIFY_ITERATION, LIL_NOTIFY_REASON and LIL_NOTIFY_JSON (the POST's
 * body).  Either gets LIL_NOTIFY_TIMEOUT_MS.
 *
 * Order (at most once): the event is in the journal first (the operation
 * journaled it); then notify.N {event, key, channel, status: "attempted"},
 * synced; then the action; then notify.N {..., status: "ok" | "failed",
 * error?}.  A channel the journal holds as attempted is never told again,
 * so a crash during an action loses that notification (its record stays
 * "attempted"); a crash after the event and before the attempt sends it
 * when the run is next opened by run, resume, approve or recover.  The
 * notify records come after the run's end record when the event is an
 * end (engine/run.h, after_end).  A failure is journaled and changes
 * nothing else: the run's status and exit code are the event's.  No
 * message names the command or URL; errors pass the run's redaction.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "effects/effect_http.h"
#include "effects/effect_shell.h"
#include "json/json.h"
#include "loop/runner.h"

#define LIL_NOTIFY_TIMEOUT_MS 30000
#define NOTIFY_ENV_PREFIX     "LIL_NOTIFY_"
#define NOTIFY_VARS           7

struct notice {
    const char *event;
    char key[LIL_LOOP_NAME_MAX + 32];
    const char *reason;
    json_t *body; /* the event as JSON */
};

/* ---- the fold ------------------------------------------------------------- */

lil_status lil__loop_notify_fold(struct lil_loop *lp, json_t *v)
{
    const char *key = json_string_value(json_object_get(v, "key"));
    const char *ch = json_string_value(json_object_get(v, "channel"));
    const char *status = json_string_value(json_object_get(v, "status"));
    const char *event = json_string_value(json_object_get(v, "event"));
    json_t *events, *one;

    if (!key || !ch || !status || !event)
        return lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                           "run %s: a notify record without key, channel, status "
                           "or event",
                           lp->run_id);
    if (!lp->notified)
        lp->notified = json_pack("{s:{}}", "events");
    events = json_object_get(lp->notified, "events");
    one = json_object_get(events, key);
    if (events && !one) {
        one = json_object();
        json_object_set_new(events, key, one);
    }
    if (!one || json_object_set_new(one, ch, json_string(status)) != 0 ||
        json_object_set_new(lp->notified, "last", json_string(event)) != 0 ||
        json_object_set_new(lp->notified, "lastKey", json_string(key)) != 0)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

/* ---- the event ------------------------------------------------------------ */

static const char *event_of(struct lil_loop *lp, const lil_loop_result *res, char *key,
                            size_t keycap)
{
    char id[LIL_LOOP_NAME_MAX], digest[65];
    const char *ev;

    switch (res->status) {
    case LIL_LOOP_COMPLETED:
        ev = "completed";
        break;
    case LIL_LOOP_FAILED:
        ev = "failed";
        break;
    case LIL_LOOP_STOPPED:
        ev = "stopped";
        break;
    case LIL_LOOP_PAUSED:
        if (!lil__loop_pause_ident(lp, id, digest) || !id[0])
            return NULL;
        snprintf(key, keycap, "%s", id);
        return lp->meters.pending != LIL_CAP_NONE ? "cap" : "paused";
    default:
        return NULL;
    }
    snprintf(key, keycap, "%s.%lld", ev, (long long)res->iteration);
    return ev;
}

static bool policy_sends(const struct lil_loop *lp, const char *event, const char *key)
{
    const char *last = json_string_value(json_object_get(lp->notified, "last"));
    const char *last_key = json_string_value(json_object_get(lp->notified, "lastKey"));

    switch (lp->ir->notify.policy) {
    case LIL_NOTIFY_ALWAYS:
        return true;
    case LIL_NOTIFY_ON_FAILURE:
        return strcmp(event, "failed") == 0 || strcmp(event, "cap") == 0;
    case LIL_NOTIFY_ON_CHANGE:
        /* the event last notified, unless it is this one (a crash cut it) */
        return !last || strcmp(last, event) != 0 ||
               (last_key && strcmp(last_key, key) == 0);
    case LIL_NOTIFY_NEVER:
    default:
        return false;
    }
}

/* Is channel ch of the event keyed key still to be told? */
static bool pending(const struct lil_loop *lp, const char *key, const char *ch)
{
    json_t *one = json_object_get(json_object_get(lp->notified, "events"), key);

    return json_object_get(one, ch) == NULL;
}

static bool any_pending(const struct lil_loop *lp, const struct notice *n)
{
    for (size_t i = 0; i < lp->ir->notify.channels.n; i++)
        if (pending(lp, n->key, lp->ir->notify.channels.v[i].s))
            return true;
    return false;
}

/* ---- the action ----------------------------------------------------------- */

/* LIL_NOTIFY_<CHANNEL>'s value in the environment the run was opened with. */
static const char *channel_action(const struct lil_loop *lp, const char *ch, char *var,
                                  size_t varcap)
{
    size_t n = (size_t)snprintf(var, varcap, "%s%s", NOTIFY_ENV_PREFIX, ch);

    for (size_t i = strlen(NOTIFY_ENV_PREFIX); i < n && i < varcap; i++) {
        if (var[i] >= 'a' && var[i] <= 'z')
            var[i] = (char)(var[i] - 'a' + 'A');
        else if (var[i] == '.' || var[i] == '-')
            var[i] = '_';
    }
    return json_string_value(json_object_get(lp->fx.environ, var));
}

static bool is_url(const char *s)
{
    return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}

static lil_status post(struct lil_loop *lp, const char *url, const struct notice *n,
                       char *why, size_t whycap)
{
    json_t *req = json_pack("{s:s, s:s, s:{s:s}, s:O, s:b}", "method", "POST", "url",
                            url, "headers", "Content-Type", "application/json", "body",
                            n->body, "envelope", 1);
    json_t *out = NULL;
    struct lil_http_opts o;
    lil_status rc;

    if (!req)
        return LIL_E_NOMEM;
    lil__http_opts_init(&o);
    o.timeout_ms = LIL_NOTIFY_TIMEOUT_MS;
    rc = lil__http_perform(lp->env, &lp->err, req, &o, &out);
    json_decref(req);
    if (rc == LIL_OK && !json_is_true(json_object_get(out, "ok"))) {
        snprintf(why, whycap, "HTTP status %lld",
                 (long long)json_integer_value(json_object_get(out, "status")));
        rc = LIL_E_HTTP;
    } else if (rc != LIL_OK) {
        snprintf(why, whycap, "%s", lp->err.msg);
    }
    json_decref(out);
    return rc;
}

/* "NAME=value" strings for the command, in one allocation each. */
static char *var_of(struct lil_loop *lp, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = lil__malloc(lp->env, len);

    if (s)
        snprintf(s, len, "%s=%s", name, value);
    return s;
}

static lil_status shell_env(struct lil_loop *lp, const struct notice *n, const char *ch,
                            char **vars)
{
    char iteration[32];
    struct lil_buf text;
    const char *names[NOTIFY_VARS] = {"LIL_NOTIFY_EVENT",     "LIL_NOTIFY_CHANNEL",
                                      "LIL_NOTIFY_RUN",       "LIL_NOTIFY_LOOP",
                                      "LIL_NOTIFY_ITERATION", "LIL_NOTIFY_REASON",
                                      "LIL_NOTIFY_JSON"};
    const char *values[NOTIFY_VARS];
    lil_status rc;

    lil__buf_init(&text, lp->env, SIZE_MAX);
    rc = lil__json_dump(lp->env, &lp->err, n->body, JSON_COMPACT, &text);
    if (rc == LIL_OK)
        rc = lil__buf_add(&text, "", 1);

    snprintf(iteration, sizeof(iteration), "%lld", (long long)lp->meters.iteration);
    values[0] = n->event;
    values[1] = ch;
    values[2] = lp->run_id;
    values[3] = lp->ir->id.s ? lp->ir->id.s : "";
    values[4] = iteration;
    values[5] = n->reason ? n->reason : "";
    values[6] = rc == LIL_OK ? (const char *)text.data : "";
    for (size_t i = 0; rc == LIL_OK && i < NOTIFY_VARS; i++) {
        vars[i] = var_of(lp, names[i], values[i]);
        if (!vars[i])
            rc = LIL_E_NOMEM;
    }
    lil__buf_free(&text);
    return rc;
}

static lil_status run_command(struct lil_loop *lp, const char *cmd,
                              const struct notice *n, const char *ch, char *why,
                              size_t whycap)
{
    size_t base = 0;
    char *vars[NOTIFY_VARS] = {0};
    const char **envp;
    struct lil_shell_cmd sc = {.script = cmd};
    struct lil_shell_opts o = {0};
    struct lil_shell_info info;
    json_t *out = NULL;
    lil_status rc;

    while (lp->fx.effect_envp && lp->fx.effect_envp[base])
        base++;
    envp = lil__calloc(lp->env, base + NOTIFY_VARS + 1, sizeof(*envp));
    rc = envp ? shell_env(lp, n, ch, vars) : LIL_E_NOMEM;
    for (size_t i = 0; envp && i < base; i++)
        envp[i] = lp->fx.effect_envp[i];
    for (size_t i = 0; envp && i < NOTIFY_VARS; i++)
        envp[base + i] = vars[i];
    o.cwd = lp->opt.cwd;
    o.envp = envp;
    o.timeout_ms = LIL_NOTIFY_TIMEOUT_MS;
    memset(&info, 0, sizeof(info));
    if (rc == LIL_OK)
        rc = lil__shell_run(lp->env, &lp->err, &sc, &o, &info, &out);
    if (rc != LIL_OK)
        snprintf(why, whycap, "%s", rc == LIL_E_NOMEM ? "out of memory" : lp->err.msg);
    else if (info.timed_out)
        snprintf(why, whycap, "timed out after %d ms", LIL_NOTIFY_TIMEOUT_MS);
    else if (info.signal)
        snprintf(why, whycap, "killed by signal %d", info.signal);
    else if (info.exit_code != 0)
        snprintf(why, whycap, "exit %d", info.exit_code);
    if (rc == LIL_OK && why[0])
        rc = LIL_E_CHILD;
    json_decref(out);
    for (size_t i = 0; i < NOTIFY_VARS; i++)
        lil__free(lp->env, vars[i]);
    lil__free(lp->env, envp);
    return rc;
}

/* The reason journaled for a failure: why, secrets redacted, short. */
static json_t *failure_text(struct lil_loop *lp, const char *why)
{
    struct lil_buf clean;
    json_t *s = NULL;

    lil__buf_init(&clean, lp->env, SIZE_MAX);
    if (lil__redact_text(lp->fx.redact, &lp->err, why, strlen(why), &clean) == LIL_OK)
        s = json_stringn((const char *)clean.data, clean.len > 300 ? 300 : clean.len);
    lil__buf_free(&clean);
    lil__clearerr(&lp->err);
    return s ? s : json_string("the notification failed");
}

static json_t *record_of(const struct notice *n, const char *ch, const char *status)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "event", n->event, "key", n->key,
                     "channel", ch, "status", status);
}

static lil_status journal(struct lil_loop *lp, json_t *rec)
{
    lil_status rc = rec ? lil__loop_notice(lp, "notify", json_incref(rec))
                        : lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");

    if (rc == LIL_OK)
        rc = lil__loop_notify_fold(lp, rec);
    json_decref(rec);
    return rc;
}

/* Tell channel ch: attempted, the action, its outcome. */
static lil_status tell(struct lil_loop *lp, const struct notice *n, const char *ch)
{
    char var[LIL_LOOP_NAME_MAX + 96], why[LIL_ERRMSG_MAX] = "";
    const char *action = channel_action(lp, ch, var, sizeof(var));
    json_t *done;
    lil_status rc, sent;

    if (action && *action) {
        rc = journal(lp, record_of(n, ch, "attempted"));
        if (rc != LIL_OK)
            return rc;
        sent = is_url(action) ? post(lp, action, n, why, sizeof(why))
                              : run_command(lp, action, n, ch, why, sizeof(why));
        if (sent == LIL_E_NOMEM && !why[0])
            snprintf(why, sizeof(why), "out of memory");
    } else {
        snprintf(why, sizeof(why), "channel '%s' has no action: set %s", ch, var);
    }
    lil__clearerr(&lp->err);
    done = record_of(n, ch, why[0] ? "failed" : "ok");
    if (done && why[0])
        json_object_set_new(done, "error", failure_text(lp, why));
    return journal(lp, done);
}

static json_t *body_of(const struct lil_loop *lp, const struct notice *n)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:I}", "event", n->event, "run", lp->run_id,
                          "loop", lp->ir->id.s ? lp->ir->id.s : "", "iteration",
                          (json_int_t)lp->meters.iteration);

    if (o && n->reason)
        json_object_set_new(o, "reason", json_string(n->reason));
    return o;
}

/* Open the run for writing when this call only read it (an ended run); the
 * journal is folded again.  A run held by another process: its holder
 * notifies (*skip set). */
static lil_status writable(struct lil_loop *lp, bool *skip)
{
    bool refolded = false;
    lil_status rc = lil__loop_writable(lp, &refolded);

    *skip = false;
    if (rc == LIL_E_LOCKED) {
        lil__clearerr(&lp->err);
        *skip = true;
        return LIL_OK;
    }
    return rc;
}

lil_status lil__loop_notify(struct lil_loop *lp, const lil_loop_result *res)
{
    struct notice n = {0};
    lil_status rc = LIL_OK;
    bool skip = false;

    if (!lp->ir || !lp->ir->notify.present || lp->replay.mock || lp->requeued)
        return LIL_OK;
    n.event = event_of(lp, res, n.key, sizeof(n.key));
    if (!n.event || !policy_sends(lp, n.event, n.key) || !any_pending(lp, &n))
        return LIL_OK;
    n.reason = res->reason;
    if (lp->run->readonly)
        rc = writable(lp, &skip);
    if (rc != LIL_OK || skip || !any_pending(lp, &n))
        return rc;
    n.body = body_of(lp, &n);
    if (!n.body)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; rc == LIL_OK && i < lp->ir->notify.channels.n; i++)
        if (pending(lp, n.key, lp->ir->notify.channels.v[i].s))
            rc = tell(lp, &n, lp->ir->notify.channels.v[i].s);
    json_decref(n.body);
    return rc;
}
