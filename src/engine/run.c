/*
 * run.c -- opening a run (the scan that rebuilds its index and state),
 * closing it, its outcome, resolution of uncertain effects, inspection.
 * The records live in the store (store/store.h), reached through its
 * table of operations.
 */
#include "engine/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "base/settings/sync_mode.h"
#include "json/json.h"
#include "os/os.h"

/* ---- rebuilding state from the journal ---------------------------------- */

struct scan_ctx {
    struct lil_run *run;
    int last_open_pid;
    bool seen; /* a record came before this one */
};

#define KEPT_CHUNK    (64u * 1024u)
#define ABORT_MSG_MAX 1300 /* "aborted by <actor>: <reason>" */

/* What names the run in messages: its place in the store once open. */
static const char *where(const struct lil_run *run)
{
    return run->sr ? run->sr->where : run->st->where;
}

const uint8_t *lil__run_keep(struct lil_run *run, const void *data, size_t len)
{
    struct kept *k = run->kept;
    uint8_t *p;

    if (!k || k->cap - k->used < len + 1) {
        size_t cap = len + 1 > KEPT_CHUNK ? len + 1 : KEPT_CHUNK;
        k = lil__malloc(run->env, sizeof(*k) + cap);
        if (!k)
            return NULL;
        k->used = 0;
        k->cap = cap;
        k->next = run->kept;
        run->kept = k;
    }
    p = k->data + k->used;
    if (len)
        memcpy(p, data, len);
    p[len] = '\0';
    k->used += len + 1;
    return p;
}

/* The outcome of a run stopped by an abort: who aborted it and why, as
 * lil_run_result reports it. */
