/*
 * store_file.c -- the file store: a directory holding one journal file per
 * run (<dir>/<run id>.lil, src/journal/format.h) and the markers
 * (<dir>/markers/, marker_file.c).
 *
 * The store's own name (its entry in its parent directory) must be durable
 * before anything written in it is acknowledged: its creator may have died
 * before making it so.  Opening the store syncs nothing (a cache flush on
 * every start); the first writer does, once per handle: a writable run open
 * among its other syncs, a marker through lil__store_file_sync_parent.
 *
 * Neighbours: the directory must be this user's and writable by nobody
 * else (check_owner, below) unless the store is shared on purpose, and
 * every file of it is opened only when regular, never through a link
 * (os.h, lil__os_open_regular): listing skips (and logs) anything else.
 */
#include "store/file/store_file.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/settings/settings.h"
#include "journal/format.h"
#include "journal/journal.h"
#include "os/os.h"

#define JOURNAL_EXT ".lil"
#define STOP_EXT    ".stop" /* <dir>/<run id>.stop: a stop request */

_Static_assert(LIL_JF_FLAG_EFFECT == LIL_SREC_EFFECT, "effect flag differs");
_Static_assert(LIL_JF_FLAG_REQUEST == LIL_SREC_REQUEST, "request flag differs");
_Static_assert(LIL_JF_KEY_MAX == LIL_SREC_KEY_MAX, "key limit differs");

struct file_run {
    struct lil_srun base;
    struct journal *j;
    char *path;
    const struct lil_env *env;
    /* A writable keyed run keeps its rollback record (head_file.c). */
    const char *dir;
    char *run_id;
    uint8_t *key;
    size_t key_len;
    uint64_t head_seq;            /* the last record written, or found at open */
    struct journal_head at_close; /* taken before the close's last sync */
    int pid;                      /* the opener: a forked child writes no record */
    /* segments (segments_file.c): a readonly handle walks them all */
    bool history;             /* readonly, not live_only: every segment kept */
    struct seg_walk_opts seg; /* its run_id and key: seg_id, seg_key */
    char *seg_id;
    uint8_t *seg_key;
};

/* ---- the store's name ------------------------------------------------------------ */

static struct file_store *fs_of(struct lil_store *st)
{
    return (struct file_store *)st;
}

static bool parent_pending(struct file_store *fs)
{
    return !__atomic_load_n(&fs->parent_synced, __ATOMIC_ACQUIRE);
}

static void parent_done(struct file_store *fs)
{
    __atomic_store_n(&fs->parent_synced, true, __ATOMIC_RELEASE);
}

lil_status lil__store_file_sync_parent(struct file_store *fs, struct lil_err *err)
{
    lil_status rc;

    if (!parent_pending(fs))
        return LIL_OK;
    rc = lil__os_fsync_parent(fs->base.env, err, fs->base.where);
    if (rc == LIL_OK)
        parent_done(fs);
    return rc;
}

/* "<dir>/<run id><ext>" into a new string (lil__free), NULL on OOM. */
static char *file_of(const struct lil_store *st, const char *run_id, const char *ext)
{
    size_t n = strlen(st->where) + 1 + strlen(run_id) + strlen(ext) + 1;
    char *p = lil__malloc(st->env, n);

    if (p)
        snprintf(p, n, "%s/%s%s", st->where, run_id, ext);
    return p;
}

static char *run_path(const struct lil_store *st, const char *run_id)
{
    return file_of(st, run_id, JOURNAL_EXT);
}

/* ---- runs ---------------------------------------------------------------------- */

static void journal_opts_of(struct file_store *fs, const char *run_id,
                            const struct lil_srun_opts *o, struct journal_opts *jo)
{
    bool name_pending = !o->readonly && parent_pending(fs);

    *jo = (struct journal_opts){
        .sync = o->sync,
        .readonly = o->readonly,
        .create = o->create,
        .max_record = o->max_record,
        .verify_chain = o->verify_chain,
        .sync_parent_of = name_pending ? fs->base.where : NULL,
        .key = o->key,
        .key_len = o->key_len,
        .run_id = run_id,
        .no_rotation =
            !o->readonly && !lil__seg_began(fs->base.env, fs->base.where, run_id)};
}

/* ---- the rollback record (head_file.c) --------------------------------------------
 */

