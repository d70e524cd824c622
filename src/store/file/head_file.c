/*
 * head_file.c -- the file store's rollback record: <store>/<run id>.head,
 * what the store last knew of a keyed run's journal.
 *
 * A keyed journal proves that its records were written by a key holder,
 * not that it is the latest journal of its run: an older copy, a journal
 * cut at a record boundary, emptied or deleted verifies as well.  The head
 * file keeps, authenticated under the same key, the seq and chain value
 * of the run's last durable record and the salt of its journal file; an
 * open that finds the journal behind it refuses (LIL_E_ROLLBACK: "rolled
 * back to seq N (last known M)") before it writes anything
 * (journal/journal.h, journal_opts.expect).
 *
 * When it is written (store_file.c): at a clean close and at each
 * run_sync of a writable keyed run, after the journal's sync returned, with
 * the seq and chain taken before that sync, so it never names a record
 * that is not durable: the record may lag the journal (a crash before it
 * is written, a rename the power cut undid), never lead it.  Not in sync
 * mode off, whose close does not sync.  Appends never touch it.
 *
 * Byte layout (112 bytes, little-endian; mirrored in docs/format.md):
 *
 *   off size field
 *     0    8 magic      89 4c 49 4c 48 45 44 0a ("\x89LILHED\n")
 *     8    4 version    1
 *    12    4 reserved   zero
 *    16    8 seq        the run's last durable record known
 *    24   16 salt       the journal file's salt (its header, offset 24)
 *    40   32 chain      the chain value of record seq
 *    72    8 written_ns when this file was written, ns since the epoch
 *    80   32 mac        HMAC-SHA-256(key, "lil-head" || run id || 0x00 ||
 *                       bytes 0..79)
 *
 * Written in place: 112 bytes at offset 0 of the file (made with O_EXCL,
 * 0600, the first time), never through a symlink or a second hard link,
 * with no fsync, no temporary file and no rename (each of those cost a
 * close about 2 ms on ext4: bench/bench_append.c, docs/performance.md).
 * A power cut may lose the write (the older record: it lags), the file's
 * creation (no record) or leave it torn or garbled.  So a record that is
 * not of this form, or whose mac does not verify under the key, reads as
 * no record (a WARN, event=head_unreadable), never as a refusal of an
 * honest journal.  That gives an adversary nothing: it can delete the file
 * as well (docs/security.md says what the record cannot promise), and it
 * can never make a record that is believed.  Read with O_NOFOLLOW: a file
 * that is not a regular file is LIL_E_CORRUPT.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/hash.h"
#include "journal/format.h"
#include "os/os.h"
#include "store/file/store_file.h"

#define HEAD_LEN  112u
#define HEAD_BODY 80u
static const uint8_t head_magic[8] = {0x89, 'L', 'I', 'L', 'H', 'E', 'D', '\n'};
#define HEAD_LABEL "lil-head"

static void head_path(const char *dir, const char *run_id, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s.head", dir, run_id);
}

/* The mac of a head file's first 80 bytes for run_id. */
static lil_status head_mac(struct lil_err *err, const uint8_t *key, size_t key_len,
                           const char *run_id, const uint8_t *body,
                           uint8_t out[LIL_SHA256_LEN])
{
    size_t idn = strlen(run_id), lab = sizeof(HEAD_LABEL) - 1;
    uint8_t msg[sizeof(HEAD_LABEL) + LIL_RUN_ID_MAX + 1 + HEAD_BODY];

    if (idn > LIL_RUN_ID_MAX)
        return lil__seterr(err, LIL_E_INVAL, 0, "run id too long");
    memcpy(msg, HEAD_LABEL, lab);
    memcpy(msg + lab, run_id, idn);
    msg[lab + idn] = 0;
    memcpy(msg + lab + idn + 1, body, HEAD_BODY);
    lil__hmac_sha256(key, key_len, msg, lab + idn + 1 + HEAD_BODY, out);
    return LIL_OK;
}

/* The record in b (n bytes) into *out; LIL_E_NOTFOUND when it is not one
 * that verifies under k's key. */
