/*
 * serve_api_runs.c -- the read routes of `lil serve` (serve.h; docs/serve.md,
 * "HTTP API"): a page of runs, a run's facts, a page of its events, its
 * state at an iteration, its spec.
 *
 * A page of runs is the index's (serve_index.c): nothing is read from the
 * store to answer it.  The others read one run through the read API
 * (lil_run_facts, lil_run_events_with), which opens it read-only: a run a
 * live process holds is read all the same.  A query value out of range or
 * unknown is 400, the parameter named; a run that is not there is 404.
 * The spec a run names is read only when its real path is a regular file
 * under --spec-root (spec_root.c, as the actions run it): 403 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../spec_root.h"
#include "serve.h"
#include "serve_index.h"

#define RUNS_LIMIT_DEFAULT   50
#define RUNS_LIMIT_MAX       500
#define EVENTS_LIMIT_DEFAULT 500
#define EVENTS_LIMIT_MAX     2000
#define SEQ_MAX              INT64_C(4611686018427387904) /* 2^62 */
#define ITERATION_MAX        INT64_C(1000000000000)
#define SPEC_MAX             ((size_t)1 << 20) /* bytes of a spec read */

/* ---- shared -------------------------------------------------------------- */

/* Answer the failure rc of a read of the call's run. */
static void read_failed(struct serve_call *c, struct serve_answer *a, lil_status rc)
{
    if (rc == LIL_E_NOTFOUND)
        serve_fail(a, 404, "no run '%s'", c->arg);
    else if (rc == LIL_E_NOMEM)
        serve_fail(a, 500, "out of memory");
    else
        serve_fail(a, 500, "%s: %s", lil_status_name(rc),
                   lil_store_errmsg(c->srv->store));
}

/* A document of the library (lil_bytes, freed here) as JSON. */
static json_t *take_doc(lil_bytes *b)
{
    json_t *v = json_loadb(b->data, b->len, 0, NULL);

    lil_free(b->data);
    b->data = NULL;
    return v;
}

/* Is s one of the NULL-terminated words? */
static bool one_of(const char *s, const char *const *words)
{
    for (size_t i = 0; words[i]; i++)
        if (strcmp(s, words[i]) == 0)
            return true;
    return false;
}

/* Each item of the comma list is one of words: 0, or -1 with the first
 * that is not in err. */
