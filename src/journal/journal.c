/*
 * journal.c -- one run's journal file: open with recovery, append, group
 * commit, close.  The byte layout is in format.h; the scan in scan.c.
 *
 * Durability comes from ordering:
 *   1. a new journal is written in full (header + BEGIN) to a temporary
 *      file, fdatasync'd, then linked to its name and the directory
 *      fsync'd, so a journal file never exists without a valid header
 *      (one that a failing disk or a copy cut short anyway, with no
 *      complete record, is started afresh the same way: restart);
 *   2. a writable open takes the OFD lock first, then scans, truncates a
 *      torn tail, and (full/normal) fdatasyncs, so that what it found is
 *      durable before it is replayed or anything is appended after it (the
 *      SETTLED flag), unless the last record is CLOSE: a clean close writes
 *      it after its last sync, so a clean restart has nothing to sync (4).
 *      It also makes the names durable (directory fsyncs) unless the
 *      journal holds a record after BEGIN, which proves an earlier open did;
 *   3. records are written whole at the end, into space preallocated in
 *      chunks (an fdatasync that must also grow the file costs more); the
 *      end is found by checksums, never by the file size;
 *   4. sync full: a commit returns only after an fdatasync that covers it.
 *      Appends only encode the record into a batch in memory; the thread
 *      that leads the next sync writes the whole batch with one pwrite and
 *      fdatasyncs it while the others wait (group commit, see "syncing"
 *      below).  Writing in the leader matters: a pwrite into the page that
 *      an fdatasync is writing back waits for that I/O (stable pages), so
 *      threads that wrote for themselves would queue behind every sync
 *      instead of joining the next one.  The leader also writes zeros
 *      ahead of the records into the preallocated space, so that most
 *      syncs flush data only.  Modes normal and off write each record at
 *      once, so a process crash loses nothing they acknowledged;
 *   5. a lazy append (lil__journal_append_written) is written at once in
 *      every mode and synced by none: in sync full it writes the batch
 *      itself (after the sync in flight, if any, has written its own), so
 *      a process crash keeps it, and the next sync, which covers the whole
 *      file, makes it durable.
 * After a failed write, fdatasync or ftruncate the journal is poisoned.
 */
#include "journal/journal.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/hash.h"
#include "journal/format.h"
#include "journal/image.h"
#include "journal/scan.h"
#include "journal/segment.h"
#include "os/group.h"
#include "os/os.h"

#define PREALLOC_MIN (64u * 1024u)
/* How long a gatherer of a sync waits for the other threads at most (the
 * kernel's timer slack, 50 µs by default, may add to it); with a quarter
 * of the last fdatasync, half of which is the rule (os/group.h), the
 * gatherer of 8 threads more often gave up before the last of them came,
 * and the batch split in two. */
#define GATHER_MAX_NS 200000
#define PREALLOC_MAX  (4u * 1024u * 1024u)
/* Close keeps this much of the preallocated space past the journal's end
 * for the next process and gives back the rest (all of it once the run has
 * ended): a process that resumes and appends a few records then has no file
 * size to make durable, and the zeros its open reads past the end stay
 * few. */
#define KEPT_TAIL_MAX PREALLOC_MIN

struct journal {
    const struct lil_env *env;
    int fd;
    char *path;
    char *dir;
    char *run_id; /* for log lines */
    bool readonly;
    int pid; /* of the process that opened it (a forked child does no I/O) */
    lil_sync sync;
    size_t max_record;
    struct lil_mac *mac;
    uint8_t *map; /* what open found: a mapping (writer) or a copy (reader) */
    size_t map_len;

    pthread_mutex_t mu;
    uint8_t chain[LIL_SHA256_LEN];
    uint64_t seq;
    uint64_t end;       /* offset past the last record appended */
    uint64_t scanned;   /* offset past the last record the open scan found */
    uint64_t written;   /* every byte below this is in the file */
    uint64_t alloc_end; /* file size; UINT64_MAX when preallocation is off */
    uint64_t zeroed;    /* sync full: bytes below this are records or zeros */
    uint64_t records;
    uint64_t torn_off;   /* what the open found: a torn tail at (0: none) */
    uint64_t torn_after; /* and the intact records after it */
    int64_t created_ns;
    int64_t last_ns;
    bool poisoned;
    bool opened;                /* open succeeded */
    const char *sync_parent_of; /* during open: journal_opts.sync_parent_of */
    bool give_back_all;         /* close gives back all the preallocated space */
    struct lil_group group;     /* group commit (os/group.h): group.durable:
                                   bytes below it are durable (or settled) */
    uint64_t flush_off;         /* the leader's batch goes there */
    uint64_t zfrom, zto;        /* and zeros there */
    struct lil_err poison;
    struct lil_buf enc;      /* normal, off: the record being written */
    struct lil_buf batch;    /* full: records appended, not yet written */
    struct lil_buf flushing; /* full: the batch a sync leader is writing */

    /* segments (lil__journal_rotate) */
    uint8_t salt[LIL_JF_SALT_LEN]; /* of the file open now */
    uint32_t segment;              /* its number: 0 for a run's first file */
    struct journal_link link;      /* a later segment's, as the open found it */
    uint64_t base_seq;             /* and the seq of its BEGIN */
    bool rotated;                  /* fd is a later segment than map's */
    uint8_t *key;                  /* writable: a copy of the journal key */
    size_t key_len;
    /* After a rotation map stays the first file's mapping, and scanned its
     * end: the records the open scanned stay readable until close (the
     * engine's index points into them); fd is the new segment's. */
};

static const struct lil_group_ops group_ops; /* syncing, below */

static lil_status poisoned_err(struct journal *j, struct lil_err *err)
{
    return lil__seterr(err, LIL_E_POISONED, j->poison.sys_errno,
                       "%s: an earlier write or sync failed (%s); reopen the run",
                       j->path, j->poison.msg);
}

static lil_status poison(struct journal *j, struct lil_err *err)
{
    if (j->poisoned)
        return err->code; /* the first failure is the one reported */
    j->poisoned = true;
    lil__copyerr(&j->poison, err);
    lil__log(j->env, LIL_LOG_ERROR, "event=poisoned run=%s path=%s reason=\"%s\"",
             j->run_id, j->path, err->msg);
    return err->code;
}