/* Record h, taken before a sync that has returned: it is durable.  A record
 * that cannot be written lags, which is safe; it is logged and reported to
 * the caller, and a sync then poisons the run like any failed write (the
 * close has nothing left to poison). */
static lil_status head_update(struct file_run *fr, struct lil_err *err,
                              const struct journal_head *h, bool durable)
{
    struct lil_head_key k = {fr->run_id, fr->key, fr->key_len};

    if (h->seq <= fr->head_seq)
        return LIL_OK;
    if (lil__head_write(fr->env, err, fr->dir, &k, h, durable) == LIL_OK) {
        fr->head_seq = h->seq;
        return LIL_OK;
    }
    lil__log(fr->env, LIL_LOG_WARN, "event=head_lag run=%s reason=\"%s\"", fr->run_id,
             err->msg);
    return err->code;
}

/* Sync, then record what the sync covered. */
static lil_status sync_and_record(struct file_run *fr, struct lil_err *err)
{
    struct journal_head h = {0};
    lil_status rc;

    if (fr->key)
        lil__journal_head(fr->j, &h);
    rc = lil__journal_sync_all(fr->j, err);
    if (rc == LIL_OK && fr->key && head_update(fr, err, &h, false) != LIL_OK)
        rc = lil__journal_poison(fr->j, err); /* a failed write: reopen */
    return rc;
}

/* A writable keyed run about to close: its last sync, recorded (not in
 * sync off, whose close does not sync; not in a forked child).  A failed
 * sync is left for the close to report; a record not written is this
 * call's to report (into *e). */
static lil_status record_at_close(struct file_run *fr, struct lil_err *e)
{
    if (!fr->key || !fr->j || fr->pid != lil__os_self_pid() ||
        lil__journal_sync_mode(fr->j) == LIL_SYNC_OFF)
        return LIL_OK;
    if (lil__journal_sync_all(fr->j, e) != LIL_OK)
        return LIL_OK; /* the close reports it */
    return head_update(fr, e, &fr->at_close, false);
}

static void file_run_free(struct file_run *fr)
{
    lil__store_key_free_env(fr->env, fr->seg_key, fr->seg.key_len);
    lil__free(fr->env, fr->seg_id);
    lil__store_key_free_env(fr->env, fr->key, fr->key_len);
    lil__free(fr->env, fr->run_id);
    lil__free(fr->env, fr->path);
    lil__free(fr->env, fr);
}

static lil_status file_run_close(struct lil_srun *r, struct lil_err *err, bool ended)
{
    struct file_run *fr = (struct file_run *)r;
    lil_status rc;

    struct lil_err head_err;
    lil_status head_rc;

    if (ended && fr->j)
        lil__journal_give_back_all(fr->j);
    if (fr->key && fr->j)
        lil__journal_head(fr->j, &fr->at_close);
    head_rc = record_at_close(fr, &head_err);
    rc = lil__journal_close(fr->j, err);
    if (rc == LIL_OK && head_rc != LIL_OK && err)
        lil__copyerr(err, &head_err);
    file_run_free(fr);
    return rc == LIL_OK ? head_rc : rc;
}

/* The rollback record of run_id under key, if it has one: into *known,
 * *found set. */
static lil_status head_of(struct lil_store *st, struct lil_err *err, const char *run_id,
                          const uint8_t *key, size_t key_len,
                          struct journal_head *known, bool *found)
{
    struct lil_head_key k = {run_id, key, key_len};

    *found = false;
    if (!key || st->no_heads)
        return LIL_OK;
    return lil__head_read(st->env, err, st->where, &k, known, found);
}