static int check_list(const char *list, const char *const *words, char *bad,
                      size_t bad_len)
{
    char item[64];

    for (const char *p = list; p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        snprintf(item, sizeof(item), "%.*s", (int)len, p);
        if (len >= sizeof(item) || !one_of(item, words)) {
            snprintf(bad, bad_len, "%.*s", (int)(len < 64 ? len : 64), p);
            return -1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* ---- GET /api/runs ------------------------------------------------------- */

/* The filter of a page of runs from the query: 0, or -1 and a's 400. */
static int runs_filter(const struct serve_query *q, struct serve_filter *f,
                       struct serve_answer *a)
{
    static const char *const kinds[] = {"loop", "program", NULL};
    static const char *const sorts[] = {"last", "id", NULL};
    char err[256], bad[80];
    int64_t offset, limit;

    memset(f, 0, sizeof(*f));
    f->status = serve_query_get(q, "status");
    f->kind = serve_query_get(q, "kind");
    f->q = serve_query_get(q, "q");
    f->sort = serve_query_get(q, "sort");
    if (f->status && *f->status &&
        check_list(f->status, serve_index_words, bad, sizeof(bad)) != 0) {
        serve_fail(a, 400, "status: no status '%s'", bad);
        return -1;
    }
    if (f->kind && *f->kind && !one_of(f->kind, kinds)) {
        serve_fail(a, 400, "kind: 'loop' or 'program'");
        return -1;
    }
    if (f->sort && *f->sort && !one_of(f->sort, sorts)) {
        serve_fail(a, 400, "sort: 'last' or 'id'");
        return -1;
    }
    if (serve_query_int(q, "offset", 0, SEQ_MAX, 0, &offset, err, sizeof(err)) != 0 ||
        serve_query_int(q, "limit", 1, RUNS_LIMIT_MAX, RUNS_LIMIT_DEFAULT, &limit, err,
                        sizeof(err)) != 0) {
        serve_fail(a, 400, "%s", err);
        return -1;
    }
    f->offset = (size_t)offset;
    f->limit = (size_t)limit;
    return 0;
}

void serve_get_runs(struct serve_call *c, struct serve_answer *a)
{
    struct serve_filter f;

    if (runs_filter(c->query, &f, a) != 0)
        return;
    serve_ok(a, serve_index_page(c->srv, &f));
}

/* ---- GET /api/runs/{id} -------------------------------------------------- */

void serve_get_run(struct serve_call *c, struct serve_answer *a)
{
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_facts(c->srv->store, c->arg, &b);

    if (rc != LIL_OK) {
        read_failed(c, a, rc);
        return;
    }
    serve_ok(a, take_doc(&b));
}

/* ---- GET /api/runs/{id}/events ------------------------------------------- */

/* types: a comma list of event type names (lowercase letters and '_'). */
static bool types_ok(const char *types)
{
    for (const char *p = types; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || *p == '_' || *p == ','))
            return false;
    return true;
}

void serve_get_run_events(struct serve_call *c, struct serve_answer *a)
{
    lil_events_opts o = {.struct_size = sizeof(o)};
    lil_bytes b = {NULL, 0};
    const char *types = serve_query_get(c->query, "types");
    int64_t from, limit, iterations;
    char err[256];
    lil_status rc;

    if (serve_query_int(c->query, "from", 0, SEQ_MAX, 0, &from, err, sizeof(err)) ||
        serve_query_int(c->query, "limit", 1, EVENTS_LIMIT_MAX, EVENTS_LIMIT_DEFAULT,
                        &limit, err, sizeof(err)) ||
        serve_query_int(c->query, "iterations", 0, ITERATION_MAX, 0, &iterations, err,
                        sizeof(err))) {
        serve_fail(a, 400, "%s", err);
        return;
    }
    if (types && !types_ok(types)) {
        serve_fail(a, 400, "types: event type names, comma-separated");
        return;
    }
    o.from_seq = (uint64_t)from;
    o.max = (size_t)limit;
    o.types = types;
    o.last_iterations = (size_t)iterations;
    rc = lil_run_events_with(c->srv->store, c->arg, &o, &b);
    if (rc != LIL_OK) {
        read_failed(c, a, rc);
        return;
    }
    serve_ok(a, take_doc(&b));
}

/* ---- GET /api/runs/{id}/state -------------------------------------------- */
/* One page of iteration_end events from *from (flags as asked): the
 * document, or NULL with *rc. */
static json_t *iteration_ends(lil_store *st, const char *id, uint64_t from, size_t max,
                              unsigned flags, lil_status *rc)
{
    lil_events_opts o = {.struct_size = sizeof(o)};
    lil_bytes b = {NULL, 0};

    o.from_seq = from;
    o.max = max;
    o.flags = flags;
    o.types = "iteration_end";
    *rc = lil_run_events_with(st, id, &o, &b);
    if (*rc != LIL_OK)
        return NULL;
    return take_doc(&b);
}

static bool is_loop_page(const json_t *page)
{
    const char *kind = json_string_value(json_object_get(page, "kind"));

    return kind && strcmp(kind, "loop") == 0;
}

/* The seq of the record that ended iteration n (0: none), through pages
 * of iteration ends without their states; or *rc. */
static uint64_t end_of_iteration(lil_store *st, const char *id, int64_t n,
                                 bool *is_loop, lil_status *rc)
{
    uint64_t from = 1, next;

    for (;;) {
        json_t *page = iteration_ends(st, id, from, 0, 0, rc), *ev;
        size_t i;

        if (!page)
            return 0;
        *is_loop = is_loop_page(page);
        json_array_foreach(json_object_get(page, "events"), i, ev)
        {
            if (json_integer_value(json_object_get(ev, "iteration")) == n) {
                uint64_t seq = (uint64_t)json_integer_value(json_object_get(ev, "seq"));
                json_decref(page);
                return seq;
            }
        }
        next = (uint64_t)json_integer_value(json_object_get(page, "next"));
        if (!json_is_true(json_object_get(page, "more")) || next <= from) {
            json_decref(page);
            return 0;
        }
        json_decref(page);
        from = next;
    }
}

void serve_get_run_state(struct serve_call *c, struct serve_answer *a)
{
    lil_store *st = c->srv->store;
    lil_status rc = LIL_OK;
    bool is_loop = false;
    json_t *page, *ev;
    int64_t n;
    uint64_t seq;
    char err[256];

    if (!serve_query_get(c->query, "iteration")) {
        serve_fail(a, 400, "iteration: required (an integer from 0)");
        return;
    }
    if (serve_query_int(c->query, "iteration", 0, ITERATION_MAX, 0, &n, err,
                        sizeof(err)) != 0) {
        serve_fail(a, 400, "%s", err);
        return;
    }
    seq = end_of_iteration(st, c->arg, n, &is_loop, &rc);
    if (rc != LIL_OK) {
        read_failed(c, a, rc);
        return;
    }
    if (seq == 0 && !is_loop) {
        serve_fail(a, 404, "run '%s' is no loop run: it has no iterations", c->arg);
        return;
    }
    if (seq == 0) {
        serve_fail(a, 404,
                   "run '%s' has no state of iteration %lld (not reached, or compacted "
                   "away)",
                   c->arg, (long long)n);
        return;
    }
    page = iteration_ends(st, c->arg, seq, 1, LIL_EVENTS_STATE, &rc);
    ev = json_array_get(json_object_get(page, "events"), 0);
    if (!ev) {
        json_decref(page);
        if (rc != LIL_OK)
            read_failed(c, a, rc);
        else
            serve_fail(a, 404, "run '%s' has no state of iteration %lld", c->arg,
                       (long long)n);
        return;
    }
    serve_ok(a,
             json_pack("{s:s, s:I, s:O, s:O, s:O, s:O}", "run", c->arg, "iteration",
                       (json_int_t)n, "state", json_object_get(ev, "state"), "meters",
                       json_object_get(ev, "meters"), "seq", json_object_get(ev, "seq"),
                       "ts_ns", json_object_get(ev, "ts_ns")));
    json_decref(page);
}

/* ---- GET /api/runs/{id}/spec --------------------------------------------- */
/* The spec a loop run's facts name, under the root: its real path (free),
 * or NULL with a's refusal. */
static char *spec_path_of(struct serve_call *c, const json_t *loop,
                          struct serve_answer *a)
{
    const char *root = c->srv->opts.spec_root;
    char msg[1024], *real;

    if (!root) {
        serve_fail(a, 403, "no --spec-root: no spec may be read");
        return NULL;
    }
    real = cli_spec_root_run_path(
        root, json_string_value(json_object_get(loop, "spec_path")),
        json_string_value(json_object_get(loop, "cwd")), msg, sizeof(msg));
    if (!real)
        serve_fail(a, strncmp(msg, "no such spec", 12) == 0 ? 404 : 403, "%s", msg);
    return real;
}

/* The file at path, SPEC_MAX bytes at most: a new string (free) and *len,
 * or NULL with a's refusal. */
static char *read_spec(const char *path, size_t *len, struct serve_answer *a)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(SPEC_MAX + 1) : NULL;

    *len = 0;
    if (!f) {
        serve_fail(a, 404, "cannot read spec %s", path);
        return NULL;
    }
    if (!text) {
        serve_fail(a, 500, "out of memory");
        (void)fclose(f); /* read only */
        return NULL;
    }
    *len = fread(text, 1, SPEC_MAX + 1, f);
    if (ferror(f) || *len > SPEC_MAX) {
        if (ferror(f))
            serve_fail(a, 500, "cannot read spec %s", path);
        else
            serve_fail(a, 413, "spec %s is larger than 1 MiB", path);
        free(text);
        text = NULL;
    } else {
        text[*len] = '\0';
    }
    (void)fclose(f); /* read only: nothing to lose */
    return text;
}

/* The digest of the spec text (lil_spec_digest), or null when it does not
 * load as a valid spec. */
static json_t *digest_of(lil_env *env, const char *path, const char *text, size_t len)
{
    lil_spec *spec = NULL;
    char hex[65];
    json_t *v = json_null();

    if (lil_spec_parse(env, path, text, len, NULL, &spec) == LIL_OK &&
        lil_spec_ok(spec) && lil_spec_digest(spec, hex) == LIL_OK) {
        json_decref(v);
        v = json_string(hex);
    }
    lil_spec_free(spec);
    return v;
}

/* The answer of a spec read: text, both digests, whether they match. */
static json_t *spec_doc(struct serve_call *c, const json_t *loop, const char *real,
                        const char *text, size_t len)
{
    json_t *file_sha = digest_of(c->srv->env, real, text, len);
    const json_t *run_sha = json_object_get(loop, "spec_sha256");
    json_t *t = json_stringn(text, len);

    if (!t) {
        json_decref(file_sha);
        return json_pack("{s:s}", "error", "the spec is not UTF-8 text");
    }
    return json_pack("{s:s, s:s, s:O?, s:o, s:o, s:O?, s:b}", "run", c->arg, "path",
                     real, "spec_path", json_object_get(loop, "spec_path"), "text", t,
                     "sha256", file_sha, "run_sha256", run_sha, "matches",
                     json_is_string(file_sha) && json_equal(file_sha, run_sha));
}

void serve_get_run_spec(struct serve_call *c, struct serve_answer *a)
{
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_facts(c->srv->store, c->arg, &b);
    json_t *facts, *loop, *doc;
    char *real = NULL, *text = NULL;
    size_t len;

    if (rc != LIL_OK) {
        read_failed(c, a, rc);
        return;
    }
    facts = take_doc(&b);
    loop = json_object_get(facts, "loop");
    if (!facts)
        serve_fail(a, 500, "out of memory");
    else if (!json_is_object(loop))
        serve_fail(a, 404, "run '%s' is no loop run: it names no spec", c->arg);
    else if ((real = spec_path_of(c, loop, a)) && (text = read_spec(real, &len, a))) {
        doc = spec_doc(c, loop, real, text, len);
        if (doc && json_object_get(doc, "error"))
            serve_fail(a, 415, "%s", json_string_value(json_object_get(doc, "error")));
        else
            serve_ok(a, json_incref(doc));
        json_decref(doc);
    }
    free(text);
    free(real);
    json_decref(facts);
}
