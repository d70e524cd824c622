/*
 * mcp_resources.c -- runs as MCP resources: lil://runs/{id} (the run's
 * facts, lil_run_facts, as JSON) and lil://runs/{id}/events (its typed
 * events, lil_run_events, one JSON object a line; ?from=SEQ reads on),
 * subscriptions and list_changed (docs/mcp.md, "Resources").
 *
 * resources/list lists run ids only (lil_store_foreach_run: no run is
 * opened), 100 a page in byte order of the ids, the cursor being the last
 * id of the page before.  A subscription is s->subscriptions[uri] =
 * {"run", "seq", "stamp", "stop", "at"}: the run's lil_run_mark (seq,
 * stamp), for a facts uri the time of the pending stop request (0: none),
 * and when it was last looked at.  Each tick looks at every subscription
 * (lil_run_poll: one fstat of the journal, or one indexed query, while
 * nothing changes) at most every LOOK_MS and sends
 * notifications/resources/updated when the run grew (or a stop was asked
 * of it, or it is gone).  Once every LIST_MS while a session is
 * initialized, lil_store_poll says whether runs may have been made or
 * removed (one fstat of the store directory, or one query); only then is
 * the list of run ids read, and when it differs from the last one, every
 * initialized session gets notifications/resources/list_changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp.h"

#define PAGE_MAX   100   /* resources in a page of resources/list */
#define EVENTS_CAP 10000 /* events in one read of an events uri */
#define LOOK_MS    100   /* a subscription is looked at at most this often */
#define LIST_MS    1000  /* the list of runs, at most this often */

static const char uri_prefix[] = "lil://runs/";

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- uris ---------------------------------------------------------------- */

/* What a uri names. */
struct res_uri {
    char id[LIL_RUN_ID_MAX + 1]; /* the run id, decoded */
    bool events;                 /* lil://runs/{id}/events */
    uint64_t from;               /* ?from=SEQ of an events uri, else 0 */
};

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode len bytes of in into out (size cap); -1 on a bad escape,
 * a NUL, or too long. */
static int pct_decode(const char *in, size_t len, char *out, size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)in[i];

        if (c == '%') {
            int hi = i + 2 < len ? hex_digit(in[i + 1]) : -1;
            int lo = i + 2 < len ? hex_digit(in[i + 2]) : -1;

            if (hi < 0 || lo < 0 || hi * 16 + lo == 0)
                return -1;
            c = hi * 16 + lo;
            i += 2;
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return 0;
}

/* The query of an events uri: "" or "?from=SEQ". */
static int parse_query(const char *q, uint64_t *from)
{
    char *end;

    if (*q == '\0')
        return 0;
    if (strncmp(q, "?from=", 6) != 0 || q[6] < '0' || q[6] > '9')
        return -1;
    *from = strtoull(q + 6, &end, 10);
    return *end == '\0' ? 0 : -1;
}

/* Read uri into *u: 0, or -1 when it names no run resource. */
static int parse_uri(const char *uri, struct res_uri *u)
{
    const char *rest, *end;

    memset(u, 0, sizeof(*u));
    if (strncmp(uri, uri_prefix, sizeof(uri_prefix) - 1) != 0)
        return -1;
    rest = uri + sizeof(uri_prefix) - 1;
    end = rest + strcspn(rest, "/?#");
    if (pct_decode(rest, (size_t)(end - rest), u->id, sizeof(u->id)) != 0 ||
        lil_run_id_check(u->id) != LIL_OK)
        return -1;
    if (*end == '\0')
        return 0;
    if (strncmp(end, "/events", 7) != 0)
        return -1;
    u->events = true;
    return parse_query(end + 7, &u->from);
}

/* lil://runs/<id, percent-encoded>[suffix] (a new string, or NULL). */
static char *run_uri(const char *id, const char *suffix)
{
    static const char unreserved[] = "-._~";
    size_t len = strlen(id), n = sizeof(uri_prefix) - 1;
    char *out = malloc(n + 3 * len + strlen(suffix) + 1);

    if (!out)
        return NULL;
    memcpy(out, uri_prefix, n);
    for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr(unreserved, *p))
            out[n++] = (char)*p;
        else
            n += (size_t)sprintf(out + n, "%%%02X", *p);
    }
    memcpy(out + n, suffix, strlen(suffix) + 1);
    return out;
}

/* ---- errors -------------------------------------------------------------- */

/* The uri param of r's params, or NULL (r answered: -32602 naming it). */
static const char *uri_param(struct mcp_req *r, json_t *params)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));

    if (!uri)
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"uri\" must be a string");
    return uri;
}