/* A writable keyed run keeps its record from now on. */
static lil_status keep_heads(struct lil_store *st, struct lil_err *err,
                             struct file_run *fr, const char *run_id,
                             const struct lil_srun_opts *o,
                             const struct journal_head *known)
{
    if (o->readonly || !o->key || st->no_heads)
        return LIL_OK;
    fr->dir = st->where;
    fr->pid = lil__os_self_pid();
    fr->head_seq = known ? known->seq : 0;
    fr->run_id = lil__strdup(st->env, run_id);
    fr->key = lil__malloc(st->env, o->key_len);
    if (!fr->run_id || !fr->key) {
        lil__free(st->env, fr->key);
        fr->key = NULL;
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    memcpy(fr->key, o->key, o->key_len);
    fr->key_len = o->key_len;
    return LIL_OK;
}

/* What a walk over the run's segments needs (segments_file.c). */
static lil_status keep_seg(struct lil_store *st, struct lil_err *err,
                           struct file_run *fr, const char *run_id,
                           const struct lil_srun_opts *o)
{
    uint8_t *key = NULL;

    fr->history = o->readonly && !o->live_only;
    fr->seg.dir = st->where;
    fr->seg.max_record = o->max_record;
    fr->seg.run_id = fr->seg_id = lil__strdup(st->env, run_id);
    if (o->key && (key = lil__malloc(st->env, o->key_len ? o->key_len : 1)) != NULL)
        memcpy(key, o->key, o->key_len);
    fr->seg.key = fr->seg_key = key;
    fr->seg.key_len = key ? o->key_len : 0;
    if (!fr->seg.run_id || (o->key && !key))
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

static lil_status file_run_open(struct lil_store *st, struct lil_err *err,
                                const char *run_id, const struct lil_srun_opts *o,
                                lil_rec_scan_fn scan, void *ud, struct lil_srun **out)
{
    struct file_store *fs = fs_of(st);
    struct file_run *fr = lil__calloc(st->env, 1, sizeof(*fr));
    struct journal_opts jo;
    struct journal_head known;
    struct lil_err local;
    bool created = false, found = false;
    lil_status rc;

    *out = NULL;
    if (!err) /* a caller that does not want the message */
        err = &local;
    if (!fr || !(fr->path = run_path(st, run_id))) {
        lil__free(st->env, fr);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    fr->base.ops = st->ops;
    fr->base.where = fr->path;
    fr->env = st->env;
    journal_opts_of(fs, run_id, o, &jo);
    rc = head_of(st, err, run_id, o->key, o->key_len, &known, &found);
    jo.expect = found ? &known : NULL;
    if (rc == LIL_OK)
        rc = lil__journal_open(st->env, err, st->where, fr->path, &jo, scan, ud, &fr->j,
                               &created);
    if (rc == LIL_OK)
        rc = keep_heads(st, err, fr, run_id, o, found ? &known : NULL);
    if (rc == LIL_OK)
        rc = keep_seg(st, err, fr, run_id, o);
    if (rc != LIL_OK) {
        file_run_close(&fr->base, NULL, false);
        return rc;
    }
    if (jo.sync_parent_of)
        parent_done(fs);
    *out = &fr->base;
    return LIL_OK;
}

/* LAZY: appended and written (the journal of sync full holds records back
 * for the next sync leader otherwise), not synced. */
static lil_status file_run_append(struct lil_srun *r, struct lil_err *err,
                                  const struct lil_rec *rec, enum lil_append_sync how)
{
    struct journal *jn = ((struct file_run *)r)->j;

    if (how == LIL_APPEND_LAZY)
        return lil__journal_append_written(jn, err, rec);
    return lil__journal_commit(jn, err, rec, how == LIL_APPEND_SYNC);
}

static lil_status file_run_announce(struct lil_srun *r, struct lil_err *err,
                                    const struct lil_rec *rec)
{
    struct journal *jn = ((struct file_run *)r)->j;
    uint64_t end;

    if (lil__journal_append(jn, err, rec, &end) != LIL_OK)
        return err->code;
    return lil__journal_flush(jn, err);
}

static lil_status file_run_sync(struct lil_srun *r, struct lil_err *err)
{
    return sync_and_record((struct file_run *)r, err);
}

/* A writable handle walks the live segment (what the run goes on from); a
 * readonly one the whole history, every segment kept. */
static lil_status file_run_walk(struct lil_srun *r, struct lil_err *err,
                                lil_rec_walk_fn fn, void *ud)
{
    struct file_run *fr = (struct file_run *)r;

    if (!fr->history || lil__journal_segment(fr->j) == 0)
        return lil__journal_foreach(fr->j, err, fn, ud);
    return lil__seg_walk(fr->env, err, &fr->seg, fr->j, fn, ud);
}

/* The run goes on in a new segment, the old one archived (segments_file.c);
 * a keyed run's rollback record follows it at once, its name made durable
 * (the record of a segment two back would refuse the run). */
static lil_status file_run_rotate(struct lil_srun *r, struct lil_err *err,
                                  const struct lil_rec *recs, size_t n)
{
    struct file_run *fr = (struct file_run *)r;
    char archive[4400];
    struct journal_head h;
    lil_status rc =
        lil__seg_archive(fr->env, err, fr->seg.dir, fr->seg.run_id,
                         lil__journal_segment(fr->j), archive, sizeof(archive));

    if (rc == LIL_OK)
        rc = lil__journal_rotate(fr->j, err, archive, recs, n);
    if (rc == LIL_OK && fr->key) {
        lil__journal_head(fr->j, &h);
        if (head_update(fr, err, &h, true) != LIL_OK)
            rc = lil__journal_poison(fr->j, err);
    }
    return rc;
}

static bool file_run_next_scanned(const struct lil_srun *r, uint64_t *cursor,
                                  struct lil_rec *rec)
{
    return lil__journal_next_scanned(((const struct file_run *)r)->j, cursor, rec);
}

static void file_run_info(const struct lil_srun *r, struct lil_srun_info *info)
{
    const struct journal *j = ((const struct file_run *)r)->j;

    info->records = lil__journal_records(j);
    info->bytes = lil__journal_end(j);
    info->created_ns = lil__journal_created_ns(j);
    info->last_ns = lil__journal_last_ns(j);
    info->sync = lil__journal_sync_mode(j);
    info->keyed = lil__journal_keyed(j);
    info->torn_pos = lil__journal_torn(j, &info->torn_records);
}

static int file_run_holder(const struct lil_srun *r, int last_opener)
{
    return lil__journal_holder(((const struct file_run *)r)->j, last_opener);
}

/* ---- the store ------------------------------------------------------------------ */

/* A file of the store is a run's journal when it starts with the journal's
 * magic, or with a part of it (a journal being created, or cut there: the
 * run exists and `lil check` reports it).  Anything else is not a run. */
static bool looks_like_journal(const struct lil_env *env, const char *dir,
                               const char *name)
{
    char path[4352], head[LIL_JF_MAGIC_LEN];
    struct lil_err err;
    ssize_t n;
    int fd = -1;

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
        return false;
    if (lil__os_open_regular(env, &err, path, O_RDONLY | O_CLOEXEC, 0, &fd) != LIL_OK) {
        if (err.sys_errno != ENOENT) /* a link, a FIFO, ...: named, never opened */
            lil__log(env, LIL_LOG_WARN, "event=skipped path=%s reason=\"%s\"", path,
                     err.msg);
        return false;
    }
    n = env->os->pread(fd, head, sizeof(head), 0);
    lil__os_close(env, fd);
    return n >= 0 && memcmp(head, LIL_JF_MAGIC, (size_t)n) == 0;
}

static int run_name_of(const char *file, char *id, size_t cap)
{
    size_t n = strlen(file), ext = sizeof(JOURNAL_EXT) - 1;

    if (n <= ext || strcmp(file + n - ext, JOURNAL_EXT) != 0 || n - ext >= cap)
        return -1;
    memcpy(id, file, n - ext);
    id[n - ext] = '\0';
    return lil__run_id_check(NULL, id) == LIL_OK ? 0 : -1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static lil_status file_foreach_run(struct lil_store *st, struct lil_err *err,
                                   lil_run_id_fn fn, void *ud)
{
    struct dirent **names = NULL;
    char id[LIL_RUN_ID_MAX + 1];
    int n = scandir(st->where, &names, NULL, by_name);
    int stop = 0;

    if (n < 0)
        return lil__seterr(err, LIL_E_IO, errno, "scan %s: %s", st->where,
                           lil__errstr(errno));
    for (int i = 0; i < n; i++) {
        if (!stop && run_name_of(names[i]->d_name, id, sizeof(id)) == 0 &&
            looks_like_journal(st->env, st->where, names[i]->d_name))
            stop = fn(ud, id);
        free(names[i]);
    }
    free(names);
    return LIL_OK;
}

/* A keyed run with a rollback record: before a check, its journal must not
 * be behind it (a deleted journal is reported here too), unless the check
 * is to repair; after a repair that cut it (the operator's decision), the
 * record follows the journal. */
static lil_status check_head(struct lil_store *st, struct lil_err *err,
                             const char *run_id, const char *path, const uint8_t *key,
                             size_t key_len, bool repair, bool repaired)
{
    struct journal_opts jo = {.readonly = true,
                              .key = key,
                              .key_len = key_len,
                              .max_record = (size_t)-1 >> 1,
                              .run_id = run_id};
    struct lil_head_key k = {run_id, key, key_len};
    struct journal_head known, now;
    struct journal *j = NULL;
    bool found = false, created = false;
    lil_status rc = head_of(st, err, run_id, key, key_len, &known, &found);

    if (rc != LIL_OK || !found || (repair && !repaired))
        return rc;
    jo.expect = repaired ? NULL : &known;
    rc =
        lil__journal_open(st->env, err, st->where, path, &jo, NULL, NULL, &j, &created);
    if (rc == LIL_OK && repaired) {
        lil__journal_head(j, &now);
        rc = lil__head_write(st->env, err, st->where, &k, &now, false);
    }
    lil__journal_close(j, NULL);
    /* damage and the like are the check's to report, in its verdict */
    return rc == LIL_E_ROLLBACK || repaired ? rc : LIL_OK;
}

static lil_status file_check_run(struct lil_store *st, struct lil_err *err,
                                 const char *run_id, const uint8_t *key, size_t key_len,
                                 bool repair, lil_check_report *report)
{
    char *path = run_path(st, run_id);
    lil_status rc;

    if (!path)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = check_head(st, err, run_id, path, key, key_len, repair, false);
    if (rc == LIL_OK)
        rc = lil__journal_check(st->env, err, st->where, path, key, key_len, repair,
                                report);
    if (rc == LIL_OK && repair && report->repaired)
        rc = check_head(st, err, run_id, path, key, key_len, repair, true);
    if (rc == LIL_OK) {
        struct seg_walk_opts so = {st->where, run_id, key, key_len, (size_t)-1 >> 1};
        rc = lil__seg_check(st, err, &so, report);
    }
    lil__free(st->env, path);
    return rc;
}

/* ---- stop requests ------------------------------------------------------------- */

/* "<dir>/<run id>.stop" for a valid run id (no path tricks). */
static lil_status stop_path(struct lil_store *st, struct lil_err *err,
                            const char *run_id, char **path)
{
    lil_status rc = lil__run_id_check(err, run_id);

    *path = NULL;
    if (rc != LIL_OK)
        return rc;
    *path = file_of(st, run_id, STOP_EXT);
    return *path ? LIL_OK : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

static lil_status file_stop_request(struct lil_store *st, struct lil_err *err,
                                    const char *run_id, const void *req, size_t len,
                                    bool *already)
{
    char *path;
    lil_status rc = stop_path(st, err, run_id, &path);

    *already = false;
    if (rc != LIL_OK)
        return rc;
    rc = lil__store_file_sync_parent((struct file_store *)st, err);
    if (rc == LIL_OK)
        rc = lil__os_publish_new(st->env, err, st->where, path, req, len, already);
    lil__free(st->env, path);
    return rc;
}

static lil_status file_stop_read(struct lil_store *st, struct lil_err *err,
                                 const char *run_id, lil_bytes *out)
{
    char *path;
    lil_status rc = stop_path(st, err, run_id, &path);

    if (rc != LIL_OK)
        return rc;
    rc = lil__os_read_file(st->env, err, path, out);
    if (rc == LIL_E_NOTFOUND)
        lil__seterr(err, rc, 0, "no stop request for run %s", run_id);
    lil__free(st->env, path);
    return rc;
}

static lil_status file_stop_clear(struct lil_store *st, struct lil_err *err,
                                  const char *run_id)
{
    char *path;
    lil_status rc = stop_path(st, err, run_id, &path);

    if (rc != LIL_OK)
        return rc;
    if (st->env->os->unlink(path) < 0)
        rc = errno == ENOENT ? lil__seterr(err, LIL_E_NOTFOUND, 0,
                                           "no stop request for run %s", run_id)
                             : lil__seterr(err, LIL_E_IO, errno, "unlink %s: %s", path,
                                           lil__errstr(errno));
    if (rc == LIL_OK)
        rc = lil__os_fsync_dir(st->env, err, st->where);
    lil__free(st->env, path);
    return rc;
}

/* runs_stamp: the directory's modification time, which every journal
 * made, renamed into place or removed moves. */
static lil_status file_runs_stamp(struct lil_store *st, struct lil_err *err,
                                  int64_t *stamp, bool *coarse)
{
    struct stat sb;
    int fd = -1;
    lil_status rc = lil__os_open(st->env, err, st->where,
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, &fd);

    *stamp = 0;
    *coarse = true;
    if (rc == LIL_OK && st->env->os->fstat(fd, &sb) < 0)
        rc = lil__seterr(err, LIL_E_IO, errno, "fstat %s: %s", st->where,
                         lil__errstr(errno));
    if (rc == LIL_OK)
        *stamp = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    lil__os_close(st->env, fd);
    return rc;
}

static lil_status file_run_changed(struct lil_store *st, struct lil_err *err,
                                   const char *run_id, int64_t *ns)
{
    char *path;
    struct stat sb;
    int fd = -1;
    lil_status rc = lil__run_id_check(err, run_id);

    *ns = 0;
    if (rc != LIL_OK)
        return rc;
    path = run_path(st, run_id);
    if (!path)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__os_open_regular(st->env, err, path, O_RDONLY | O_CLOEXEC, 0, &fd);
    if (rc != LIL_OK && err->sys_errno == ENOENT)
        rc = lil__seterr(err, LIL_E_NOTFOUND, ENOENT, "no run %s", run_id);
    if (rc == LIL_OK && st->env->os->fstat(fd, &sb) < 0)
        rc =
            lil__seterr(err, LIL_E_IO, errno, "fstat %s: %s", path, lil__errstr(errno));
    if (rc == LIL_OK)
        *ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    lil__os_close(st->env, fd);
    lil__free(st->env, path);
    return rc;
}

/* ---- moving runs ---------------------------------------------------------------- */

static lil_status file_run_image(struct lil_store *st, struct lil_err *err,
                                 const char *run_id, struct lil_buf *out)
{
    char *path = run_path(st, run_id);
    lil_bytes bytes = {0};
    lil_status rc;

    if (!path)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__os_read_file(st->env, err, path, &bytes);
    if (rc == LIL_E_NOTFOUND)
        lil__seterr(err, rc, 0, "no run %s in %s", run_id, st->where);
    if (rc == LIL_OK && bytes.len >= LIL_JF_HEADER_LEN &&
        (lil__rd32((const uint8_t *)bytes.data + LIL_JF_H_INCOMPAT) &
         LIL_JF_INCOMPAT_SEGMENT))
        rc = lil__seterr(err, LIL_E_INVAL, 0,
                         "run %s is compacted (its history is in several segments, "
                         "docs/format.md \"Segments\"): it cannot be exported, "
                         "imported or forked as one journal yet",
                         run_id);
    if (rc == LIL_OK && lil__buf_add(out, bytes.data, bytes.len) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory reading %s", path);
    lil__export_free(bytes.data);
    lil__free(st->env, path);
    return rc;
}

/* The journal file, published whole and durably, never over another. */
static lil_status file_run_import(struct lil_store *st, struct lil_err *err,
                                  const char *run_id, const uint8_t *image, size_t len)
{
    char *path = run_path(st, run_id);
    bool existed = false;
    lil_status rc;

    if (!path)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__store_file_sync_parent(fs_of(st), err);
    if (rc == LIL_OK)
        rc = lil__os_publish_new(st->env, err, st->where, path, image, len, &existed);
    if (rc == LIL_OK && existed)
        rc = lil__seterr(err, LIL_E_INVAL, 0,
                         "run %s already exists in %s (import it under another id: "
                         "--run-id)",
                         run_id, st->where);
    lil__free(st->env, path);
    return rc;
}

/* ---- removing runs -------------------------------------------------------------- */

/* Unlink path; a missing file is no error. */
static lil_status unlink_if_there(const struct lil_env *env, struct lil_err *err,
                                  const char *path)
{
    if (env->os->unlink(path) == 0 || errno == ENOENT)
        return LIL_OK;
    return lil__seterr(err, LIL_E_IO, errno, "unlink %s: %s", path, lil__errstr(errno));
}

/* Under the run's lock: its older segments, the rollback record and the
 * stop request first, the journal last, so a crash in between leaves a
 * journal that opens (a run does without its side files and its older
 * segments, whose history then reads as dropped), never a rollback record
 * of a run that is gone (which would refuse a new run of the same id), nor
 * segments that a new run of that id would meet. */
static lil_status unlink_run(struct lil_store *st, struct lil_err *err,
                             const char *run_id, const char *journal)
{
    static const char *const side[] = {".head", STOP_EXT};
    lil_status rc = lil__seg_remove_all(st, err, run_id);

    for (size_t i = 0; rc == LIL_OK && i < sizeof(side) / sizeof(*side); i++) {
        char *path = file_of(st, run_id, side[i]);

        rc = path ? unlink_if_there(st->env, err, path)
                  : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        lil__free(st->env, path);
    }
    if (rc == LIL_OK)
        rc = unlink_if_there(st->env, err, journal);
    if (rc == LIL_OK)
        rc = lil__os_fsync_dir(st->env, err, st->where);
    return rc;
}

/* The journal's lock is taken first, as a writer takes it: a run that a
 * live process holds is refused, and no writer can open it meanwhile. */
static lil_status file_run_remove(struct lil_store *st, struct lil_err *err,
                                  const char *run_id)
{
    lil_status rc = lil__run_id_check(err, run_id);
    char *path = NULL;
    int fd = -1;

    if (rc == LIL_OK && !(path = run_path(st, run_id)))
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK)
        rc = lil__os_open_regular(st->env, err, path, O_RDWR | O_CLOEXEC, 0, &fd);
    if (rc != LIL_OK && err->sys_errno == ENOENT)
        rc = lil__seterr(err, LIL_E_NOTFOUND, ENOENT, "no run %s in %s", run_id,
                         st->where);
    if (rc == LIL_OK)
        rc = lil__os_lock_try(st->env, err, fd, path);
    if (rc == LIL_E_LOCKED)
        lil__seterr(err, rc, 0, "run %s is held by another process: it is not removed",
                    run_id);
    if (rc == LIL_OK)
        rc = unlink_run(st, err, run_id, path);
    lil__os_close(st->env, fd);
    lil__free(st->env, path);
    return rc;
}

static void file_close(struct lil_store *st)
{
    struct lil_env *env = st->env;

    lil__store_fini(st);
    lil__free(env, st);
}

static const struct lil_store_ops file_ops = {.version = LIL_STORE_OPS_VERSION,
                                              .name = "file",
                                              .close = file_close,
                                              .foreach_run = file_foreach_run,
                                              .check_run = file_check_run,
                                              .run_open = file_run_open,
                                              .run_close = file_run_close,
                                              .run_append = file_run_append,
                                              .run_announce = file_run_announce,
                                              .run_sync = file_run_sync,
                                              .run_walk = file_run_walk,
                                              .run_next_scanned = file_run_next_scanned,
                                              .run_info = file_run_info,
                                              .run_holder = file_run_holder,
                                              .run_remove = file_run_remove,
                                              .stop_request = file_stop_request,
                                              .stop_read = file_stop_read,
                                              .stop_clear = file_stop_clear,
                                              .marker_enter = lil__marker_file_enter,
                                              .marker_state = lil__marker_file_state,
                                              .marker_begin = lil__marker_file_begin,
                                              .marker_finish = lil__marker_file_finish,
                                              .marker_abandon =
                                                  lil__marker_file_abandon,
                                              .marker_clear = lil__marker_file_clear,
                                              .marker_leave = lil__marker_file_leave,
                                              .run_changed = file_run_changed,
                                              .runs_stamp = file_runs_stamp,
                                              .run_image = file_run_image,
                                              .run_import = file_run_import,
                                              .sched_put = lil__sched_file_put,
                                              .sched_get = lil__sched_file_get,
                                              .sched_del = lil__sched_file_del,
                                              .sched_list = lil__sched_file_list,
                                              .sched_mark = lil__sched_file_mark,
                                              .run_rotate = file_run_rotate,
                                              .run_drop_segments = lil__seg_drop,
                                              .run_segments = lil__seg_info};

/* ---- whose store it is -------------------------------------------------------------
 */

/* LIL_SHARED_STORE: 1, true, yes or on (any case). */
static bool shared_by_setting(void)
{
    static const char *const on[] = {"1", "true", "yes", "on"};
    const char *v = lil__setting_raw("LIL_SHARED_STORE");

    for (size_t i = 0; v && i < sizeof(on) / sizeof(on[0]); i++)
        if (strcasecmp(v, on[i]) == 0)
            return true;
    return false;
}

#define SHARE_HINT                                                        \
    ": others could plant runs or links in it; refused (--shared-store, " \
    "LIL_SHARED_STORE=1 or LIL_STORE_SHARED to share it)"

/*
 * As ssh treats ~/.ssh: a store directory that another user owns, or that
 * its group or every user may write in, is refused.  Whoever can write in
 * it can plant a journal (a run that then runs), a stop request, a marker,
 * a symbolic link or a FIFO where lil will look; the sticky bit does not
 * stop that (it only keeps others from removing lil's own files).  Files
 * are still opened only when regular and never through links (os.h), so a
 * store shared on purpose (flags, or the setting) stays safe from links and
 * FIFOs; what it cannot be safe from is a neighbour who writes journals.
 * The message stays short: it must hold the path and the way out.
 */
static lil_status check_owner(struct lil_err *err, const char *dir, unsigned flags)
{
    struct stat sb;
    uid_t me = geteuid();

    if ((flags & LIL_STORE_SHARED) || shared_by_setting())
        return LIL_OK;
    if (stat(dir, &sb) != 0)
        return lil__seterr(err, LIL_E_IO, errno, "stat %s: %s", dir,
                           lil__errstr(errno));
    if (sb.st_uid != me)
        return lil__seterr(err, LIL_E_IO, EPERM,
                           "store '%s' is owned by uid %u, not by uid %u" SHARE_HINT,
                           dir, (unsigned)sb.st_uid, (unsigned)me);
    if (sb.st_mode & S_IWOTH)
        return lil__seterr(err, LIL_E_IO, EPERM,
                           "store '%s' is writable by every user (mode %04o, sticky "
                           "or not)" SHARE_HINT,
                           dir, (unsigned)(sb.st_mode & 07777));
    if (sb.st_mode & S_IWGRP)
        return lil__seterr(err, LIL_E_IO, EPERM,
                           "store '%s' is writable by its group (gid %u, mode "
                           "%04o)" SHARE_HINT,
                           dir, (unsigned)sb.st_gid, (unsigned)(sb.st_mode & 07777));
    return LIL_OK;
}

lil_status lil__store_file_open(struct lil_env *env, struct lil_err *err,
                                const char *dir, unsigned flags, struct lil_store **out)
{
    struct file_store *fs;
    lil_status rc;

    *out = NULL;
    rc = lil__os_mkdir(env, err, dir, false); /* its name: see the top */
    if (rc == LIL_OK)
        rc = check_owner(err, dir, flags);
    if (rc != LIL_OK)
        return rc;
    fs = lil__calloc(env, 1, sizeof(*fs));
    if (!fs)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__store_init(&fs->base, env, err, &file_ops, dir);
    if (rc != LIL_OK) {
        file_close(&fs->base);
        return rc;
    }
    if (!fs->base.key_given) /* the store's own key (key_file.c), found or made */
        fs->base.own_key = lil__store_file_own_key;
    fs->base.magic = LIL_STORE_MAGIC;
    *out = &fs->base;
    return LIL_OK;
}

/* A file store has no schema: its journals carry their format version. */
lil_status lil__store_file_schema(struct lil_env *env, struct lil_err *err,
                                  const char *dir, int action, lil_schema_info *info)
{
    struct stat sb;
    bool there = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
    lil_status rc = LIL_OK;

    snprintf(info->backend, sizeof(info->backend), "file");
    info->latest = (int)LIL_JF_VERSION;
    if (!there && action == LIL_SCHEMA_INIT) {
        rc = lil__os_mkdir(env, err, dir, true);
        there = rc == LIL_OK;
        info->changed = there;
    }
    info->version = there ? (int)LIL_JF_VERSION : 0;
    if (rc != LIL_OK)
        return rc;
    if (!there && action == LIL_SCHEMA_MIGRATE)
        return lil__seterr(err, LIL_E_NOTFOUND, 0,
                           "no store at '%s' (`lil db init` creates it)", dir);
    snprintf(info->message, sizeof(info->message),
             !there          ? "no store at '%s' yet (`lil db init` creates it)"
             : info->changed ? "created the store directory '%s'"
                             : "file store '%s': journals of format 1, nothing to "
                               "migrate",
             dir);
    return LIL_OK;
}
