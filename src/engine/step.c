/*
 * step.c -- memoized steps and effects.
 *
 * A step's identity is its name plus its occurrence in this execution.  If
 * the index holds the identity, the journaled outcome is returned and the
 * function does not run.  Otherwise the function runs with the run's mutex
 * released (threads run steps in parallel) and its outcome is appended; in
 * sync mode full the append is synced before returning (group commit).
 *
 * An effect first appends an intent (synced in every mode but off) so that
 * a crash during the effect leaves evidence: intent without outcome means
 * the outcome is unknown, and the run is uncertain until resolved.  The
 * intent holds the SHA-256 of the effect's request, which a replay
 * compares, and may go on with a note (text naming the effect for people),
 * which nothing compares; a note over 4 KiB is journaled in a record of
 * its own before the intent (intent.c).
 *
 * A lazy plain step's outcome is written but not synced, in every mode:
 * the next sync of the run covers it (the loop runner's snapshots, which
 * the next effect's intent makes durable).
 *
 * A step is opened (lookup, intent, the call prepared) and closed (the
 * outcome journaled) around its function: on the stack for lil_step, or on
 * the heap between lil_step_begin and lil_call_end for a host that runs
 * the step's work outside a callback (an event loop).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/hash.h"
#include "base/utf8.h"
#include "engine/call.h"
#include "engine/intent.h"
#include "engine/run.h"

#define IDENTITY_MAX (LIL_STEP_NAME_MAX + 12)

lil_status lil__step_name_check(struct lil_err *err, const char *name)
{
    size_t n = name ? strlen(name) : 0;

    if (n == 0)
        return lil__seterr(err, LIL_E_INVAL, 0, "step name is empty");
    if (n > LIL_STEP_NAME_MAX)
        return lil__seterr(err, LIL_E_INVAL, 0, "step name is %zu bytes (at most %d)",
                           n, LIL_STEP_NAME_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f || c == '#')
            return lil__seterr(err, LIL_E_INVAL, 0,
                               "step name has a forbidden byte 0x%02x at offset %zu "
                               "('#' and control characters are not allowed)",
                               c, i);
    }
    return LIL_OK;
}

void lil__call_init(struct lil_call *call, const struct lil_env *env, const char *scope,
                    const char *identity, unsigned attempt, size_t max_result)
{
    memset(call, 0, sizeof(*call));
    call->magic = LIL_CALL_MAGIC;
    call->env = env;
    call->scope = scope;
    call->identity = identity;
    call->attempt = attempt;
    lil__buf_init(&call->result, env, max_result);
    lil__buf_init(&call->reason, env, 1000);
}

const char *lil__call_idempotency_key(struct lil_call *call)
{
    uint8_t digest[LIL_SHA256_LEN];
    struct lil_buf b;

    if (call->idem_key[0])
        return call->idem_key;
    lil__buf_init(&b, call->env, (size_t)-1);
    if (lil__buf_addstr(&b, call->scope) != LIL_OK ||
        lil__buf_add(&b, "", 1) != LIL_OK ||
        lil__buf_addstr(&b, call->identity) != LIL_OK) {
        lil__buf_free(&b);
        return NULL;
    }
    lil__sha256(b.data, b.len, digest);
    lil__buf_free(&b);
    memcpy(call->idem_key, "lil-", 4);
    lil__hex(digest, 16, call->idem_key + 4);
    return call->idem_key;
}

void lil__call_abandon(struct lil_call *call, lil_status why)
{
    call->abandoned = why != LIL_OK ? why : LIL_E_UNCERTAIN;
}

void lil__call_free(struct lil_call *call)
{
    call->magic = 0;
    lil__buf_free(&call->result);
    lil__buf_free(&call->reason);
}

/* ---- looking up the journal -------------------------------------------------- */