static lil_status head_parse(struct lil_err *err, const uint8_t *b, size_t n,
                             const struct lil_head_key *k, struct journal_head *out)
{
    uint8_t mac[LIL_SHA256_LEN];
    lil_status rc;

    if (n != HEAD_LEN || memcmp(b, head_magic, 8) != 0 || lil__rd32(b + 8) != 1)
        return LIL_E_NOTFOUND; /* torn by a power cut: no record (see the top) */
    rc = head_mac(err, k->key, k->key_len, k->run_id, b, mac);
    if (rc != LIL_OK)
        return rc;
    if (memcmp(mac, b + HEAD_BODY, LIL_SHA256_LEN) != 0)
        return LIL_E_NOTFOUND; /* garbled, forged or another key's: none */
    out->seq = lil__rd64(b + 16);
    memcpy(out->salt, b + 24, LIL_JHEAD_SALT_LEN);
    memcpy(out->chain, b + 40, LIL_SHA256_LEN);
    return LIL_OK;
}

lil_status lil__head_read(const struct lil_env *env, struct lil_err *err,
                          const char *dir, const struct lil_head_key *k,
                          struct journal_head *out, bool *found)
{
    char path[4400];
    uint8_t b[HEAD_LEN + 1];
    struct stat sb;
    ssize_t n = -1;
    int fd = -1;
    lil_status rc;

    *found = false;
    head_path(dir, k->run_id, path, sizeof(path));
    rc = lil__os_open(env, err, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0, &fd);
    if (rc != LIL_OK)
        return err->sys_errno == ENOENT ? LIL_OK : rc;
    if (env->os->fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        rc = lil__seterr(err, LIL_E_CORRUPT, 0, "%s is not a regular file", path);
    if (rc == LIL_OK && (n = env->os->pread(fd, b, sizeof(b), 0)) < 0)
        rc = lil__seterr(err, LIL_E_IO, errno, "read %s: %s", path, lil__errstr(errno));
    lil__os_close(env, fd);
    if (rc == LIL_OK)
        rc = head_parse(err, b, (size_t)n, k, out);
    if (rc == LIL_E_NOTFOUND) {
        lil__log(env, LIL_LOG_WARN,
                 "event=head_unreadable run=%s path=%s reason=\"not a rollback "
                 "record that verifies under this key: torn by a power cut, "
                 "damaged, forged or another key's; taken as none\"",
                 k->run_id, path);
        return LIL_OK;
    }
    *found = rc == LIL_OK;
    return rc;
}

static lil_status head_bytes(struct lil_err *err, const struct lil_head_key *k,
                             const struct journal_head *h, uint8_t b[HEAD_LEN])
{
    memset(b, 0, HEAD_LEN);
    memcpy(b, head_magic, 8);
    lil__wr32(b + 8, 1);
    lil__wr64(b + 16, h->seq);
    memcpy(b + 24, h->salt, LIL_JHEAD_SALT_LEN);
    memcpy(b + 40, h->chain, LIL_SHA256_LEN);
    lil__wr64(b + 72, (uint64_t)lil__wall_ns());
    return head_mac(err, k->key, k->key_len, k->run_id, b, b + HEAD_BODY);
}

/* Open the record for writing: the file there (never through a symlink),
 * or a new one (O_EXCL, 0600); it must be a regular file with no other
 * name (a hard link planted to another file is refused). */
static lil_status open_head(const struct lil_env *env, struct lil_err *err,
                            const char *path, int *fd)
{
    struct stat sb;
    lil_status rc = LIL_E_IO;

    for (int round = 0; round < 2 && rc != LIL_OK; round++) {
        rc = lil__os_open(env, err, path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0, fd);
        if (rc != LIL_OK && err->sys_errno == ENOENT)
            rc = lil__os_open(env, err, path,
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              0600, fd);
        if (rc != LIL_OK && err->sys_errno != EEXIST)
            return rc; /* EEXIST: made meanwhile, open it again */
    }
    if (rc != LIL_OK)
        return rc;
    if (env->os->fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1) {
        lil__os_close(env, *fd);
        *fd = -1;
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "%s is not a regular file of its own: not written", path);
    }
    return LIL_OK;
}

lil_status lil__head_write(const struct lil_env *env, struct lil_err *err,
                           const char *dir, const struct lil_head_key *k,
                           const struct journal_head *h, bool durable)
{
    char path[4400];
    uint8_t b[HEAD_LEN];
    int fd = -1;
    lil_status rc = head_bytes(err, k, h, b);

    head_path(dir, k->run_id, path, sizeof(path));
    if (rc == LIL_OK)
        rc = open_head(env, err, path, &fd);
    if (rc == LIL_OK)
        rc = lil__os_pwrite_all(env, err, fd, b, HEAD_LEN, 0, path);
    if (rc == LIL_OK && durable)
        rc = lil__os_fdatasync(env, err, fd, path);
    lil__os_close(env, fd);
    if (rc == LIL_OK && durable)
        rc = lil__os_fsync_dir(env, err, dir);
    return rc;
}
