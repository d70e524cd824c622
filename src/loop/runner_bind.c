/*
 * runner_bind.c -- what a loop run is bound to (docs/loops.md, "What a run
 * is bound to"): the spec it runs, the pause an approval releases, and
 * whether the run came from another store.
 *
 * The spec.  The start record journals the spec's digest ("spec": SHA-256
 * of the normalized spec's JSON), its "loopId" and, from this version on,
 * "parts": the digest of each top-level member of the normalized spec and
 * of each element of a list of objects with an "id" ("body.fetch"), so
 * that a refusal can say what changed.  Every open of a run that exists
 * compares the spec given with the one in force -- the start's, or the
 * last accepted change's (spec_changed.N) -- before anything is written:
 * another digest or loop id is refused (LIL_E_INVAL) unless
 * LIL_LOOP_ACCEPT_SPEC_CHANGE accepts it, which journals spec_changed.N
 * {"from", "to", "fromLoopId", "toLoopId", "changed", "parts", "iteration",
 * "specPath", "actor", "osUser", "reason", "at"}.  The new spec applies
 * from the iteration in flight on ("iteration"): that iteration restarts
 * from the last snapshot as every resumed one does, and what it journaled
 * before the change (effects, approvals) replays as journaled even where
 * the new spec would ask another thing (lil__loop_lenient); committed
 * iterations are never replayed.  An ended or uncertain run is refused
 * even so: its spec can change nothing, or its recovery must replay the
 * effect it holds; so is a run of the store's queue, whose workers run the
 * spec it was submitted with.
 *
 * The pause.  A paused run waits at one pause: a breakpoint or gate
 * (pause.N, its "digest" covering the step, the strategy and the rendered
 * question) or a cap (cap.N).  Its id is that record's name; its digest is
 * SHA-256 of the id and the pending action (iteration, seq, the pause's
 * own digest; or the cap, its iteration and its detail), so two pauses of
 * one run never share a digest even when they ask the same question.
 *
 * The import.  lil_run_import of a loop run that has not ended appends
 * imported.N; an open without LIL_LOOP_UNATTENDED journals adopted.N
 * (actor, OS user) when it finds one not adopted, and an open with it
 * refuses such a run.  An unattended open also refuses a journal without
 * a key in a store that has one, and verifies the chain (runner_open.c).
 */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "loop/runner.h"
#include "loopspec/spec.h"

#define CHANGED_SHOW 12 /* parts named in a refusal */

/* ---- digests of a spec and of its parts ---------------------------------------- */

