/*
 * buf.h -- a growable byte buffer with a hard cap (curl's dynbuf).
 *
 * Appending past cap fails with LIL_E_TOOBIG; the buffer stays valid.  The
 * contents are always followed by a NUL byte (not counted in len).
 */
#ifndef LIL_BASE_BUF_H
#define LIL_BASE_BUF_H

#include <lil/lil.h>
#include <stddef.h>
#include <stdint.h>

struct lil_env;

struct lil_buf {
    const struct lil_env *env;
    uint8_t *data;
    size_t len;
    size_t alloc;
    size_t cap; /* most bytes it may hold */
};

void lil__buf_init(struct lil_buf *b, const struct lil_env *env, size_t cap);
void lil__buf_free(struct lil_buf *b);
void lil__buf_reset(struct lil_buf *b);
lil_status lil__buf_reserve(struct lil_buf *b, size_t more);
lil_status lil__buf_add(struct lil_buf *b, const void *data, size_t len);
lil_status lil__buf_addstr(struct lil_buf *b, const char *s);
lil_status lil__buf_printf(struct lil_buf *b, const char *fmt, ...) LIL_PRINTF(2, 3);

/* The decimal text of v (no NUL) at out; its length (at most
 * LIL_I64_TEXT_MAX).  No locale, no printf: for names and numbers on hot
 * paths. */
#define LIL_I64_TEXT_MAX 20
size_t lil__i64_text(int64_t v, char out[LIL_I64_TEXT_MAX]);

/* Hand the contents over as an exported block (lil_free) and reset b. */
lil_status lil__buf_export(struct lil_buf *b, lil_bytes *out);

#endif
