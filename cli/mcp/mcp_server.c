/*
 * mcp_server.c -- the server of `lil mcp`: sessions, requests in flight,
 * and what is due on each tick (mcp.h).
 *
 * Every incoming message goes through mcp_receive: decoded (mcp_rpc.c),
 * each request made a struct mcp_req on the server's list and handed to
 * mcp_dispatch_request, each notification to mcp_dispatch_notification,
 * and a client's responses ignored (the server sends no requests).  A
 * request leaves the list when it is answered, cancelled, or its session
 * ends.  An out counts the requests it still waits for; the one that
 * answers the last calls out->done.  A batch (protocol 2025-03-26) gets
 * its answers gathered into one array, sent when the last is in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "mcp.h"

const char *const mcp_protocol_versions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07", NULL,
};

int mcp_server_new(const struct mcp_opts *opts, lil_store *store,
                   struct mcp_server **out)
{
    struct mcp_server *srv = calloc(1, sizeof(*srv));

    *out = NULL;
    if (!srv) {
        lil_store_close(store);
        return -1;
    }
    srv->opts = *opts;
    srv->store = store;
    srv->jobs.lil_exe = opts->lil_exe;
    srv->jobs.store = opts->store;
    srv->jobs.shared_store = opts->shared_store;
    srv->jobs.env_allow = opts->env_allow;
    srv->is_pg = opts->store && strstr(opts->store, "://") != NULL;
    *out = srv;
    return 0;
}

void mcp_server_free(struct mcp_server *srv)
{
    if (!srv)
        return;
    while (srv->n_sessions > 0)
        mcp_session_free(srv->sessions[srv->n_sessions - 1]);
    free(srv->sessions);
    cli_jobs_free(&srv->jobs);
    json_decref(srv->runs_seen);
    lil_store_close(srv->store);
    free(srv);
}

/* ---- sessions ------------------------------------------------------------ */

static void session_id(char *id, size_t len)
{
    unsigned char raw[16];
    size_t n = 0;

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        memset(raw, 0, sizeof(raw)); /* cannot happen after boot; still unique below */
    for (size_t i = 0; i < sizeof(raw) && n + 2 < len; i++)
        n += (size_t)snprintf(id + n, len - n, "%02x", raw[i]);
}

struct mcp_session *mcp_session_new(struct mcp_server *srv)
{
    struct mcp_session *s, **grown; /* an array of pointers (sizeof(void *)) */

    if (srv->n_sessions >= MCP_SESSIONS_MAX)
        return NULL;
    grown = realloc(srv->sessions, (srv->n_sessions + 1) * sizeof(void *));
    if (!grown)
        return NULL;
    srv->sessions = grown;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->subscriptions = json_object();
    if (!s->subscriptions) {
        free(s);
        return NULL;
    }
    session_id(s->id, sizeof(s->id));
    s->log_level = 6; /* warning and worse until the client asks */
    s->srv = srv;
    srv->sessions[srv->n_sessions++] = s;
    return s;
}

static void drop_req(struct mcp_req *r);

void mcp_session_free(struct mcp_session *s)
{
    struct mcp_server *srv;
    struct mcp_req *r, *next;

    if (!s)
        return;
    srv = s->srv;
    for (r = srv->reqs; r; r = next) {
        next = r->next;
        if (r->s == s)
            drop_req(r);
    }
    for (size_t i = 0; i < srv->n_sessions; i++) {
        if (srv->sessions[i] == s) {
            srv->sessions[i] = srv->sessions[--srv->n_sessions];
            break;
        }
    }
    json_decref(s->subscriptions);
    free(s->client_name);
    free(s->client_version);
    free(s);
}

struct mcp_session *mcp_session_find(struct mcp_server *srv, const char *id)
{
    for (size_t i = 0; id && i < srv->n_sessions; i++)
        if (strcmp(srv->sessions[i]->id, id) == 0)
            return srv->sessions[i];
    return NULL;
}

const char *mcp_session_actor(struct mcp_session *s, char *buf, size_t len)
{
    snprintf(buf, len, "mcp:%s",
             s->client_name && *s->client_name ? s->client_name : "unknown");
    return buf;
}