static lil_status put_digest(const struct lil_env *env, struct lil_err *err,
                             json_t *parts, const char *key, const json_t *v)
{
    struct lil_buf b;
    uint8_t d[LIL_SHA256_LEN];
    char hex[2 * LIL_SHA256_LEN + 1];
    lil_status rc;

    lil__buf_init(&b, env, SIZE_MAX);
    rc = lil__json_canon(env, err, v, &b);
    if (rc == LIL_OK) {
        lil__sha256(b.data, b.len, d);
        lil__hex(d, LIL_SHA256_LEN, hex);
        if (json_object_set_new(parts, key, json_string(hex)) != 0)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__buf_free(&b);
    return rc;
}

/* The elements of a list of objects with an "id": "key.id" each. */
static lil_status put_elements(const struct lil_env *env, struct lil_err *err,
                               json_t *parts, const char *key, const json_t *list)
{
    size_t i;
    json_t *el;
    lil_status rc = LIL_OK;

    json_array_foreach(list, i, el)
    {
        const char *id = json_string_value(json_object_get(el, "id"));
        char name[256];

        if (!id || snprintf(name, sizeof(name), "%s.%s", key, id) >= (int)sizeof(name))
            continue;
        rc = put_digest(env, err, parts, name, el);
        if (rc != LIL_OK)
            break;
    }
    return rc;
}

static lil_status parts_of(const struct lil_env *env, struct lil_err *err,
                           const lil_bytes *text, json_t **out)
{
    json_t *doc = NULL, *parts = json_object(), *v;
    const char *key;
    lil_status rc = lil__json_parse(env, err, LIL_E_SPEC, (const char *)text->data,
                                    text->len, 0, NULL, &doc);

    if (rc == LIL_OK && !parts)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    json_object_foreach(doc, key, v)
    {
        if (rc != LIL_OK)
            break;
        rc = put_digest(env, err, parts, key, v);
        if (rc == LIL_OK && json_is_array(v))
            rc = put_elements(env, err, parts, key, v);
    }
    json_decref(doc);
    if (rc != LIL_OK) {
        json_decref(parts);
        return rc;
    }
    *out = parts;
    return LIL_OK;
}

lil_status lil__loop_spec_digest(const lil_spec *spec, struct lil_err *err,
                                 char hex[65], json_t **parts)
{
    lil_bytes text = {0};
    uint8_t d[LIL_SHA256_LEN];
    lil_status rc = lil__spec_json(spec, err, &text);

    hex[0] = '\0';
    if (parts)
        *parts = NULL;
    if (rc == LIL_OK) {
        lil__sha256(text.data, text.len, d);
        lil__hex(d, LIL_SHA256_LEN, hex);
        if (parts)
            rc = parts_of(&spec->env, err, &text, parts);
    }
    lil__export_free(text.data);
    return rc;
}

/* ---- the fold ------------------------------------------------------------------ */

static lil_status bind_to(struct lil_loop *lp, const char *spec, const char *loop_id,
                          const char *path, json_t *parts)
{
    struct loop_binding *b = &lp->bound;
    char *id = loop_id ? lil__strdup(lp->env, loop_id) : NULL;
    char *where = path ? lil__strdup(lp->env, path) : NULL;

    if ((loop_id && !id) || (path && !where)) {
        lil__free(lp->env, id);
        lil__free(lp->env, where);
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    }
    snprintf(b->spec, sizeof(b->spec), "%s", spec ? spec : "");
    lil__free(lp->env, b->loop_id);
    b->loop_id = id;
    lil__free(lp->env, b->spec_path);
    b->spec_path = where;
    json_decref(b->parts);
    b->parts = json_is_object(parts) ? json_incref(parts) : NULL;
    return LIL_OK;
}

void lil__loop_bind_forget(struct lil_loop *lp)
{
    lil__free(lp->env, lp->bound.loop_id);
    lil__free(lp->env, lp->bound.spec_path);
    json_decref(lp->bound.parts);
    memset(&lp->bound, 0, sizeof(lp->bound));
}

lil_status lil__loop_bind_start(struct lil_loop *lp, json_t *v)
{
    lil__loop_bind_forget(lp);
    return bind_to(lp, json_string_value(json_object_get(v, "spec")),
                   json_string_value(json_object_get(v, "loopId")),
                   json_string_value(json_object_get(v, "specPath")),
                   json_object_get(v, "parts"));
}

static bool kind_is(const char *k, size_t n, const char *kind)
{
    return strlen(kind) == n && memcmp(k, kind, n) == 0;
}

lil_status lil__loop_bind_control(struct lil_loop *lp, const char *kind, size_t klen,
                                  const char *name, json_t *v)
{
    if (kind_is(kind, klen, "spec_changed")) {
        int64_t at = 0;

        if (!lil__json_int_in(v, "iteration", 0, LIL_LOOP_NUM_MAX, &at) ||
            !json_is_string(json_object_get(v, "to")))
            return lil__seterr(&lp->err, LIL_E_CORRUPT, 0,
                               "record %s of run %s names no spec", name, lp->run_id);
        lp->bound.lenient = true;
        lp->bound.lenient_iteration = at;
        return bind_to(lp, json_string_value(json_object_get(v, "to")),
                       json_string_value(json_object_get(v, "toLoopId")),
                       json_string_value(json_object_get(v, "specPath")),
                       json_object_get(v, "parts"));
    }
    if (kind_is(kind, klen, "imported"))
        lp->bound.imported = true;
    else if (kind_is(kind, klen, "adopted"))
        lp->bound.imported = false;
    else if (kind_is(kind, klen, "cap"))
        snprintf(lp->bound.cap_pause, sizeof(lp->bound.cap_pause), "%s", name);
    return LIL_OK;
}

bool lil__loop_lenient(const struct lil_loop *lp, int64_t iteration)
{
    return lp->bound.lenient && iteration == lp->bound.lenient_iteration;
}

/* ---- who --------------------------------------------------------------------- */

char *lil__loop_os_user(const struct lil_env *env)
{
    struct passwd pw, *found = NULL;
    char buf[4096], uid[32];
    uid_t me = geteuid();

    if (getpwuid_r(me, &pw, buf, sizeof(buf), &found) == 0 && found && pw.pw_name &&
        *pw.pw_name)
        return lil__strdup(env, pw.pw_name);
    snprintf(uid, sizeof(uid), "uid %lu", (unsigned long)me);
    return lil__strdup(env, uid);
}

/* ---- the spec at open ------------------------------------------------------------ */

/* The parts that differ between the journaled digests (was) and now's:
 * changed, added, removed; a part "k" is left out when one of its
 * elements "k.x" names the change more closely. */
static bool closer_part(json_t *was, json_t *now, const char *key)
{
    size_t n = strlen(key);
    const char *k;
    json_t *v;

    json_object_foreach(was, k, v)
    {
        if (strncmp(k, key, n) == 0 && k[n] == '.' &&
            !json_equal(v, json_object_get(now, k)))
            return true;
    }
    json_object_foreach(now, k, v)
    {
        if (strncmp(k, key, n) == 0 && k[n] == '.' && !json_object_get(was, k))
            return true;
    }
    return false;
}

static void add_change(struct lil_buf *b, size_t *count, const char *key,
                       const char *how)
{
    if ((*count)++ >= CHANGED_SHOW) {
        if (*count == CHANGED_SHOW + 1)
            (void)lil__buf_addstr(b, ", ...");
        return;
    }
    (void)lil__buf_printf(b, "%s%s%s", b->len ? ", " : "", key, how);
}

static void what_changed(json_t *was, json_t *now, struct lil_buf *b, json_t *list)
{
    size_t count = 0;
    const char *k;
    json_t *v;

    json_object_foreach(was, k, v)
    {
        json_t *then = json_object_get(now, k);

        if (then && json_equal(v, then))
            continue;
        if (then && closer_part(was, now, k))
            continue;
        add_change(b, &count, k, then ? "" : " (removed)");
        json_array_append_new(list, json_string(k));
    }
    json_object_foreach(now, k, v)
    {
        if (json_object_get(was, k) ||
            (strchr(k, '.') == NULL && closer_part(was, now, k)))
            continue;
        add_change(b, &count, k, " (added)");
        json_array_append_new(list, json_string(k));
    }
}

/* The refusal (one message of LIL_ERRMSG_MAX bytes): both digests (their
 * first 16 digits: the journal and lil_spec_digest have them whole), the
 * loop ids when they differ, the parts that differ, the way on. */
static lil_status refuse_spec(struct lil_loop *lp, const char *now_hex,
                              const char *now_id, const json_t *changed_text)
{
    const char *was_id = lp->bound.loop_id ? lp->bound.loop_id : "?";
    const char *what = json_string_value(changed_text);
    char ids[100] = "", parts[96];

    if (strcmp(was_id, now_id) != 0)
        snprintf(ids, sizeof(ids), ", loop '%.24s' not '%.24s'", now_id, was_id);
    if (!what)
        what = "the journal names no parts";
    if (strlen(what) >= sizeof(parts))
        snprintf(parts, sizeof(parts), "%.*s...", (int)sizeof(parts) - 4, what);
    else
        snprintf(parts, sizeof(parts), "%s", what);
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "run %.40s is bound to spec %.16s, given %.16s%s (changed: %s); "
                       "nothing written: use its spec or --accept-spec-change",
                       lp->run_id, lp->bound.spec, now_hex, ids, parts);
}

