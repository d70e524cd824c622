/*
 * store_file.h -- inside the file store: its handle, and the markers
 * (marker_file.c) that share it.  Only src/store/ includes this header.
 */
#ifndef LIL_STORE_STORE_FILE_H
#define LIL_STORE_STORE_FILE_H

#include "journal/journal.h"
#include "store/store.h"

struct file_store {
    struct lil_store base;
    bool parent_synced; /* the store's name is durable (atomic access) */
};

/* The store's own key (key_file.c): struct lil_store's own_key. */
lil_status lil__store_file_own_key(struct lil_store *st, struct lil_err *err,
                                   bool create);

/* The rollback record of a keyed run (head_file.c): what authenticates it. */
struct lil_head_key {
    const char *run_id;
    const uint8_t *key;
    size_t key_len;
};

/* Read <dir>/<run id>.head into *out (*found false when there is none). */
lil_status lil__head_read(const struct lil_env *env, struct lil_err *err,
                          const char *dir, const struct lil_head_key *k,
                          struct journal_head *out, bool *found);
/* Replace it with h (never over a symlink), in place; durable (the file
 * and its name synced) when asked: a rotation's, since a record lagging
 * two segments behind the live one would refuse the run. */
lil_status lil__head_write(const struct lil_env *env, struct lil_err *err,
                           const char *dir, const struct lil_head_key *k,
                           const struct journal_head *h, bool durable);

/* A run's segments (segments_file.c; docs/format.md "Segments"). */
struct seg_walk_opts {
    const char *dir;    /* the store */
    const char *run_id; /* its run */
    const uint8_t *key; /* journal key or NULL */
    size_t key_len;
    size_t max_record;
};

/* The archive name of segment n of run_id into out, its directory
 * (<dir>/<run id>.seg) made (and its name synced) when missing. */
lil_status lil__seg_archive(const struct lil_env *env, struct lil_err *err,
                            const char *dir, const char *run_id, uint32_t n, char *out,
                            size_t cap);
/* Whether a new segment of run_id may ever have been begun: its directory
 * exists (lil__seg_archive makes it before the new segment's file), or
 * cannot be told missing.  No: no rotation's temporary file can be there. */
bool lil__seg_began(const struct lil_env *env, const char *dir, const char *run_id);
/* Walk the archived segments of a run whose live segment is live (open,
 * read-only), oldest kept first, then live itself: records in order,
 * without the links and copies of later segments; each segment checked to
 * follow the one before. */
lil_status lil__seg_walk(const struct lil_env *env, struct lil_err *err,
                         const struct seg_walk_opts *o, struct journal *live,
                         lil_rec_walk_fn fn, void *ud);
/* run_drop_segments of the file store. */
lil_status lil__seg_drop(struct lil_store *st, struct lil_err *err, const char *run_id,
                         unsigned keep, unsigned *dropped);

/* run_segments of the file store: the live segment, the oldest kept. */
lil_status lil__seg_info(struct lil_store *st, struct lil_err *err, const char *run_id,
                         struct lil_sseg_info *out);
/* Remove every segment file of run_id and their directory (a missing one
 * is no error); the journal itself is the caller's. */
lil_status lil__seg_remove_all(struct lil_store *st, struct lil_err *err,
                               const char *run_id);
/* After the live segment's check in rep (its live_segment set): the older
 * segments kept, each verified, and the links between all of them; the
 * first damage found replaces an intact verdict (old_damage set). */
lil_status lil__seg_check(struct lil_store *st, struct lil_err *err,
                          const struct seg_walk_opts *o, lil_check_report *rep);

/* Make the store's own name durable, once per handle. */
lil_status lil__store_file_sync_parent(struct file_store *fs, struct lil_err *err);

/* The marker operations of struct lil_store_ops (marker_file.c). */
lil_status lil__marker_file_enter(struct lil_store *st, struct lil_err *err,
                                  const char *name, struct lil_smarker **out);
lil_status lil__marker_file_state(struct lil_smarker *m, struct lil_err *err,
                                  enum lil_smarker_state *state, lil_bytes *result);
lil_status lil__marker_file_begin(struct lil_smarker *m, struct lil_err *err,
                                  const void *owner, size_t owner_len);
lil_status lil__marker_file_finish(struct lil_smarker *m, struct lil_err *err,
                                   const void *result, size_t len);
lil_status lil__marker_file_abandon(struct lil_smarker *m, struct lil_err *err);
lil_status lil__marker_file_clear(struct lil_smarker *m, struct lil_err *err);
void lil__marker_file_leave(struct lil_smarker *m);

/* The schedule operations of struct lil_store_ops (sched_file.c). */
lil_status lil__sched_file_put(struct lil_store *st, struct lil_err *err,
                               const char *id, const void *doc, size_t len,
                               bool replace);
lil_status lil__sched_file_get(struct lil_store *st, struct lil_err *err,
                               const char *id, lil_bytes *doc, int64_t *mark_ms);
lil_status lil__sched_file_del(struct lil_store *st, struct lil_err *err,
                               const char *id);
lil_status lil__sched_file_list(struct lil_store *st, struct lil_err *err,
                                lil_run_id_fn fn, void *ud);
lil_status lil__sched_file_mark(struct lil_store *st, struct lil_err *err,
                                const char *id, int64_t slot_ms);

#endif
