/*
 * runner_secrets.c -- inputs whose names are secrets' (api_key,
 * db_password: lil__input_is_secret) kept out of the journal
 * (docs/loops.md, "Inputs").
 *
 * The start record holds, in place of each such input's value, a seal:
 *   {"secret": "hmac-sha256:<hex>"}
 * the HMAC-SHA-256 of the value's canonical JSON under the run's digest
 * key (runner_open.c).  The run's own copy of its inputs (lp->fx.inputs)
 * holds the value, and the value joins the secrets redacted from what is
 * journaled and shown (effects/redact.h).
 *
 * Every fold of the journal by a runner (lil__loop_load) finds the seals
 * again and takes each value from the inputs the open was given, else from
 * the environment variable named as the input, else from that name in
 * upper case (the value converted as --input NAME=VALUE converts it), else
 * from the spec's default.  Its HMAC must be the seal's.  A value found nowhere is
 * LIL_E_INVAL naming the input and the ways to give it; another value is LIL_E_INVAL
 * "not the value the run started with" (no value is ever shown).  Replay stays
 * deterministic: an identity or a state that holds the value is computed
 * from the same value as when the run started.
 *
 * The digest key itself is the start record's "digestKey" (64 hex digits,
 * lil__loop_digest_key); it also keys the digests of credentials in http
 * identities (effect_http.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "effects/redact.h"
#include "loop/runner.h"

static int hex_nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool lil__loop_digest_key(const struct lil_loop *lp,
                          uint8_t key[LIL_LOOP_DIGEST_KEY_LEN])
{
    const char *hex = json_string_value(json_object_get(lp->start, "digestKey"));

    if (!hex || strlen(hex) != 2 * (size_t)LIL_LOOP_DIGEST_KEY_LEN)
        return false;
    for (size_t i = 0; i < LIL_LOOP_DIGEST_KEY_LEN; i++) {
        int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return false;
        key[i] = (uint8_t)(hi * 16 + lo);
    }
    return true;
}

/* "hmac-sha256:<hex>" of v's canonical JSON under key, into out (76
 * bytes); false when out of memory. */
static bool seal_of(const struct lil_loop *lp, json_t *v, const uint8_t *key,
                    char out[12 + 2 * LIL_SHA256_LEN + 1])
{
    struct lil_err e;
    struct lil_buf b;
    uint8_t md[LIL_SHA256_LEN];
    bool ok;

    lil__buf_init(&b, lp->env, SIZE_MAX);
    ok = lil__json_canon(lp->env, &e, v, &b) == LIL_OK;
    if (ok) {
        lil__hmac_sha256(key, LIL_LOOP_DIGEST_KEY_LEN, b.data, b.len, md);
        snprintf(out, 13, "hmac-sha256:");
        lil__hex(md, sizeof(md), out + 12);
    }
    explicit_bzero(b.data, b.len);
    lil__buf_free(&b);
    return ok;
}

json_t *lil__inputs_sealed(const struct lil_loop *lp, json_t *inputs,
                           const uint8_t *key)
{
    char seal[12 + 2 * LIL_SHA256_LEN + 1];
    json_t *copy = json_copy(inputs), *v;
    const char *name;
    void *tmp;

    json_object_foreach_safe(copy, tmp, name, v)
    {
        if (!lil__input_is_secret(name))
            continue;
        if (!seal_of(lp, v, key, seal) ||
            json_object_set_new(copy, name, json_pack("{s:s}", "secret", seal)) != 0) {
            json_decref(copy);
            return NULL;
        }
    }
    return copy;
}

/* name in upper case into out (cut to cap). */
static void upper_of(const char *name, char *out, size_t cap)
{
    size_t i = 0;

    for (; name[i] && i + 1 < cap; i++)
        out[i] = (char)toupper((unsigned char)name[i]);
    out[i] = '\0';
}

/* The value of secret input name as the environment gives it (its name,
 * then in upper case; lp->fx.environ, read at open), converted; NULL *out
 * when it gives none. */