static lil_status note_abort(struct lil_run *run, json_t *doc, struct lil_err *err)
{
    const char *actor = json_string_value(json_object_get(doc, "actor"));
    const char *reason = json_string_value(json_object_get(doc, "reason"));
    char msg[ABORT_MSG_MAX];
    int n = snprintf(msg, sizeof(msg), "aborted by %s: %s", actor ? actor : "?",
                     reason ? reason : "");

    run->aborted = true;
    if (run->state == LIL_RUN_COMPLETED || run->state == LIL_RUN_FAILED)
        return LIL_OK; /* its own outcome stands */
    if (n < 0)
        n = 0;
    run->outcome =
        lil__run_keep(run, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
    run->outcome_len = run->outcome ? strlen((const char *)run->outcome) : 0;
    if (!run->outcome)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

static lil_status apply_resolve(struct lil_run *run, struct ientry *e,
                                const struct lil_rec *rec, struct lil_err *err)
{
    json_t *doc = NULL;
    lil_status rc =
        lil__json_parse(run->env, err, LIL_E_CORRUPT, (const char *)rec->payload,
                        rec->payload_len, 0, NULL, &doc);
    const char *action = doc ? json_string_value(json_object_get(doc, "action")) : NULL;

    if (rc == LIL_E_NOMEM) {
        lil__seterr(err, rc, 0,
                    "%s: out of memory reading the resolve record at "
                    "position %llu",
                    where(run), (unsigned long long)rec->off);
    } else if (!action) {
        rc = lil__seterr(err, LIL_E_CORRUPT, 0,
                         "%s: unreadable resolve record at position %llu", where(run),
                         (unsigned long long)rec->off);
    } else if (strcmp(action, "retry") == 0) {
        e->state = IE_RETRY;
    } else if (strcmp(action, "abort") == 0) {
        rc = note_abort(run, doc, err);
        if (rc == LIL_OK && e->state == IE_PENDING) {
            /* the decision stands even when the process died before the
               outcome record that follows it: the effect is not uncertain */
            e->state = IE_FAILED;
            e->payload = run->outcome;
            e->payload_len = run->outcome_len;
        }
    }
    json_decref(doc);
    return rc;
}

static void apply_outcome(struct lil_run *run, const struct lil_rec *rec,
                          lil_run_state state)
{
    run->state = state;
    run->outcome = rec->payload;
    run->outcome_len = rec->payload_len;
}

void lil__run_entry_of(const struct lil_rec *rec, struct ientry *e)
{
    e->state = rec->type == LIL_REC_STEP ? IE_DONE : IE_FAILED;
    e->effect = (rec->flags & LIL_SREC_EFFECT) != 0;
    e->payload = rec->payload;
    e->payload_len = rec->payload_len;
}

/* An outcome is final: lil writes none after it for the same identity, and
 * if a journal holds one anyway the first wins, as in replay without the
 * index (step.c). */
static lil_status apply_step(struct lil_run *run, const struct lil_rec *rec,
                             struct lil_err *err)
{
    struct ientry *e = lil__imap_upsert(&run->index, rec->key, rec->key_len);

    if (!e)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory indexing %s",
                           where(run));
    switch (rec->type) {
    case LIL_REC_STEP:
    case LIL_REC_STEP_FAILED:
        if (e->state != IE_DONE && e->state != IE_FAILED)
            lil__run_entry_of(rec, e);
        return LIL_OK;
    case LIL_REC_INTENT:
        e->state = IE_PENDING;
        e->effect = 1;
        e->attempts++;
        e->request = rec->payload_len >= LIL_SHA256_LEN ? rec->payload : NULL;
        e->note_len = e->request ? (uint32_t)(rec->payload_len - LIL_SHA256_LEN) : 0;
        e->intent_flags = (uint8_t)(rec->flags & LIL_SREC_REQUEST);
        return LIL_OK;
    default:
        return apply_resolve(run, e, rec, err);
    }
}

/* BEGIN names the run: the first record, seq 1, or a later segment's first
 * (its link; the store checked it: docs/format.md, "Segments"). */
static lil_status check_begin(struct lil_run *run, const struct lil_rec *rec,
                              bool first, struct lil_err *err)
{
    if ((rec->seq == 1 || first) && rec->key_len == strlen(run->id) &&
        memcmp(rec->key, run->id, rec->key_len) == 0)
        return LIL_OK;
    return lil__seterr(err, LIL_E_CORRUPT, 0,
                       "%s: the journal of run '%s' belongs to run '%.*s'", where(run),
                       run->id, (int)(rec->key_len > 200 ? 200 : rec->key_len),
                       (const char *)rec->key);
}

static lil_status scan_record(void *ud, const struct lil_rec *rec, struct lil_err *err)
{
    struct scan_ctx *ctx = ud;
    struct lil_run *run = ctx->run;
    char text[32];
    int pid = 0;

    bool first = !ctx->seen;

    ctx->seen = true;
    switch (rec->type) {
    case LIL_REC_BEGIN:
        return check_begin(run, rec, first, err);
    case LIL_REC_OPEN:
        if (rec->payload_len < sizeof(text)) {
            memcpy(text, rec->payload, rec->payload_len);
            text[rec->payload_len] = '\0';
            if (sscanf(text, "{\"pid\":%d", &pid) == 1)
                ctx->last_open_pid = pid;
        }
        return LIL_OK;
    case LIL_REC_STEP:
        run->steps_done++;
        return LIL_OK;
    case LIL_REC_STEP_FAILED:
        run->steps_failed++;
        return LIL_OK;
    case LIL_REC_INTENT:
        run->intents++;
        run->need_index = true;
        return LIL_OK;
    case LIL_REC_RESOLVE:
        run->need_index = true;
        return LIL_OK;
    case LIL_REC_RUN_DONE:
        apply_outcome(run, rec, LIL_RUN_COMPLETED);
        return LIL_OK;
    case LIL_REC_RUN_FAILED:
        apply_outcome(run, rec, LIL_RUN_FAILED);
        return LIL_OK;
    default:
        return LIL_OK; /* unknown types of a compatible writer are skipped */
    }
}

static bool is_step_record(uint8_t type)
{
    return type == LIL_REC_STEP || type == LIL_REC_STEP_FAILED ||
           type == LIL_REC_INTENT || type == LIL_REC_RESOLVE;
}

/* One pass over the records the open scan found (they were checked then).
 * A failure leaves no half-built index behind: the next call starts over. */
lil_status lil__run_index(struct lil_run *run, struct lil_err *err)
{
    uint64_t off = 0;
    struct lil_rec r;
    lil_status rc = LIL_OK;

    if (run->indexed)
        return LIL_OK;
    if (lil__imap_reserve(&run->index,
                          run->steps_done + run->steps_failed + run->intents) != 0)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory indexing %s",
                           where(run));
    while (rc == LIL_OK && run->st->ops->run_next_scanned(run->sr, &off, &r))
        if (is_step_record(r.type))
            rc = apply_step(run, &r, err);
    if (rc != LIL_OK) {
        lil__imap_free(&run->index);
        run->aborted = false;
        return rc;
    }
    run->indexed = true;
    return LIL_OK;
}

