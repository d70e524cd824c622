/*
 * fuzz_serve.c -- libFuzzer target: bytes as what a browser sends `lil
 * serve` before any handler runs.
 *
 * The input's first line is "METHOD PATH[?QUERY]"; the rest is a form
 * body (POST /login's).  The method and path go through serve_route_find
 * (with a roomy and a tiny buffer for the path's {id}), the query and the
 * body through serve_query_parse, then every parameter through
 * serve_query_get and the integer parameters of the API through
 * serve_query_int.  The files of cli/serve/ that do this (serve_route.c,
 * serve_query.c, serve_assets.c, and cli/fmt.c for UTF-8) are compiled in;
 * the handlers the route table names are empty here (never called).
 *
 * Invariants (a violation traps, so the fuzzer keeps the input):
 *  - serve_route_find answers 0, 404 or 405; with 0 the route's method is
 *    the one asked, {id} is a non-empty segment of the path that fits the
 *    buffer, and a route without {id} leaves "";
 *  - serve_query_parse gives at most SERVE_QUERY_MAX parameters with
 *    non-empty keys, no key twice, values without NUL of at most
 *    SERVE_VALUE_MAX bytes; or fails with a reason and nothing kept;
 *  - serve_query_int gives a value within its bounds (the default when
 *    absent), or fails with a reason;
 *  - no crash, no leak, no hang (ASan, LeakSanitizer, libFuzzer's timeout).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"
#include "serve/serve_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)           \
    do {                      \
        if (!(cond))          \
            __builtin_trap(); \
    } while (0)

/* The route table's handlers: empty, never called here. */
#define EMPTY_HANDLER(name)                                 \
    void name(struct serve_call *c, struct serve_answer *a) \
    {                                                       \
        (void)c;                                            \
        (void)a;                                            \
    }
EMPTY_HANDLER(serve_get_runs)
EMPTY_HANDLER(serve_get_run)
EMPTY_HANDLER(serve_get_run_events)
EMPTY_HANDLER(serve_get_run_state)
EMPTY_HANDLER(serve_get_run_spec)
EMPTY_HANDLER(serve_post_stop)
EMPTY_HANDLER(serve_post_approve)
EMPTY_HANDLER(serve_post_recover)
EMPTY_HANDLER(serve_post_resume)
EMPTY_HANDLER(serve_get_jobs)
EMPTY_HANDLER(serve_get_lab)
EMPTY_HANDLER(serve_post_lab_start)
EMPTY_HANDLER(serve_post_lab_kill)
EMPTY_HANDLER(serve_post_lab_resume)
EMPTY_HANDLER(serve_post_lab_recover)
EMPTY_HANDLER(serve_get_session)
EMPTY_HANDLER(serve_post_logout)

static void check_route(const char *method, const char *path, size_t arg_len)
{
    const struct serve_route *route = NULL;
    char arg[SERVE_ARG_MAX + 8];
    int rc;

    memset(arg, 'x', sizeof(arg));
    rc = serve_route_find(method, path, &route, arg, arg_len);
    CHECK(rc == 0 || rc == 404 || rc == 405);
    if (rc != 0)
        return;
    CHECK(route && strcmp(route->method, method) == 0);
    CHECK(memchr(arg, '\0', arg_len) != NULL);
    if (strchr(route->pattern, '{')) {
        CHECK(arg[0] != '\0' && !strchr(arg, '/') && strstr(path, arg));
        if (strstr(route->pattern, "{file}"))
            CHECK(serve_asset_find(arg) && serve_asset_type(arg));
    } else {
        CHECK(arg[0] == '\0' && strcmp(route->pattern, path) == 0);
    }
}

static void check_ints(const struct serve_query *q)
{
    static const struct {
        const char *key;
        int64_t min, max, dflt;
    } ints[] = {
        {"limit", 1, 500, 50},
        {"offset", 0, INT64_MAX, 0},
        {"from", 0, INT64_MAX, 1},
        {"iteration", -1, 1000000, -1},
    };

    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        char err[256] = "";
        int64_t v = -7;
        int rc = serve_query_int(q, ints[i].key, ints[i].min, ints[i].max, ints[i].dflt,
                                 &v, err, sizeof(err));
        if (rc == 0)
            CHECK(v >= ints[i].min && v <= ints[i].max &&
                  (serve_query_get(q, ints[i].key) || v == ints[i].dflt));
        else
            CHECK(rc == -1 && err[0] != '\0');
    }
}

static void check_query(const char *raw, size_t len)
{
    struct serve_query q;
    char err[256] = "";

    memset(&q, 0xa5, sizeof(q));
    if (serve_query_parse(raw, len, &q, err, sizeof(err)) != 0) {
        CHECK(q.n == 0 && err[0] != '\0');
        return;
    }
    CHECK(q.n <= SERVE_QUERY_MAX);
    for (size_t i = 0; i < q.n; i++) {
        CHECK(q.kv[i].key[0] != '\0' && strlen(q.kv[i].key) <= SERVE_VALUE_MAX);
        CHECK(strlen(q.kv[i].value) <= SERVE_VALUE_MAX);
        CHECK(serve_query_get(&q, q.kv[i].key) == q.kv[i].value); /* no key twice */
    }
    check_ints(&q);
    serve_query_free(&q);
    CHECK(q.n == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    size_t line = nl ? (size_t)(nl - text) : size;
    char *first = strndup(text, line); /* cut at a NUL, as a header is */
    char *space, *query;

    if (!first)
        return 0;
    space = strchr(first, ' ');
    if (space) {
        *space = '\0';
        query = strchr(space + 1, '?');
        if (query)
            *query++ = '\0';
        check_route(first, space + 1, SERVE_ARG_MAX + 1);
        check_route(first, space + 1, 4);
        if (query)
            check_query(query, strlen(query));
    }
    free(first);
    if (nl)
        check_query(nl + 1, size - line - 1);
    return 0;
}