static lil_status accept_refused(struct lil_loop *lp, const char *why)
{
    return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                       "run %s: the change of spec cannot be accepted: %s; nothing was "
                       "written",
                       lp->run_id, why);
}

static lil_status journal_change(struct lil_loop *lp, const char *now_hex,
                                 const char *now_id, json_t *parts, json_t *changed)
{
    char path[PATH_MAX];
    json_t *p;

    if (!lp->spec_path || !realpath(lp->spec_path, path))
        snprintf(path, sizeof(path), "%s", lp->spec_path ? lp->spec_path : "");
    p = json_pack("{s:s, s:s, s:s?, s:s, s:O, s:O?, s:I, s:s, s:s, s:s?, s:s, s:I}",
                  "from", lp->bound.spec, "to", now_hex, "fromLoopId",
                  lp->bound.loop_id, "toLoopId", now_id, "changed", changed, "parts",
                  parts, "iteration", (json_int_t)lp->meters.iteration, "specPath",
                  path, "actor", lp->opt.actor, "osUser", lp->opt.os_user, "reason",
                  lp->opt.reason && *lp->opt.reason ? lp->opt.reason
                                                    : "--accept-spec-change",
                  "at", (json_int_t)lil__loop_now(lp));
    lil_status rc = lil__loop_control(lp, "spec_changed", p, false);

    if (rc == LIL_OK) {
        rc = bind_to(lp, now_hex, now_id, path, parts);
        lp->bound.lenient = true;
        lp->bound.lenient_iteration = lp->meters.iteration;
    }
    return rc;
}