lil_status lil__run_settle_state(struct lil_run *run, struct lil_err *err)
{
    run->n_uncertain = 0;
    for (size_t i = 0; run->intents && i < run->index.n; i++) {
        if (run->index.entries[i].state != IE_PENDING)
            continue;
        size_t *p = lil__grow(run->env, run->uncertain, &run->cap_uncertain,
                              run->n_uncertain, sizeof(*p), 4);
        if (!p)
            return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        run->uncertain = p;
        run->uncertain[run->n_uncertain++] = i;
    }
    if (run->n_uncertain)
        run->state = LIL_RUN_UNCERTAIN;
    else if (run->aborted)
        run->state = LIL_RUN_STOPPED;
    else if (run->state == LIL_RUN_UNCERTAIN || !run->state)
        run->state = LIL_RUN_RUNNING;
    return LIL_OK;
}

/* ---- open and close --------------------------------------------------------- */

static lil_status sync_mode(struct lil_store *st, struct lil_err *err, lil_sync asked,
                            lil_sync *out)
{
    *out = asked;
    if (asked >= LIL_SYNC_FULL && asked <= LIL_SYNC_OFF)
        return LIL_OK;
    if (asked != LIL_SYNC_DEFAULT)
        return lil__seterr(err, LIL_E_INVAL, 0, "unknown sync mode %d", (int)asked);
    if (st->set.bad_sync[0])
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "LIL_SYNC=%s: expected full, normal or off",
                           st->set.bad_sync);
    *out = st->set.sync;
    return LIL_OK;
}

static struct lil_run *run_new(struct lil_store *st, const char *run_id)
{
    struct lil_run *run = lil__calloc(st->env, 1, sizeof(*run));

    if (!run)
        return NULL;
    run->st = st;
    run->env = st->env;
    /* The handle is this process's.  A child forked while it is open shares
     * the journal's descriptor and so its lock (an open-file-description
     * lock), but not the handle: api/entry.c refuses it there. */
    run->pid = lil__os_self_pid();
    pthread_mutex_init(&run->mu, NULL);
    lil__imap_init(&run->index, st->env);
    lil__imap_init(&run->names, st->env);
    run->id = lil__strdup(st->env, run_id);
    if (!run->id) {
        lil__run_close(run, NULL);
        return NULL;
    }
    return run;
}

/* OPEN names the process that holds the run, for readers (pid). */
static lil_status write_open_record(struct lil_run *run, struct lil_err *err)
{
    char text[32];
    struct lil_rec r = {0};

    r.type = LIL_REC_OPEN;
    r.payload_len =
        (size_t)snprintf(text, sizeof(text), "{\"pid\":%ld}", (long)getpid());
    r.payload = (const uint8_t *)text;
    return run->st->ops->run_announce(run->sr, err, &r);
}