static void not_found(struct mcp_req *r, const char *uri, const char *why)
{
    mcp_req_error(r, MCP_RESOURCE_NOT_FOUND, json_pack("{s:s}", "uri", uri),
                  "Resource not found: %.300s (%.300s)", uri, why);
}

/* Answer r for a failed read of run id: not found, or the store's error. */
static void read_failed(struct mcp_req *r, const char *uri, lil_status rc)
{
    const char *msg = lil_store_errmsg(r->srv->store);

    if (rc == LIL_E_NOTFOUND)
        not_found(r, uri, msg);
    else
        mcp_req_error(r, MCP_INTERNAL_ERROR, json_pack("{s:s}", "uri", uri),
                      "reading %.300s: %.500s", uri, msg);
}

/* ---- resources/list, resources/templates/list ----------------------------- */

struct page {
    const char *after; /* the cursor: ids after it only */
    json_t *ids;       /* at most PAGE_MAX + 1 */
};

static int page_id(void *ud, const char *run_id)
{
    struct page *pg = ud;

    if (pg->after && strcmp(run_id, pg->after) <= 0)
        return 0;
    json_array_append_new(pg->ids, json_string(run_id));
    return json_array_size(pg->ids) > PAGE_MAX ? 1 : 0;
}

static json_t *run_resource(const char *id)
{
    char *uri = run_uri(id, "");
    json_t *res = json_pack("{s:s?, s:s, s:s, s:s}", "uri", uri, "name", id, "mimeType",
                            "application/json", "description",
                            "the run's facts (lil_run_facts); its events at "
                            "uri + \"/events\"");

    free(uri);
    return res;
}

void mcp_resources_list(struct mcp_req *r, json_t *params)
{
    json_t *cursor = json_object_get(params, "cursor");
    struct page pg = {json_string_value(cursor), json_array()};
    json_t *list = json_array(), *result;
    size_t i;

    if ((cursor && (!pg.after || lil_run_id_check(pg.after) != LIL_OK)) || !list) {
        json_decref(pg.ids);
        json_decref(list);
        mcp_req_error(r, MCP_INVALID_PARAMS, NULL,
                      "Invalid params: \"cursor\" must be a nextCursor of an earlier "
                      "resources/list");
        return;
    }
    if (lil_store_foreach_run(r->srv->store, page_id, &pg) != LIL_OK) {
        json_decref(pg.ids);
        json_decref(list);
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "listing runs: %.500s",
                      lil_store_errmsg(r->srv->store));
        return;
    }
    for (i = 0; i < json_array_size(pg.ids) && i < PAGE_MAX; i++)
        json_array_append_new(
            list, run_resource(json_string_value(json_array_get(pg.ids, i))));
    result = json_pack("{s:o}", "resources", list);
    if (result && json_array_size(pg.ids) > PAGE_MAX)
        json_object_set(result, "nextCursor", json_array_get(pg.ids, PAGE_MAX - 1));
    json_decref(pg.ids);
    mcp_req_result(r, result);
}

void mcp_resources_templates(struct mcp_req *r, json_t *params)
{
    (void)params;
    mcp_req_result(
        r, json_pack(
               "{s:[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}]}",
               "resourceTemplates", "uriTemplate", "lil://runs/{id}", "name", "run",
               "title", "A run's facts", "mimeType", "application/json", "description",
               "What the run is now (lil_run_facts): status, steps, meters, "
               "budget, the pause with its id and digest, the uncertain effect.",
               "uriTemplate", "lil://runs/{id}/events", "name", "run-events", "title",
               "A run's events", "mimeType", "application/x-ndjson", "description",
               "The run's history as typed events (lil_run_events), one JSON "
               "object a line, at most 10000 a read; lil://runs/{id}/events?"
               "from=SEQ reads on from record SEQ."));
}

/* ---- resources/read ----------------------------------------------------- */

static json_t *contents(const char *uri, const char *mime, json_t *text, json_t *meta)
{
    json_t *c =
        json_pack("{s:s, s:s, s:o}", "uri", uri, "mimeType", mime, "text", text);

    if (c && meta)
        json_object_set(c, "_meta", meta);
    json_decref(meta);
    return json_pack("{s:[o]}", "contents", c);
}

static void read_facts(struct mcp_req *r, const char *uri, const struct res_uri *u)
{
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_facts(r->srv->store, u->id, &b);

    if (rc != LIL_OK) {
        read_failed(r, uri, rc);
        return;
    }
    mcp_req_result(
        r, contents(uri, "application/json", json_stringn(b.data, b.len), NULL));
    lil_free(b.data);
}

/* Append the events of page (one JSON object a line) to *text; count
 * them.  0, or -1 when out of memory. */