/* A run of the store's queue (lil_loop_submit)? */
static bool in_queue(struct lil_loop *lp)
{
    enum lil_sq_state state;
    struct lil_err e;

    lil__clearerr(&e);
    return lil__queue_state(lp->st, &e, lp->run_id, &state) == LIL_OK;
}

void lil__loop_respec_forget(struct lil_loop *lp)
{
    lil__free(lp->env, lp->respec.to_id);
    json_decref(lp->respec.parts);
    json_decref(lp->respec.changed);
    memset(&lp->respec, 0, sizeof(lp->respec));
}

/* A failed run opened for its retry: the change is kept, written by the
 * retry (after its retried.N), or never. */
static lil_status keep_for_retry(struct lil_loop *lp, const char *now_hex,
                                 const char *now_id, json_t *parts, json_t *changed)
{
    lil__loop_respec_forget(lp);
    lp->respec.to_id = lil__strdup(lp->env, now_id);
    if (!lp->respec.to_id)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    snprintf(lp->respec.to, sizeof(lp->respec.to), "%s", now_hex);
    lp->respec.parts = json_incref(parts);
    lp->respec.changed = json_incref(changed);
    lp->respec.on = true;
    return LIL_OK;
}

lil_status lil__loop_bind_respec(struct lil_loop *lp)
{
    lil_status rc = LIL_OK;

    if (lp->respec.on && strcmp(lp->respec.to, lp->bound.spec) != 0)
        rc = journal_change(lp, lp->respec.to, lp->respec.to_id, lp->respec.parts,
                            lp->respec.changed);
    lil__loop_respec_forget(lp);
    return rc;
}

static lil_status accept_change(struct lil_loop *lp, const char *now_hex,
                                const char *now_id, json_t *parts, json_t *changed)
{
    bool refolded = true;
    lil_status rc = LIL_OK;

    if (in_queue(lp))
        return accept_refused(lp, "the run is in the store's queue, whose workers run "
                                  "the spec it was submitted with");
    if (lp->end == LOOP_FAILED && (lp->opt.flags & LIL_LOOP_RETRY_FAILED))
        return keep_for_retry(lp, now_hex, now_id, parts, changed);
    while (rc == LIL_OK && refolded) {
        if (lp->end != LOOP_LIVE)
            return accept_refused(lp, "the run has ended");
        if (lil__run_status(lp->run) == LIL_RUN_UNCERTAIN)
            return accept_refused(lp, "the run is uncertain: recover it with the spec "
                                      "that started its effect first");
        rc = lil__loop_writable(lp, &refolded);
        if (rc == LIL_OK && refolded && strcmp(lp->bound.spec, now_hex) == 0)
            return LIL_OK; /* another process accepted it meanwhile */
    }
    return rc == LIL_OK ? journal_change(lp, now_hex, now_id, parts, changed) : rc;
}

static lil_status check_spec(struct lil_loop *lp, const lil_spec *spec)
{
    char now_hex[65];
    const char *now_id = lp->ir->id.s ? lp->ir->id.s : "";
    json_t *parts = NULL, *changed = NULL, *text = NULL;
    struct lil_buf b;
    lil_status rc;

    if (!lp->bound.spec[0])
        return LIL_OK; /* a journal that names no digest: nothing to compare */
    rc = lil__loop_spec_digest(spec, &lp->err, now_hex, &parts);
    if (rc != LIL_OK)
        return rc;
    if (strcmp(now_hex, lp->bound.spec) == 0 &&
        (!lp->bound.loop_id || strcmp(lp->bound.loop_id, now_id) == 0)) {
        json_decref(parts);
        return LIL_OK;
    }
    lil__buf_init(&b, lp->env, 4096);
    changed = json_array();
    if (lp->bound.parts && parts)
        what_changed(lp->bound.parts, parts, &b, changed);
    if (b.len)
        text = json_string((const char *)b.data);
    lil__buf_free(&b);
    if (!(lp->opt.flags & LIL_LOOP_ACCEPT_SPEC_CHANGE))
        rc = refuse_spec(lp, now_hex, now_id, text);
    else if (!changed)
        rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    else
        rc = accept_change(lp, now_hex, now_id, parts, changed);
    json_decref(text);
    json_decref(changed);
    json_decref(parts);
    return rc;
}