/* ---- creating a journal --------------------------------------------- */

static lil_status first_records(struct journal *j, struct lil_err *err,
                                const struct journal_opts *opts, uint8_t *header)
{
    struct lil_rec begin = {0};
    size_t len;
    lil_status rc;

    begin.type = LIL_REC_BEGIN;
    begin.key = (const uint8_t *)opts->run_id;
    begin.key_len = opts->run_id ? strlen(opts->run_id) : 0;
    begin.ts_ns = lil__wall_ns();
    len = LIL_JF_REC_OVERHEAD + begin.key_len;
    rc = lil__buf_add(&j->enc, header, LIL_JF_HEADER_LEN);
    if (rc == LIL_OK)
        rc = lil__buf_reserve(&j->enc, len);
    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "out of memory");
    lil__mac2(j->mac, header, LIL_JF_HEADER_LEN, NULL, 0, j->chain);
    rc = lil__encode_record(j->mac, j->chain, 1, &begin, LIL_JF_FLAG_SETTLED,
                            j->enc.data + LIL_JF_HEADER_LEN, len);
    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "out of memory");
    j->enc.len += len;
    return LIL_OK;
}

/* Header and BEGIN, synced, in a new temporary file beside the journal
 * (lil__os_create_temp: a name nobody can guess, O_EXCL, never a link);
 * its name into tmp ("" when none was made). */
static lil_status write_new_file(struct journal *j, struct lil_err *err, char *tmp,
                                 size_t cap, const struct journal_opts *opts)
{
    uint8_t header[LIL_JF_HEADER_LEN];
    int fd = -1;
    lil_status rc;

    tmp[0] = '\0';
    rc = lil__mac_new(j->env, err, opts->key, opts->key_len, &j->mac);
    if (rc == LIL_OK)
        rc = lil__format_header(err, opts->key, opts->key_len, lil__wall_ns(), header);
    if (rc == LIL_OK)
        rc = first_records(j, err, opts, header);
    if (rc == LIL_OK)
        rc = lil__os_create_temp(j->env, err, j->path, "new", tmp, cap, &fd);
    if (rc != LIL_OK && fd < 0)
        tmp[0] = '\0';
    if (rc == LIL_OK)
        rc = lil__os_pwrite_all(j->env, err, fd, j->enc.data, j->enc.len, 0, tmp);
    if (rc == LIL_OK)
        rc = lil__os_fdatasync(j->env, err, fd, tmp);
    lil__os_close(j->env, fd);
    lil__buf_reset(&j->enc);
    lil__mac_free(j->env, j->mac);
    j->mac = NULL;
    return rc;
}

/* Create path atomically: temp file, fdatasync, link (fails if another
 * process created it first, which is fine), directory fsync. */
static lil_status create_file(struct journal *j, struct lil_err *err,
                              const struct journal_opts *opts, bool *created)
{
    char tmp[4200];
    lil_status rc;

    /* threads and processes may race to create a run: each its own name */
    rc = write_new_file(j, err, tmp, sizeof(tmp), opts);
    if (rc == LIL_OK) {
        if (j->env->os->link(tmp, j->path) == 0)
            *created = true;
        else if (errno != EEXIST)
            rc = lil__seterr(err, LIL_E_IO, errno, "link %s: %s", j->path,
                             lil__errstr(errno));
    }
    if (tmp[0])
        j->env->os->unlink(tmp);
    if (rc == LIL_OK && *created)
        rc = lil__os_fsync_dir(j->env, err, j->dir);
    return rc;
}

/* ---- opening ---------------------------------------------------------- */