/* ---- requests ------------------------------------------------------------ */

static void unlink_req(struct mcp_req *r)
{
    struct mcp_req **p = &r->srv->reqs;

    while (*p && *p != r)
        p = &(*p)->next;
    if (*p)
        *p = r->next;
}

static void out_answered(struct mcp_out *out)
{
    if (out && out->pending > 0 && --out->pending == 0)
        out->done(out);
}

static void free_req(struct mcp_req *r)
{
    unlink_req(r);
    json_decref(r->id);
    json_decref(r->progress_token);
    free(r->method);
    free(r);
}

/* r leaves unanswered: its handler lets go, its out counts it done. */
static void drop_req(struct mcp_req *r)
{
    struct mcp_out *out = r->out;

    if (r->on_drop)
        r->on_drop(r);
    free_req(r);
    out_answered(out);
}

static json_t *progress_token_of(json_t *params)
{
    json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");

    return json_is_string(tok) || json_is_integer(tok) ? json_incref(tok) : NULL;
}

struct mcp_req *mcp_req_new(struct mcp_server *srv, struct mcp_session *s,
                            struct mcp_out *out, json_t *id, const char *method,
                            json_t *params)
{
    struct mcp_req *r = calloc(1, sizeof(*r));

    if (!r)
        return NULL;
    r->method = strdup(method);
    if (!r->method) {
        free(r);
        return NULL;
    }
    r->srv = srv;
    r->s = s;
    r->out = out;
    r->id = json_incref(id);
    r->progress_token = progress_token_of(params);
    r->next = srv->reqs;
    srv->reqs = r;
    if (out)
        out->pending++;
    return r;
}

static void answer(struct mcp_req *r, json_t *msg)
{
    struct mcp_out *out = r->out;

    if (out && msg) {
        out->sent++;
        out->send(out, msg);
    }
    json_decref(msg);
    free_req(r);
    out_answered(out);
}

void mcp_req_result(struct mcp_req *r, json_t *result)
{
    answer(r, mcp_rpc_result(r->id, result));
}

void mcp_req_error(struct mcp_req *r, int code, json_t *data, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    answer(r, mcp_rpc_error(r->id, code, msg, data));
}

void mcp_req_progress(struct mcp_req *r, double progress, double total,
                      const char *message)
{
    json_t *params, *msg;

    if (!r->progress_token || !r->out)
        return;
    params = json_pack("{s:O, s:f}", "progressToken", r->progress_token, "progress",
                       progress);
    if (!params)
        return;
    if (total >= 0)
        json_object_set_new(params, "total", json_real(total));
    if (message)
        json_object_set_new(params, "message", json_string(message));
    msg = mcp_rpc_notification("notifications/progress", params);
    if (msg) {
        r->out->sent++;
        r->out->send(r->out, msg);
    }
    json_decref(msg);
}

static void batch_let_go(struct mcp_out *o, const struct mcp_out *outer);

/* out is going away: its requests, and those of a batch answering to it,
 * drop their answers. */
void mcp_out_abandon(struct mcp_server *srv, const struct mcp_out *out)
{
    for (struct mcp_req *r = srv->reqs; r; r = r->next) {
        if (r->out == out)
            r->out = NULL;
        else if (r->out)
            batch_let_go(r->out, out);
    }
}

/* notifications/cancelled: the request named is dropped unanswered. */
void mcp_server_cancel(struct mcp_server *srv, const struct mcp_session *s, json_t *id)
{
    for (struct mcp_req *r = srv->reqs; r; r = r->next) {
        if (r->s == s && json_equal(r->id, id) &&
            strcmp(r->method, "initialize") != 0) {
            drop_req(r);
            return;
        }
    }
}

/* ---- incoming messages --------------------------------------------------- */

/* A batch's answers, gathered into one array for the outer out. */
struct batch_out {
    struct mcp_out base;
    struct mcp_out *outer;
    json_t *answers;
    struct mcp_server *srv;
};

static void batch_send(struct mcp_out *o, json_t *msg)
{
    struct batch_out *b = (struct batch_out *)o;

    if (json_object_get(msg, "method")) { /* progress: straight through */
        if (b->outer)
            b->outer->send(b->outer, msg);
        return;
    }
    json_array_append(b->answers, msg);
}

