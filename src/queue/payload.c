/*
 * payload.c -- a queued loop run's payload (payload.h): canonical JSON
 * written at submit, read back by the worker that claims the run.
 */
#include "queue/payload.h"

#include <string.h>

#include "base/alloc.h"
#include "json/json.h"

lil_status lil__queue_payload_encode(const struct lil_env *env, struct lil_err *err,
                                     const char *name, const char *spec,
                                     size_t spec_len, const char *sha256,
                                     json_t *inputs, struct lil_buf *out)
{
    return lil__json_canon_pack(env, err, out, "{s:O, s:s, s:s, s:s%}", "inputs",
                                inputs, "name", name ? name : "", "sha256", sha256,
                                "spec", spec, spec_len);
}

static char *copy_of(const struct lil_env *env, const json_t *s, size_t *len)
{
    size_t n = json_string_length(s);
    char *p = lil__malloc(env, n + 1);

    if (p) {
        memcpy(p, json_string_value(s), n);
        p[n] = '\0';
    }
    if (len)
        *len = n;
    return p;
}

static lil_status fields(const struct lil_env *env, struct lil_err *err,
                         const json_t *v, struct queue_payload *out)
{
    const json_t *name = json_object_get(v, "name"), *spec = json_object_get(v, "spec");
    const json_t *sha = json_object_get(v, "sha256");
    const json_t *inputs = json_object_get(v, "inputs");
    struct lil_buf text;
    lil_status rc;

    if (!json_is_string(name) || !json_is_string(spec) || !json_is_string(sha) ||
        !json_is_object(inputs))
        return lil__seterr(err, LIL_E_CORRUPT, 0,
                           "the queued run's payload lacks its spec, name, digest or "
                           "inputs");
    out->name = copy_of(env, name, NULL);
    out->spec = copy_of(env, spec, &out->spec_len);
    out->sha256 = copy_of(env, sha, NULL);
    lil__buf_init(&text, env, SIZE_MAX);
    rc = lil__json_canon(env, err, inputs, &text);
    if (rc == LIL_OK && lil__buf_add(&text, "", 1) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    out->inputs = rc == LIL_OK ? (char *)text.data : NULL;
    if (rc != LIL_OK)
        lil__buf_free(&text);
    if (rc == LIL_OK && (!out->name || !out->spec || !out->sha256))
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return rc;
}

lil_status lil__queue_payload_decode(const struct lil_env *env, struct lil_err *err,
                                     const void *data, size_t len,
                                     struct queue_payload *out)
{
    json_t *v = NULL;
    lil_status rc;

    memset(out, 0, sizeof(*out));
    rc = lil__json_parse(env, err, LIL_E_CORRUPT, data, len, 0, NULL, &v);
    if (rc == LIL_OK)
        rc = fields(env, err, v, out);
    json_decref(v);
    if (rc != LIL_OK)
        lil__queue_payload_free(env, out);
    return rc;
}

void lil__queue_payload_free(const struct lil_env *env, struct queue_payload *p)
{
    lil__free(env, p->name);
    lil__free(env, p->spec);
    lil__free(env, p->sha256);
    lil__free(env, p->inputs);
    memset(p, 0, sizeof(*p));
}
