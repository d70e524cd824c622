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

lil_status cli_run_events(lil_store *st, const char *run_id, uint64_t upto,
                          cli_event_fn fn, void *ud)
{
    uint64_t from = 1;
    bool more = true;

    while (more && (!upto || from <= upto)) {
        lil_bytes b = {NULL, 0};
        lil_status rc = lil_run_events(st, run_id, from, PAGE, &b);
        json_t *page;

        if (rc != LIL_OK)
            return rc;
        page = json_loadb(b.data, b.len, 0, NULL);
        lil_free(b.data);
        if (!json_is_object(page)) {
            json_decref(page);
            return LIL_E_NOMEM;
        }
        more = each_event(page, upto, fn, ud) &&
               json_is_true(json_object_get(page, "more"));
        from = (uint64_t)json_integer_value(json_object_get(page, "next"));
        json_decref(page);
    }
    return LIL_OK;
}
