/*
 * key_file.c -- the file store's own journal key: <store>/journal.key.
 *
 * A new file store makes a random key of its own the first time it creates
 * a run, a marker or an imported run, so that its journals are keyed
 * (HMAC-SHA-256 chain), its markers and its rollback records authenticated
 * (docs/security.md, "Keys and rollback").  Never made when a key is given
 * (LIL_JOURNAL_KEY, lil_store_set_key), when the store is told not to
 * (LIL_STORE_KEY=off, lil_store_set_own_key), nor in a store that already
 * holds a journal or markers without one (an older store: its unkeyed
 * journals keep opening as they did).
 *
 * Byte layout (64 bytes, little-endian; mirrored in docs/format.md):
 *
 *   off size field
 *     0    8 magic     89 4c 49 4c 4b 45 59 0a ("\x89LILKEY\n")
 *     8    4 version   1
 *    12    4 key_len   32
 *    16   32 key       random bytes (getrandom)
 *    48   12 reserved  zero
 *    60    4 crc       CRC-32 of bytes 0..59
 *
 * The file is mode 0600 and never printed.  It is written whole to a
 * temporary file of an unpredictable name, created with O_EXCL|O_NOFOLLOW,
 * fdatasync'd, hard-linked to its name (link(2) never replaces: a process
 * that loses the race reads the winner's key) and the directory fsync'd,
 * all before the first keyed journal is created.  It is read with
 * O_NOFOLLOW, and must be a regular file of exactly 64 bytes with the
 * magic, version and CRC above: anything else is LIL_E_KEY, never "no key".
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "journal/format.h"
#include "os/os.h"
#include "store/file/store_file.h"

#define KEY_FILE     "journal.key"
#define KEY_FILE_LEN 64u
#define KEY_LEN      32u
static const uint8_t key_magic[8] = {0x89, 'L', 'I', 'L', 'K', 'E', 'Y', '\n'};
#define KEY_VERSION 1u

static lil_status random_bytes(struct lil_err *err, uint8_t *out, size_t n)
{
    ssize_t r;

    do
        r = getrandom(out, n, 0);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)n)
        return lil__seterr(err, LIL_E_IO, r < 0 ? errno : 0,
                           "no random bytes from the kernel for a journal key");
    return LIL_OK;
}

static void key_path(const struct lil_store *st, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", st->where, KEY_FILE);
}

/* Decode the file's bytes into st's key. */
static lil_status parse_key(struct lil_store *st, struct lil_err *err, const char *path,
                            const uint8_t *b, size_t len)
{
    if (len != KEY_FILE_LEN || memcmp(b, key_magic, 8) != 0 ||
        lil__rd32(b + 8) != KEY_VERSION || lil__rd32(b + 12) != KEY_LEN ||
        lil__crc32(0, b, 60) != lil__rd32(b + 60))
        return lil__seterr(err, LIL_E_KEY, 0,
                           "%s is not a lil key file (docs/format.md, \"The store's "
                           "key\"): its journals cannot be read without it",
                           path);
    st->set.key = lil__malloc(st->env, KEY_LEN);
    if (!st->set.key)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    memcpy(st->set.key, b + 16, KEY_LEN);
    st->set.key_len = KEY_LEN;
    return LIL_OK;
}

/* Read the key file: LIL_OK with the key set, LIL_E_NOTFOUND when there is
 * none, LIL_E_KEY when it is not a regular file of the right form. */
static lil_status read_key(struct lil_store *st, struct lil_err *err, const char *path)
{
    uint8_t b[KEY_FILE_LEN + 1];
    struct stat sb;
    int fd = -1;
    ssize_t n;
    lil_status rc =
        lil__os_open(st->env, err, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0, &fd);

    if (rc != LIL_OK && err->sys_errno == ENOENT)
        return LIL_E_NOTFOUND;
    if (rc != LIL_OK && err->sys_errno == ELOOP)
        return lil__seterr(err, LIL_E_KEY, ELOOP, "%s is a symbolic link: refused",
                           path);
    if (rc != LIL_OK)
        return rc;
    if (st->env->os->fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        rc = lil__seterr(err, LIL_E_KEY, 0, "%s is not a regular file: refused", path);
    n = rc == LIL_OK ? st->env->os->pread(fd, b, sizeof(b), 0) : -1;
    if (rc == LIL_OK && n < 0)
        rc = lil__seterr(err, LIL_E_IO, errno, "read %s: %s", path, lil__errstr(errno));
    if (rc == LIL_OK)
        rc = parse_key(st, err, path, b, (size_t)n);
    explicit_bzero(b, sizeof(b));
    lil__os_close(st->env, fd);
    return rc;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);

    return n > t && strcmp(s + n - t, tail) == 0;
}