static lil_status nondet(struct lil_run *run, struct lil_err *err, const char *identity,
                         const char *what)
{
    return lil__seterr(err, LIL_E_NONDET, 0,
                       "non-deterministic replay in run %s at step '%s': %s", run->id,
                       identity, what);
}

/* The journaled intent's note, when it has one, tells which effect the
 * journal holds here. */
static lil_status request_differs(struct lil_run *run, struct lil_err *err,
                                  const char *identity, const struct ientry *e)
{
    struct lil_intent in;
    char what[200];

    lil__intent_decode(e->request, LIL_SHA256_LEN + (size_t)e->note_len,
                       e->intent_flags, &in);
    if (in.note_len == 0)
        return nondet(run, err, identity,
                      "the effect's request differs from the journaled one");
    snprintf(what, sizeof(what),
             "the effect's request differs from the journaled one (%.*s)",
             (int)(in.note_len > 120 ? 120 : in.note_len), in.note);
    return nondet(run, err, identity, what);
}

static lil_status replay(struct lil_run *run, struct lil_err *err, const char *identity,
                         const struct ientry *e, bool effect, const uint8_t *req_hash,
                         lil_bytes *out)
{
    if (e->effect != effect)
        return nondet(run, err, identity,
                      effect ? "the journal holds a plain step here, the code asks "
                               "for an effect"
                             : "the journal holds an effect here, the code asks for a "
                               "plain step");
    if (effect && e->request && memcmp(e->request, req_hash, LIL_SHA256_LEN) != 0)
        return request_differs(run, err, identity, e);
    if (e->state == IE_FAILED)
        return lil__seterr(err, LIL_E_FAILED, 0, "step '%s' failed: %.*s", identity,
                           (int)(e->payload_len > 200 ? 200 : e->payload_len),
                           (const char *)e->payload);
    if (out) {
        out->data = lil__export_copy(run->env, e->payload, e->payload_len);
        if (!out->data)
            return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        out->len = e->payload_len;
    }
    return LIL_OK;
}

static lil_status refuse_state(struct lil_run *run, struct lil_err *err)
{
    if (run->state == LIL_RUN_UNCERTAIN)
        return lil__seterr(err, LIL_E_UNCERTAIN, 0,
                           "run %s is uncertain: effect '%.*s' started and its outcome "
                           "is unknown; resolve it (retry, assume-done or abort)",
                           run->id, (int)run->index.entries[run->uncertain[0]].key_len,
                           (const char *)run->index.entries[run->uncertain[0]].key);
    if (run->readonly)
        return lil__seterr(err, LIL_E_INVAL, 0, "run %s is open read-only", run->id);
    if (run->state != LIL_RUN_RUNNING)
        return lil__seterr(err, LIL_E_DONE, 0, "run %s has ended (%s)", run->id,
                           lil__run_state_name(run->state));
    return LIL_OK;
}

/* Under mu: count the call, find its identity.  LIL_OK with *run_it set
 * when fn must run (then *attempt is its attempt number); LIL_OK with
 * *run_it clear after a replay into out; or an error. */
/* identity = name "#" k (k >= 2), without printf on the replay path. */
static void format_identity(char *identity, const char *name, size_t len, uint32_t k)
{
    char digits[10];
    int n = 0;

    memcpy(identity, name, len);
    identity[len++] = '#';
    do
        digits[n++] = (char)('0' + k % 10);
    while ((k /= 10) != 0);
    while (n > 0)
        identity[len++] = digits[--n];
    identity[len] = '\0';
}

/* The entry that counts the calls of name in this execution. */
static const uint8_t *keep_name(void *ud, const void *key, size_t len)
{
    return lil__run_keep(ud, key, len);
}

static struct ientry *counter_of(struct lil_run *run, const char *name, size_t len)
{
    return lil__imap_upsert_keep(&run->names, name, len, keep_name, run);
}

