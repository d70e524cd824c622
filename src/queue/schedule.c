/*
 * schedule.c -- schedules of cron loops: the slots a tick fires by the
 * catch-up policy, and the store's schedule documents and marks
 * (schedule.h; docs/loops.md, "Schedules").
 *
 * The newest slot (latest) is looked for in windows that grow back from
 * now (a minute, an hour, a day, 32 days, 400 days, then the whole span
 * from from_ms), so that a schedule firing every second that last fired a
 * year ago does not walk a year of seconds: the first window holding a
 * slot holds the newest one.
 */
#include "queue/schedule.h"

#include <string.h>

#include "json/json.h"
#include "loopspec/values/cron.h"

#define MIN_MS INT64_C(60000)
#define DAY_MS INT64_C(86400000)

bool lil__catch_up_parse(const char *name, enum lil_catch_up *out)
{
    static const char *const names[] = {"all", "latest", "none"};

    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (enum lil_catch_up)i;
            return true;
        }
    return false;
}

/* The slots of (from_ms, now_ms], oldest first, at most cap; *last the
 * newest slot seen (0: none), even past cap when want_last. */
static void walk(const struct lil_cron *c, int64_t from_ms, int64_t now_ms,
                 int64_t *slots, size_t cap, size_t *n, int64_t *last)
{
    int64_t t = from_ms;

    *n = 0;
    *last = 0;
    while (lil__cron_next(c, t, &t) && t <= now_ms) {
        if (slots && *n < cap)
            slots[(*n)++] = t;
        else if (slots)
            return; /* all: the rest on the next tick */
        *last = t;
    }
}

static int64_t newest(const struct lil_cron *c, int64_t from_ms, int64_t now_ms)
{
    static const int64_t windows[] = {MIN_MS, 60 * MIN_MS, DAY_MS, 32 * DAY_MS,
                                      400 * DAY_MS};
    int64_t last = 0;
    size_t n;

    for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
        int64_t start = now_ms - windows[i];

        if (start <= from_ms)
            break;
        walk(c, start, now_ms, NULL, 0, &n, &last);
        if (last)
            return last;
    }
    walk(c, from_ms, now_ms, NULL, 0, &n, &last);
    return last;
}

lil_status lil__sched_due(struct lil_err *err, const char *cron,
                          enum lil_catch_up policy, int64_t from_ms, int64_t now_ms,
                          int64_t *slots, size_t cap, size_t *n)
{
    struct lil_cron c;
    char why[128];
    int64_t last, unit;

    *n = 0;
    if (!cron || !lil__cron_parse(cron, &c, why, sizeof(why)))
        return lil__seterr(err, LIL_E_SPEC, 0, "cron expression '%s': %s",
                           cron ? cron : "(none)", cron ? why : "missing");
    if (from_ms < 0 || now_ms < 0 || from_ms > LIL_CRON_MAX_MS ||
        now_ms > LIL_CRON_MAX_MS)
        return lil__seterr(err, LIL_E_INVAL, 0, "schedule times out of range");
    if (now_ms <= from_ms || cap == 0)
        return LIL_OK;
    if (policy == LIL_CATCH_UP_ALL) {
        walk(&c, from_ms, now_ms, slots, cap, n, &last);
        return LIL_OK;
    }
    last = newest(&c, from_ms, now_ms);
    unit = c.has_seconds ? 1000 : MIN_MS;
    if (last && (policy == LIL_CATCH_UP_LATEST || last / unit == now_ms / unit)) {
        slots[0] = last;
        *n = 1;
    }
    return LIL_OK;
}

/* ---- the store's documents ------------------------------------------------- */

static lil_status no_schedules(struct lil_store *st, struct lil_err *err)
{
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "the %s store %s keeps no schedules (a directory or a "
                       "PostgreSQL store does)",
                       st->ops->name, st->where);
}

static lil_status check_doc(struct lil_store *st, struct lil_err *err, const char *doc)
{
    json_t *v = NULL;
    size_t len = doc ? strlen(doc) : 0;
    lil_status rc;

    if (!doc || len > LIL_SCHED_DOC_MAX)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "a schedule's document must be JSON of at most %u bytes",
                           LIL_SCHED_DOC_MAX);
    rc = lil__json_parse(st->env, err, LIL_E_INVAL, doc, len, 0, NULL, &v);
    if (rc == LIL_OK && !json_is_object(v))
        rc =
            lil__seterr(err, LIL_E_INVAL, 0, "a schedule's document must be an object");
    json_decref(v);
    return rc;
}

lil_status lil__sched_put(struct lil_store *st, struct lil_err *err, const char *id,
                          const char *doc, bool replace)
{
    lil_status rc = lil__run_id_check(err, id);

    if (rc != LIL_OK)
        return rc;
    if (!st->ops->sched_put)
        return no_schedules(st, err);
    rc = check_doc(st, err, doc);
    return rc == LIL_OK ? st->ops->sched_put(st, err, id, doc, strlen(doc), replace)
                        : rc;
}

lil_status lil__sched_get(struct lil_store *st, struct lil_err *err, const char *id,
                          lil_bytes *doc, int64_t *mark_ms)
{
    lil_status rc = lil__run_id_check(err, id);

    if (rc != LIL_OK)
        return rc;
    return st->ops->sched_get ? st->ops->sched_get(st, err, id, doc, mark_ms)
                              : no_schedules(st, err);
}

lil_status lil__sched_del(struct lil_store *st, struct lil_err *err, const char *id)
{
    lil_status rc = lil__run_id_check(err, id);

    if (rc != LIL_OK)
        return rc;
    return st->ops->sched_del ? st->ops->sched_del(st, err, id) : no_schedules(st, err);
}

lil_status lil__sched_list(struct lil_store *st, struct lil_err *err, lil_run_id_fn fn,
                           void *ud)
{
    return st->ops->sched_list ? st->ops->sched_list(st, err, fn, ud) : LIL_OK;
}

lil_status lil__sched_mark(struct lil_store *st, struct lil_err *err, const char *id,
                           int64_t slot_ms)
{
    lil_status rc = lil__run_id_check(err, id);

    if (rc != LIL_OK)
        return rc;
    if (slot_ms < 0)
        return lil__seterr(err, LIL_E_INVAL, 0, "a mark is a time after the epoch");
    return st->ops->sched_mark ? st->ops->sched_mark(st, err, id, slot_ms)
                               : no_schedules(st, err);
}