/* Whether directory dir holds a file whose name ends with one of tails
 * (NULL-terminated). */
static bool dir_holds(const char *dir, const char *const *tails)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;

    if (!d)
        return false;
    while (!found && (e = readdir(d)) != NULL)
        for (const char *const *t = tails; *t && !found; t++)
            found = ends_with(e->d_name, *t);
    closedir(d);
    return found;
}

/* Whether the store already holds a journal or a marker's state (an older
 * store, which stays without a key of its own).  An empty markers
 * directory, or one of lock files only, holds nothing. */
static bool holds_runs(const struct lil_store *st)
{
    static const char *const journals[] = {".lil", NULL};
    static const char *const states[] = {".done", ".pending", NULL};
    char markers[4200];

    snprintf(markers, sizeof(markers), "%s/markers", st->where);
    return dir_holds(st->where, journals) || dir_holds(markers, states);
}

/* The new file's bytes, key included, into b. */
static lil_status new_key_file(struct lil_err *err, uint8_t b[KEY_FILE_LEN])
{
    lil_status rc;

    memset(b, 0, KEY_FILE_LEN);
    memcpy(b, key_magic, 8);
    lil__wr32(b + 8, KEY_VERSION);
    lil__wr32(b + 12, KEY_LEN);
    rc = random_bytes(err, b + 16, KEY_LEN);
    lil__wr32(b + 60, lil__crc32(0, b, 60));
    return rc;
}

/* Write b to a new temporary file of an unpredictable name (O_EXCL, no
 * symlink followed), synced; its name into tmp. */
static lil_status write_tmp_key(struct lil_store *st, struct lil_err *err,
                                const uint8_t *b, char *tmp, size_t cap)
{
    uint8_t r[8];
    char hex[17];
    int fd = -1;
    lil_status rc = random_bytes(err, r, sizeof(r));

    if (rc != LIL_OK)
        return rc;
    lil__hex(r, sizeof(r), hex);
    snprintf(tmp, cap, "%s/.%s.%s", st->where, KEY_FILE, hex);
    rc = lil__os_open(st->env, err, tmp,
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600, &fd);
    if (rc != LIL_OK)
        return rc;
    rc = lil__os_pwrite_all(st->env, err, fd, b, KEY_FILE_LEN, 0, tmp);
    if (rc == LIL_OK)
        rc = lil__os_fdatasync(st->env, err, fd, tmp);
    lil__os_close(st->env, fd);
    if (rc != LIL_OK)
        st->env->os->unlink(tmp);
    return rc;
}

/* Make the key file (or find the one another process made first). */
static lil_status make_key(struct lil_store *st, struct lil_err *err, const char *path)
{
    uint8_t b[KEY_FILE_LEN];
    char tmp[4200];
    int e = 0;
    lil_status rc = lil__store_file_sync_parent((struct file_store *)st, err);

    if (rc == LIL_OK)
        rc = new_key_file(err, b);
    if (rc == LIL_OK)
        rc = write_tmp_key(st, err, b, tmp, sizeof(tmp));
    explicit_bzero(b, sizeof(b));
    if (rc != LIL_OK)
        return rc;
    if (st->env->os->link(tmp, path) < 0)
        e = errno;
    st->env->os->unlink(tmp);
    if (e && e != EEXIST)
        return lil__seterr(err, LIL_E_IO, e, "link %s to %s: %s", tmp, path,
                           lil__errstr(e));
    rc = lil__os_fsync_dir(st->env, err, st->where);
    if (rc == LIL_OK)
        rc = read_key(st, err, path);
    if (rc == LIL_E_NOTFOUND)
        rc = lil__seterr(err, LIL_E_IO, ENOENT, "%s vanished as it was made", path);
    return rc;
}

/* The store's own_key (store.h): called under the store's mutex while the
 * store has neither a key nor a decision. */
lil_status lil__store_file_own_key(struct lil_store *st, struct lil_err *err,
                                   bool create)
{
    char path[4200];
    lil_status rc;

    key_path(st, path, sizeof(path));
    rc = read_key(st, err, path);
    if (rc == LIL_OK || (rc == LIL_E_NOTFOUND && !create)) {
        if (rc == LIL_OK)
            st->own_key = NULL; /* found: decided */
        return LIL_OK;
    }
    if (rc != LIL_E_NOTFOUND)
        return rc;
    if (holds_runs(st)) { /* an older store without a key: it stays so */
        st->own_key = NULL;
        return LIL_OK;
    }
    rc = make_key(st, err, path);
    if (rc == LIL_OK)
        st->own_key = NULL;
    return rc;
}
