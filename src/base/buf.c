/*
 * buf.c -- growable byte buffer with a hard cap.
 */
#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/assert.h"

void lil__buf_init(struct lil_buf *b, const struct lil_env *env, size_t cap)
{
    b->env = env;
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    b->cap = cap;
}

void lil__buf_free(struct lil_buf *b)
{
    lil__free(b->env, b->data);
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
}

void lil__buf_reset(struct lil_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

lil_status lil__buf_reserve(struct lil_buf *b, size_t more)
{
    size_t need, n;
    uint8_t *p;

    /* data (NULL until the first reserve) has room for len bytes and a NUL */
    LIL_ASSERT(b->len <= b->cap && (b->alloc == 0 || b->len < b->alloc));
    LIL_ASSERT((b->data == NULL) == (b->alloc == 0));
    if (more > b->cap || b->len > b->cap - more)
        return LIL_E_TOOBIG;
    need = b->len + more + 1;
    if (need <= b->alloc)
        return LIL_OK;
    n = b->alloc ? b->alloc : 64;
    while (n < need)
        n = n > SIZE_MAX / 2 ? need : n * 2;
    p = lil__realloc(b->env, b->data, n);
    if (!p)
        return LIL_E_NOMEM;
    b->data = p;
    b->alloc = n;
    return LIL_OK;
}

lil_status lil__buf_add(struct lil_buf *b, const void *data, size_t len)
{
    lil_status rc = lil__buf_reserve(b, len);

    if (rc != LIL_OK)
        return rc;
    LIL_ASSERT(b->len + len < b->alloc);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return LIL_OK;
}

lil_status lil__buf_addstr(struct lil_buf *b, const char *s)
{
    return lil__buf_add(b, s, strlen(s));
}

lil_status lil__buf_printf(struct lil_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    lil_status rc;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return LIL_E_INVAL;
    rc = lil__buf_reserve(b, (size_t)n);
    if (rc != LIL_OK)
        return rc;
    LIL_ASSERT(b->len + (size_t)n < b->alloc);
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return LIL_OK;
}

size_t lil__i64_text(int64_t v, char out[LIL_I64_TEXT_MAX])
{
    char digits[LIL_I64_TEXT_MAX];
    size_t i = sizeof(digits), len;
    uint64_t u = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;

    do {
        digits[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        digits[--i] = '-';
    len = sizeof(digits) - i;
    memcpy(out, digits + i, len);
    return len;
}

lil_status lil__buf_export(struct lil_buf *b, lil_bytes *out)
{
    void *p = lil__export_copy(b->env, b->data, b->len);

    if (!p)
        return LIL_E_NOMEM;
    out->data = p;
    out->len = b->len;
    lil__buf_reset(b);
    return LIL_OK;
}
