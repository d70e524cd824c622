/*
 * spec.c -- the loop-spec front end behind lil_spec_* (lil.h; the public
 * calls and their checks are src/api/specs.c): read a file, parse it into
 * the document tree (yaml_load.c), build and normalize the IR (ir_build.c,
 * normalize.c), validate it (validate.c), and keep every diagnostic with
 * its source line.
 *
 * A spec owns a copy of the env it was loaded with (allocator and system
 * calls), so the caller's env may go away first.  The IR copies what it
 * needs, so the document tree is freed as soon as the IR is built.
 */
#include "loopspec/spec.h"

#include <errno.h>
#include <fcntl.h>
#include <lil/lil.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/buf.h"
#include "base/env.h"
#include "base/err.h"
#include "json/json.h"
#include "loopspec/diag.h"
#include "loopspec/ir/ir.h"
#include "loopspec/node.h"
#include "os/os.h"

static bool spec_ok(const lil_spec *spec)
{
    return spec && spec->magic == LIL_SPEC_MAGIC;
}

static struct lil_doc_limits limits_of(const lil_spec_limits *lim)
{
    struct lil_doc_limits l = {LIL_DOC_MAX_BYTES, LIL_DOC_MAX_DEPTH,
                               LIL_DOC_MAX_SCALAR};

    if (lim && lim->max_bytes)
        l.max_bytes = lim->max_bytes;
    if (lim && lim->max_depth)
        l.max_depth = lim->max_depth;
    if (lim && lim->max_scalar)
        l.max_scalar = lim->max_scalar;
    return l;
}

