/*
 * mcp_tools_runs.c -- the read tools of `lil mcp` about runs: list_runs,
 * inspect_run and run_events (docs/mcp.md, "Reading runs").
 *
 * Everything comes from the read API: lil_run_facts and
 * lil_run_events_with open a run read-only, so a run that a live process
 * holds is read all the same.  A run that cannot be read is a tool error
 * with the library's words (lil_status_name as "lil/code"), never a
 * protocol error; an argument the schema lets through but that means
 * nothing (a bad run id, a limit out of range) is -32602.
 *
 * list_runs stays cheap on a big store: the ids are collected once
 * (lil_store_foreach_run), keeping only those with the prefix and after
 * the cursor, sorted, and facts are read in order only until the page is
 * full.  The cursor is the last run id of the previous page, as it is:
 * the next page starts after it in byte order, so runs created meanwhile
 * are never listed twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "mcp_read.h"

#define LIST_DEFAULT   100
#define LIST_MAX       1000
#define EVENTS_DEFAULT 500
#define EVENTS_MAX     10000
#define ITER_MAX       1000000000

/* ---- shared ----------------------------------------------------------------- */

/* Answer r with the failure of a read of run id (NULL: of the store): its
 * status name and the CLI's words ("no run 'R' in store 'S'") or the
 * store's message. */
static void read_failed(struct mcp_req *r, const char *id, lil_status rc)
{
    lil_store *st = r->srv->store;

    if (rc == LIL_E_NOTFOUND && id)
        mcp_req_tool_error(r, lil_status_name(rc), "no run '%s' in store '%s'", id,
                           lil_store_path(st));
    else
        mcp_req_tool_error(r, lil_status_name(rc), "%s",
                           rc == LIL_E_NOMEM ? "out of memory" : lil_store_errmsg(st));
}

/* The run_id argument, or NULL once r is refused with -32602. */
static const char *run_id_arg(struct mcp_req *r, json_t *args)
{
    const char *id = mcp_arg_str(args, "run_id", "");

    if (lil_run_id_check(id) != LIL_OK) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"run_id\" is not a run id: %s", lil_errmsg());
        return NULL;
    }
    return id;
}

/* The facts of run id into *out (a new reference), or the failure. */
static lil_status load_facts(lil_store *st, const char *id, json_t **out)
{
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_facts(st, id, &b);

    *out = NULL;
    if (rc != LIL_OK)
        return rc;
    *out = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    return *out ? LIL_OK : LIL_E_NOMEM;
}

/* ---- list_runs: the ids ------------------------------------------------------- */

struct id_list {
    char **ids;
    size_t n, cap;
    const char *prefix;
    size_t prefix_len;
    const char *after; /* the cursor, or NULL */
    size_t total;      /* ids with the prefix, before and after the cursor */
    bool oom;
};

static int collect_id(void *ud, const char *id)
{
    struct id_list *l = ud;

    if (strncmp(id, l->prefix, l->prefix_len) != 0)
        return 0;
    l->total++;
    if (l->after && strcmp(id, l->after) <= 0)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **grown = realloc(l->ids, cap * sizeof(*grown));
        if (!grown)
            return l->oom = true, 1;
        l->ids = grown;
        l->cap = cap;
    }
    l->ids[l->n] = strdup(id);
    if (!l->ids[l->n])
        return l->oom = true, 1;
    l->n++;
    return 0;
}

static int cmp_ids(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void ids_free(struct id_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->ids[i]);
    free(l->ids);
}

/* ---- list_runs: a row --------------------------------------------------------- */

/* The row of a run whose facts could not be read. */
static json_t *failed_row(lil_store *st, const char *id, lil_status rc)
{
    return json_pack("{s:s, s:n, s:s, s:{s:s, s:s}}", "run", id, "kind", "status",
                     cli_failure_word(rc), "error", "code", lil_status_name(rc),
                     "message",
                     rc == LIL_E_NOMEM ? "out of memory" : lil_store_errmsg(st));
}

