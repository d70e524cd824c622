/*
 * json.c -- jansson's set-up and memory, scopes, and parsing, printing and
 * packing with lil's status codes (json.h has the design).
 *
 * Nothing here changes jansson's allocator unless a test program calls
 * lil__json_hooks_install; then every block handed to jansson is laid out
 * as
 *
 *     [struct block_header: free_fn, ud][jansson's bytes ...]
 *      ^ from the allocator            ^ what jansson gets
 *
 * The header is HEADER_SIZE bytes (a multiple of max_align_t's alignment,
 * so jansson's bytes keep the allocator's alignment).  jansson never
 * reallocates (it has no realloc hook), so malloc and free are all it needs.
 */
#include "json/json.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"

struct block_header {
    lil_free_fn free_fn; /* the allocator that made the block */
    void *ud;
};

#define MAX_ALIGN _Alignof(max_align_t)
#define HEADER_SIZE \
    ((sizeof(struct block_header) + MAX_ALIGN - 1) / MAX_ALIGN * MAX_ALIGN)

/* The calling thread's binding and its count of refused allocations. */
static _Thread_local const struct lil_env *bound_env;
static _Thread_local unsigned long bound_failures;

/* Written once, inside install() (pthread_once), read-only afterwards;
 * installed says whether it ran. */
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static atomic_bool installed;
static json_malloc_t former_malloc = malloc;
static json_free_t former_free = free;

/* ---- hooks ------------------------------------------------------------------- */

static void free_with_former(void *ud, void *p)
{
    (void)ud;
    former_free(p);
}

static void *refuse(void)
{
    bound_failures++;
    return NULL;
}

static void *hook_malloc(size_t n)
{
    const struct lil_env *env = bound_env;
    struct block_header *h;

    if (n > SIZE_MAX - HEADER_SIZE)
        return refuse();
    h = env ? env->malloc_fn(env->alloc_ud, n + HEADER_SIZE)
            : former_malloc(n + HEADER_SIZE);
    if (!h)
        return refuse();
    h->free_fn = env ? env->free_fn : free_with_former;
    h->ud = env ? env->alloc_ud : NULL;
    return (unsigned char *)h + HEADER_SIZE;
}

static void hook_free(void *p)
{
    struct block_header *h;

    if (!p)
        return;
    h = (struct block_header *)(void *)((unsigned char *)p - HEADER_SIZE);
    h->free_fn(h->ud, h);
}

/* jansson's own functions of the moment (the host's, or malloc and free)
 * when lil's hooks are not installed. */
void *lil__json_malloc(size_t n)
{
    json_malloc_t m;
    json_free_t f;
    void *p;

    if (atomic_load_explicit(&installed, memory_order_acquire))
        return hook_malloc(n ? n : 1);
    json_get_alloc_funcs(&m, &f);
    p = m(n ? n : 1);
    return p ? p : refuse();
}

void lil__json_free(void *p)
{
    json_malloc_t m;
    json_free_t f;

    if (atomic_load_explicit(&installed, memory_order_acquire)) {
        hook_free(p);
        return;
    }
    json_get_alloc_funcs(&m, &f);
    f(p);
}

/* ---- set-up and scopes ----------------------------------------------------------- */

static void install(void)
{
    json_get_alloc_funcs(&former_malloc, &former_free);
    json_set_alloc_funcs(hook_malloc, hook_free);
    atomic_store_explicit(&installed, true, memory_order_release);
    /* jansson seeds its hash function itself, once, at the first object
     * (atomically): seeding here would read /dev/urandom at every start. */
}

void lil__json_hooks_install(void)
{
    pthread_once(&install_once, install);
}

void lil__json_begin(struct lil_json_scope *sc, const struct lil_env *env)
{
    sc->prev = bound_env;
    sc->failures = bound_failures;
    bound_env = env;
}

lil_status lil__json_end(struct lil_json_scope *sc)
{
    bound_env = sc->prev;
    return bound_failures != sc->failures ? LIL_E_NOMEM : LIL_OK;
}

