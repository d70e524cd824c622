/*
 * fuzz_spec.c -- libFuzzer target: bytes as a loop spec through the public
 * lil_spec_parse (the first byte picks YAML or JSON syntax), then every
 * diagnostic and, for a valid spec, lil_spec_json and lil_spec_explain.
 *
 * Invariants (a violation traps, so the fuzzer keeps the input):
 *  - lil_spec_parse returns LIL_OK or LIL_E_NOMEM, never anything else;
 *  - every diagnostic has a code, a message, a line within the text (or 0)
 *    and a source line that is a line of the text;
 *  - lil_spec_ok is 1 exactly when no diagnostic is an error, and then
 *    lil_spec_json and lil_spec_explain give JSON that parses.
 */
#define _GNU_SOURCE
#include <lil/lil.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"

static size_t count_lines(const char *s, size_t len)
{
    size_t n = 1;

    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    return n;
}

static void check_json(const lil_spec *spec,
                       lil_status (*fn)(const lil_spec *, lil_bytes *))
{
    lil_bytes out;
    lil_status rc = fn(spec, &out);
    json_t *doc;

    if (rc == LIL_E_NOMEM)
        return;
    if (rc != LIL_OK)
        fuzz_fail("json/explain of a valid spec: %d", rc);
    doc = json_loadb(out.data, out.len, 0, NULL);
    if (!doc)
        fuzz_fail("json/explain output does not parse");
    json_decref(doc);
    lil_free(out.data);
}

static void check_diags(const lil_spec *spec, const char *text, size_t len)
{
    size_t n = lil_spec_diag_count(spec), errors = 0, lines = count_lines(text, len);

    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);

        if (!d || !d->code || !d->code[0] || !d->message || !d->message[0] ||
            !d->path || !d->source_line || !d->file)
            fuzz_fail("diagnostic %zu incomplete", i);
        if (d->line > lines)
            fuzz_fail("diagnostic line %u past the end (%zu lines)", d->line, lines);
        if (d->source_line[0] &&
            !memmem(text, len, d->source_line, strlen(d->source_line)))
            fuzz_fail("source line is not from the text");
        errors += d->severity == LIL_SEV_ERROR;
    }
    if ((errors == 0) != (lil_spec_ok(spec) == 1))
        fuzz_fail("lil_spec_ok disagrees with the diagnostics");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *name;
    const char *text;
    lil_spec *spec = NULL;
    lil_status rc;

    if (size == 0)
        return 0;
    name = (data[0] & 1) ? "fuzz.json" : "fuzz.yaml";
    text = (const char *)data + 1;
    size--;
    rc = lil_spec_parse(fuzz_env(), name, text, size, NULL, &spec);
    if (rc == LIL_E_NOMEM)
        return 0;
    if (rc != LIL_OK || !spec)
        fuzz_fail("lil_spec_parse: %d", rc);
    check_diags(spec, text, size);
    if (lil_spec_ok(spec)) {
        check_json(spec, lil_spec_json);
        check_json(spec, lil_spec_explain);
    }
    lil_spec_free(spec);
    return 0;
}