/* Replay without the index.  A program that replays calls its steps in the
 * order the journal holds them, so the next step record after the cursor
 * (records of other kinds are passed over) is identity's outcome: e is
 * filled from it and the cursor moves past it.  Past the last record the
 * journal does not hold identity (the records before the cursor belong to
 * earlier calls, whose identities all differ): e stays empty.  False when
 * the call leaves journal order; then only the index can answer.  Only a
 * journal without effects is replayed this way, so every step record here
 * is a STEP or STEP_FAILED. */
static bool follow_journal(struct lil_run *run, const char *identity, size_t len,
                           struct ientry *e)
{
    uint64_t off = run->cursor;
    struct lil_rec r;

    memset(e, 0, sizeof(*e));
    while (run->st->ops->run_next_scanned(run->sr, &off, &r)) {
        if (r.type != LIL_REC_STEP && r.type != LIL_REC_STEP_FAILED)
            continue;
        if (r.key_len != len || memcmp(r.key, identity, len) != 0)
            return false;
        lil__run_entry_of(&r, e);
        run->cursor = off;
        return true;
    }
    run->cursor = off;
    return true;
}

/* The journal's facts about identity: NULL when it holds none. */
static lil_status find_identity(struct lil_run *run, struct lil_err *err,
                                const char *identity, struct ientry *tmp,
                                struct ientry **e)
{
    size_t len = strlen(identity);

    *e = NULL;
    if (!run->indexed && follow_journal(run, identity, len, tmp)) {
        *e = tmp->state ? tmp : NULL;
        return LIL_OK;
    }
    if (lil__run_index(run, err) != LIL_OK)
        return err->code;
    *e = lil__imap_find(&run->index, identity, len);
    return LIL_OK;
}

/* The identity of this call of name: name itself for an exact step, else
 * name plus its occurrence (counted once the identity is looked up). */
static lil_status identity_of(struct lil_run *run, struct lil_err *err,
                              const char *name, bool exact, char *identity,
                              struct ientry **counter)
{
    size_t len = strlen(name);
    struct ientry *c;

    *counter = NULL;
    if (exact) {
        memcpy(identity, name, len + 1);
        return LIL_OK;
    }
    c = counter_of(run, name, len);
    if (!c)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (c->calls == 0)
        memcpy(identity, name, len + 1);
    else
        format_identity(identity, name, len, c->calls + 1);
    *counter = c;
    return LIL_OK;
}

static lil_status lookup(struct lil_run *run, struct lil_err *err, const char *name,
                         const struct lil_step_req *req, const uint8_t *req_hash,
                         char *identity, unsigned *attempt, bool *run_it,
                         lil_bytes *out)
{
    bool effect = req->effect;
    struct ientry *c, *e, tmp;
    lil_status rc;

    *run_it = false;
    if (run->state == LIL_RUN_UNCERTAIN)
        return refuse_state(run, err);
    rc = identity_of(run, err, name, req->exact, identity, &c);
    if (rc == LIL_OK)
        rc = find_identity(run, err, identity, &tmp, &e);
    if (rc != LIL_OK)
        return rc;
    if (c)
        c->calls++;
    if (e && (e->state == IE_DONE || e->state == IE_FAILED))
        return replay(run, err, identity, e, effect, req_hash, out);
    if (e && e->state == IE_RETRY && !effect)
        return nondet(run, err, identity,
                      "the journal holds an effect here, the code asks for a plain "
                      "step");
    *attempt = e ? e->attempts + 1 : 1;
    *run_it = true;
    if (req->after_end && !effect && !run->readonly &&
        (run->state == LIL_RUN_COMPLETED || run->state == LIL_RUN_FAILED ||
         run->state == LIL_RUN_STOPPED))
        return LIL_OK;
    return refuse_state(run, err);
}

/* ---- running ------------------------------------------------------------------ */

