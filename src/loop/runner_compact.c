/*
 * runner_compact.c -- endless loops stay small (docs/loops.md,
 * "Compaction"): at an iteration boundary, once the live segment of the
 * run's journal holds LIL_COMPACT_ITERATIONS iterations or
 * LIL_COMPACT_BYTES bytes, the run goes on in a new segment
 * (engine/run.h, lil__run_rotate) whose first records are everything the
 * fold of runner_load.c needs to go on, so that a resume reads that
 * segment only, whatever the run's age:
 *
 *   copies (LIL_SREC_COPY) of the start record "loop" (identity, inputs,
 *   spec digests, caps), of the last spec_changed, imported or adopted
 *   record and of the last observer record (what the run is bound to),
 *   of the last notify record (the event last notified, which the
 *   on-change policy compares the next one with),
 *   and of the snapshot just committed (state, meters, budget spent, the
 *   no-progress streak and fingerprint); then a new control record
 *   "compacted.N", whose number keeps the control records' count.
 *
 * Only at a quiet boundary: no stop request, pause, pending cap, cap
 * detail, reservation or slot after the snapshot, no end.  The journal
 * layer seals the new segment (its link names the old segment's last
 * chain value, under the run's key) and makes the switch crash-safe.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/settings/settings.h"
#include "loop/record_name.h"
#include "loop/runner.h"

#define COMPACT_ITERATIONS_DEFAULT 10000
#define COMPACT_BYTES_DEFAULT      (64LL << 20)

enum pick_slot {
    PICK_START,
    PICK_SPEC,
    PICK_IMPORT,
    PICK_OBSERVER,
    PICK_NOTIFY,
    PICK_SNAP,
    PICKS
};

struct picked {
    bool has;
    uint8_t type;
    int64_t ts_ns;
    uint32_t dur_us;
    char key[LIL_LOOP_NAME_MAX];
    struct lil_buf payload;
};

struct picks {
    struct picked p[PICKS];
    bool nomem;
};

/* ---- the thresholds -------------------------------------------------------------- */

static int64_t setting_num(const char *name, int64_t dflt)
{
    struct lil_err err;
    const char *v = NULL, *from = NULL;
    char buf[64];

    if (lil__setting_value(&err, name, &v, &from, buf, sizeof(buf)) != LIL_OK || !v)
        return dflt;
    return strtoll(v, NULL, 10);
}

static void thresholds(struct lil_loop *lp)
{
    if (lp->compact.read)
        return;
    lp->compact.read = true;
    lp->compact.iterations =
        setting_num("LIL_COMPACT_ITERATIONS", COMPACT_ITERATIONS_DEFAULT);
    lp->compact.bytes = setting_num("LIL_COMPACT_BYTES", COMPACT_BYTES_DEFAULT);
}

static bool due(struct lil_loop *lp)
{
    lil_run_info info = {.struct_size = sizeof(info)};

    if (lp->meters.iteration - lp->compact.from_iteration >= lp->compact.iterations)
        return true;
    return lil__run_info(lp->run, &lp->err, &info) == LIL_OK &&
           info.journal_bytes >= (uint64_t)lp->compact.bytes;
}

static bool quiet(const struct lil_loop *lp)
{
    return !lp->stop && !lp->pause.on && !lp->terminated && lp->end == LOOP_LIVE &&
           !lp->parked && lp->meters.pending == LIL_CAP_NONE && !lp->cap_detail &&
           lp->nslots == 0 && lp->meters.reserved_tokens == 0 &&
           !(lp->meters.reserved_usd > 0);
}

/* ---- what the new segment starts with ----------------------------------------------
 */

static int pick_of(const lil_record *rec)
{
    struct lil_loop_name nm;

    if (rec->type != LIL_REC_STEP || !lil__loop_name_parse(rec->key, rec->key_len, &nm))
        return -1;
    if (nm.kind == LIL_LOOP_NAME_START)
        return PICK_START;
    if (nm.kind == LIL_LOOP_NAME_SNAP)
        return PICK_SNAP;
    if (nm.kind != LIL_LOOP_NAME_CONTROL)
        return -1;
    if (strcmp(nm.control, "spec_changed") == 0)
        return PICK_SPEC;
    if (strcmp(nm.control, "imported") == 0 || strcmp(nm.control, "adopted") == 0)
        return PICK_IMPORT;
    if (strcmp(nm.control, "notify") == 0)
        return PICK_NOTIFY;
    return strcmp(nm.control, "observer") == 0 ? PICK_OBSERVER : -1;
}

