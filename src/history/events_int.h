/*
 * events_int.h -- what events.c (the walk, the events of any run) and
 * events_loop.c (the events of a loop run's records) share.
 */
#ifndef LIL_HISTORY_EVENTS_INT_H
#define LIL_HISTORY_EVENTS_INT_H

#include <lil/lil.h>
#include <stdbool.h>

#include "base/err.h"
#include "history/history.h"
#include "json/json.h"
#include "loop/record_name.h"

/* The retries journaled for one slot of the open iteration (reserve.N
 * records with "retry"). */
struct slot_retries {
    char slot[48];
    int64_t retries;
};

struct hwalk {
    struct lil_err *err;
    const struct lil_history_query *q; /* types, flags */
    const struct lil_loop_name *nm;    /* the current record's loop name, or NULL */
    uint64_t from;                     /* first seq returned */
    size_t max;                        /* events in the page */
    json_t *events;                    /* the page */
    json_t *pending;                   /* the current record's events */
    uint64_t next;                     /* seq of the first record not returned */
    bool more;                         /* a record after next exists */
    bool loop;                         /* the loop's start record was seen */
    bool iter_open;                    /* iteration `iter` has started */
    int64_t iter;                      /* the iteration running */
    bool parked;                       /* the last loop record was a park */
    bool quiet;           /* a record before the page: keep state, make no event */
    int64_t iters_before; /* iteration_start events of records before the page */
    uint64_t *starts;     /* the pre-pass (last_iterations): seq of every
                             iteration_start, nstarts of them */
    size_t nstarts, capstarts;
    struct slot_retries *retries;
    size_t nretries, capretries;
    const struct lil_env *env;
    lil_status rc;
};

/* A new event {"seq", "ts_ns", "type", "record": {"type", "key"}, "loop"?}
 * for rec (its "loop": w->nm's), added to w->pending; NULL when out of
 * memory (w->rc set), or quietly while w->quiet, for a type the query does
 * not want, and for every event of a brief query (made whole here: {"seq",
 * "type", "loop"?}) -- the setters take NULL. */
json_t *lil__hev_new(struct hwalk *w, const lil_record *rec, const char *type);

/* rec's payload as a JSON object, or NULL (not JSON, not an object). */
json_t *lil__hev_payload(const lil_record *rec);

/* rec's payload as a string (NULL when it is not UTF-8 text). */
json_t *lil__hev_text(const void *p, size_t n);

/* Set key of o to v (stolen: released when o is NULL; NULL sets nothing).  Member k of
 * src copied into o as key (nothing when src has no k). */
void lil__hev_set(json_t *o, const char *key, json_t *v);
void lil__hev_copy(json_t *o, const char *key, const json_t *src, const char *k);

/* Is rec the start record of a loop run (the step "loop" with a "loopId")? */
bool lil__hev_is_loop_start(const lil_record *rec);

/* The events of a loop run's record rec named nm (events_loop.c). */
void lil__hev_loop(struct hwalk *w, const lil_record *rec,
                   const struct lil_loop_name *nm);

#endif