static lil_status append_outcome(struct lil_run *run, struct lil_err *err,
                                 const char *identity, const struct lil_step_req *req,
                                 const struct lil_call *call, int64_t dur_ns)
{
    bool effect = req->effect;
    struct lil_rec r = {0};
    int64_t us = dur_ns / 1000;

    r.type = call->failed ? LIL_REC_STEP_FAILED : LIL_REC_STEP;
    r.flags = effect ? LIL_SREC_EFFECT : 0;
    r.dur_us = us > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)(us < 0 ? 0 : us);
    r.key = (const uint8_t *)identity;
    r.key_len = strlen(identity);
    r.payload = call->failed ? call->reason.data : call->result.data;
    r.payload_len = call->failed ? call->reason.len : call->result.len;
    return run->st->ops->run_append(run->sr, err, &r,
                                    req->lazy ? LIL_APPEND_LAZY : LIL_APPEND_BY_MODE);
}

/* Effect identity has an intent and will have no outcome: its index entry
 * becomes pending and the run uncertain, as the next open would find it
 * (under mu). */
static lil_status mark_pending(struct lil_run *run, struct lil_err *err,
                               const char *identity, const uint8_t *req_hash)
{
    struct ientry *e;

    e = lil__imap_upsert_keep(&run->index, identity, strlen(identity), keep_name, run);
    if (e) {
        e->state = IE_PENDING;
        e->effect = 1;
        e->attempts++;
        e->request = lil__run_keep(run, req_hash, LIL_SHA256_LEN);
        e->note_len = 0;
        e->intent_flags = 0;
        run->intents++;
    }
    return e && e->request ? lil__run_settle_state(run, err)
                           : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

/* The function gave up (lil__call_abandon): an effect's intent stays
 * without outcome and the run is uncertain, as the next open would find
 * it; a plain step leaves nothing. */
static lil_status abandon(struct lil_run *run, struct lil_err *err,
                          const char *identity, const struct lil_step_req *req,
                          const uint8_t *req_hash, lil_status why)
{
    lil_status rc;

    if (!req->effect)
        return lil__seterr(err, why, 0, "step '%s' gave up: %s", identity,
                           lil__status_text(why));
    pthread_mutex_lock(&run->mu);
    rc = mark_pending(run, err, identity, req_hash);
    pthread_mutex_unlock(&run->mu);
    lil__log(run->env, LIL_LOG_WARN, "event=step run=%s step=%s status=abandoned",
             run->id, identity);
    return rc != LIL_OK
               ? rc
               : lil__seterr(err, LIL_E_UNCERTAIN, 0,
                             "effect '%s' was abandoned: its outcome is unknown",
                             identity);
}

/* A step between its lookup and its outcome: on lil__run_step_req's stack
 * while fn runs, or on the heap between lil_step_begin and lil_call_end. */
struct step_slot {
    struct lil_call call;
    struct lil_run *run;
    bool effect;
    bool lazy;
    uint8_t req_hash[LIL_SHA256_LEN];
    char identity[IDENTITY_MAX];
    int64_t t0;
};

/* The outcome of the function, now in slot->call: journal it (or, when the
 * function gave up, nothing) and free the call. */
static lil_status step_close(struct step_slot *slot, struct lil_err *err,
                             lil_bytes *out)
{
    struct lil_run *run = slot->run;
    struct lil_call *call = &slot->call;
    struct lil_step_req req = {0};
    const char *identity = slot->identity;
    int64_t dur_ns = lil__mono_ns() - slot->t0; /* journaled and logged */
    lil_status rc;

    req.effect = slot->effect;
    req.lazy = slot->lazy;
    if (call->abandoned != LIL_OK) {
        rc = abandon(run, err, identity, &req, slot->req_hash, call->abandoned);
        lil__call_free(call);
        return rc;
    }
    rc = append_outcome(run, err, identity, &req, call, dur_ns);
    if (rc == LIL_OK)
        __atomic_fetch_add(call->failed ? &run->steps_failed : &run->steps_done, 1,
                           __ATOMIC_RELAXED);
    lil__log(run->env, call->failed ? LIL_LOG_WARN : LIL_LOG_DEBUG,
             "event=step run=%s step=%s attempt=%u status=%s dur_us=%lld", run->id,
             identity, call->attempt,
             rc != LIL_OK   ? "unjournaled"
             : call->failed ? "failed"
                            : "done",
             (long long)(dur_ns / 1000));
    if (rc == LIL_OK && call->failed)
        rc = lil__seterr(err, LIL_E_FAILED, 0, "step '%s' failed: %s", identity,
                         call->reason.data ? (const char *)call->reason.data : "");
    else if (rc == LIL_OK && out && lil__buf_export(&call->result, out) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    lil__call_free(call);
    return rc;
}

static lil_status lease_check(struct lil_run *run, struct lil_err *err)
{
    return run->st->ops->run_lease_check ? run->st->ops->run_lease_check(run->sr, err)
                                         : LIL_OK;
}

/* What lil__run_step_req refuses (run.h); nothing is journaled then. */
static lil_status check_req(const struct lil_run *run, struct lil_err *err,
                            const char *name, const struct lil_step_req *req)
{
    if ((req->request_len && !req->request) || (req->note_len && !req->note))
        return lil__seterr(err, LIL_E_INVAL, 0, "step '%s': a length without bytes",
                           name);
    if (req->lazy && req->effect)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "effect '%s' cannot be lazy: its outcome is synced as the "
                           "sync mode says",
                           name);
    if (req->note_len && !req->effect)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "step '%s' has a note: only an effect's intent carries one",
                           name);
    if (req->note_len > run->max_record)
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "effect '%s': its request is %zu bytes, over the run's "
                           "record limit of %zu bytes",
                           name, req->note_len, run->max_record);
    if (req->note_len &&
        lil__utf8_invalid_at(req->note, req->note_len) != req->note_len)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "effect '%s': its note is not UTF-8 (byte %zu)", name,
                           lil__utf8_invalid_at(req->note, req->note_len));
    return LIL_OK;
}

