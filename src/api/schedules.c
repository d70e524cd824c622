/*
 * schedules.c -- the public lil_schedule_* calls: a store's schedules of
 * cron loops (their documents and marks) and the slots a tick fires.  The
 * schedules themselves are queue/schedule.c.
 */
#include "api/entry.h"
#include "queue/schedule.h"

lil_status lil_schedule_put(lil_store *st, const char *id, const char *doc_json,
                            int replace)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(st, &e,
                             lil__sched_put(st, &e, id, doc_json, replace != 0));
}

lil_status lil_schedule_get(lil_store *st, const char *id, lil_bytes *doc,
                            int64_t *mark_ms)
{
    struct lil_err e;

    if (!doc || !mark_ms)
        return lil__api_fail(LIL_E_INVAL, "lil_schedule_get: doc or mark_ms is NULL");
    doc->data = NULL;
    doc->len = 0;
    *mark_ms = 0;
    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(st, &e, lil__sched_get(st, &e, id, doc, mark_ms));
}

lil_status lil_schedule_remove(lil_store *st, const char *id)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(st, &e, lil__sched_del(st, &e, id));
}

lil_status lil_schedule_foreach(lil_store *st, lil_run_id_fn fn, void *ud)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    if (!fn)
        return lil__api_fail(LIL_E_INVAL, "lil_schedule_foreach: fn is NULL");
    return lil__api_to_store(st, &e, lil__sched_list(st, &e, fn, ud));
}

lil_status lil_schedule_mark(lil_store *st, const char *id, int64_t slot_ms)
{
    struct lil_err e;

    if (!lil__api_store_ok(st))
        return lil__api_bad_handle("store");
    return lil__api_to_store(st, &e, lil__sched_mark(st, &e, id, slot_ms));
}

lil_status lil_schedule_due(const char *cron, const char *catch_up, int64_t from_ms,
                            int64_t now_ms, int64_t *slots, size_t cap, size_t *n)
{
    struct lil_err e;
    enum lil_catch_up policy;

    if (!n || (cap && !slots))
        return lil__api_fail(LIL_E_INVAL, "lil_schedule_due: slots or n is NULL");
    *n = 0;
    if (!lil__catch_up_parse(catch_up, &policy))
        return lil__api_fail(LIL_E_INVAL,
                             "lil_schedule_due: catch_up is not all, latest or none");
    return lil__api_to_thread(
        &e, lil__sched_due(&e, cron, policy, from_ms, now_ms, slots, cap, n));
}