/* The row of a run: the cheap part of its facts. */
static json_t *row_of(json_t *f)
{
    static const char *const keys[] = {
        "run",    "kind",       "status",   "ended",      "reason",  "iteration",
        "steps",  "records",    "last_seq", "created_ns", "last_ns", "holder",
        "paused", "wake_at_ms", "queue",    "in_flight",  "usage"};
    json_t *row = json_object(), *v;

    for (size_t i = 0; row && i < sizeof(keys) / sizeof(keys[0]); i++) {
        v = json_object_get(f, keys[i]);
        json_object_set(row, keys[i], v ? v : json_null());
    }
    if (row) {
        v = json_object_get(f, "stop_request");
        json_object_set_new(
            row, "uncertain",
            json_integer((json_int_t)json_array_size(json_object_get(f, "uncertain"))));
        json_object_set_new(row, "stop_requested", json_boolean(v && !json_is_null(v)));
    }
    return row;
}

/* The row of run id, or NULL when out of memory. */
static json_t *read_row(lil_store *st, const char *id)
{
    json_t *f = NULL, *row;
    lil_status rc = load_facts(st, id, &f);

    if (rc != LIL_OK)
        return failed_row(st, id, rc);
    row = row_of(f);
    json_decref(f);
    return row;
}

/* ---- list_runs: filters and the page ------------------------------------------ */

struct list_query {
    const char *status; /* a comma list, or NULL */
    const char *kind;   /* "loop", "program" or NULL */
    size_t limit;
};

/* The item of a comma list at *p, blanks around it left out: *len bytes at
 * the pointer returned; *p moves past it and its comma.  NULL at the end. */
static const char *next_item(const char **p, size_t *len)
{
    const char *item = *p, *end;

    if (!**p)
        return NULL;
    end = strchr(item, ',');
    *len = end ? (size_t)(end - item) : strlen(item);
    *p = end ? end + 1 : item + *len;
    while (*len && *item == ' ')
        item++, (*len)--;
    while (*len && item[*len - 1] == ' ')
        (*len)--;
    return item;
}

/* Is word one of the comma list's items? */
static bool in_list(const char *list, const char *word)
{
    size_t len, wlen = strlen(word);
    const char *item;

    while ((item = next_item(&list, &len)))
        if (len == wlen && strncmp(item, word, len) == 0)
            return true;
    return false;
}

/* The statuses a run can be listed with. */
static const char *const statuses[] = {
    "running", "completed", "failed", "uncertain", "stopped",  "paused", "waiting",
    "damaged", "locked",    "unborn", "key?",      "version?", "error",  NULL};

/* Is every item of the status list a status?  bad: the first that is not. */
static bool statuses_ok(const char *list, char *bad, size_t cap)
{
    size_t len, i;
    const char *item;

    while ((item = next_item(&list, &len))) {
        for (i = 0; statuses[i]; i++)
            if (strlen(statuses[i]) == len && strncmp(item, statuses[i], len) == 0)
                break;
        if (!statuses[i]) {
            snprintf(bad, cap, "%.*s", len > 200 ? 200 : (int)len, item);
            return false;
        }
    }
    return true;
}

static bool wanted(json_t *row, const struct list_query *q)
{
    const char *status = json_string_value(json_object_get(row, "status"));
    const char *kind = json_string_value(json_object_get(row, "kind"));

    if (q->status && (!status || !in_list(q->status, status)))
        return false;
    return !q->kind || (kind && strcmp(kind, q->kind) == 0);
}

/* Read rows of l's ids in order until q's page is full; answer r. */
static void list_page(struct mcp_req *r, struct id_list *l, const struct list_query *q)
{
    json_t *runs = json_array(), *row;
    const char *last = NULL;
    size_t i;

    for (i = 0; runs && i < l->n && json_array_size(runs) < q->limit; i++) {
        row = read_row(r->srv->store, l->ids[i]);
        if (!row || !wanted(row, q)) {
            json_decref(row);
            continue;
        }
        json_array_append_new(runs, row);
        last = l->ids[i];
    }
    if (!runs) {
        mcp_req_tool_error(r, "LIL_E_NOMEM", "out of memory");
        return;
    }
    mcp_req_tool(r,
                 json_pack("{s:o, s:o, s:o}", "runs", runs, "next_cursor",
                           last && i < l->n ? json_string(last) : json_null(), "total",
                           q->status || q->kind ? json_null()
                                                : json_integer((json_int_t)l->total)));
}