static int pick_one(void *ud, const lil_record *rec)
{
    struct picks *ps = ud;
    int i = pick_of(rec);
    struct picked *p;

    if (i < 0 || rec->key_len >= LIL_LOOP_NAME_MAX)
        return 0;
    p = &ps->p[i];
    p->has = true;
    p->type = (uint8_t)rec->type;
    p->ts_ns = rec->ts_ns;
    p->dur_us = rec->dur_us;
    memcpy(p->key, rec->key, rec->key_len + 1);
    lil__buf_reset(&p->payload);
    if (lil__buf_add(&p->payload, rec->payload, rec->payload_len) != LIL_OK) {
        ps->nomem = true;
        return 1;
    }
    return 0;
}

static void to_rec(const struct picked *p, struct lil_rec *r)
{
    memset(r, 0, sizeof(*r));
    r->type = p->type;
    r->flags = LIL_SREC_COPY;
    r->ts_ns = p->ts_ns;
    r->dur_us = p->dur_us;
    r->key = (const uint8_t *)p->key;
    r->key_len = strlen(p->key);
    r->payload = p->payload.data;
    r->payload_len = p->payload.len;
}

/* The records of the new segment: the copies, then "compacted.N". */
static size_t segment_records(const struct picks *ps, struct lil_rec *recs,
                              const char *name, const char *payload)
{
    static const int order[] = {PICK_START,    PICK_SPEC,   PICK_IMPORT,
                                PICK_OBSERVER, PICK_NOTIFY, PICK_SNAP};
    size_t n = 0;

    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (ps->p[order[i]].has)
            to_rec(&ps->p[order[i]], &recs[n++]);
    memset(&recs[n], 0, sizeof(recs[n]));
    recs[n].type = LIL_REC_STEP;
    recs[n].key = (const uint8_t *)name;
    recs[n].key_len = strlen(name);
    recs[n].payload = (const uint8_t *)payload;
    recs[n].payload_len = strlen(payload);
    return n + 1;
}

static lil_status rotate(struct lil_loop *lp, struct picks *ps)
{
    struct lil_rec recs[PICKS + 1];
    char name[LIL_LOOP_NAME_MAX], payload[96];
    int64_t last = lp->meters.iteration - 1;
    bool done = false;
    size_t n;
    lil_status rc;

    snprintf(name, sizeof(name), "compacted.%" PRIu64, lp->nctl + 1);
    snprintf(payload, sizeof(payload), "{\"iteration\":%" PRId64 "}", last);
    n = segment_records(ps, recs, name, payload);
    rc = lil__run_rotate(lp->run, &lp->err, recs, n, &done);
    if (rc != LIL_OK)
        return rc;
    if (!done) {
        lp->compact.off = true; /* a store that keeps runs in one piece */
        return LIL_OK;
    }
    lp->nctl++;
    lp->compact.from_iteration = lp->meters.iteration;
    lil__log(lp->env, LIL_LOG_INFO, "event=compacted run=%s iteration=%" PRId64,
             lp->run_id, last);
    return LIL_OK;
}

lil_status lil__loop_compact_maybe(struct lil_loop *lp)
{
    struct picks ps;
    lil_status rc;

    thresholds(lp);
    if (lp->compact.off || !lp->run || !quiet(lp) || !due(lp))
        return LIL_OK;
    memset(&ps, 0, sizeof(ps));
    for (int i = 0; i < PICKS; i++)
        lil__buf_init(&ps.p[i].payload, lp->env, SIZE_MAX);
    rc = lil__run_foreach(lp->run, &lp->err, pick_one, &ps);
    if (rc == LIL_OK && ps.nomem)
        rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK && ps.p[PICK_START].has && ps.p[PICK_SNAP].has)
        rc = rotate(lp, &ps);
    for (int i = 0; i < PICKS; i++)
        lil__buf_free(&ps.p[i].payload);
    return rc;
}
