/*
 * store_mem.h -- inside the in-memory store (location "mem:NAME"): runs,
 * markers and stop requests kept in this process's memory.
 *
 * Lifetime.  A store's contents live in a space named by the location, and
 * a space lives as long as the process: a store closed and opened again
 * under the same name finds its runs (what a crash and a restart look like
 * to a program that keeps its store in memory, short of losing it all).
 * Spaces outlive any lil_env, so they use the C allocator, not an env's;
 * the store and run handles use their env's as every backend does.
 * Nothing is shared with another process: a forked child sees a copy.
 *
 * Runs are journal images (journal/format.h: the header and framed,
 * chained records), as the file store keeps them on disk and the
 * PostgreSQL store in rows, so that opening scans them with the journal's
 * scan, check_run verifies them with the journal's check, and run_image
 * and run_import move them as they are.  Memory is as durable as it gets
 * here: every record is durable when it is appended (sync is a no-op), and
 * a run never has a torn tail.
 *
 * Locking: one mutex per space guards its runs, markers and stop requests;
 * a writable open holds its run (held) until run_close, so that a second
 * writable open fails with LIL_E_LOCKED as it does for another process's
 * hold in the other stores.  The queue is not kept here (NULL operations).
 */
#ifndef LIL_STORE_MEM_STORE_MEM_H
#define LIL_STORE_MEM_STORE_MEM_H

#include <pthread.h>

#include "store/store.h"

/* Bytes owned by a space (C allocator). */
struct mem_bytes {
    uint8_t *data;
    size_t len, cap;
};

/* A run id's entry: its journal image (empty: no run yet; a stop request
 * may wait for it) and its stop request. */
struct mem_run {
    struct mem_run *next;
    char *id;
    struct mem_bytes image;
    bool held;
    bool stop;
    struct mem_bytes stop_req;
    int64_t changed_ns;
};

struct mem_marker {
    struct mem_marker *next;
    char *name;
    bool inside; /* a caller entered it and has not left */
    enum lil_smarker_state state;
    struct mem_bytes result;
};

struct mem_space {
    struct mem_space *next;
    char *name;
    pthread_mutex_t mu;
    pthread_cond_t left; /* a caller left a marker */
    struct mem_run *runs;
    struct mem_marker *markers;
};

struct mem_store {
    struct lil_store base;
    struct mem_space *sp;
};

/* The space named name, made on first use; NULL when out of memory. */
struct mem_space *lil__mem_space(const char *name);
/* Under sp->mu: the entry of run_id, or NULL; made when add (NULL: out of
 * memory). */
struct mem_run *lil__mem_run(struct mem_space *sp, const char *run_id, bool add);
struct mem_marker *lil__mem_marker(struct mem_space *sp, const char *name);
/* Replace b's bytes with n bytes of p, or add them; 0, or -1 when out of
 * memory (b unchanged). */
int lil__mem_bytes_set(struct mem_bytes *b, const void *p, size_t n);
int lil__mem_bytes_add(struct mem_bytes *b, const void *p, size_t n);
/* Room for more bytes after b's; 0 or -1. */
int lil__mem_bytes_more(struct mem_bytes *b, size_t more);

/* Runs (run_mem.c). */
lil_status lil__mem_run_open(struct lil_store *st, struct lil_err *err,
                             const char *run_id, const struct lil_srun_opts *opts,
                             lil_rec_scan_fn fn, void *ud, struct lil_srun **out);
lil_status lil__mem_run_close(struct lil_srun *r, struct lil_err *err, bool ended);
lil_status lil__mem_run_append(struct lil_srun *r, struct lil_err *err,
                               const struct lil_rec *rec, enum lil_append_sync how);
lil_status lil__mem_run_announce(struct lil_srun *r, struct lil_err *err,
                                 const struct lil_rec *rec);
lil_status lil__mem_run_sync(struct lil_srun *r, struct lil_err *err);
lil_status lil__mem_run_walk(struct lil_srun *r, struct lil_err *err,
                             lil_rec_walk_fn fn, void *ud);
bool lil__mem_run_next_scanned(const struct lil_srun *r, uint64_t *cursor,
                               struct lil_rec *rec);
void lil__mem_run_info(const struct lil_srun *r, struct lil_srun_info *info);
int lil__mem_run_holder(const struct lil_srun *r, int last_opener);

/* Markers and stop requests (marker_mem.c). */
lil_status lil__mem_marker_enter(struct lil_store *st, struct lil_err *err,
                                 const char *name, struct lil_smarker **out);
lil_status lil__mem_marker_state(struct lil_smarker *h, struct lil_err *err,
                                 enum lil_smarker_state *state, lil_bytes *result);
lil_status lil__mem_marker_begin(struct lil_smarker *h, struct lil_err *err,
                                 const void *owner, size_t owner_len);
lil_status lil__mem_marker_finish(struct lil_smarker *h, struct lil_err *err,
                                  const void *result, size_t len);
lil_status lil__mem_marker_abandon(struct lil_smarker *h, struct lil_err *err);
lil_status lil__mem_marker_clear(struct lil_smarker *h, struct lil_err *err);
void lil__mem_marker_leave(struct lil_smarker *h);
lil_status lil__mem_stop_request(struct lil_store *st, struct lil_err *err,
                                 const char *run_id, const void *req, size_t len,
                                 bool *already);
lil_status lil__mem_stop_read(struct lil_store *st, struct lil_err *err,
                              const char *run_id, lil_bytes *out);
lil_status lil__mem_stop_clear(struct lil_store *st, struct lil_err *err,
                               const char *run_id);

#endif