void mcp_read_list_runs(struct mcp_req *r, json_t *args)
{
    struct list_query q = {mcp_arg_str(args, "status", NULL),
                           mcp_arg_str(args, "kind", NULL), LIST_DEFAULT};
    struct id_list l = {NULL, 0,
                        0,    mcp_arg_str(args, "prefix", ""),
                        0,    mcp_arg_str(args, "cursor", NULL),
                        0,    false};
    int64_t limit = mcp_arg_int(args, "limit", LIST_DEFAULT);
    char bad[256];
    lil_status rc;

    if (limit < 1 || limit > LIST_MAX) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"limit\" must be 1 to %d", LIST_MAX);
        return;
    }
    if (q.status && !statuses_ok(q.status, bad, sizeof(bad))) {
        mcp_req_error(
            r, MCP_INVALID_PARAMS, NULL,
            "Invalid params: \"status\" must be statuses among running, "
            "completed, failed, uncertain, stopped, paused, waiting, damaged, "
            "locked, unborn, key?, version?, error (a comma list), not '%s'",
            bad);
        return;
    }
    q.limit = (size_t)limit;
    l.prefix_len = strlen(l.prefix);
    rc = lil_store_foreach_run(r->srv->store, collect_id, &l);
    if (rc != LIL_OK || l.oom) {
        read_failed(r, NULL, rc != LIL_OK ? rc : LIL_E_NOMEM);
    } else {
        if (l.n > 1) /* an empty store has no array at all */
            qsort(l.ids, l.n, sizeof(l.ids[0]), cmp_ids);
        list_page(r, &l, &q);
    }
    ids_free(&l);
}

/* ---- inspect_run -------------------------------------------------------------- */

/* {"tool", "arguments": {"run_id", ...}, "text"} appended to hints. */
static void add_hint(json_t *hints, const char *tool, json_t *arguments,
                     const char *text)
{
    json_array_append_new(hints, json_pack("{s:s, s:o, s:s}", "tool", tool, "arguments",
                                           arguments, "text", text));
}

static const char *str_of(json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : dflt;
}

/* The approval a paused loop waits for. */
static void pause_hint(json_t *hints, const char *run, json_t *p)
{
    char text[1200];
    json_int_t it = json_integer_value(json_object_get(p, "iteration"));

    if (strcmp(str_of(p, "kind", ""), "cap") == 0)
        snprintf(text, sizeof(text),
                 "cap %.100s tripped at iteration %lld (breakpoint): approve_run with "
                 "this pause id and a reason lets the loop go on",
                 str_of(p, "cap", "?"), (long long)it);
    else
        snprintf(
            text, sizeof(text),
            "waits for an approval of %.100s (iteration %lld): %.600s; approve_run "
            "with this pause id and a reason releases it",
            str_of(p, "step", "?"), (long long)it, str_of(p, "ask", ""));
    add_hint(hints, "approve_run",
             json_pack("{s:s, s:s}", "run_id", run, "pause_id", str_of(p, "id", "")),
             text);
}

/* The effect without an outcome of an uncertain loop. */
static void uncertain_hint(json_t *hints, const char *run, json_t *u)
{
    char text[1200];

    snprintf(text, sizeof(text),
             "effect %.100s (%.20s %.600s) has no outcome: recover_run with action "
             "retry, assume_done (with its result) or abort, and a reason",
             str_of(u, "slot", "?"), str_of(u, "kind", "?"), str_of(u, "identity", ""));
    add_hint(hints, "recover_run", json_pack("{s:s}", "run_id", run), text);
}