static lil_status open_fd(struct journal *j, struct lil_err *err,
                          const struct journal_opts *opts, bool *created)
{
    int flags = (j->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
    lil_status rc = lil__os_open_regular(j->env, err, j->path, flags, 0, &j->fd);

    if (rc == LIL_OK || err->sys_errno != ENOENT)
        return rc;
    if (opts->expect)
        return lil__seterr(err, LIL_E_ROLLBACK, ENOENT,
                           "run %s: journal %s was deleted (rolled back to seq 0, "
                           "last known %llu)",
                           j->run_id, j->path, (unsigned long long)opts->expect->seq);
    if (j->readonly || !opts->create)
        return lil__seterr(err, LIL_E_NOTFOUND, ENOENT, "%s does not exist", j->path);
    rc = create_file(j, err, opts, created);
    if (rc == LIL_OK)
        rc = lil__os_open_regular(j->env, err, j->path, flags, 0, &j->fd);
    return rc;
}

static lil_status map_file(struct journal *j, struct lil_err *err)
{
    uint64_t size = 0;
    lil_status rc =
        lil__os_load(j->env, err, j->fd, j->path, !j->readonly, &j->map, &size);

    j->map_len = (size_t)size;
    j->alloc_end = size;
    return rc;
}

static lil_status scan_file(struct journal *j, struct lil_err *err,
                            const struct journal_opts *opts, journal_scan_fn scan,
                            void *ud, struct scan_result *res)
{
    lil_status rc;

    if (lil__scan_header_cut(j->map, j->map_len)) { /* no record: see restart */
        memset(res, 0, sizeof(*res));
        res->torn = j->map_len > 0;
        return LIL_OK;
    }
    rc = lil__scan_header(j->env, err, j->path, j->map, j->map_len, opts->key,
                          opts->key_len, &j->mac, res);
    res->mark_seq = opts->expect ? opts->expect->seq : 0;
    if (rc == LIL_OK)
        rc = lil__scan_records(j->env, err, j->path, j->map, j->map_len, j->mac,
                               opts->verify_chain || opts->key, j->max_record, scan, ud,
                               res);
    if (rc == LIL_E_CORRUPT && res->damaged)
        lil__log(j->env, LIL_LOG_WARN,
                 "event=damaged run=%s path=%s offset=%llu records_after=%llu "
                 "steps_after=%llu readonly=%d",
                 j->run_id, j->path, (unsigned long long)res->damage_off,
                 (unsigned long long)res->after_records,
                 (unsigned long long)res->after_steps, (int)j->readonly);
    if (rc != LIL_OK)
        return rc;
    memcpy(j->chain, res->chain, LIL_SHA256_LEN);
    j->seq = res->seq;
    j->end = res->end;
    j->scanned = res->end;
    j->written = res->end;
    j->records = res->records;
    j->torn_off = res->torn ? res->end : 0;
    j->torn_after = res->torn ? res->after_records : 0;
    j->created_ns = res->created_ns;
    j->last_ns = res->last_ns;
    memcpy(j->salt, j->map + LIL_JF_H_SALT, LIL_JF_SALT_LEN);
    j->segment = res->segment ? res->link.segment : 0;
    j->link = res->link;
    j->base_seq = res->base_seq;
    return LIL_OK;
}

/* The next chunk of preallocated space for a journal of end bytes: a
 * quarter of it, at least PREALLOC_MIN, at most PREALLOC_MAX, in 4 KiB. */
static uint64_t prealloc_chunk(uint64_t end)
{
    uint64_t chunk = end / 4;

    chunk = chunk < PREALLOC_MIN   ? PREALLOC_MIN
            : chunk > PREALLOC_MAX ? PREALLOC_MAX
                                   : chunk;
    return (chunk + 4095) & ~(uint64_t)4095;
}

/* The names a writable open makes durable, in every sync mode, before it
 * returns: the journal's own (its creator may have died before its
 * directory fsync) and, when asked, the store's (journal_opts.sync_parent_of).
 * A journal that holds a valid record after BEGIN needs neither: that record
 * was appended after a writable open had returned, so after both were
 * durable (the store's by that handle's first writable open at the latest). */
static lil_status make_names_durable(struct journal *j, struct lil_err *err,
                                     const struct scan_result *res)
{
    lil_status rc;

    if (res->records > 1)
        return LIL_OK;
    rc = lil__os_fsync_dir(j->env, err, j->dir);
    if (rc == LIL_OK && j->sync_parent_of)
        rc = lil__os_fsync_parent(j->env, err, j->sync_parent_of);
    return rc;
}

/* Whether what the scan found was durable already: its last record is
 * CLOSE, which a process appends as it closes the run, right after a sync
 * that covered everything before it (never at sync=off).  Everything but
 * that record is durable then, and a clean restart needs no fdatasync of
 * its own; after a crash the last record is something else. */
static bool closed_after_sync(const struct scan_result *res)
{
    return res->last_type == LIL_REC_CLOSE && !res->torn;
}

/* Writable open, after the scan: cut a torn tail, make what was found
 * durable (full, normal) unless a CLOSE says it is, make the names durable
 * (in every mode: the run itself must outlive a power cut once it has been
 * opened, and its creator may have died before its directory fsync), and
 * note up to where the journal is durable: records appended after that
 * point are SETTLED (format.h).  At sync=off what the open found intact
 * counts as settled. */
static lil_status settle(struct journal *j, struct lil_err *err,
                         const struct scan_result *res)
{
    bool durable = closed_after_sync(res);
    lil_status rc = LIL_OK;

    if (res->torn) {
        lil__log(j->env, LIL_LOG_WARN,
                 "event=torn_tail run=%s path=%s offset=%llu bytes=%llu "
                 "records_after=%llu",
                 j->run_id, j->path, (unsigned long long)res->end,
                 (unsigned long long)(j->alloc_end - res->end),
                 (unsigned long long)res->after_records);
        rc = lil__os_ftruncate(j->env, err, j->fd, res->end, j->path);
        j->alloc_end = res->end;
    }
    if (rc == LIL_OK && j->sync != LIL_SYNC_OFF && !durable)
        rc = lil__os_fdatasync(j->env, err, j->fd, j->path); /* a cut too */
    if (rc == LIL_OK)
        rc = make_names_durable(j, err, res);
    lil__group_settled(&j->group,
                       j->sync != LIL_SYNC_OFF && durable ? res->last_off : j->end);
    j->written = j->end;
    return rc;
}

/* The holder named is the pid of the last OPEN record (with no CLOSE after
 * it) if that process still has the journal open.  The lock belongs to an
 * open file description, which a child forked without exec shares: when
 * the opener has closed the run or is gone, the holder is such a child, or
 * a process between taking the lock and writing its OPEN record, and its
 * pid is not known. */
static lil_status holder_message(struct journal *j, struct lil_err *err,
                                 const struct journal_opts *opts)
{
    int pid = lil__journal_holder_pid(j->env, j->path, opts->key, opts->key_len);
    const char *id = opts->run_id ? opts->run_id : j->path;
    int has = lil__os_pid_has_open(j->env, pid, j->fd);

    if (pid > 0 && has != 0)
        return lil__seterr(err, LIL_E_LOCKED, 0, "run %s is held by pid %d", id, pid);
    if (pid > 0)
        return lil__seterr(err, LIL_E_LOCKED, 0,
                           "run %s is held by another process (pid %d, the last to "
                           "open it, no longer has it open: a process it forked "
                           "without exec may hold it)",
                           id, pid);
    return lil__seterr(err, LIL_E_LOCKED, 0, "run %s is held by another process", id);
}

static struct journal *journal_new(const struct lil_env *env, const char *dir,
                                   const char *path, const struct journal_opts *opts)
{
    struct journal *j = lil__calloc(env, 1, sizeof(*j));

    if (!j)
        return NULL;
    j->env = env;
    j->fd = -1;
    j->readonly = opts->readonly;
    j->pid = lil__os_self_pid();
    j->sync_parent_of = opts->sync_parent_of; /* used by writable opens only */
    j->sync = opts->sync;
    j->max_record = opts->max_record;
    lil__buf_init(&j->enc, env, lil__record_limit(opts->max_record));
    lil__buf_init(&j->batch, env, (size_t)-1);
    lil__buf_init(&j->flushing, env, (size_t)-1);
    j->path = lil__strdup(env, path);
    j->dir = lil__strdup(env, dir);
    j->run_id = lil__strdup(env, opts->run_id ? opts->run_id : "");
    pthread_mutex_init(&j->mu, NULL);
    lil__group_init(&j->group, &group_ops, j, &j->mu, &j->poisoned,
                    j->sync == LIL_SYNC_FULL ? GATHER_MAX_NS : 0);
    if (!j->path || !j->dir || !j->run_id) {
        lil__journal_close(j, NULL);
        return NULL;
    }
    return j;
}

static bool still_in_place(struct journal *j);
static void sweep_rotation_temps(struct journal *j);

/* Open the file (creating it when missing), lock it (writable) and scan it.
 * *moved: the name leads to another file now (a new segment put in place
 * between this open and its lock): open again. */
static lil_status open_scan(struct journal *j, struct lil_err *err,
                            const struct journal_opts *opts, journal_scan_fn scan,
                            void *ud, struct scan_result *res, bool *created,
                            bool *moved)
{
    lil_status rc = open_fd(j, err, opts, created);

    if (rc == LIL_OK && !j->readonly) {
        rc = lil__os_lock_try(j->env, err, j->fd, j->path);
        if (rc == LIL_E_LOCKED)
            rc = holder_message(j, err, opts);
    }
    if (rc == LIL_OK && !j->readonly && !still_in_place(j)) {
        *moved = true; /* a new segment took the name: open that one */
        return LIL_OK;
    }
    if (rc == LIL_OK && !j->readonly && !opts->no_rotation)
        sweep_rotation_temps(j);
    if (rc == LIL_OK)
        rc = map_file(j, err);
    if (rc == LIL_OK)
        rc = scan_file(j, err, opts, scan, ud, res);
    return rc;
}

/* ---- a journal whose creation was cut short ------------------------------ */

/* A new segment is written under "<path>.rot.<random>" (put_in_place),
 * only while the run's lock is held; so once this handle holds the lock,
 * any such file is what a crash in the middle of a rotation left: remove
 * it (best effort: what cannot be removed stays, harmless).  The files of
 * a journal being created are named ".new." and are not touched. */
#define ROTATION_TAG "rot"

static void sweep_rotation_temps(struct journal *j)
{
    const char *slash = strrchr(j->path, '/');
    const char *base = slash ? slash + 1 : j->path;
    char dir[4200], prefix[512], path[4700];
    size_t plen;
    DIR *d;
    struct dirent *e;

    if (snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - j->path) : 1,
                 slash ? j->path : ".") >= (int)sizeof(dir) ||
        snprintf(prefix, sizeof(prefix), "%s.%s.", base, ROTATION_TAG) >=
            (int)sizeof(prefix))
        return;
    plen = strlen(prefix);
    d = opendir(dir);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, plen) == 0 &&
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
            (void)j->env->os->unlink(path);
    (void)closedir(d);
}