/* Look the step up: a replay (or an error) leaves *run_it clear; otherwise
 * the intent of an effect is journaled and slot->call is ready for the
 * function (*run_it set). */
static lil_status step_open(struct lil_run *run, struct lil_err *err, const char *name,
                            const struct lil_step_req *req, struct step_slot *slot,
                            bool *run_it, lil_bytes *out)
{
    unsigned attempt = 1;
    lil_status rc = lil__step_name_check(err, name);

    *run_it = false;
    if (rc == LIL_OK)
        rc = check_req(run, err, name, req);
    if (rc != LIL_OK)
        return rc;
    slot->run = run;
    slot->effect = req->effect;
    slot->lazy = req->lazy;
    if (req->effect)
        lil__sha256(req->request ? req->request : "", req->request_len, slot->req_hash);
    pthread_mutex_lock(&run->mu);
    rc = lookup(run, err, name, req, slot->req_hash, slot->identity, &attempt, run_it,
                out);
    pthread_mutex_unlock(&run->mu);
    if (rc != LIL_OK || !*run_it) {
        *run_it = false;
        return rc;
    }
    if (req->effect) {
        /* a store whose hold can run out: still ours before the intent (no
         * intent then: nothing uncertain), and once more after it, just
         * before the effect starts */
        rc = lease_check(run, err);
        if (rc == LIL_OK)
            rc = lil__intent_append(run, err, slot->identity, slot->req_hash, req->note,
                                    req->note_len);
        if (rc == LIL_OK)
            rc = lease_check(run, err);
        if (rc != LIL_OK) {
            *run_it = false;
            return rc;
        }
    }
    lil__call_init(&slot->call, run->env, run->id, slot->identity, attempt,
                   run->max_record);
    slot->t0 = lil__mono_ns();
    return LIL_OK;
}