static lil_status from_environment(struct lil_loop *lp, const char *name, json_t **out)
{
    char upper[LIL_LOOP_NAME_MAX];
    const char *text = json_string_value(json_object_get(lp->fx.environ, name));

    *out = NULL;
    upper_of(name, upper, sizeof(upper));
    if (!text)
        text = json_string_value(json_object_get(lp->fx.environ, upper));
    if (!text)
        return LIL_OK;
    return lil__inputs_convert(lp->env, &lp->err, lp->ir, name, text, out);
}

static json_t *default_of(const struct lil_ir_spec *ir, const char *name)
{
    for (size_t i = 0; i < ir->ninputs; i++)
        if (strcmp(ir->inputs[i].name, name) == 0)
            return ir->inputs[i].def;
    return NULL;
}

/* The value of the sealed input name, checked against its seal, into
 * *out (a new reference). */
static lil_status unseal_one(struct lil_loop *lp, const char *name, const char *seal,
                             const uint8_t *key, json_t **out)
{
    char again[12 + 2 * LIL_SHA256_LEN + 1];
    json_t *v = json_incref(json_object_get(lp->fx.given, name));
    lil_status rc = v ? LIL_OK : from_environment(lp, name, &v);

    *out = NULL;
    if (rc != LIL_OK)
        return rc;
    if (!v) /* the spec's default, when the run started with it */
        v = json_incref(default_of(lp->ir, name));
    if (!v) {
        char upper[LIL_LOOP_NAME_MAX];

        upper_of(name, upper, sizeof(upper));
        return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                           "run %s: input '%s' is a secret, never journaled: give it "
                           "again (--input %s=VALUE, or the environment variable %s "
                           "or %s)",
                           lp->run_id, name, name, name, upper);
    }
    if (!seal_of(lp, v, key, again)) {
        json_decref(v);
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    }
    if (strcmp(again, seal) != 0) {
        json_decref(v);
        return lil__seterr(&lp->err, LIL_E_INVAL, 0,
                           "run %s: input '%s' is not the value the run started with "
                           "(a secret: its value is not shown); give the same one",
                           lp->run_id, name);
    }
    *out = v;
    return LIL_OK;
}

/* Add v (a secret input's value) to the values redacted. */
static lil_status redact_value(struct lil_loop *lp, json_t *v)
{
    struct lil_buf b;
    lil_status rc;

    if (!lp->fx.redact)
        return LIL_OK;
    if (json_is_string(v))
        return lil__redact_add(lp->fx.redact, &lp->err, json_string_value(v),
                               json_string_length(v));
    lil__buf_init(&b, lp->env, SIZE_MAX);
    rc = lil__json_canon(lp->env, &lp->err, v, &b);
    if (rc == LIL_OK)
        rc = lil__redact_add(lp->fx.redact, &lp->err, (const char *)b.data, b.len);
    lil__buf_free(&b);
    return rc;
}

lil_status lil__inputs_unseal(struct lil_loop *lp)
{
    uint8_t key[LIL_LOOP_DIGEST_KEY_LEN];
    json_t *copy, *v, *value = NULL;
    const char *name, *seal;
    void *tmp;
    lil_status rc = LIL_OK;

    if (!lp->ir || !lil__loop_digest_key(lp, key))
        return LIL_OK; /* a reader, or a run started before seals */
    copy = json_copy(lp->fx.inputs);
    if (!copy)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    json_object_foreach_safe(copy, tmp, name, v)
    {
        seal = json_string_value(json_object_get(v, "secret"));
        if (rc != LIL_OK || !seal || !lil__input_is_secret(name))
            continue;
        rc = unseal_one(lp, name, seal, key, &value);
        if (rc == LIL_OK)
            rc = redact_value(lp, value);
        if (rc == LIL_OK && json_object_set_new(copy, name, value) != 0)
            rc = lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
        value = NULL;
    }
    explicit_bzero(key, sizeof(key));
    if (rc != LIL_OK) {
        json_decref(copy);
        return rc;
    }
    json_decref(lp->fx.inputs);
    lp->fx.inputs = copy;
    return LIL_OK;
}
