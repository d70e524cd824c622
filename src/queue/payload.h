/*
 * payload.h -- what a queued loop run carries in the store's queue: the
 * store keeps a payload it never reads (store.h, "the queue"); for a loop
 * run it is canonical JSON,
 *
 *   {"inputs":{...},"name":"<spec name>","sha256":"<hex>","spec":"<text>"}
 *
 * the spec's text and the name it was loaded under, the digest of its
 * normalized form (lil__queue_spec_digest) and the resolved inputs.  The
 * PostgreSQL store's schema 3 built the payloads of runs queued under
 * schema 2 from their columns in this form (store_pg_schema.c).
 */
#ifndef LIL_QUEUE_PAYLOAD_H
#define LIL_QUEUE_PAYLOAD_H

#include <jansson.h>

#include "base/buf.h"
#include "base/env.h"
#include "base/err.h"

/* A payload read back; strings NUL-terminated, lil__free'd by
 * lil__queue_payload_free. */
struct queue_payload {
    char *name; /* the name the spec was loaded under */
    char *spec; /* its text, spec_len bytes */
    size_t spec_len;
    char *sha256; /* hex digest, or "" */
    char *inputs; /* the resolved inputs: compact JSON text of an object */
};

/* Append the payload of a run to queue to out. */
lil_status lil__queue_payload_encode(const struct lil_env *env, struct lil_err *err,
                                     const char *name, const char *spec,
                                     size_t spec_len, const char *sha256,
                                     json_t *inputs, struct lil_buf *out);

/* Read a payload (len bytes); LIL_E_CORRUPT when it is not one. */
lil_status lil__queue_payload_decode(const struct lil_env *env, struct lil_err *err,
                                     const void *data, size_t len,
                                     struct queue_payload *out);
void lil__queue_payload_free(const struct lil_env *env, struct queue_payload *p);

#endif
