/*
 * run.c -- opening a run (the scan that rebuilds its index and state),
 * closing it, its outcome, resolution of uncertain effects, inspection.
 */
#include "engine/run.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "journal/format.h"
#include "os/os.h"

/* ---- rebuilding state from the journal ---------------------------------- */

struct scan_ctx {
    struct lil_run *run;
    int last_open_pid;
};

#define KEPT_CHUNK (64u * 1024u)

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

static lil_status apply_resolve(struct lil_run *run, struct ientry *e,
                                const struct jrec *rec, struct lil_err *err)
{
    json_t *doc = json_loadb((const char *)rec->payload, rec->payload_len, 0, NULL);
    const char *action = doc ? json_string_value(json_object_get(doc, "action")) : NULL;
    lil_status rc = LIL_OK;

    if (!action) {
        rc = lil__seterr(err, LIL_E_CORRUPT, 0,
                         "%s: unreadable resolve record at offset %llu", run->path,
                         (unsigned long long)rec->off);
    } else if (strcmp(action, "retry") == 0) {
        e->state = IE_RETRY;
    } else if (strcmp(action, "abort") == 0) {
        run->aborted = true;
    }
    json_decref(doc);
    return rc;
}

static void apply_outcome(struct lil_run *run, const struct jrec *rec,
                          lil_run_state state)
{
    run->state = state;
    run->outcome = rec->payload;
    run->outcome_len = rec->payload_len;
}

void lil__run_entry_of(const struct jrec *rec, struct ientry *e)
{
    e->state = rec->type == LIL_REC_STEP ? IE_DONE : IE_FAILED;
    e->effect = (rec->flags & LIL_JF_FLAG_EFFECT) != 0;
    e->payload = rec->payload;
    e->payload_len = rec->payload_len;
}

/* An outcome is final: lil writes none after it for the same identity, and
 * if a journal holds one anyway the first wins, as in replay without the
 * index (step.c). */
static lil_status apply_step(struct lil_run *run, const struct jrec *rec,
                             struct lil_err *err)
{
    struct ientry *e = lil__imap_upsert(&run->index, rec->key, rec->key_len);

    if (!e)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory indexing %s", run->path);
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
        e->request = rec->payload_len == LIL_SHA256_LEN ? rec->payload : NULL;
        return LIL_OK;
    default:
        return apply_resolve(run, e, rec, err);
    }
}

static lil_status check_begin(struct lil_run *run, const struct jrec *rec,
                              struct lil_err *err)
{
    if (rec->seq == 1 && rec->key_len == strlen(run->id) &&
        memcmp(rec->key, run->id, rec->key_len) == 0)
        return LIL_OK;
    return lil__seterr(err, LIL_E_CORRUPT, 0,
                       "%s: the journal belongs to run '%.*s', not '%s'", run->path,
                       (int)(rec->key_len > 200 ? 200 : rec->key_len),
                       (const char *)rec->key, run->id);
}

static lil_status scan_record(void *ud, const struct jrec *rec, struct lil_err *err)
{
    struct scan_ctx *ctx = ud;
    struct lil_run *run = ctx->run;
    char text[32];
    int pid = 0;

    switch (rec->type) {
    case LIL_REC_BEGIN:
        return check_begin(run, rec, err);
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
    struct jrec r;
    lil_status rc = LIL_OK;

    if (run->indexed)
        return LIL_OK;
    if (lil__imap_reserve(&run->index, run->steps_done + run->steps_failed +
                                           run->intents) != 0)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory indexing %s", run->path);
    while (rc == LIL_OK && lil__journal_next_scanned(run->j, &off, &r))
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
        if (run->n_uncertain == run->cap_uncertain) {
            size_t cap = run->cap_uncertain ? run->cap_uncertain * 2 : 4;
            void *p = lil__realloc(run->env, run->uncertain, cap * sizeof(size_t));
            if (!p)
                return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
            run->uncertain = p;
            run->cap_uncertain = cap;
        }
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

static lil_status sync_mode(struct lil_err *err, lil_sync asked, lil_sync *out)
{
    const char *e = getenv("LIL_SYNC");

    *out = asked;
    if (asked >= LIL_SYNC_FULL && asked <= LIL_SYNC_OFF)
        return LIL_OK;
    if (asked != LIL_SYNC_DEFAULT)
        return lil__seterr(err, LIL_E_INVAL, 0, "unknown sync mode %d", (int)asked);
    *out = LIL_SYNC_FULL;
    if (!e || !*e || strcmp(e, "full") == 0)
        return LIL_OK;
    if (strcmp(e, "normal") == 0)
        *out = LIL_SYNC_NORMAL;
    else if (strcmp(e, "off") == 0)
        *out = LIL_SYNC_OFF;
    else
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "LIL_SYNC=%s: expected full, normal or off", e);
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
     * lock), but not the handle: api.c refuses it there. */
    run->pid = lil__os_self_pid();
    pthread_mutex_init(&run->mu, NULL);
    lil__imap_init(&run->index, st->env);
    lil__imap_init(&run->names, st->env);
    run->id = lil__strdup(st->env, run_id);
    run->path = lil__store_run_path(st, run_id);
    if (!run->id || !run->path) {
        lil__run_close(run, NULL);
        return NULL;
    }
    return run;
}