bool lil__json_failed(const struct lil_json_scope *sc)
{
    return bound_failures != sc->failures;
}

/* ---- text ---------------------------------------------------------------------- */

lil_status lil__json_parse(const struct lil_env *env, struct lil_err *err,
                           lil_status bad, const char *text, size_t len, size_t flags,
                           json_error_t *jerr, json_t **out)
{
    struct lil_json_scope sc;
    json_error_t local = {0};
    json_error_t *e = jerr ? jerr : &local;
    lil_status rc;

    lil__json_begin(&sc, env);
    *out = json_loadb(text, len, flags, e);
    rc = lil__json_end(&sc);
    if (rc != LIL_OK || (!*out && json_error_code(e) == json_error_out_of_memory)) {
        json_decref(*out);
        *out = NULL;
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory parsing JSON");
    }
    if (!*out)
        return lil__seterr(err, bad, 0, "invalid JSON at line %d, column %d: %s",
                           e->line, e->column, e->text);
    return LIL_OK;
}

struct dump_ctx {
    struct lil_buf *out;
    lil_status rc;
};

/* The first failure sticks: jansson 2.14 ignores the callback's -1 while it
 * prints an object's key and goes on with the value, so a piece could be
 * missing from a text that looks complete. */
static int dump_to_buf(const char *buffer, size_t size, void *data)
{
    struct dump_ctx *d = data;

    if (d->rc == LIL_OK)
        d->rc = lil__buf_add(d->out, buffer, size);
    return d->rc == LIL_OK ? 0 : -1;
}

static lil_status dump_error(struct lil_err *err, const struct lil_buf *out,
                             lil_status rc)
{
    if (rc == LIL_E_TOOBIG)
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "JSON text is over the limit of %zu bytes", out->cap);
    if (rc == LIL_E_NOMEM)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory printing JSON");
    return lil__seterr(err, LIL_E_INVAL, 0, "this JSON value cannot be printed");
}

/* jansson's own printer: the forms write.c leaves to it. */
static lil_status dump_by_jansson(const struct lil_env *env, const json_t *v,
                                  size_t flags, struct lil_buf *out)
{
    struct dump_ctx d = {out, LIL_OK};
    struct lil_json_scope sc;
    size_t mark = out->len;
    int failed;
    lil_status rc;

    lil__json_begin(&sc, env);
    failed = !v || json_dump_callback(v, dump_to_buf, &d, flags) != 0 || d.rc != LIL_OK;
    rc = lil__json_end(&sc);
    if (!failed && rc == LIL_OK)
        return LIL_OK;
    out->len = mark;
    if (out->data)
        out->data[mark] = '\0';
    if (d.rc != LIL_OK)
        return d.rc;
    return rc == LIL_E_NOMEM ? rc : LIL_E_INVAL;
}

lil_status lil__json_dump(const struct lil_env *env, struct lil_err *err,
                          const json_t *v, size_t flags, struct lil_buf *out)
{
    bool too_deep = true;
    lil_status rc = LIL_OK;

    if (lil__json_write_can(flags)) /* write.c: the same bytes, faster */
        rc = lil__json_write(env, v, flags, out, &too_deep);
    if (too_deep)
        rc = dump_by_jansson(env, v, flags, out);
    return rc == LIL_OK ? LIL_OK : dump_error(err, out, rc);
}

lil_status lil__json_vpack(const struct lil_env *env, struct lil_err *err,
                           const char *fmt, va_list ap, json_t **out)
{
    struct lil_json_scope sc;
    json_error_t e;
    lil_status rc;

    lil__json_begin(&sc, env);
    *out = json_vpack_ex(&e, 0, fmt, ap);
    rc = lil__json_end(&sc);
    if (rc != LIL_OK || (!*out && json_error_code(&e) == json_error_out_of_memory)) {
        json_decref(*out);
        *out = NULL;
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory building JSON");
    }
    if (!*out)
        return lil__seterr(err, LIL_E_INVAL, 0, "JSON pack format '%s': %s", fmt,
                           e.text);
    return LIL_OK;
}