static int append_lines(json_t *page, char **text, size_t *len, size_t *count)
{
    json_t *ev;
    size_t i;

    json_array_foreach(json_object_get(page, "events"), i, ev)
    {
        char *line = json_dumps(ev, JSON_COMPACT);
        size_t n = line ? strlen(line) : 0;
        char *grown = line ? realloc(*text, *len + n + 2) : NULL;

        if (!grown) {
            free(line);
            return -1;
        }
        *text = grown;
        memcpy(*text + *len, line, n);
        (*text)[*len + n] = '\n';
        *len += n + 1;
        (*text)[*len] = '\0';
        (*count)++;
        free(line);
    }
    return 0;
}

/* Where a read of events stopped: {"lil/next", "lil/more", and with more
 * "lil/nextUri"}. */
static json_t *events_meta(const struct res_uri *u, uint64_t next, bool more)
{
    char from[40];
    char *uri;
    json_t *meta =
        json_pack("{s:I, s:b}", "lil/next", (json_int_t)next, "lil/more", more);

    if (!meta || !more)
        return meta;
    snprintf(from, sizeof(from), "/events?from=%llu", (unsigned long long)next);
    uri = run_uri(u->id, from);
    if (uri)
        json_object_set_new(meta, "lil/nextUri", json_string(uri));
    free(uri);
    return meta;
}

/* The pages of u's events, from u->from, up to EVENTS_CAP events. */
static lil_status gather_events(lil_store *st, const struct res_uri *u, char **text,
                                size_t *len, uint64_t *next, bool *more)
{
    size_t count = 0;
    lil_status rc = LIL_OK;

    *next = u->from;
    *more = true;
    while (rc == LIL_OK && *more && count < EVENTS_CAP) {
        lil_bytes b = {NULL, 0};
        json_t *page;

        rc = lil_run_events(st, u->id, *next, EVENTS_CAP - count, &b);
        if (rc != LIL_OK)
            break;
        page = json_loadb(b.data, b.len, 0, NULL);
        lil_free(b.data);
        if (!page || append_lines(page, text, len, &count) != 0)
            rc = LIL_E_NOMEM;
        *next = (uint64_t)json_integer_value(json_object_get(page, "next"));
        *more = json_is_true(json_object_get(page, "more"));
        json_decref(page);
    }
    return rc;
}

static void read_events(struct mcp_req *r, const char *uri, const struct res_uri *u)
{
    char *text = calloc(1, 1);
    size_t len = 0;
    uint64_t next = 0;
    bool more = false;
    lil_status rc =
        text ? gather_events(r->srv->store, u, &text, &len, &next, &more) : LIL_E_NOMEM;

    if (rc == LIL_E_NOMEM)
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "out of memory");
    else if (rc != LIL_OK)
        read_failed(r, uri, rc);
    else
        mcp_req_result(r, contents(uri, "application/x-ndjson", json_stringn(text, len),
                                   events_meta(u, next, more)));
    free(text);
}

void mcp_resources_read(struct mcp_req *r, json_t *params)
{
    const char *uri = uri_param(r, params);
    struct res_uri u;

    if (!uri)
        return;
    if (parse_uri(uri, &u) != 0)
        not_found(r, uri, "lil serves lil://runs/{id} and lil://runs/{id}/events");
    else if (u.events)
        read_events(r, uri, &u);
    else
        read_facts(r, uri, &u);
}

/* ---- subscriptions --------------------------------------------------------- */

/* When the stop request pending for run id was made (ms), 0: none. */
static json_int_t stop_stamp(lil_store *st, const char *id)
{
    lil_bytes b = {NULL, 0};
    json_t *req;
    json_int_t at;

    if (lil_loop_stop_pending(st, id, &b) != LIL_OK)
        return 0;
    req = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    at = json_integer_value(json_object_get(req, "requestedAt"));
    json_decref(req);
    return at ? at : 1;
}

void mcp_resources_subscribe(struct mcp_req *r, json_t *params)
{
    const char *uri = uri_param(r, params);
    lil_run_mark mark = {0, 0};
    struct res_uri u;
    json_t *sub;
    lil_status rc;
    int changed;

    if (!uri)
        return;
    if (parse_uri(uri, &u) != 0) {
        not_found(r, uri, "lil serves lil://runs/{id} and lil://runs/{id}/events");
        return;
    }
    rc = lil_run_poll(r->srv->store, u.id, &mark, &changed);
    if (rc != LIL_OK) {
        read_failed(r, uri, rc);
        return;
    }
    sub = json_pack("{s:s, s:I, s:I, s:I, s:I}", "run", u.id, "seq",
                    (json_int_t)mark.last_seq, "stamp", (json_int_t)mark.stamp, "stop",
                    u.events ? (json_int_t)0 : stop_stamp(r->srv->store, u.id), "at",
                    (json_int_t)now_ms());
    if (!sub || json_object_set_new(r->s->subscriptions, uri, sub) != 0) {
        mcp_req_error(r, MCP_INTERNAL_ERROR, NULL, "out of memory");
        return;
    }
    mcp_req_result(r, json_object());
}