static lil_status write_open_record(struct lil_run *run, struct lil_err *err)
{
    char text[32];
    struct jrec r = {0};
    uint64_t end;

    r.type = LIL_REC_OPEN;
    r.payload_len = (size_t)snprintf(text, sizeof(text), "{\"pid\":%ld}", (long)getpid());
    r.payload = (const uint8_t *)text;
    if (lil__journal_append(run->j, err, &r, &end) != LIL_OK)
        return err->code;
    return lil__journal_flush(run->j, err); /* readers name the holder by it */
}

static lil_status open_journal(struct lil_run *run, struct lil_err *err,
                               const lil_run_opts *opts, lil_sync sync)
{
    const char *key = getenv("LIL_JOURNAL_KEY");
    struct journal_opts jo = {0};
    struct scan_ctx ctx = {run, 0};
    bool created = false;
    lil_status rc;

    jo.sync = sync;
    jo.readonly = run->readonly;
    jo.create = !(opts->flags & LIL_OPEN_EXISTING);
    jo.verify_chain = (opts->flags & LIL_OPEN_VERIFY_CHAIN) != 0;
    jo.sync_parent_of =
        !run->readonly && lil__store_parent_pending(run->st) ? run->st->dir : NULL;
    jo.max_record = run->max_record;
    jo.key = key && *key ? (const uint8_t *)key : NULL;
    jo.key_len = key && *key ? strlen(key) : 0;
    jo.run_id = run->id;
    rc = lil__journal_open(run->env, err, run->st->dir, run->path, &jo, scan_record,
                           &ctx, &run->j, &created);
    if (rc == LIL_OK && jo.sync_parent_of)
        lil__store_parent_done(run->st);
    run->last_open_pid = ctx.last_open_pid;
    return rc;
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
    if (rc == LIL_OK)
        rc = sync_mode(err, opts->sync, &sync);
    if (rc != LIL_OK)
        return rc;
    run = run_new(st, run_id);
    if (!run)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    run->readonly = (opts->flags & LIL_OPEN_READONLY) != 0;
    run->max_record = opts->max_record ? opts->max_record : LIL_DEFAULT_MAX_RECORD;
    rc = open_journal(run, err, opts, sync);
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
    lil__log(run->env, LIL_LOG_INFO,
             "event=open run=%s records=%llu state=%s sync=%s readonly=%d", run->id,
             (unsigned long long)lil__journal_records(run->j),
             lil_run_state_name(run->state),
             sync == LIL_SYNC_FULL ? "full" : sync == LIL_SYNC_NORMAL ? "normal" : "off",
             (int)run->readonly);
    for (size_t i = 0; i < run->n_uncertain; i++)
        lil__log(run->env, LIL_LOG_WARN, "event=uncertain run=%s step=%.*s", run->id,
                 (int)run->index.entries[run->uncertain[i]].key_len,
                 (const char *)run->index.entries[run->uncertain[i]].key);
    *out = run;
    return LIL_OK;
}

/* An ended run gives back all its preallocated space; one that will be
 * resumed keeps a little (lil__journal_close). */
lil_status lil__run_close(struct lil_run *run, struct lil_err *err)
{
    lil_status rc;

    if (run->j && run->state != LIL_RUN_RUNNING && run->state != LIL_RUN_UNCERTAIN)
        lil__journal_give_back_all(run->j);
    rc = lil__journal_close(run->j, err);

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
    lil__free(run->env, run->path);
    pthread_mutex_destroy(&run->mu);
    lil__free(run->env, run);
    return rc;
}

/* ---- outcome ------------------------------------------------------------- */