/* Whether the name j->path still leads to the file open at j->fd. */
static bool still_in_place(struct journal *j)
{
    struct stat a, b;
    int fd =
        j->env->os->open(j->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
    bool same;

    if (fd < 0)
        return false;
    same = j->env->os->fstat(fd, &a) == 0 && j->env->os->fstat(j->fd, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    j->env->os->close(fd);
    return same;
}

/*
 * A journal with no complete record: it ends inside its header or inside
 * its first record (BEGIN), which only a creation cut short leaves (a
 * journal is created whole, header and BEGIN synced before it gets its
 * name, so it takes a power cut that loses synced bytes, or a copy cut
 * short).  No open ever returned on it, so nothing in it was acknowledged.
 * A read-only open, or one that may not create, finds no run
 * (LIL_E_NOTFOUND, and nothing is written).  A writable open starts it
 * afresh the way a journal is created: header and BEGIN written to a
 * temporary file and fdatasync'd (in every sync mode), renamed over the
 * old file while this open holds the old file's lock, the directory
 * fsync'd; then the open starts again on the new file.  A process that
 * opened the old file too and takes its lock after this one let go finds
 * that the name has moved on, and opens again as well.
 */
static lil_status restart(struct journal *j, struct lil_err *err,
                          const struct journal_opts *opts, bool *created)
{
    char tmp[4200];
    lil_status rc;

    if (j->readonly || !opts->create)
        return lil__seterr(err, LIL_E_NOTFOUND, 0,
                           "run %s does not exist yet: %s holds no complete record "
                           "(%llu bytes; its creation was cut short, nothing was "
                           "acknowledged); a writable open starts it afresh",
                           j->run_id, j->path, (unsigned long long)j->map_len);
    if (!still_in_place(j))
        return LIL_OK; /* started afresh by another process */
    lil__log(j->env, LIL_LOG_WARN,
             "event=restart run=%s path=%s bytes=%llu reason=\"no complete record: "
             "its creation was cut short\"",
             j->run_id, j->path, (unsigned long long)j->map_len);
    lil__mac_free(j->env, j->mac);
    j->mac = NULL;
    rc = write_new_file(j, err, tmp, sizeof(tmp), opts);
    if (rc == LIL_OK && j->env->os->rename(tmp, j->path) != 0)
        rc = lil__seterr(err, LIL_E_IO, errno, "rename %s to %s: %s", tmp, j->path,
                         lil__errstr(errno));
    if (rc != LIL_OK && tmp[0])
        j->env->os->unlink(tmp);
    if (rc == LIL_OK)
        rc = lil__os_fsync_dir(j->env, err, j->dir);
    *created = rc == LIL_OK;
    return rc;
}

/* ---- a journal behind what is known of it (rollback) ------------------------ */

_Static_assert(LIL_JHEAD_SALT_LEN == LIL_JF_SALT_LEN, "salt length differs");
_Static_assert(sizeof(((struct journal_head *)0)->chain) == LIL_SHA256_LEN,
               "chain length differs");

/* After the scan, before anything is written: the journal must reach what
 * opts->expect knows of it (journal.h). */
static lil_status check_expect(struct journal *j, struct lil_err *err,
                               const struct journal_head *e,
                               const struct scan_result *res)
{
    unsigned long long m = (unsigned long long)e->seq;

    if (res->records == 0 || j->map_len < LIL_JF_HEADER_LEN)
        return lil__seterr(err, LIL_E_ROLLBACK, 0,
                           "run %s: journal %s rolled back to seq 0 (last known %llu): "
                           "it holds no record",
                           j->run_id, j->path, m);
    if (res->segment && e->seq < res->base_seq &&
        memcmp(res->link.prev_salt, e->salt, LIL_JF_SALT_LEN) == 0 &&
        (e->seq + 1 < res->base_seq ||
         memcmp(res->link.prev_chain, e->chain, LIL_SHA256_LEN) == 0))
        return LIL_OK; /* known of the segment before: this one follows it */
    if (memcmp(j->map + LIL_JF_H_SALT, e->salt, LIL_JF_SALT_LEN) != 0)
        return lil__seterr(err, LIL_E_ROLLBACK, 0,
                           "run %s: journal %s was replaced by another journal (last "
                           "known seq %llu of a file with another salt)",
                           j->run_id, j->path, m);
    if (res->seq < e->seq)
        return lil__seterr(
            err, LIL_E_ROLLBACK, 0,
            "run %s: journal %s rolled back to seq %llu (last known %llu)", j->run_id,
            j->path, (unsigned long long)res->seq, m);
    if (!res->marked || memcmp(res->mark_chain, e->chain, LIL_SHA256_LEN) != 0)
        return lil__seterr(err, LIL_E_ROLLBACK, 0,
                           "run %s: journal %s was replaced: its record at seq %llu is "
                           "not the one last known",
                           j->run_id, j->path, m);
    return LIL_OK;
}

/* Before opening again: let go of the file, its lock and its mapping. */
static void let_go(struct journal *j)
{
    lil__os_unload(j->env, j->map, j->map_len, !j->readonly);
    j->map = NULL;
    j->map_len = 0;
    lil__os_close(j->env, j->fd);
    j->fd = -1;
    lil__mac_free(j->env, j->mac);
    j->mac = NULL;
}

lil_status lil__journal_open(const struct lil_env *env, struct lil_err *err,
                             const char *dir, const char *path,
                             const struct journal_opts *opts, journal_scan_fn scan,
                             void *ud, struct journal **out, bool *created)
{
    struct journal *j = journal_new(env, dir, path, opts);
    struct scan_result res;
    lil_status rc = LIL_OK;

    *out = NULL;
    *created = false;
    if (!j)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    memset(&res, 0, sizeof(res));
    for (int round = 0, moves = 0; rc == LIL_OK; round++) {
        bool moved = false;

        rc = open_scan(j, err, opts, scan, ud, &res, created, &moved);
        if (rc == LIL_OK && moved && moves++ < 100) {
            let_go(j);
            round--;
            continue;
        }
        if (rc == LIL_OK && opts->expect)
            rc = check_expect(j, err, opts->expect, &res);
        if (rc != LIL_OK || res.records > 0)
            break;
        if (round == 3) {
            rc = lil__seterr(err, LIL_E_IO, 0,
                             "%s: started afresh, and still holds no record", path);
            break;
        }
        rc = restart(j, err, opts, created);
        let_go(j);
    }
    if (rc == LIL_OK && !j->readonly)
        rc = settle(j, err, &res);
    if (rc == LIL_OK && !j->readonly && opts->key) {
        j->key = lil__malloc(env, opts->key_len ? opts->key_len : 1);
        if (!j->key)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        else
            memcpy(j->key, opts->key, opts->key_len);
        j->key_len = opts->key_len;
    }
    if (rc != LIL_OK) {
        j->poisoned = true; /* nothing to sync at close */
        lil__journal_close(j, NULL);
        return rc;
    }
    j->opened = true;
    j->sync_parent_of = NULL; /* borrowed for the open only */
    *out = j;
    return LIL_OK;
}

/* ---- appending -------------------------------------------------------- */

static lil_status preallocate(struct journal *j, struct lil_err *err, uint64_t need)
{
    uint64_t chunk = prealloc_chunk(j->end);
    int r;

    if (j->alloc_end == UINT64_MAX || need <= j->alloc_end)
        return LIL_OK;
    if (chunk < need - j->alloc_end)
        chunk = need - j->alloc_end;
    chunk = (chunk + 4095) & ~(uint64_t)4095;
    do
        r = j->env->os->fallocate(j->fd, 0, (off_t)j->alloc_end, (off_t)chunk);
    while (r < 0 && errno == EINTR);
    if (r == 0) {
        j->alloc_end += chunk;
        return LIL_OK;
    }
    if (errno == EOPNOTSUPP || errno == ENOSYS) {
        j->alloc_end = UINT64_MAX; /* grow by appending */
        return LIL_OK;
    }
    lil__seterr(err, LIL_E_IO, errno, "fallocate %s: %s", j->path, lil__errstr(errno));
    return poison(j, err); /* the step it was for can never be journaled now */
}

static lil_status check_writable(struct journal *j, struct lil_err *err)
{
    if (j->poisoned)
        return poisoned_err(j, err);
    if (j->readonly)
        return lil__seterr(err, LIL_E_INVAL, 0, "%s is open read-only", j->path);
    return LIL_OK;
}

/* Encode rec at the end of b (after emptying it first when fresh). */
static lil_status encode(struct journal *j, struct lil_err *err,
                         const struct lil_rec *rec, size_t len, struct lil_buf *b,
                         bool fresh)
{
    struct lil_rec r = *rec;
    uint8_t flags = (uint8_t)(rec->flags & ~LIL_JF_FLAG_SETTLED);
    lil_status rc;

    if (j->group.durable >= j->end)
        flags |= LIL_JF_FLAG_SETTLED;
    if (!r.ts_ns)
        r.ts_ns = lil__wall_ns();
    if (fresh)
        lil__buf_reset(b);
    rc = lil__buf_reserve(b, len);
    if (rc == LIL_OK)
        rc = lil__encode_record(j->mac, j->chain, j->seq + 1, &r, flags,
                                b->data + b->len, len);
    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "out of memory encoding a record");
    b->len += len;
    j->last_ns = r.ts_ns;
    return LIL_OK;
}

/* Under mu: check, preallocate, and encode rec where it goes: for sync
 * full at the tail of the batch that the next sync leader writes; else
 * into enc, written here and now.  *end receives the record's end. */
static lil_status append_locked(struct journal *j, struct lil_err *err,
                                const struct lil_rec *rec, uint64_t *end)
{
    size_t len = LIL_JF_REC_OVERHEAD + rec->key_len + rec->payload_len;
    bool batched = j->sync == LIL_SYNC_FULL;
    struct lil_buf *b = batched ? &j->batch : &j->enc;
    lil_status rc = check_writable(j, err);

    if (rc != LIL_OK)
        return rc;
    if (rec->key_len > LIL_JF_KEY_MAX || rec->payload_len > j->max_record)
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "record of %zu bytes is over the limit of %zu bytes",
                           rec->payload_len, j->max_record);
    rc = preallocate(j, err, j->end + len);
    if (rc == LIL_OK)
        rc = encode(j, err, rec, len, b, !batched);
    if (rc != LIL_OK)
        return rc;
    if (!batched) {
        rc = lil__os_pwrite_all(j->env, err, j->fd, b->data, len, j->end, j->path);
        if (rc != LIL_OK)
            return poison(j, err);
        j->written = j->end + len;
    }
    j->seq++;
    j->records++;
    lil__group_added(&j->group);
    j->end += len;
    *end = j->end;
    return LIL_OK;
}