static lil_status open_in_store(struct lil_run *run, struct lil_err *err,
                                const lil_run_opts *opts, lil_sync sync)
{
    struct lil_store *st = run->st;
    struct lil_srun_opts so = {0};
    struct scan_ctx ctx = {run, 0, false};
    uint8_t *key = NULL;
    lil_status rc;

    so.sync = sync;
    so.readonly = run->readonly;
    so.create = !(opts->flags & LIL_OPEN_EXISTING);
    so.verify_chain = (opts->flags & LIL_OPEN_VERIFY_CHAIN) != 0;
    so.live_only = (opts->flags & LIL__OPEN_LIVE_SEGMENT) != 0;
    so.max_record = run->max_record;
    rc = so.readonly || !so.create ? LIL_OK : lil__store_key_ensure(st, err);
    if (rc == LIL_OK)
        rc = lil__store_key_copy(st, err, &key, &so.key_len);
    if (rc != LIL_OK)
        return rc;
    so.key = key;
    rc = st->ops->run_open(st, err, run->id, &so, scan_record, &ctx, &run->sr);
    lil__store_key_free(st, key, so.key_len);
    run->last_open_pid = ctx.last_open_pid;
    return rc;
}

static void log_open(struct lil_run *run, lil_sync sync)
{
    struct lil_srun_info info = {0};

    run->st->ops->run_info(run->sr, &info);
    lil__log(run->env, LIL_LOG_INFO,
             "event=open run=%s records=%llu state=%s sync=%s readonly=%d", run->id,
             (unsigned long long)info.records, lil__run_state_name(run->state),
             lil__sync_name(sync), (int)run->readonly);
    for (size_t i = 0; i < run->n_uncertain; i++)
        lil__log(run->env, LIL_LOG_WARN, "event=uncertain run=%s step=%.*s", run->id,
                 (int)run->index.entries[run->uncertain[i]].key_len,
                 (const char *)run->index.entries[run->uncertain[i]].key);
}

lil_status lil__run_open(struct lil_store *st, struct lil_err *err, const char *run_id,
                         const lil_run_opts *opts, struct lil_run **out)
{
    lil_run_opts defaults = {sizeof(defaults), LIL_SYNC_DEFAULT, 0, 0};
    struct lil_run *run;
    lil_sync sync;
    lil_status rc;

    *out = NULL;
    if (!opts)
        opts = &defaults;
    rc = lil__run_id_check(err, run_id);
    if (rc == LIL_OK && (opts->flags & ~LIL_OPEN_KNOWN_FLAGS))
        rc = lil__seterr(err, LIL_E_INVAL, 0, "unknown flags 0x%x in lil_run_opts",
                         opts->flags & ~LIL_OPEN_KNOWN_FLAGS);
    if (rc == LIL_OK)
        rc = sync_mode(st, err, opts->sync, &sync);
    if (rc != LIL_OK)
        return rc;
    run = run_new(st, run_id);
    if (!run)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    run->readonly = (opts->flags & LIL_OPEN_READONLY) != 0;
    run->max_record = opts->max_record ? opts->max_record : LIL_DEFAULT_MAX_RECORD;
    rc = open_in_store(run, err, opts, sync);
    if (rc == LIL_OK && run->need_index) /* effects: their state is needed now */
        rc = lil__run_index(run, err);
    if (rc == LIL_OK)
        rc = lil__run_settle_state(run, err);
    if (rc == LIL_OK && !run->readonly)
        rc = write_open_record(run, err);
    if (rc != LIL_OK) {
        lil__run_close(run, NULL);
        return rc;
    }
    run->magic = LIL_RUN_MAGIC;
    log_open(run, sync);
    *out = run;
    return LIL_OK;
}

/* An ended run tells the store that nothing will be appended again (the
 * file store gives back all its preallocated space; a run that will be
 * resumed keeps a little). */
lil_status lil__run_close(struct lil_run *run, struct lil_err *err)
{
    bool ended = run->state != LIL_RUN_RUNNING && run->state != LIL_RUN_UNCERTAIN;
    lil_status rc = run->sr ? run->st->ops->run_close(run->sr, err, ended) : LIL_OK;

    run->magic = 0;
    lil__imap_free(&run->index);
    lil__imap_free(&run->names);
    while (run->kept) {
        struct kept *k = run->kept;
        run->kept = k->next;
        lil__free(run->env, k);
    }
    lil__free(run->env, run->uncertain);
    lil__free(run->env, run->id);
    pthread_mutex_destroy(&run->mu);
    lil__free(run->env, run);
    return rc;
}