lil_status lil__run_step_req(struct lil_run *run, struct lil_err *err, const char *name,
                             const struct lil_step_req *req, lil_fn fn, void *ud,
                             lil_bytes *out)
{
    struct step_slot slot;
    bool run_it = false;
    lil_status rc = step_open(run, err, name, req, &slot, &run_it, out);

    if (!run_it)
        return rc;
    if (fn(&slot.call, ud) != 0 && !slot.call.failed) {
        slot.call.failed = true;
        lil__buf_addstr(&slot.call.reason, "the step function returned an error");
    }
    return step_close(&slot, err, out);
}

/* ---- steps in two calls (lil_step_begin, lil_call_end) ------------------------- */

static struct step_slot *slot_of(struct lil_call *call)
{
    return (struct step_slot *)(void *)((char *)call -
                                        offsetof(struct step_slot, call));
}

lil_status lil__step_begin(struct lil_run *run, struct lil_err *err, const char *name,
                           const struct lil_step_req *req, struct lil_call **call,
                           lil_bytes *out)
{
    struct step_slot *slot = lil__calloc(run->env, 1, sizeof(*slot));
    bool run_it = false;
    lil_status rc;

    *call = NULL;
    if (!slot)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = step_open(run, err, name, req, slot, &run_it, out);
    if (!run_it) {
        lil__free(run->env, slot);
        return rc;
    }
    slot->call.kind = LIL_CALL_STEP;
    *call = &slot->call;
    return LIL_OK;
}

struct lil_run *lil__step_call_run(struct lil_call *call)
{
    return slot_of(call)->run;
}

lil_status lil__step_end(struct lil_call *call, struct lil_err *err, lil_bytes *out)
{
    struct step_slot *slot = slot_of(call);
    const struct lil_env *env = slot->run->env;
    lil_status rc = step_close(slot, err, out);

    lil__free(env, slot);
    return rc;
}

lil_status lil__step_cancel(struct lil_call *call, struct lil_err *err)
{
    struct step_slot *slot = slot_of(call);
    struct lil_run *run = slot->run;
    lil_status rc = LIL_OK;

    if (slot->effect) {
        pthread_mutex_lock(&run->mu);
        rc = mark_pending(run, err, slot->identity, slot->req_hash);
        pthread_mutex_unlock(&run->mu);
    }
    lil__log(run->env, slot->effect ? LIL_LOG_WARN : LIL_LOG_DEBUG,
             "event=step run=%s step=%s status=cancelled", run->id, slot->identity);
    lil__call_free(&slot->call);
    lil__free(run->env, slot);
    return rc;
}

lil_status lil__run_step(struct lil_run *run, struct lil_err *err, const char *name,
                         bool effect, const void *request, size_t request_len,
                         lil_fn fn, void *ud, lil_bytes *out)
{
    struct lil_step_req req = {0};

    req.effect = effect;
    req.request = effect ? request : NULL;
    req.request_len = effect && request ? request_len : 0;
    return lil__run_step_req(run, err, name, &req, fn, ud, out);
}

bool lil__run_intent_note(struct lil_run *run, const char *identity, bool whole,
                          struct lil_run_note *out)
{
    const struct ientry *e;
    struct lil_intent in;
    const char *full = NULL;
    bool found;

    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&run->mu);
    e = run->indexed ? lil__imap_find(&run->index, identity, strlen(identity)) : NULL;
    found = e && e->state == IE_PENDING && e->request && e->note_len;
    if (found) {
        lil__intent_decode(e->request, LIL_SHA256_LEN + (size_t)e->note_len,
                           e->intent_flags, &in);
        out->text = in.note;
        out->len = in.note_len;
        out->full_len = in.full_len;
        out->cut = in.apart;
        if (in.apart && whole && lil__intent_find_note(run, identity, &in, &full)) {
            out->text = full;
            out->len = (size_t)in.full_len;
            out->cut = false;
        }
    }
    pthread_mutex_unlock(&run->mu);
    return found;
}
