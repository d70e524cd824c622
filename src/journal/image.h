/*
 * image.h -- a journal file as a private image in memory, and the pid of
 * the process holding it (image.c).
 */
#ifndef LIL_JOURNAL_IMAGE_H
#define LIL_JOURNAL_IMAGE_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct lil_env;

/* Open path (taking its lock first when lock is set) and load a private
 * copy of it into *map (*len bytes; NULL for an empty file).  *fd stays
 * open for lil__journal_image_free.  LIL_E_NOTFOUND when path does not
 * exist; LIL_E_LOCKED, LIL_E_IO otherwise. */
lil_status lil__journal_image_load(const struct lil_env *env, struct lil_err *err,
                                   const char *path, bool lock, int *fd, uint8_t **map,
                                   uint64_t *len);

/* Release what lil__journal_image_load made (fd -1 and map NULL: nothing). */
void lil__journal_image_free(const struct lil_env *env, int fd, uint8_t *map,
                             uint64_t len);

/* The pid in the last OPEN record ({"pid":P}) of the file at path with no
 * CLOSE after it, or 0 (key: the journal's key, to read a keyed journal). */
int lil__journal_holder_pid(const struct lil_env *env, const char *path,
                            const uint8_t *key, size_t key_len);

#endif
