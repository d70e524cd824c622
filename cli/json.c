/*
 * json.c -- building and printing the --json / --jsonl documents.
 *
 * Documents are built with jansson and printed once at the end, so a verb
 * that fails half-way prints no half document on stdout.  Builders ignore
 * NULL values (a failed allocation): the key is then missing from the
 * document, which never crashes; cli_json_print reports a NULL root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

int cli_json_print(const struct cli_ctx *ctx, json_t *v, bool compact)
{
    size_t flags = compact ? JSON_COMPACT : JSON_INDENT(2);
    int rc;

    if (!v) {
        cli_err(ctx, "out of memory while building JSON");
        return CLI_EXIT_FAIL;
    }
    rc = json_dumpf(v, stdout, flags);
    json_decref(v);
    if (rc != 0 || fputc('\n', stdout) == EOF) {
        cli_err(ctx, "cannot write JSON to stdout");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

void cli_json_set(json_t *obj, const char *key, json_t *v)
{
    if (obj && v)
        json_object_set_new(obj, key, v);
    else
        json_decref(v);
}

json_t *cli_json_u64(uint64_t v)
{
    return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

json_t *cli_json_time(int64_t ns, bool with_ns)
{
    char buf[64];

    cli_fmt_iso(ns, with_ns, buf, sizeof(buf));
    return json_string(buf);
}

json_t *cli_json_str(const void *data, size_t len)
{
    const char *text = data ? data : "";
    json_t *s = NULL;
    char *buf;

    if (!memchr(text, '\0', len))
        s = json_stringn(text, len);
    if (s)
        return s;
    buf = malloc(len * 4 + 8);
    if (!buf)
        return NULL;
    cli_fmt_printable(text, len, len, buf, len * 4 + 8);
    s = json_string(buf);
    free(buf);
    return s;
}

/* Standard base64 (RFC 4648, with padding) of len bytes; free() it. */
static char *base64(const unsigned char *p, size_t len)
{
    /* the 64 digits, then the pad at index 64 */
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = tab[i + 1 < len ? v >> 6 & 63 : 64];
        *o++ = tab[i + 2 < len ? v & 63 : 64];
    }
    *o = '\0';
    return out;
}

void cli_json_payload(json_t *obj, const void *data, size_t len)
{
    const char *text = data ? data : "";
    json_t *s = NULL;
    char *b64;

    if (!memchr(text, '\0', len))
        s = json_stringn(text, len); /* NULL when not valid UTF-8 */
    if (s) {
        cli_json_set(obj, "payload", s);
        return;
    }
    b64 = base64((const unsigned char *)text, len);
    cli_json_set(obj, "payload_b64", b64 ? json_string(b64) : NULL);
    free(b64);
}
