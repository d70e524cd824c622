/*
 * run_events.c -- a run's events page after page (run_events.h).
 */
#include "run_events.h"

#include <stdbool.h>
#include <string.h>

#define PAGE 10000 /* events per page */

uint64_t cli_event_seq(const json_t *ev)
{
    return (uint64_t)json_integer_value(json_object_get(ev, "seq"));
}

/* Hand the events of one page to fn; false when done (upto passed, or fn
 * stopped). */
static bool each_event(const json_t *page, uint64_t upto, cli_event_fn fn, void *ud)
{
    size_t i;
    json_t *ev;

    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        if (upto && cli_event_seq(ev) > upto)
            return false;
        if (fn(ud, ev) != 0)
            return false;
    }
    return true;
}

/* One page from `from`: parsed into *page. */
static lil_status fetch_page(lil_store *st, const char *run_id, uint64_t from,
                             const struct cli_events_query *q, bool first,
                             json_t **page)
{
    lil_events_opts opts = {.struct_size = sizeof(opts), .from_seq = from, .max = PAGE};
    lil_bytes b = {NULL, 0};
    lil_status rc;

    if (q) {
        opts.types = q->types;
        opts.flags = q->flags;
        opts.last_iterations = first ? q->last_iterations : 0;
    }
    rc = lil_run_events_with(st, run_id, &opts, &b);
    if (rc != LIL_OK)
        return rc;
    *page = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!json_is_object(*page)) {
        json_decref(*page);
        return LIL_E_NOMEM;
    }
    return LIL_OK;
}

lil_status cli_run_events_query(lil_store *st, const char *run_id, uint64_t upto,
                                struct cli_events_query *q, cli_event_fn fn, void *ud)
{
    return cli_run_events_from(st, run_id, 1, upto, q, fn, ud);
}

lil_status cli_run_events_from(lil_store *st, const char *run_id, uint64_t from,
                               uint64_t upto, struct cli_events_query *q,
                               cli_event_fn fn, void *ud)
{
    bool more = true, first = true;

    while (more && (!upto || from <= upto)) {
        json_t *page = NULL;
        lil_status rc = fetch_page(st, run_id, from, q, first, &page);

        if (rc != LIL_OK)
            return rc;
        if (first && q)
            q->iterations_before =
                (int64_t)json_integer_value(json_object_get(page, "iterations_before"));
        first = false;
        more = each_event(page, upto, fn, ud) &&
               json_is_true(json_object_get(page, "more"));
        from = (uint64_t)json_integer_value(json_object_get(page, "next"));
        json_decref(page);
    }
    return LIL_OK;
}

lil_status cli_run_events(lil_store *st, const char *run_id, uint64_t upto,
                          cli_event_fn fn, void *ud)
{
    return cli_run_events_query(st, run_id, upto, NULL, fn, ud);
}