static void batch_done(struct mcp_out *o)
{
    struct batch_out *b = (struct batch_out *)o;

    if (b->outer && json_array_size(b->answers) > 0) {
        b->outer->sent++;
        b->outer->send(b->outer, b->answers);
    }
    out_answered(b->outer);
    json_decref(b->answers);
    free(b);
}

/* When o is a batch's out whose answers go to outer, they go nowhere now
 * (gathered, then dropped). */
static void batch_let_go(struct mcp_out *o, const struct mcp_out *outer)
{
    if (o->done == batch_done && ((struct batch_out *)o)->outer == outer)
        ((struct batch_out *)o)->outer = NULL;
}

static void take_one(struct mcp_server *srv, struct mcp_session *s, json_t *msg,
                     enum mcp_kind kind, struct mcp_out *out)
{
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *params = json_object_get(msg, "params");
    struct mcp_req *r;

    if (kind == MCP_MSG_NOTIFICATION) {
        mcp_dispatch_notification(srv, s, method, params);
        return;
    }
    if (kind != MCP_MSG_REQUEST)
        return; /* a client's response: the server asked nothing */
    r = mcp_req_new(srv, s, out, json_object_get(msg, "id"), method, params);
    if (!r) {
        json_t *err = mcp_rpc_error(json_object_get(msg, "id"), MCP_INTERNAL_ERROR,
                                    "out of memory", NULL);
        if (err)
            out->send(out, err);
        json_decref(err);
        return;
    }
    mcp_dispatch_request(r, params);
}

static void send_now(struct mcp_out *out, json_t *msg)
{
    if (msg) {
        out->sent++;
        out->send(out, msg);
    }
    json_decref(msg);
}

static void take_batch(struct mcp_server *srv, struct mcp_session *s, json_t *batch,
                       struct mcp_out *out)
{
    struct batch_out *b = calloc(1, sizeof(*b));
    json_t *item, *err;
    enum mcp_kind kind;
    size_t i;

    if (!b || !(b->answers = json_array())) {
        free(b);
        send_now(out, mcp_rpc_error(NULL, MCP_INTERNAL_ERROR, "out of memory", NULL));
        return;
    }
    b->base.send = batch_send;
    b->base.done = batch_done;
    b->base.pending = 1; /* until every element is taken */
    b->outer = out;
    b->srv = srv;
    out->pending++;
    json_array_foreach(batch, i, item)
    {
        if (mcp_rpc_classify(item, &kind, &err) != 0 || kind == MCP_MSG_BATCH)
            json_array_append_new(b->answers, err);
        else
            take_one(srv, s, item, kind, &b->base);
    }
    out_answered(&b->base);
}

void mcp_receive(struct mcp_server *srv, struct mcp_session *s, const char *buf,
                 size_t len, struct mcp_out *out)
{
    json_t *msg = NULL, *err = NULL;
    enum mcp_kind kind = MCP_MSG_REQUEST;

    out->pending++; /* until the message is taken */
    mcp_rpc_decode(buf, len, &msg, &kind, &err);
    if (err)
        send_now(out, err);
    else if (kind == MCP_MSG_BATCH)
        take_batch(srv, s, msg, out);
    else
        take_one(srv, s, msg, kind, out);
    json_decref(msg);
    out_answered(out);
}

/* ---- tick ---------------------------------------------------------------- */

static bool any_subscription(const struct mcp_server *srv)
{
    for (size_t i = 0; i < srv->n_sessions; i++)
        if (json_object_size(srv->sessions[i]->subscriptions) > 0)
            return true;
    return false;
}

int mcp_server_tick(struct mcp_server *srv)
{
    cli_jobs_tick(&srv->jobs);
    mcp_resources_tick(srv);
    if (srv->jobs.list || srv->reqs)
        return 50;
    if (any_subscription(srv))
        return 100;
    return srv->n_sessions > 0 ? 1000 : -1;
}

bool mcp_server_busy(const struct mcp_server *srv)
{
    for (const struct mcp_req *r = srv->reqs; r; r = r->next)
        if (r->out)
            return true;
    return cli_jobs_attached(&srv->jobs);
}