/* What to do next with the run of facts f, as `lil inspect` says it. */
static json_t *hints_of(json_t *f)
{
    json_t *hints = json_array(), *loop = json_object_get(f, "loop");
    const char *run = str_of(f, "run", ""), *status = str_of(f, "status", "");
    json_t *paused = json_object_get(f, "paused"),
           *stop = json_object_get(loop, "stop");
    char text[1200];

    if (!hints || !json_is_object(loop))
        return hints;
    if (json_is_object(paused) && strcmp(status, "paused") == 0)
        pause_hint(hints, run, paused);
    if (strcmp(status, "uncertain") == 0)
        uncertain_hint(hints, run, json_object_get(loop, "uncertain"));
    if (json_is_object(stop) && strcmp(status, "stopped") == 0 &&
        !json_is_true(json_object_get(f, "ended"))) {
        snprintf(text, sizeof(text),
                 "stopped at the request of %.100s: %.600s; resume_run goes on",
                 str_of(stop, "actor", "?"), str_of(stop, "reason", ""));
        add_hint(hints, "resume_run", json_pack("{s:s}", "run_id", run), text);
    }
    if (strcmp(status, "failed") == 0)
        add_hint(hints, "resume_run",
                 json_pack("{s:s, s:b}", "run_id", run, "retry_failed", 1),
                 "fix the cause, then resume_run with retry_failed: the loop goes on "
                 "from the failed iteration");
    return hints;
}

void mcp_read_inspect_run(struct mcp_req *r, json_t *args)
{
    const char *id = run_id_arg(r, args);
    json_t *f = NULL, *hints;
    lil_status rc;

    if (!id)
        return;
    rc = load_facts(r->srv->store, id, &f);
    if (rc != LIL_OK) {
        read_failed(r, id, rc);
        return;
    }
    hints = hints_of(f);
    if (!hints || json_object_set_new(f, "hints", hints) != 0) {
        json_decref(f);
        read_failed(r, NULL, LIL_E_NOMEM);
        return;
    }
    mcp_req_tool(r, f);
}

/* ---- run_events --------------------------------------------------------------- */

/* The options of args, or false once r is refused with -32602. */
static bool events_opts(struct mcp_req *r, json_t *args, lil_events_opts *o)
{
    int64_t from = mcp_arg_int(args, "from_seq", 0);
    int64_t limit = mcp_arg_int(args, "limit", EVENTS_DEFAULT);
    int64_t last = mcp_arg_int(args, "last_iterations", 0);
    const char *types = mcp_arg_str(args, "types", NULL);

    if (from < 0) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"from_seq\" must be 0 or more");
        return false;
    }
    if (limit < 1 || limit > EVENTS_MAX) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"limit\" must be 1 to %d", EVENTS_MAX);
        return false;
    }
    if (last < 0 || last > ITER_MAX) {
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"last_iterations\" must be 0 to %d", ITER_MAX);
        return false;
    }
    memset(o, 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->from_seq = (uint64_t)from;
    o->max = (size_t)limit;
    o->flags = mcp_arg_bool(args, "brief", false) ? LIL_EVENTS_BRIEF : 0;
    o->types = types && *types ? types : NULL;
    o->last_iterations = (size_t)last;
    return true;
}

void mcp_read_run_events(struct mcp_req *r, json_t *args)
{
    const char *id = run_id_arg(r, args);
    lil_events_opts o;
    lil_bytes b = {NULL, 0};
    json_t *page;
    lil_status rc;

    if (!id || !events_opts(r, args, &o))
        return;
    rc = lil_run_events_with(r->srv->store, id, &o, &b);
    if (rc == LIL_E_INVAL) { /* the run id was checked: an option means nothing */
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL, "Invalid params: %s",
                      lil_store_errmsg(r->srv->store));
        return;
    }
    if (rc != LIL_OK) {
        read_failed(r, id, rc);
        return;
    }
    page = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!page)
        read_failed(r, NULL, LIL_E_NOMEM);
    else
        mcp_req_tool(r, page);
}