/* ---- unattended opens and imported runs ------------------------------------------ */

static lil_status check_unattended(struct lil_loop *lp)
{
    lil_run_info info;

    if (lp->bound.imported)
        return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                           "run %s was imported into this store and no operator has "
                           "run it since: it is not resumed unattended until someone "
                           "resumes it once by hand (`lil resume SPEC --run-id %s`)",
                           lp->run_id, lp->run_id);
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (lil__run_info(lp->run, &lp->err, &info) != LIL_OK)
        return lp->err.code;
    if (!info.keyed && lil__store_keyed(lp->st))
        return lil__seterr(&lp->err, LIL_E_KEY, 0,
                           "run %s has no key though the store has one: its journal "
                           "proves nothing of who wrote it, and it is not resumed "
                           "unattended",
                           lp->run_id);
    return LIL_OK;
}

static lil_status adopt(struct lil_loop *lp)
{
    bool refolded = true;
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && refolded) {
        if (!lp->bound.imported || lp->end != LOOP_LIVE)
            return LIL_OK;
        rc = lil__loop_writable(lp, &refolded);
    }
    if (rc != LIL_OK)
        return rc;
    rc = lil__loop_control(
        lp, "adopted",
        json_pack("{s:s, s:s?, s:s, s:I}", "actor", lp->opt.actor, "osUser",
                  lp->opt.os_user, "reason",
                  lp->opt.reason && *lp->opt.reason ? lp->opt.reason : "opened by hand",
                  "at", (json_int_t)lil__loop_now(lp)),
        false);
    if (rc == LIL_OK)
        lp->bound.imported = false;
    return rc;
}

lil_status lil__loop_bind_check(struct lil_loop *lp, const lil_spec *spec)
{
    lil_status rc = LIL_OK;

    if (lp->opt.flags & LIL_LOOP_UNATTENDED)
        rc = check_unattended(lp);
    if (rc == LIL_OK)
        rc = check_spec(lp, spec);
    if (rc == LIL_OK && !(lp->opt.flags & LIL_LOOP_UNATTENDED))
        rc = adopt(lp);
    return rc;
}

/* ---- the pause ------------------------------------------------------------------- */

static void digest_parts(const struct lil_env *env, const char *const *parts, size_t n,
                         char out[65])
{
    uint8_t d[LIL_SHA256_LEN];
    struct lil_buf b;

    lil__buf_init(&b, env, SIZE_MAX);
    memset(d, 0, sizeof(d));
    for (size_t i = 0; i < n; i++) {
        (void)lil__buf_addstr(&b, parts[i] ? parts[i] : "");
        (void)lil__buf_add(&b, "", 1);
    }
    lil__sha256(b.data ? b.data : (const uint8_t *)"", b.len, d);
    lil__buf_free(&b);
    lil__hex(d, LIL_SHA256_LEN, out);
}

bool lil__loop_pause_ident(const struct lil_loop *lp, char id[LIL_LOOP_NAME_MAX],
                           char digest[65])
{
    char it[LIL_I64_TEXT_MAX + 1];

    id[0] = digest[0] = '\0';
    if (lp->meters.pending != LIL_CAP_NONE) {
        const char *parts[5] = {"cap", lp->bound.cap_pause,
                                lil__cap_reason(lp->meters.pending), it,
                                lp->cap_detail ? lp->cap_detail : ""};

        snprintf(it, sizeof(it), "%lld", (long long)lp->meters.iteration);
        snprintf(id, LIL_LOOP_NAME_MAX, "%s", lp->bound.cap_pause);
        digest_parts(lp->env, parts, 5, digest);
        return true;
    }
    if (!lp->pause.on)
        return false;
    snprintf(id, LIL_LOOP_NAME_MAX, "%s", lp->pause.id);
    lil__loop_breakpoint_digest(lp->env, lp->pause.id, lp->pause.iteration,
                                lp->pause.seq, lp->pause.step, lp->pause.digest,
                                digest);
    return true;
}

