/*
 * image.c -- a journal file read whole into a private copy (another process
 * may truncate the file meanwhile), and the pid of the process that holds
 * it, found in that copy: the last OPEN record with no CLOSE after it.
 * Used by the journal's open (journal.c: who holds a locked run) and by
 * the check (check.c).
 */
#include "journal/image.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "journal/format.h"
#include "journal/scan.h"
#include "os/os.h"

/* ---- the holder's pid --------------------------------------------------- */

static lil_status note_open(void *ud, const struct lil_rec *rec, struct lil_err *err)
{
    char text[64];
    int pid = 0;

    (void)err;
    if (rec->type == LIL_REC_CLOSE) /* the opener closed it after that */
        *(int *)ud = 0;
    if (rec->type != LIL_REC_OPEN || rec->payload_len >= sizeof(text))
        return LIL_OK;
    memcpy(text, rec->payload, rec->payload_len);
    text[rec->payload_len] = '\0';
    if (sscanf(text, "{\"pid\":%d", &pid) == 1)
        *(int *)ud = pid;
    return LIL_OK;
}

/* Open path (taking its lock when lock is set, before reading) and load a
 * private copy: another process may truncate the file meanwhile. */
lil_status lil__journal_image_load(const struct lil_env *env, struct lil_err *err,
                                   const char *path, bool lock, int *fd, uint8_t **map,
                                   uint64_t *len)
{
    lil_status rc = lil__os_open_regular(env, err, path,
                                         (lock ? O_RDWR : O_RDONLY) | O_CLOEXEC, 0, fd);

    *map = NULL;
    *len = 0;
    if (rc != LIL_OK)
        return err->sys_errno == ENOENT
                   ? lil__seterr(err, LIL_E_NOTFOUND, ENOENT, "%s does not exist", path)
                   : rc;
    if (lock && (rc = lil__os_lock_try(env, err, *fd, path)) != LIL_OK)
        return rc;
    return lil__os_load(env, err, *fd, path, false, map, len);
}

void lil__journal_image_free(const struct lil_env *env, int fd, uint8_t *map,
                             uint64_t len)
{
    lil__os_unload(env, map, len, false);
    lil__os_close(env, fd);
}

int lil__journal_holder_pid(const struct lil_env *env, const char *path,
                            const uint8_t *key, size_t key_len)
{
    struct lil_err err;
    struct scan_result res;
    struct lil_mac *mac = NULL;
    uint8_t *map = NULL;
    uint64_t len = 0;
    int fd = -1, pid = 0;

    if (lil__journal_image_load(env, &err, path, false, &fd, &map, &len) == LIL_OK &&
        map &&
        lil__scan_header(env, &err, path, map, (size_t)len, key, key_len, &mac, &res) ==
            LIL_OK)
        lil__scan_records(env, &err, path, map, (size_t)len, mac, false, (size_t)-1 / 4,
                          note_open, &pid, &res);
    lil__mac_free(env, mac);
    lil__journal_image_free(env, fd, map, len);
    return pid;
}
