/*
 * store.h -- the file store: a directory holding one journal per run
 * (<dir>/<run id>.lil) and the markers (<dir>/markers/).
 *
 * A store handle may be shared by threads; its message slot belongs to the
 * last failing call (lil_errmsg is per thread).
 */
#ifndef LIL_STORE_STORE_H
#define LIL_STORE_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/env.h"

#define LIL_STORE_MAGIC 0x6c696c53u /* "lilS" */
#define LIL_JOURNAL_EXT ".lil"

struct lil_store {
    uint32_t magic;
    struct lil_env *env;
    bool own_env;
    char *dir;
    pthread_mutex_t mu; /* guards err: threads may share a store */
    struct lil_err err;
    bool parent_synced; /* the store's name is durable (atomic access) */
};

/* Open the directory (creating it).  dir NULL: $LIL_DIR or ".lil". */
lil_status lil__store_open(struct lil_env *env, struct lil_err *err, const char *dir,
                           struct lil_store **out);
void lil__store_close(struct lil_store *st);

/* The store's own name (its entry in its parent directory) must be durable
 * before anything written in the store is acknowledged: its creator may
 * have died before making it so.  Opening the store does not sync it (a
 * cache flush on every start); the first writer does, once per handle: a
 * writable run open among its other syncs (lil__store_parent_pending, then
 * lil__store_parent_done once they succeeded), a marker through
 * lil__store_sync_parent. */
bool lil__store_parent_pending(const struct lil_store *st);
void lil__store_parent_done(struct lil_store *st);
lil_status lil__store_sync_parent(struct lil_store *st, struct lil_err *err);

/* "<dir>/<run id>.lil" into a new string (lil__free), NULL on OOM. */
char *lil__store_run_path(const struct lil_store *st, const char *run_id);

/* Run ids of the store, sorted, to fn. */
lil_status lil__store_foreach(struct lil_store *st, struct lil_err *err,
                              lil_run_id_fn fn, void *ud);

/* The run-id rule of lil.h. */
lil_status lil__run_id_check(struct lil_err *err, const char *run_id);

#endif
