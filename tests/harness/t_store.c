/*
 * t_store.c -- one suite, several backends: the store a test case uses is
 * a directory, or, when the suite runs against PostgreSQL, a schema of the
 * test server, or against the in-memory store, "mem:" and the name the
 * schema would have (t.h, t_store).
 *
 * The schema's name is "t" and 16 hex digits of a hash (FNV-1a) of the test
 * case's temporary directory (unique: mkdtemp) and the store's path in it,
 * so parallel tests and the stores of one test never share a schema.  It is
 * created with lil_store_schema (`lil db init`) the first time the test asks
 * for it; the server is thrown away after the run (tests/pg), schemas and
 * all.
 */
#define _GNU_SOURCE
#include <lil/lil.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"

#define KNOWN_MAX 64

int t_store_pg(void)
{
    const char *e = getenv("LIL_TEST_STORE");

    return e && strcmp(e, "pg") == 0;
}

int t_store_mem(void)
{
    const char *e = getenv("LIL_TEST_STORE");

    return e && strcmp(e, "mem") == 0;
}

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* path relative to the test's directory (the same store, however named). */
static const char *relative(const char *path)
{
    size_t n = strlen(t_tmpdir());

    if (strncmp(path, t_tmpdir(), n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

/* Create the schema of url once per process (lil_store_schema is
 * idempotent, but costs a round trip or three). */
static void ensure_schema(const char *url)
{
    static char known[KNOWN_MAX][1024];
    static int next;
    lil_schema_info info;

    for (int i = 0; i < KNOWN_MAX; i++)
        if (strcmp(known[i], url) == 0)
            return;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (lil_store_schema(NULL, url, LIL_SCHEMA_INIT, &info) != LIL_OK) {
        fprintf(stderr, "t_store: lil db init of %s: %s\n", url, lil_errmsg());
        t_fail();
        return;
    }
    snprintf(known[next++ % KNOWN_MAX], sizeof(known[0]), "%s", url);
}

/* The schema of the store at path for this test case: "t" and 16 hex. */
static void schema_of(const char *path, char *out, size_t cap)
{
    const char *rel = relative(path);
    uint64_t h = 0xcbf29ce484222325ull;

    h = fnv1a(h, t_tmpdir(), strlen(t_tmpdir()) + 1);
    h = fnv1a(h, rel, strlen(rel));
    snprintf(out, cap, "t%016llx", (unsigned long long)h);
}

static const char *server(void)
{
    const char *base = getenv("LIL_TEST_PG");

    if (!base || !*base) {
        fprintf(stderr, "t_store: LIL_TEST_STORE=pg, but LIL_TEST_PG is not set\n");
        t_fail();
        return NULL;
    }
    return base;
}

const char *t_store(const char *path)
{
    static char bufs[8][1024];
    static int next;
    const char *base;
    char schema[32], *b;

    if (t_store_mem()) {
        schema_of(path, schema, sizeof(schema));
        b = bufs[next++ % 8];
        snprintf(b, sizeof(bufs[0]), "mem:%s", schema);
        return b;
    }
    if (!t_store_pg() || !(base = server()))
        return path;
    schema_of(path, schema, sizeof(schema));
    b = bufs[next++ % 8];
    snprintf(b, sizeof(bufs[0]), "%s%sschema=%s", base, strchr(base, '?') ? "&" : "?",
             schema);
    ensure_schema(b);
    return b;
}

int t_store_sql(const char *path, const char *sql, char *out, size_t cap)
{
    char schema[32], file[4200], cmd[8192], text[8192];
    const char *base = server();
    size_t n = 0;
    FILE *f;

    if (!base)
        return -1;
    schema_of(path, schema, sizeof(schema));
    for (const char *p = sql; *p && n + 40 < sizeof(text); p++) {
        if (*p == '@')
            n += (size_t)snprintf(text + n, sizeof(text) - n, "\"%s\"", schema);
        else
            text[n++] = *p;
    }
    text[n] = '\0';
    snprintf(file, sizeof(file), "%s/.t_store.sql", t_tmpdir());
    f = fopen(file, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        return -1;
    snprintf(cmd, sizeof(cmd), "psql -X -q -A -t -v ON_ERROR_STOP=1 -d '%s' -f '%s'",
             base, file);
    return t_run(cmd, out, cap, 1);
}