/* ---- outcome ------------------------------------------------------------- */

static lil_status ended_err(struct lil_run *run, struct lil_err *err)
{
    return lil__seterr(err, LIL_E_DONE, 0, "run %s has ended (%s)", run->id,
                       lil__run_state_name(run->state));
}

static lil_status writable(struct lil_run *run, struct lil_err *err)
{
    if (run->readonly)
        return lil__seterr(err, LIL_E_INVAL, 0, "run %s is open read-only", run->id);
    return LIL_OK;
}

lil_status lil__run_end(struct lil_run *run, struct lil_err *err, bool completed,
                        const void *data, size_t len)
{
    struct lil_rec r = {0};
    lil_status rc;

    pthread_mutex_lock(&run->mu);
    rc = writable(run, err);
    if (rc == LIL_OK && run->state == LIL_RUN_UNCERTAIN)
        rc = lil__seterr(err, LIL_E_UNCERTAIN, 0,
                         "run %s is uncertain: resolve its effects first", run->id);
    else if (rc == LIL_OK && run->state != LIL_RUN_RUNNING)
        rc = ended_err(run, err);
    if (rc == LIL_OK) {
        r.type = completed ? LIL_REC_RUN_DONE : LIL_REC_RUN_FAILED;
        r.payload = data;
        r.payload_len = len;
        rc = run->st->ops->run_append(run->sr, err, &r, LIL_APPEND_SYNC);
    }
    if (rc == LIL_OK) {
        run->outcome = lil__run_keep(run, data, len);
        run->outcome_len = len;
        run->state = completed ? LIL_RUN_COMPLETED : LIL_RUN_FAILED;
        if (!run->outcome)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        lil__log(run->env, LIL_LOG_INFO, "event=%s run=%s bytes=%zu",
                 completed ? "complete" : "fail", run->id, len);
    }
    pthread_mutex_unlock(&run->mu);
    return rc;
}

lil_status lil__run_result(struct lil_run *run, struct lil_err *err, lil_bytes *out)
{
    lil_status rc = LIL_OK;

    pthread_mutex_lock(&run->mu);
    if (run->state == LIL_RUN_COMPLETED) {
        out->data = lil__export_copy(run->env, run->outcome, run->outcome_len);
        out->len = run->outcome_len;
        if (!out->data)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    } else if (run->state == LIL_RUN_FAILED || run->state == LIL_RUN_STOPPED) {
        rc = lil__seterr(err, LIL_E_FAILED, 0, "run %s %s: %.*s", run->id,
                         run->state == LIL_RUN_FAILED ? "failed" : "was stopped",
                         (int)(run->outcome_len > 200 ? 200 : run->outcome_len),
                         run->outcome ? (const char *)run->outcome : "");
    } else {
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "run %s has no outcome yet (%s)",
                         run->id, lil__run_state_name(run->state));
    }
    pthread_mutex_unlock(&run->mu);
    return rc;
}

/* ---- resolving uncertain effects -------------------------------------------- */

static lil_status resolve_record(struct lil_run *run, struct lil_err *err,
                                 const char *identity, const char *action,
                                 const char *actor, const char *reason)
{
    struct lil_buf text;
    struct lil_rec r = {0};
    lil_status rc;

    lil__buf_init(&text, run->env, run->max_record);
    rc = lil__json_canon_pack(run->env, err, &text, "{s:s, s:s, s:s}", "action", action,
                              "actor", actor, "reason", reason);
    if (rc == LIL_E_INVAL) /* the record is JSON: its strings must be UTF-8 */
        lil__seterr(err, rc, 0, "actor and reason must be valid UTF-8");
    if (rc == LIL_OK) {
        r.type = LIL_REC_RESOLVE;
        r.key = (const uint8_t *)identity;
        r.key_len = strlen(identity);
        r.payload = text.data;
        r.payload_len = text.len;
        rc = run->st->ops->run_append(run->sr, err, &r, LIL_APPEND_BY_MODE);
    }
    lil__buf_free(&text);
    return rc;
}