lil_status lil__journal_append(struct journal *j, struct lil_err *err,
                               const struct lil_rec *rec, uint64_t *end)
{
    lil_status rc;

    pthread_mutex_lock(&j->mu);
    rc = append_locked(j, err, rec, end);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* Under mu, sync full: write the batch (records held back for the next
 * sync leader) to the file now, without a sync.  A sync in flight took the
 * batch before this one and writes it, then zeros after it: wait until it
 * ends, and again when another starts meanwhile (that one took these
 * records too, and writes them itself). */
static lil_status write_batch(struct journal *j, struct lil_err *err)
{
    lil_status rc;

    lil__group_wait_idle(&j->group);
    if (j->poisoned)
        return poisoned_err(j, err);
    if (!j->batch.len)
        return LIL_OK;
    rc = lil__os_pwrite_all(j->env, err, j->fd, j->batch.data, j->batch.len, j->written,
                            j->path);
    if (rc != LIL_OK)
        return poison(j, err);
    j->written += j->batch.len;
    lil__buf_reset(&j->batch);
    return LIL_OK;
}

lil_status lil__journal_flush(struct journal *j, struct lil_err *err)
{
    lil_status rc = LIL_OK;

    pthread_mutex_lock(&j->mu);
    if (j->sync == LIL_SYNC_FULL)
        rc = write_batch(j, err);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

lil_status lil__journal_append_written(struct journal *j, struct lil_err *err,
                                       const struct lil_rec *rec)
{
    uint64_t end;
    lil_status rc;

    pthread_mutex_lock(&j->mu);
    rc = append_locked(j, err, rec, &end);
    if (rc == LIL_OK && j->sync == LIL_SYNC_FULL)
        rc = write_batch(j, err);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* ---- syncing (group commit: os/group.h) -------------------------------- */

/*
 * Sync full writes zeros ahead of the records.  Preallocated space is
 * "unwritten" to the file system (fallocate), and the fdatasync after the
 * first write into one of its blocks must also make that block written
 * space, a metadata update: such a sync took about a third longer here
 * (ext4 on a virtio disk).  One step a sync crosses into a new block at
 * every 15th sync; a batch of 8 steps at every other one.  So the leader
 * also writes zeros after the records, ZERO_AHEAD bytes at a time, within
 * the preallocated space: one sync makes them written space, and the
 * syncs after it flush data only (PostgreSQL fills its WAL segments with
 * zeros for the same reason).  Zeros past the end are what a reader of
 * preallocated space sees anyway (format.md, "End of journal").  Not at a
 * handle's first sync: a process that resumes, runs a step and exits would
 * pay for zeros it never uses.  Under mu: the range [*from, *to) to write
 * now, if any.
 */
#define ZERO_AHEAD (64u * 1024u)

static void zero_range(struct journal *j, uint64_t target, uint64_t *from, uint64_t *to)
{
    *from = *to = 0;
    if (j->sync != LIL_SYNC_FULL || j->alloc_end == UINT64_MAX)
        return;
    if (j->group.last_ns <= 0)
        return; /* this handle's first sync */
    if (j->zeroed < target)
        j->zeroed = target;
    if (j->zeroed - target >= ZERO_AHEAD / 2 || j->zeroed >= j->alloc_end)
        return;
    *from = j->zeroed;
    *to = j->alloc_end - *from < ZERO_AHEAD ? j->alloc_end : *from + ZERO_AHEAD;
    j->zeroed = *to;
}

static lil_status write_zeros(struct journal *j, struct lil_err *err, uint64_t from,
                              uint64_t to)
{
    static const uint8_t zeros[16384];
    lil_status rc = LIL_OK;

    for (; rc == LIL_OK && from < to; from += sizeof(zeros)) {
        size_t n = to - from < sizeof(zeros) ? (size_t)(to - from) : sizeof(zeros);
        rc = lil__os_pwrite_all(j->env, err, j->fd, zeros, n, from, j->path);
    }
    return rc;
}

/* The group's take (under mu): the batch (every record appended so far)
 * becomes the one the leader writes, appends start a new one, and the
 * zeros to write after it are chosen.  Every sync makes durable. */
static void group_take(void *ud, struct lil_group_flush *f)
{
    struct journal *j = ud;
    struct lil_buf taken = j->batch;

    f->end = j->end;
    f->durable = true;
    j->flush_off = j->written;
    j->batch = j->flushing; /* appends start a new batch */
    j->flushing = taken;
    zero_range(j, f->end, &j->zfrom, &j->zto);
}

/* The leader's work, outside the lock: write the batch it took (sync full
 * appends nothing to the file itself) and the zeros, then fdatasync. */
static lil_status group_flush(void *ud, struct lil_err *err,
                              const struct lil_group_flush *f)
{
    struct journal *j = ud;
    lil_status rc = LIL_OK;

    (void)f;
    if (j->flushing.len)
        rc = lil__os_pwrite_all(j->env, err, j->fd, j->flushing.data, j->flushing.len,
                                j->flush_off, j->path);
    if (rc == LIL_OK)
        rc = write_zeros(j, err, j->zfrom, j->zto);
    if (rc == LIL_OK)
        rc = lil__os_fdatasync(j->env, err, j->fd, j->path);
    return rc;
}

static void group_done(void *ud, lil_status rc, struct lil_err *err,
                       const struct lil_group_flush *f)
{
    struct journal *j = ud;

    lil__buf_reset(&j->flushing);
    if (rc == LIL_OK && f->end > j->written)
        j->written = f->end;
    if (rc != LIL_OK)
        poison(j, err);
}

static lil_status group_failed(void *ud, struct lil_err *err)
{
    return poisoned_err(ud, err);
}

static const struct lil_group_ops group_ops = {group_take, group_flush, group_done,
                                               group_failed};

/* Return once the journal is durable up to end: at once if it is, after
 * leading a sync if none is in flight and enough records are pending, else
 * after waiting for one. */
lil_status lil__journal_sync_to(struct journal *j, struct lil_err *err, uint64_t end)
{
    pthread_mutex_lock(&j->mu);
    return lil__group_wait(&j->group, err, end, true);
}

lil_status lil__journal_sync_all(struct journal *j, struct lil_err *err)
{
    uint64_t end;
    lil_status rc;

    pthread_mutex_lock(&j->mu);
    end = j->end;
    rc = j->readonly ? LIL_OK : check_writable(j, err);
    pthread_mutex_unlock(&j->mu);
    if (rc != LIL_OK || j->readonly)
        return rc;
    return lil__journal_sync_to(j, err, end);
}

lil_status lil__journal_commit(struct journal *j, struct lil_err *err,
                               const struct lil_rec *rec, bool must_sync)
{
    uint64_t end = 0;
    lil_status rc = lil__journal_append(j, err, rec, &end);

    if (rc != LIL_OK)
        return rc;
    if (j->sync == LIL_SYNC_FULL || (j->sync == LIL_SYNC_NORMAL && must_sync))
        return lil__journal_sync_to(j, err, end);
    return LIL_OK;
}

/* ---- closing ------------------------------------------------------------ */

/* After the sync of a clean close (full, normal): append CLOSE, which tells
 * the next writable open that everything before it is durable (settle), and
 * write it without a sync.  If the write fails, close reports it like any
 * failed write (and the journal is poisoned); the next open then finds a
 * torn tail or another last record, and syncs, as it does when a power cut
 * tears the unsynced CLOSE. */
static lil_status append_close(struct journal *j, struct lil_err *err)
{
    struct lil_rec rec = {0};
    uint64_t end;
    lil_status rc;

    rec.type = LIL_REC_CLOSE;
    rc = lil__journal_append(j, err, &rec, &end);
    if (rc == LIL_OK)
        rc = lil__journal_flush(j, err);
    return rc;
}

lil_status lil__journal_close(struct journal *j, struct lil_err *err)
{
    struct lil_err local;
    lil_status rc = LIL_OK;
    bool writer;

    if (!j)
        return LIL_OK;
    if (!err)
        err = &local;
    /* A forked child's copy is let go without a write: the journal, its
     * lock and its preallocated space are the parent's.  Closing the
     * child's descriptor leaves the lock alone (it is the open file
     * description's, and the parent's descriptor still refers to it). */
    writer = j->fd >= 0 && !j->readonly && j->pid == lil__os_self_pid();
    if (writer && j->poisoned && j->opened)
        rc = poisoned_err(j, err); /* what was not synced may be lost */
    if (writer && !j->poisoned && j->sync != LIL_SYNC_OFF) {
        rc = lil__journal_sync_all(j, err);
        if (rc == LIL_OK && j->group.durable >= j->end)
            rc = append_close(j, err);
    }
    if (writer && !j->poisoned && rc == LIL_OK && j->alloc_end != UINT64_MAX) {
        uint64_t keep = j->give_back_all ? 0 : KEPT_TAIL_MAX;
        if (j->alloc_end - j->end > keep) /* give back the rest */
            j->env->os->ftruncate(j->fd, (off_t)(j->end + keep));
    }
    lil__os_unload(j->env, j->map, j->map_len, !j->readonly);
    if (j->key) {
        explicit_bzero(j->key, j->key_len);
        lil__free(j->env, j->key);
    }
    lil__os_close(j->env, j->fd); /* releases the OFD lock */
    lil__mac_free(j->env, j->mac);
    lil__buf_free(&j->enc);
    lil__buf_free(&j->batch);
    lil__buf_free(&j->flushing);
    lil__group_fini(&j->group);
    pthread_mutex_destroy(&j->mu);
    lil__free(j->env, j->path);
    lil__free(j->env, j->dir);
    lil__free(j->env, j->run_id);
    lil__free(j->env, j);
    return rc;
}

void lil__journal_give_back_all(struct journal *j)
{
    j->give_back_all = true;
}

/* ---- a new segment (format.h, SEGMENTS) ------------------------------------ */

/* Whether the file at path is the one open at fd. */
static bool same_file(struct journal *j, const char *path)
{
    struct stat a, b;
    int fd = j->env->os->open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
    bool same;

    if (fd < 0)
        return false;
    same = j->env->os->fstat(fd, &a) == 0 && j->env->os->fstat(j->fd, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    j->env->os->close(fd);
    return same;
}

/* The old file under its archive name too (a hard link), the name durable.
 * A file there already is what an earlier rotation of this same segment
 * left when it died before its rename took effect: the same file (its
 * link survived), or, after a power cut that undid the rename, a name of
 * the segment as it was then.  Readers never read the archive numbered as
 * the live segment (segments_file.c), so it is replaced by the live file. */
static lil_status archive_old(struct journal *j, struct lil_err *err,
                              const char *archive)
{
    int rc = j->env->os->link(j->path, archive);

    if (rc != 0 && errno == EEXIST && !same_file(j, archive) &&
        j->env->os->unlink(archive) == 0)
        rc = j->env->os->link(j->path, archive);
    if (rc != 0 && (errno != EEXIST || !same_file(j, archive)))
        return lil__seterr(err, LIL_E_IO, errno, "link %s to %s: %s", j->path, archive,
                           lil__errstr(errno));
    return lil__os_fsync_parent(j->env, err, archive);
}

/* The new segment, written and synced under a temporary name, locked, then
 * named: the old file archived first, then the rename. */
static lil_status put_in_place(struct journal *j, struct lil_err *err,
                               const char *archive, const struct lil_buf *img, int *fd)
{
    char tmp[4200];
    lil_status rc =
        lil__os_create_temp(j->env, err, j->path, ROTATION_TAG, tmp, sizeof(tmp), fd);

    if (rc != LIL_OK)
        return rc;
    rc = lil__os_pwrite_all(j->env, err, *fd, img->data, img->len, 0, tmp);
    if (rc == LIL_OK)
        rc = lil__os_fdatasync(j->env, err, *fd, tmp);
    lil__os_close(j->env, *fd); /* written only: the journal reads it too */
    *fd = -1;
    if (rc == LIL_OK)
        rc = lil__os_open_regular(j->env, err, tmp, O_RDWR | O_CLOEXEC, 0, fd);
    if (rc == LIL_OK)
        rc = lil__os_lock_try(j->env, err, *fd, tmp);
    if (rc == LIL_OK)
        rc = archive_old(j, err, archive);
    if (rc == LIL_OK && j->env->os->rename(tmp, j->path) != 0)
        rc = lil__seterr(err, LIL_E_IO, errno, "rename %s to %s: %s", tmp, j->path,
                         lil__errstr(errno));
    if (rc != LIL_OK) {
        j->env->os->unlink(tmp);
        lil__os_close(j->env, *fd);
        *fd = -1;
    }
    return rc;
}

/* Under mu, the new segment named: the handle goes on with it. */
static void switch_to(struct journal *j, int fd, const struct lil_buf *img, size_t n,
                      const uint8_t chain[32], const uint8_t salt[16])
{
    lil__os_close(j->env, j->fd); /* the old file's lock goes with it */
    j->fd = fd;
    j->end = j->written = j->alloc_end = j->zeroed = img->len;
    j->seq += 1 + n;
    j->records = 1 + n;
    j->segment++;
    j->rotated = true;
    j->torn_off = j->torn_after = 0;
    memcpy(j->chain, chain, LIL_SHA256_LEN);
    memcpy(j->salt, salt, LIL_JF_SALT_LEN);
    lil__group_settled(&j->group, img->len);
}

static lil_status rotate_locked(struct journal *j, struct lil_err *err,
                                const char *archive, const struct lil_rec *recs,
                                size_t n)
{
    uint8_t chain[LIL_SHA256_LEN], salt[LIL_JF_SALT_LEN];
    struct journal_link link;
    struct lil_buf img;
    int fd = -1;
    lil_status rc = check_writable(j, err);

    if (rc != LIL_OK)
        return rc;
    link.segment = j->segment + 1;
    memcpy(link.prev_salt, j->salt, LIL_JF_SALT_LEN);
    memcpy(link.prev_chain, j->chain, LIL_SHA256_LEN);
    lil__buf_init(&img, j->env, (size_t)-1);
    rc = lil__seg_image(j->env, err, j->key, j->key_len, j->run_id, j->seq, &link, recs,
                        n, &img, chain, salt);
    if (rc == LIL_OK)
        rc = put_in_place(j, err, archive, &img, &fd);
    if (rc == LIL_OK) {
        switch_to(j, fd, &img, n, chain, salt);
        rc = lil__os_fsync_dir(j->env, err, j->dir);
        if (rc != LIL_OK)
            poison(j, err); /* the new name may not be durable */
    }
    lil__buf_free(&img);
    return rc;
}

lil_status lil__journal_rotate(struct journal *j, struct lil_err *err,
                               const char *archive, const struct lil_rec *recs,
                               size_t n)
{
    lil_status rc = lil__journal_sync_all(j, err);

    if (rc != LIL_OK)
        return rc;
    pthread_mutex_lock(&j->mu);
    if (j->sync == LIL_SYNC_FULL)
        rc = write_batch(j, err); /* waits for a sync in flight too */
    else
        lil__group_wait_idle(&j->group);
    if (rc == LIL_OK && j->group.durable < j->end)
        rc = lil__seterr(err, LIL_E_INVAL, 0,
                         "%s: a record was appended while a new segment was being made",
                         j->path);
    if (rc == LIL_OK)
        rc = rotate_locked(j, err, archive, recs, n);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

bool lil__journal_rotated(const struct journal *j)
{
    return j->rotated;
}

uint32_t lil__journal_segment(const struct journal *j)
{
    return j->segment;
}

bool lil__journal_link(const struct journal *j, struct journal_link *link,
                       uint64_t *base_seq)
{
    *link = j->link;
    *base_seq = j->base_seq;
    return j->base_seq > 0;
}

/* ---- facts -------------------------------------------------------------- */

uint64_t lil__journal_records(const struct journal *j)
{
    return j->seq; /* == records in a first file; a later segment's seqs go on
                      from the segments before it */
}

uint64_t lil__journal_end(const struct journal *j)
{
    return j->end;
}

bool lil__journal_next_scanned(const struct journal *j, uint64_t *off,
                               struct lil_rec *r)
{
    uint64_t at = *off < LIL_JF_HEADER_LEN ? LIL_JF_HEADER_LEN : *off;

    if (!j->map || at >= j->scanned)
        return false;
    lil__jrec_parse(j->map + at, at, r);
    *off = at + r->len;
    return true;
}

uint64_t lil__journal_written(struct journal *j)
{
    uint64_t w;

    pthread_mutex_lock(&j->mu);
    w = j->written;
    pthread_mutex_unlock(&j->mu);
    return w;
}

int64_t lil__journal_created_ns(const struct journal *j)
{
    return j->created_ns;
}

int64_t lil__journal_last_ns(const struct journal *j)
{
    return j->last_ns;
}

uint64_t lil__journal_torn(const struct journal *j, uint64_t *records_after)
{
    *records_after = j->torn_after;
    return j->torn_off;
}

bool lil__journal_keyed(const struct journal *j)
{
    return j->mac && lil__mac_keyed(j->mac);
}

lil_status lil__journal_poison(struct journal *j, struct lil_err *err)
{
    lil_status rc;

    pthread_mutex_lock(&j->mu);
    rc = poison(j, err);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

void lil__journal_head(struct journal *j, struct journal_head *out)
{
    pthread_mutex_lock(&j->mu);
    out->seq = j->seq;
    memcpy(out->chain, j->chain, LIL_SHA256_LEN);
    memcpy(out->salt, j->salt, LIL_JF_SALT_LEN);
    pthread_mutex_unlock(&j->mu);
}

lil_sync lil__journal_sync_mode(const struct journal *j)
{
    return j->sync;
}

/* For check.c: what a walk needs of a journal. */
lil_status lil__journal_view(const struct journal *j, struct journal_view *v)
{
    v->env = j->env;
    v->fd = j->fd;
    v->path = j->path;
    return LIL_OK;
}

int lil__journal_holder(const struct journal *j, int pid)
{
    if (!lil__os_lock_held(j->env, j->fd))
        return 0;
    return pid > 0 && lil__os_pid_has_open(j->env, pid, j->fd) != 0 ? pid : -1;
}