void mcp_resources_unsubscribe(struct mcp_req *r, json_t *params)
{
    const char *uri = uri_param(r, params);

    if (!uri)
        return;
    json_object_del(r->s->subscriptions, uri);
    mcp_req_result(r, json_object());
}

/* ---- tick -------------------------------------------------------------------- */

static void notify(struct mcp_session *s, const char *method, json_t *params)
{
    json_t *msg = mcp_rpc_notification(method, params);

    if (msg && s->notify)
        s->notify(s, msg);
    json_decref(msg);
}

static int64_t field(json_t *sub, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(sub, key));
}

/* Look at one subscription: true when its run changed (sub brought up to
 * date) or is gone (*gone). */
static bool sub_changed(lil_store *st, const char *uri, json_t *sub, bool *gone)
{
    lil_run_mark mark = {(uint64_t)field(sub, "seq"), field(sub, "stamp")};
    int changed = 0;
    json_int_t stop = 0;
    struct res_uri u;
    lil_status rc;

    *gone = false;
    if (parse_uri(uri, &u) != 0)
        return false; /* cannot be: subscribe parsed it */
    rc = lil_run_poll(st, u.id, &mark, &changed);
    if (rc == LIL_E_NOTFOUND) {
        *gone = true;
        return true;
    }
    if (rc != LIL_OK)
        return false; /* a passing error: the next look says */
    if (!u.events) {
        stop = stop_stamp(st, u.id);
        changed |= stop != field(sub, "stop");
    }
    json_object_set_new(sub, "seq", json_integer((json_int_t)mark.last_seq));
    json_object_set_new(sub, "stamp", json_integer((json_int_t)mark.stamp));
    json_object_set_new(sub, "stop", json_integer(stop));
    return changed != 0;
}

static void tick_subscriptions(struct mcp_session *s, int64_t now)
{
    const char *uri;
    json_t *sub;
    void *tmp;
    bool gone;

    json_object_foreach_safe(s->subscriptions, tmp, uri, sub)
    {
        if (now - field(sub, "at") < LOOK_MS)
            continue;
        json_object_set_new(sub, "at", json_integer(now));
        if (!sub_changed(s->srv->store, uri, sub, &gone))
            continue;
        notify(s, "notifications/resources/updated", json_pack("{s:s}", "uri", uri));
        if (gone)
            json_object_del(s->subscriptions, uri);
    }
}

static int collect_id(void *ud, const char *run_id)
{
    return json_array_append_new(ud, json_string(run_id)) == 0 ? 0 : 1;
}

/* The ids of the store's runs now, or NULL. */
static json_t *run_ids(lil_store *st)
{
    json_t *ids = json_array();

    if (ids && lil_store_foreach_run(st, collect_id, ids) != LIL_OK) {
        json_decref(ids);
        ids = NULL;
    }
    return ids;
}

static bool any_initialized(const struct mcp_server *srv)
{
    for (size_t i = 0; i < srv->n_sessions; i++)
        if (srv->sessions[i]->initialized)
            return true;
    return false;
}

/* list_changed to every initialized session when the runs are not those
 * last seen (the first look only takes them in). */
static void tick_list(struct mcp_server *srv, int64_t now)
{
    json_t *ids;
    bool changed;
    int moved = 1;

    if (srv->runs_seen &&
        (!any_initialized(srv) || now - srv->runs_checked_ms < LIST_MS))
        return;
    srv->runs_checked_ms = now;
    if (lil_store_poll(srv->store, &srv->runs_stamp, &moved) == LIL_OK && !moved &&
        srv->runs_seen)
        return; /* no run made or removed: the list is not read */
    ids = run_ids(srv->store);
    if (!ids)
        return;
    changed = srv->runs_seen && !json_equal(ids, srv->runs_seen);
    json_decref(srv->runs_seen);
    srv->runs_seen = ids;
    for (size_t i = 0; changed && i < srv->n_sessions; i++)
        if (srv->sessions[i]->initialized)
            notify(srv->sessions[i], "notifications/resources/list_changed", NULL);
}

void mcp_resources_tick(struct mcp_server *srv)
{
    int64_t now = now_ms();

    for (size_t i = 0; i < srv->n_sessions; i++)
        tick_subscriptions(srv->sessions[i], now);
    tick_list(srv, now);
}