void lil__loop_breakpoint_digest(const struct lil_env *env, const char *id,
                                 int64_t iteration, int64_t seq, const char *step,
                                 const char *ask_digest, char digest[65])
{
    char it[LIL_I64_TEXT_MAX + 1], sq[LIL_I64_TEXT_MAX + 1];
    const char *parts[6] = {
        "breakpoint", id, it, sq, step ? step : "", ask_digest ? ask_digest : ""};

    snprintf(it, sizeof(it), "%lld", (long long)iteration);
    snprintf(sq, sizeof(sq), "%lld", (long long)seq);
    digest_parts(env, parts, 6, digest);
}

json_t *lil__loop_pause_json(const struct lil_loop *lp)
{
    const struct loop_pause *p = &lp->pause;
    char id[LIL_LOOP_NAME_MAX], digest[65];
    json_t *o;

    if (!lil__loop_pause_ident(lp, id, digest))
        return json_null();
    if (lp->meters.pending != LIL_CAP_NONE) {
        o = json_pack("{s:s, s:s, s:s, s:s, s:I}", "kind", "cap", "id", id, "digest",
                      digest, "cap", lil__cap_reason(lp->meters.pending), "iteration",
                      (json_int_t)lp->meters.iteration);
        if (o && lp->cap_detail && lp->cap_detail_of == lp->meters.pending)
            json_object_set_new(o, "detail", json_string(lp->cap_detail));
        return o;
    }
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s}", "kind", "breakpoint",
                     "id", id, "digest", digest, "iteration", (json_int_t)p->iteration,
                     "seq", (json_int_t)p->seq, "step", p->step ? p->step : "", "ask",
                     p->ask ? p->ask : "", "strategy", p->strategy);
}

lil_status lil__loop_pause_expect(struct lil_loop *lp, const char *id,
                                  const char *digest)
{
    char now_id[LIL_LOOP_NAME_MAX], now_digest[65];

    if (!id && !digest)
        return LIL_OK;
    if (!lil__loop_pause_ident(lp, now_id, now_digest))
        return LIL_OK; /* not paused: the approval says so */
    if ((id && strcmp(id, now_id) != 0) ||
        (digest &&
         (strlen(digest) < 8 || strncmp(digest, now_digest, strlen(digest)) != 0)))
        return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                           "run %.40s waits at pause %s (digest %.16s), not at the one "
                           "named (%s%s%.16s): nothing was approved; name the pause it "
                           "waits at",
                           lp->run_id, now_id, now_digest, id ? id : "",
                           id && digest ? ", digest " : (digest ? "digest " : ""),
                           digest ? digest : "");
    return LIL_OK;
}

/* ---- imports --------------------------------------------------------------------- */

lil_status lil__loop_mark_imported(struct lil_store *st, struct lil_err *err,
                                   const char *run_id)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    bool refolded = false;
    struct lil_loop lp;
    lil_status rc;

    memset(&lp, 0, sizeof(lp));
    lp.st = st;
    lp.env = st->env;
    lp.run_id = lil__strdup(st->env, run_id);
    if (!lp.run_id)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    lil__clearerr(&lp.err);
    rc = lil__run_open(st, &lp.err, run_id, &ro, &lp.run);
    if (rc == LIL_OK)
        rc = lil__loop_load(&lp);
    if (rc == LIL_OK && lp.started && lp.end == LOOP_LIVE) /* else: nothing written */
        rc = lil__loop_writable(&lp, &refolded);
    if (rc == LIL_OK && lp.started && lp.end == LOOP_LIVE && !lp.bound.imported)
        rc = lil__loop_control(&lp, "imported",
                               json_pack("{s:I}", "at", (json_int_t)lil__loop_now(&lp)),
                               false);
    if (rc != LIL_OK)
        lil__copyerr(err, &lp.err);
    if (lp.run)
        (void)lil__run_close(lp.run, rc == LIL_OK ? err : NULL);
    lil__loop_forget(&lp);
    lil__free(lp.env, lp.slots);
    lil__free(lp.env, lp.run_id);
    json_decref(lp.fx.inputs);
    return rc;
}