static lil_status resolve_outcome(struct lil_run *run, struct lil_err *err,
                                  struct ientry *e, lil_resolution how,
                                  const void *result, size_t len, const char *actor,
                                  const char *reason)
{
    struct lil_rec r = {0};
    /* cppcheck-suppress variableScope ; r.payload points here after the if */
    char msg[ABORT_MSG_MAX];
    lil_status rc;

    r.key = e->key;
    r.key_len = e->key_len;
    r.flags = LIL_SREC_EFFECT;
    if (how == LIL_RESOLVE_ASSUME_DONE) {
        r.type = LIL_REC_STEP;
        r.payload = result;
        r.payload_len = len;
    } else {
        snprintf(msg, sizeof(msg), "aborted by %s: %s", actor, reason);
        r.type = LIL_REC_STEP_FAILED;
        r.payload = (const uint8_t *)msg;
        r.payload_len = strlen(msg);
    }
    rc = run->st->ops->run_append(run->sr, err, &r, LIL_APPEND_SYNC);
    if (rc != LIL_OK)
        return rc;
    e->state = how == LIL_RESOLVE_ASSUME_DONE ? IE_DONE : IE_FAILED;
    e->payload = lil__run_keep(run, r.payload, r.payload_len);
    e->payload_len = r.payload_len;
    if (!e->payload)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (how == LIL_RESOLVE_ABORT) {
        run->aborted = true;
        run->outcome = e->payload;
        run->outcome_len = e->payload_len;
    }
    return LIL_OK;
}

static const char *action_name(lil_resolution how)
{
    return how == LIL_RESOLVE_RETRY         ? "retry"
           : how == LIL_RESOLVE_ASSUME_DONE ? "assume-done"
                                            : "abort";
}

static lil_status resolve_locked(struct lil_run *run, struct lil_err *err,
                                 const char *identity, lil_resolution how,
                                 const void *result, size_t len, const char *actor,
                                 const char *reason)
{
    struct ientry *e = lil__imap_find(&run->index, identity, strlen(identity));
    lil_status rc = writable(run, err);

    if (rc != LIL_OK)
        return rc;
    if (!e || e->state != IE_PENDING)
        return lil__seterr(err, LIL_E_NOTFOUND, 0,
                           "run %s has no uncertain effect '%s'", run->id, identity);
    rc = resolve_record(run, err, identity, action_name(how), actor, reason);
    if (rc == LIL_OK && how == LIL_RESOLVE_RETRY) {
        rc = lil__run_sync(run, err);
        if (rc == LIL_OK)
            e->state = IE_RETRY;
    } else if (rc == LIL_OK) {
        rc = resolve_outcome(run, err, e, how, result, len, actor, reason);
    }
    if (rc == LIL_OK)
        rc = lil__run_settle_state(run, err);
    if (rc == LIL_OK)
        lil__log(run->env, LIL_LOG_INFO,
                 "event=resolve run=%s step=%s action=%s actor=%s", run->id, identity,
                 action_name(how), actor);
    return rc;
}

lil_status lil__run_resolve(struct lil_run *run, struct lil_err *err,
                            const char *identity, lil_resolution how,
                            const void *result, size_t result_len, const char *actor,
                            const char *reason)
{
    lil_status rc;

    pthread_mutex_lock(&run->mu);
    rc = resolve_locked(run, err, identity, how, result, result_len, actor, reason);
    pthread_mutex_unlock(&run->mu);
    return rc;
}

/* ---- going on after a failure ------------------------------------------------- */

lil_status lil__run_reopen(struct lil_run *run, struct lil_err *err)
{
    lil_status rc = LIL_OK;

    pthread_mutex_lock(&run->mu);
    if (run->state != LIL_RUN_FAILED)
        rc = lil__seterr(err, LIL_E_INVAL, 0, "run %s has not failed (%s)", run->id,
                         lil__run_state_name(run->state));
    if (rc == LIL_OK) {
        run->state = LIL_RUN_RUNNING;
        run->outcome = NULL;
        run->outcome_len = 0;
    }
    pthread_mutex_unlock(&run->mu);
    return rc;
}

