/*
 * journal.h -- one run's journal: open (recovery scan), append, group
 * commit, sync, close, walk, check.  The byte layout is in format.h.
 *
 * Thread rules: after open, append / sync_to / foreach may be called from
 * many threads at once.  Appends are serialized by the journal's mutex (the
 * chain orders them); syncs are shared: a thread that needs its record
 * durable waits for a sync already in flight that covers it, or becomes the
 * leader of the next one (group commit).
 *
 * Failure rule: after any failed write, fdatasync or ftruncate the journal
 * is poisoned; every later call returns LIL_E_POISONED (a retried fsync can
 * falsely succeed on Linux).  Reopen to recover.
 *
 * Lifetime: the key and payload pointers given to the scan callback point
 * into a read-only mapping of the journal that lives until close.
 */
#ifndef LIL_JOURNAL_JOURNAL_H
#define LIL_JOURNAL_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/env.h"
#include "base/record.h"
#include "journal/segment.h"

struct journal;

/* Records are struct lil_rec (base/record.h): flags carry
 * LIL_JF_FLAG_EFFECT; LIL_JF_FLAG_SETTLED is the journal's business. */

/* Called for each valid record during open; non-OK aborts the open with
 * that status (the callback fills err). */
typedef lil_status (*journal_scan_fn)(void *ud, const struct lil_rec *rec,
                                      struct lil_err *err);

/* What a store knows of a journal from elsewhere (its rollback record, see
 * store/file/head_file.c): the journal reached seq, the record at seq
 * carries chain, and the file's header carries salt.  An open given one
 * refuses a journal behind it (LIL_E_ROLLBACK) before it writes anything. */
#define LIL_JHEAD_SALT_LEN 16

struct journal_head {
    uint64_t seq;
    uint8_t salt[LIL_JHEAD_SALT_LEN];
    uint8_t chain[32];
};

struct journal_opts {
    lil_sync sync;              /* FULL, NORMAL or OFF (DEFAULT is resolved above) */
    bool readonly;              /* no lock, no create, no truncation, no append */
    bool create;                /* create the file when missing */
    size_t max_record;          /* largest record accepted (on read and write) */
    bool verify_chain;          /* verify the chain of every record (keyed: always) */
    const char *sync_parent_of; /* writable: also fsync this path's parent
                                   directory with the open's syncs, or NULL */
    const uint8_t *key;         /* journal key or NULL */
    size_t key_len;
    const char *run_id; /* written in the BEGIN record of a new journal */
    /* The caller vouches that no new segment of this journal was ever
     * begun: no "<path>.rot.*" file a rotation cut short can be beside it,
     * so a writable open does not read the directory to sweep them (which
     * costs a store of n runs n names per open). */
    bool no_rotation;
    /* The journal must reach this (or NULL): a missing or empty file, a
     * shorter journal, another file (salt) or another record at expect->seq
     * (chain) is LIL_E_ROLLBACK, and the open writes nothing (it neither
     * creates nor starts afresh). */
    const struct journal_head *expect;
};

/* Open (and create) the journal at path in directory dir.  Takes the
 * run's lock (LIL_E_LOCKED "... held by pid P" or "by another process"),
 * verifies the header, scans every record (calling scan for each), and
 * notes a torn tail, which is truncated before the first append.  A file
 * with no complete record is started afresh (writable, may create) or is
 * LIL_E_NOTFOUND.  *created tells whether the file was made by this call. */
lil_status lil__journal_open(const struct lil_env *env, struct lil_err *err,
                             const char *dir, const char *path,
                             const struct journal_opts *opts, journal_scan_fn scan,
                             void *ud, struct journal **out, bool *created);

/* Sync (unless poisoned or readonly), give back the preallocated space past
 * the end when it is more than 64 KiB (or whatever its size, after
 * lil__journal_give_back_all), unlock, unmap, close, free.  Returns the
 * status of that final sync. */
lil_status lil__journal_close(struct journal *j, struct lil_err *err);

/* Close is to give back all the preallocated space: nothing will be
 * appended to this journal again. */
void lil__journal_give_back_all(struct journal *j);

/* Append one record (written to the file, not synced).  *end receives the
 * offset just past it, to pass to lil__journal_sync_to. */
lil_status lil__journal_append(struct journal *j, struct lil_err *err,
                               const struct lil_rec *rec, uint64_t *end);

/* Write what sync full holds back for the next sync leader, without
 * syncing, so that other processes see it (the OPEN record).  Waits for a
 * sync in flight to end first (it writes what it took). */
lil_status lil__journal_flush(struct journal *j, struct lil_err *err);

/* Append one record and write it to the file before returning, in every
 * mode, without a sync: a crash of the process keeps it, and the next sync
 * of the journal (a commit that syncs, sync_all, close) makes it durable.
 * In sync full it writes the records held back for the next sync leader
 * with it (lil__journal_flush). */
lil_status lil__journal_append_written(struct journal *j, struct lil_err *err,
                                       const struct lil_rec *rec);

/* Make every byte below end durable (group commit).  LIL_OK at once when a
 * finished sync already covers it. */
lil_status lil__journal_sync_to(struct journal *j, struct lil_err *err, uint64_t end);