static lil_status spec_new(const lil_env *env, struct lil_err *err, const char *name,
                           lil_spec **out)
{
    struct lil_env local;
    lil_spec *spec;

    if (!env) {
        lil__os_env_init(&local);
        env = &local;
    }
    spec = lil__calloc(env, 1, sizeof(*spec));
    if (!spec)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    spec->env = *env;
    spec->env.stores_open = 0;
    lil__clearerr(&spec->env.err);
    spec->name = lil__strdup(&spec->env, name ? name : "<spec>");
    if (!spec->name) {
        lil__free(&spec->env, spec);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__diags_init(&spec->diags, &spec->env, spec->name);
    spec->magic = LIL_SPEC_MAGIC;
    *out = spec;
    return LIL_OK;
}

/* Parse, build, validate; diagnostics sorted with their source lines.
 * size is the whole file's (0: unknown) when text is only its first bytes:
 * a text over the limit is refused with that size, at line 1. */
static lil_status spec_compile(lil_spec *spec, const char *text, size_t len,
                               size_t size, const lil_spec_limits *lim)
{
    struct lil_doc_limits l = limits_of(lim);
    struct lil_json_scope sc;
    struct lil_doc doc;
    bool structural_ok;
    lil_status rc = LIL_OK;

    memset(&doc, 0, sizeof(doc));
    lil__json_begin(&sc, &spec->env);
    if (len > l.max_bytes)
        lil__doc_too_big(&spec->diags, size, l.max_bytes);
    else
        rc = lil__doc_parse(&doc, &spec->env, spec->name, text, len, &l, &spec->diags);
    if (rc == LIL_OK && spec->diags.nerrors == 0) /* root NULL: an empty document */
        rc = lil__ir_build_text(&spec->env, doc.root, text, len, &spec->diags,
                                &spec->ir);
    /* As in the reference: no validation of a structurally broken spec. */
    structural_ok = rc == LIL_OK && spec->ir && spec->diags.nerrors == 0;
    if (structural_ok)
        rc = lil__ir_validate(spec->ir, &spec->diags);
    lil__doc_free(&doc);
    if (lil__json_end(&sc) != LIL_OK) /* also a failure the loader got past */
        rc = LIL_E_NOMEM;
    if (rc == LIL_OK)
        lil__diags_attach_source(&spec->diags, text, len);
    if (rc == LIL_OK && spec->diags.nomem)
        rc = LIL_E_NOMEM;
    return rc;
}

static lil_status spec_parse(lil_env *env, struct lil_err *err, const char *name,
                             const char *text, size_t len, size_t size,
                             const lil_spec_limits *lim, lil_spec **out)
{
    lil_spec *spec = NULL;
    lil_status rc;

    *out = NULL;
    rc = spec_new(env, err, name, &spec);
    if (rc != LIL_OK || !spec)
        return rc != LIL_OK ? rc : LIL_E_NOMEM;
    rc = spec_compile(spec, text ? text : "", len, size, lim);
    if (rc == LIL_OK && spec->ir) {
        spec->text = lil__malloc(&spec->env, len + 1);
        if (spec->text) {
            memcpy(spec->text, text ? text : "", len);
            spec->text[len] = '\0';
            spec->text_len = len;
        } else {
            rc = LIL_E_NOMEM;
        }
    }
    if (rc != LIL_OK) {
        lil__spec_free(spec);
        return lil__seterr(err, rc, 0, "%s",
                           rc == LIL_E_NOMEM ? "out of memory"
                                             : "cannot load the spec");
    }
    *out = spec;
    return LIL_OK;
}

lil_status lil__spec_parse(lil_env *env, struct lil_err *err, const char *name,
                           const char *text, size_t len, const lil_spec_limits *lim,
                           lil_spec **out)
{
    return spec_parse(env, err, name, text, len, len, lim, out);
}

/* The size of the open file fd when it is a regular file larger than
 * `read` bytes, else 0 (unknown: a pipe is not read to its end). */
static size_t file_size(const struct lil_env *env, int fd, size_t read)
{
    struct stat st;

    if (env->os->fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (uint64_t)st.st_size <= read || (uint64_t)st.st_size > SIZE_MAX)
        return 0;
    return (size_t)st.st_size;
}

/* Read at most cap bytes of the file at path into b; *size is the file's
 * size when it has more than cap bytes (0 when unknown), else b->len. */
static lil_status read_file(const struct lil_env *env, struct lil_err *err,
                            const char *path, size_t cap, struct lil_buf *b,
                            size_t *size)
{
    int fd = -1;
    lil_status rc;

    rc = lil__os_open(env, err, path, O_RDONLY | O_CLOEXEC, 0, &fd);
    while (rc == LIL_OK && b->len < cap) {
        size_t want = cap - b->len < 65536 ? cap - b->len : 65536;
        ssize_t n;

        rc = lil__buf_reserve(b, want);
        if (rc != LIL_OK) {
            lil__seterr(err, rc, 0, "%s: out of memory", path);
            break;
        }
        n = env->os->read(fd, b->data + b->len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;

            rc = lil__seterr(err, LIL_E_IO, e, "cannot read %s: %s", path,
                             lil__errstr(e));
            break;
        }
        if (n == 0)
            break;
        b->len += (size_t)n;
    }
    *size = rc == LIL_OK && b->len >= cap ? file_size(env, fd, b->len) : b->len;
    lil__os_close(env, fd);
    return rc;
}

lil_status lil__spec_load(lil_env *env, struct lil_err *err, const char *path,
                          const lil_spec_limits *lim, lil_spec **out)
{
    struct lil_env local;
    struct lil_doc_limits l = limits_of(lim);
    struct lil_buf b;
    size_t size = 0;
    lil_status rc;

    *out = NULL;
    if (!env) {
        lil__os_env_init(&local);
        env = &local;
    }
    lil__clearerr(err);
    lil__buf_init(&b, env, l.max_bytes + 1);
    rc = read_file(env, err, path, l.max_bytes + 1, &b, &size);
    if (rc != LIL_OK) {
        lil__buf_free(&b);
        return rc;
    }
    rc = spec_parse(env == &local ? NULL : env, err, path, (const char *)b.data, b.len,
                    size, lim, out);
    lil__buf_free(&b);
    return rc;
}

bool lil__spec_ok(const lil_spec *spec)
{
    return spec_ok(spec) && spec->diags.nerrors == 0 && spec->ir;
}

size_t lil__spec_diag_count(const lil_spec *spec)
{
    return spec_ok(spec) ? spec->diags.n : 0;
}

const lil_diag *lil__spec_diag(const lil_spec *spec, size_t i)
{
    if (!spec_ok(spec) || i >= spec->diags.n)
        return NULL;
    return &spec->diags.v[i].pub;
}

/* What a JSON export of a spec makes: the normalized spec, or the explain
 * document counted from now_ms. */
struct export_what {
    bool explain;
    int64_t now_ms;
};

static json_t *export_make(const lil_spec *spec, struct export_what w)
{
    if (w.explain)
        return lil__ir_explain(spec->ir, &spec->diags, w.now_ms);
    return lil__ir_to_json(spec->ir);
}

/* Print the JSON document of w (compact, keys in the order they were put)
 * as an exported block. */
static lil_status export_json(const lil_spec *spec, struct lil_err *err,
                              struct export_what w, lil_bytes *out)
{
    struct lil_json_scope sc;
    struct lil_err e;
    struct lil_buf text;
    json_t *doc;
    lil_status rc;

    out->data = NULL;
    out->len = 0;
    if (!lil__spec_ok(spec))
        return lil__seterr(err, LIL_E_SPEC, 0, "the spec has errors");
    lil__buf_init(&text, &spec->env, SIZE_MAX);
    lil__json_begin(&sc, &spec->env);
    doc = export_make(spec, w);
    rc = doc ? lil__json_dump(&spec->env, &e, doc, JSON_COMPACT, &text) : LIL_E_NOMEM;
    json_decref(doc);
    if (lil__json_end(&sc) != LIL_OK) /* also a failure make() got past */
        rc = LIL_E_NOMEM;
    if (rc == LIL_OK)
        rc = lil__buf_export(&text, out);
    lil__buf_free(&text);
    return rc == LIL_OK ? rc : lil__seterr(err, rc, 0, "out of memory");
}

lil_status lil__spec_json(const lil_spec *spec, struct lil_err *err, lil_bytes *out)
{
    struct export_what w = {false, 0};

    return export_json(spec, err, w, out);
}

lil_status lil__spec_explain_at(const lil_spec *spec, struct lil_err *err,
                                int64_t now_ms, lil_bytes *out)
{
    struct export_what w = {true, now_ms};

    return export_json(spec, err, w, out);
}

void lil__spec_free(lil_spec *spec)
{
    struct lil_env env;

    if (!spec_ok(spec))
        return;
    env = spec->env;
    spec->magic = 0;
    lil__ir_free(&env, spec->ir);
    lil__diags_free(&spec->diags);
    lil__free(&env, spec->name);
    lil__free(&env, spec->text);
    lil__free(&env, spec);
}

const struct lil_ir_spec *lil__spec_ir(const lil_spec *spec)
{
    return spec_ok(spec) ? spec->ir : NULL;
}

const char *lil__spec_name(const lil_spec *spec)
{
    return spec_ok(spec) && spec->name ? spec->name : "";
}

const char *lil__spec_text(const lil_spec *spec, size_t *len)
{
    bool ok = spec_ok(spec) && spec->text;

    *len = ok ? spec->text_len : 0;
    return ok ? spec->text : NULL;
}

const char *lil__spec_id(const lil_spec *spec)
{
    return spec_ok(spec) && spec->ir && spec->ir->id.s ? spec->ir->id.s : NULL;
}
