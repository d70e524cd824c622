/*
 * listing.h -- what operators read of a store's queue and workers
 * (listing.c; lil_queue_list and lil_workers_list in lil.h, checked by
 * src/api/workers.c): the store's rows as JSON documents.  Call inside a
 * json scope.
 */
#ifndef LIL_QUEUE_LISTING_H
#define LIL_QUEUE_LISTING_H

#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "queue/queue.h"
#include "store/store.h"

/* {"queue": bool (the store keeps one), "runs": [{"run", "state",
 * "wake_at_ms", "attempts", "worker", "owner", "held", "error"}]} into *out
 * (a new reference); a store without a queue lists no run. */
lil_status lil__queue_list_doc(struct lil_store *st, struct lil_err *err, json_t **out);

/* {"now_ms", "workers": [{"name", "owner", "host", "pid", "threads",
 * "state": "live" | "lost", "started_ms", "heartbeat_ms", "age_ms",
 * "lease_ms", "runs": [ids]}]} into *out; now_ms is the server's when a
 * worker is listed, else the one given.  LIL_E_INVAL for a store without
 * a queue (naming what to use). */
lil_status lil__workers_doc(struct lil_store *st, struct lil_err *err, int64_t now_ms,
                            json_t **out);

#endif