static lil_status ended_err(struct lil_run *run, struct lil_err *err)
{
    return lil__seterr(err, LIL_E_DONE, 0, "run %s has ended (%s)", run->id,
                       lil_run_state_name(run->state));
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
    struct jrec r = {0};
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
        rc = lil__journal_commit(run->j, err, &r, true);
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
                         run->id, lil_run_state_name(run->state));
    }
    pthread_mutex_unlock(&run->mu);
    return rc;
}

/* ---- resolving uncertain effects -------------------------------------------- */

static lil_status resolve_record(struct lil_run *run, struct lil_err *err,
                                 const char *identity, const char *action,
                                 const char *actor, const char *reason)
{
    json_t *doc = json_pack("{s:s, s:s, s:s}", "action", action, "actor", actor,
                            "reason", reason);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    struct jrec r = {0};
    lil_status rc;

    json_decref(doc);
    if (!text)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    r.type = LIL_REC_RESOLVE;
    r.key = (const uint8_t *)identity;
    r.key_len = strlen(identity);
    r.payload = (const uint8_t *)text;
    r.payload_len = strlen(text);
    rc = lil__journal_commit(run->j, err, &r, false);
    free(text);
    return rc;
}

static lil_status resolve_outcome(struct lil_run *run, struct lil_err *err,
                                  struct ientry *e, lil_resolution how,
                                  const void *result, size_t len, const char *actor,
                                  const char *reason)
{
    struct jrec r = {0};
    /* cppcheck-suppress variableScope ; r.payload points here after the if */
    char msg[1300];
    lil_status rc;

    r.key = e->key;
    r.key_len = e->key_len;
    r.flags = LIL_JF_FLAG_EFFECT;
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
    rc = lil__journal_commit(run->j, err, &r, true);
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
    return how == LIL_RESOLVE_RETRY ? "retry"
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
        rc = lil__journal_sync_all(run->j, err);
        if (rc == LIL_OK)
            e->state = IE_RETRY;
    } else if (rc == LIL_OK) {
        rc = resolve_outcome(run, err, e, how, result, len, actor, reason);
    }
    if (rc == LIL_OK)
        rc = lil__run_settle_state(run, err);
    if (rc == LIL_OK)
        lil__log(run->env, LIL_LOG_INFO, "event=resolve run=%s step=%s action=%s actor=%s",
                 run->id, identity, action_name(how), actor);
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

/* ---- inspection ------------------------------------------------------------ */

lil_status lil__run_info(struct lil_run *run, struct lil_err *err, lil_run_info *info)
{
    size_t size = info->struct_size;
    lil_run_info full;

    (void)err;
    memset(&full, 0, sizeof(full));
    full.struct_size = size;
    pthread_mutex_lock(&run->mu);
    full.state = run->state;
    full.records = lil__journal_records(run->j);
    full.steps_done = __atomic_load_n(&run->steps_done, __ATOMIC_RELAXED);
    full.steps_failed = __atomic_load_n(&run->steps_failed, __ATOMIC_RELAXED);
    full.journal_bytes = lil__journal_end(run->j);
    full.created_ns = lil__journal_created_ns(run->j);
    full.last_ns = lil__journal_last_ns(run->j);
    full.sync = lil__journal_sync_mode(run->j);
    full.keyed = lil__journal_keyed(run->j);
    full.torn_offset = lil__journal_torn(run->j, &full.torn_records);
    pthread_mutex_unlock(&run->mu);
    if (!run->readonly)
        full.holder_pid = (int)getpid();
    else
        full.holder_pid = lil__journal_holder(run->j, run->last_open_pid);
    memcpy(info, &full, size < sizeof(full) ? size : sizeof(full));
    return LIL_OK;
}

struct walk_ctx {
    lil_record_fn fn;
    void *ud;
    char *key; /* NUL-terminated copy of the current key */
};

static int walk_record(void *ud, const struct jrec *r)
{
    struct walk_ctx *w = ud;
    lil_record rec;

    rec.seq = r->seq;
    rec.offset = r->off;
    rec.size = r->len;
    rec.ts_ns = r->ts_ns;
    rec.dur_us = r->dur_us;
    rec.type = r->type;
    rec.flags = r->flags & LIL_JF_FLAG_EFFECT ? LIL_RECF_EFFECT : 0u;
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
    struct walk_ctx w = {fn, ud, lil__malloc(run->env, LIL_JF_KEY_MAX + 1)};
    lil_status rc;

    if (!w.key)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__journal_foreach(run->j, err, walk_record, &w);
    lil__free(run->env, w.key);
    return rc;
}