/* Append, then sync when the journal's mode asks for it: always for
 * FULL; for NORMAL only when must_sync; never for OFF. */
lil_status lil__journal_commit(struct journal *j, struct lil_err *err,
                               const struct lil_rec *rec, bool must_sync);

/* Sync everything appended so far, whatever the mode. */
lil_status lil__journal_sync_all(struct journal *j, struct lil_err *err);

/* Walk every record from the start, reading with pread (so records this
 * handle appended are seen).  fn returns non-zero to stop. */
typedef int (*journal_walk_fn)(void *ud, const struct lil_rec *rec);
lil_status lil__journal_foreach(struct journal *j, struct lil_err *err,
                                journal_walk_fn fn, void *ud);

/* What a walk needs of an open journal (check.c reads with pread). */
struct journal_view {
    const struct lil_env *env;
    int fd;
    const char *path;
};

lil_status lil__journal_view(const struct journal *j, struct journal_view *v);

/* Facts about the journal.  records: the seq of the last record (a first
 * file's count; a later segment's counts the segments before it too). */
uint64_t lil__journal_records(const struct journal *j);
uint64_t lil__journal_end(const struct journal *j);

/* Walk the records the open scan found and checked (not those appended
 * since): *off starts at 0; each call fills *r with the next record, in the
 * journal's mapping (valid until close), and moves *off past it.  False at
 * the end.  No locking: the scanned records never change. */
bool lil__journal_next_scanned(const struct journal *j, uint64_t *off,
                               struct lil_rec *r);
uint64_t lil__journal_written(struct journal *j); /* in the file so far */
int64_t lil__journal_created_ns(const struct journal *j);
int64_t lil__journal_last_ns(const struct journal *j);
bool lil__journal_keyed(const struct journal *j);
/* Poison the journal with err (a write of its run failed elsewhere: the
 * store's rollback record); returns err->code. */
lil_status lil__journal_poison(struct journal *j, struct lil_err *err);
/* The last record appended so far (its seq and chain) and the file's salt:
 * taken before a sync, what that sync makes durable. */
void lil__journal_head(struct journal *j, struct journal_head *out);
/* Where the open found a torn tail (0: none) and the intact records after
 * it (OPEN and CLOSE only). */
uint64_t lil__journal_torn(const struct journal *j, uint64_t *records_after);
lil_sync lil__journal_sync_mode(const struct journal *j);

/* Who holds the journal's lock, for a read-only handle: 0 nobody, pid (the
 * last opener) when that process still has the journal open, -1 another
 * process whose pid is not known (a child the opener forked, say). */
int lil__journal_holder(const struct journal *j, int pid);

/* Go on in a new segment (format.h, SEGMENTS; docs/format.md "Segments"):
 * sync everything, write the new file (header, BEGIN with the link to this
 * one, then recs, each flagged as the caller says) under a temporary name,
 * fdatasync and lock it, link this file to archive (whose directory must
 * exist; a link there already to this very file is accepted), fsync
 * archive's directory, rename the new file over path, fsync the directory.
 * The handle then appends to the new file; the records the open scanned
 * stay readable (lil__journal_next_scanned).  A crash at any point leaves
 * path naming either this file, whole, or the new one, whole.  Every step
 * but the last fsync leaves the journal usable when it fails; that one
 * poisons it.  The caller appends nothing meanwhile. */
lil_status lil__journal_rotate(struct journal *j, struct lil_err *err,
                               const char *archive, const struct lil_rec *recs,
                               size_t n);
/* Whether the handle went on in a new segment since its open: the records
 * the open scanned are no longer the file's. */
bool lil__journal_rotated(const struct journal *j);
/* The number of the segment open now: 0 for a run's first file. */
uint32_t lil__journal_segment(const struct journal *j);
/* A later segment's link and the seq of its BEGIN, as the open found them;
 * false for a run's first file. */
bool lil__journal_link(const struct journal *j, struct journal_link *link,
                       uint64_t *base_seq);

/* Verify (and with repair, truncate at the first damage) the file at
 * path.  See lil_run_check in lil.h for the report. */
lil_status lil__journal_check(const struct lil_env *env, struct lil_err *err,
                              const char *dir, const char *path, const uint8_t *key,
                              size_t key_len, bool repair, lil_check_report *report);

/* Verify a journal image held in memory (path names it in messages), as
 * lil__journal_check verifies a file, into the report (its file_bytes is
 * left alone).  LIL_OK when the check ran (the verdict is in the report);
 * LIL_E_KEY, LIL_E_VERSION or LIL_E_NOMEM when it could not. */
lil_status lil__journal_check_image(const struct lil_env *env, struct lil_err *err,
                                    const char *path, const uint8_t *data, uint64_t len,
                                    const uint8_t *key, size_t key_len,
                                    lil_check_report *report);

/* Scan a journal image held in memory (no file, no lock): what open does,
 * without side effects.  For the fuzzer and for unit tests.  Returns LIL_OK
 * (with *valid_end and *records) or the error open would give. */
lil_status lil__journal_scan_buffer(const struct lil_env *env, struct lil_err *err,
                                    const uint8_t *data, size_t len, const uint8_t *key,
                                    size_t key_len, size_t max_record,
                                    uint64_t *valid_end, uint64_t *records);

#endif