static lil_status retry_failed_locked(struct lil_run *run, struct lil_err *err,
                                      const char *identity, const char *actor,
                                      const char *reason)
{
    struct ientry *e;
    lil_status rc = writable(run, err);

    if (rc == LIL_OK && run->state != LIL_RUN_RUNNING)
        rc = ended_err(run, err);
    if (rc == LIL_OK)
        rc = lil__run_index(run, err);
    if (rc != LIL_OK)
        return rc;
    e = lil__imap_find(&run->index, identity, strlen(identity));
    if (!e || e->state != IE_FAILED || !e->effect)
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "run %s has no failed effect '%s'",
                           run->id, identity);
    rc = resolve_record(run, err, identity, "retry", actor, reason);
    if (rc == LIL_OK)
        rc = lil__run_sync(run, err);
    if (rc == LIL_OK) {
        e->state = IE_RETRY;
        lil__log(run->env, LIL_LOG_INFO,
                 "event=resolve run=%s step=%s action=retry-failed actor=%s", run->id,
                 identity, actor);
    }
    return rc;
}

lil_status lil__run_retry_failed(struct lil_run *run, struct lil_err *err,
                                 const char *identity, const char *actor,
                                 const char *reason)
{
    lil_status rc;

    pthread_mutex_lock(&run->mu);
    rc = retry_failed_locked(run, err, identity, actor, reason);
    pthread_mutex_unlock(&run->mu);
    return rc;
}

/* ---- inspection ------------------------------------------------------------ */

lil_status lil__run_info(struct lil_run *run, struct lil_err *err, lil_run_info *info)
{
    size_t size = info->struct_size;
    struct lil_srun_info si = {0};
    lil_run_info full;

    (void)err;
    memset(&full, 0, sizeof(full));
    full.struct_size = size;
    pthread_mutex_lock(&run->mu);
    run->st->ops->run_info(run->sr, &si);
    full.state = run->state;
    full.records = si.records;
    full.steps_done = __atomic_load_n(&run->steps_done, __ATOMIC_RELAXED);
    full.steps_failed = __atomic_load_n(&run->steps_failed, __ATOMIC_RELAXED);
    full.journal_bytes = si.bytes;
    full.created_ns = si.created_ns;
    full.last_ns = si.last_ns;
    full.sync = si.sync;
    full.keyed = si.keyed;
    full.torn_offset = si.torn_pos;
    full.torn_records = si.torn_records;
    pthread_mutex_unlock(&run->mu);
    if (!run->readonly)
        full.holder_pid = (int)getpid();
    else
        full.holder_pid = run->st->ops->run_holder(run->sr, run->last_open_pid);
    memcpy(info, &full, size < sizeof(full) ? size : sizeof(full));
    return LIL_OK;
}

struct walk_ctx {
    lil_record_fn fn;
    void *ud;
    char *key; /* NUL-terminated copy of the current key */
};

static int walk_record(void *ud, const struct lil_rec *r)
{
    struct walk_ctx *w = ud;
    lil_record rec;

    rec.seq = r->seq;
    rec.offset = r->off;
    rec.size = r->len;
    rec.ts_ns = r->ts_ns;
    rec.dur_us = r->dur_us;
    rec.type = r->type;
    rec.flags = r->flags & (LIL_SREC_EFFECT | LIL_SREC_REQUEST);
    memcpy(w->key, r->key, r->key_len);
    w->key[r->key_len] = '\0';
    rec.key = w->key;
    rec.key_len = r->key_len;
    rec.payload = r->payload;
    rec.payload_len = r->payload_len;
    return w->fn(w->ud, &rec);
}

lil_status lil__run_foreach(struct lil_run *run, struct lil_err *err, lil_record_fn fn,
                            void *ud)
{
    struct walk_ctx w = {fn, ud, lil__malloc(run->env, LIL_SREC_KEY_MAX + 1)};
    lil_status rc;

    if (!w.key)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = run->st->ops->run_walk(run->sr, err, walk_record, &w);
    lil__free(run->env, w.key);
    return rc;
}
