/*
 * serve.h -- `lil serve`: the control center in the browser (docs/serve.md).
 *
 * One process, one thread: libmicrohttpd runs in external polling mode in
 * the loop of serve_http.c, which also calls serve_tick every
 * SERVE_TICK_MS, so the index of runs is refreshed, children are reaped
 * and event streams are fed without a second thread.  What the server
 * reads and changes goes through <lil/lil.h> only; what runs a loop's
 * steps runs in a child, the `lil` binary itself (cli/jobs.h).
 *
 * Pieces, one a file:
 *   serve_http.c      the daemon: address, loop, signals, static assets,
 *                     the headers every answer carries
 *   serve_request.c   one request: body, checks, route, handler, answer
 *   serve_auth.c      login token, sessions (cookie), CSRF, Origin, Host
 *   serve_route.c     the route table and matching a method and a path
 *   serve_query.c     query strings and form bodies: parse, typed values
 *   serve_stream.c    server-sent events: streams, broadcast, keep-alive
 *   serve_assets.c    the page's files, compiled in (assets/)
 *   serve_index.c     every run's row, kept fresh cheaply; filter, page
 *   serve_api_runs.c  GET /api/runs, /api/runs/{id}[/events|/state|/spec]
 *   serve_actions.c   stop, approve, recover, resume
 *   serve_jobs.c      the jobs the actions start: children, their records
 *   serve_lab.c       the crash lab: its demo loop, kill, resume, the count
 *
 * Handlers answer JSON.  A handler is called only for a request that
 * passed its route's checks (session, CSRF, Origin, read-only); it fills
 * a serve_answer and returns: a document, or its text made already (what
 * many browsers ask for again and again is turned into text once).  Strings from
 * journals and specs are sent as JSON strings: the page renders them as text, never as
 * markup.
 */
#ifndef LIL_CLI_SERVE_H
#define LIL_CLI_SERVE_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "../jobs.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:8420"
#define SERVE_TICK_MS        250 /* how often serve_tick runs */
#define SERVE_FILL_TICK_MS                                                    \
    70                               /* how often serve_index_tick runs while \
                                        rows are unread (a budget each) */
#define SERVE_KEEPALIVE_MS 15000     /* a comment on a quiet event stream */
#define SERVE_BODY_MAX     (1 << 20) /* a POST body, bytes */
#define SERVE_QUERY_MAX    32        /* parameters in a query or a form */
#define SERVE_VALUE_MAX    4096      /* bytes of one parameter's value */
#define SERVE_SESSIONS_MAX 256       /* logged-in sessions at once */
#define SERVE_STREAMS_MAX  512       /* event streams at once */
#define SERVE_USER_MAX     64        /* bytes of a user name */
#define SERVE_SECRET_HEX   64        /* a token, cookie or CSRF: 32 bytes, hex */

/* What `lil serve` was asked to do (cmd_serve.c fills it from the flags). */
struct serve_opts {
    const char *store;     /* --dir / URI: where the runs are */
    bool shared_store;     /* --shared-store */
    const char *listen;    /* --listen HOST:PORT (default SERVE_DEFAULT_LISTEN) */
    bool listen_given;     /* --listen was given (a non-loopback host needs it) */
    bool read_only;        /* --read-only: no action, no crash lab */
    const char *user;      /* --user: every session's user, no name asked */
    const char *spec_root; /* --spec-root, made absolute (realpath) */
    const char *env_allow; /* --env-allow, passed to the children */
    const char *lil_exe;   /* this binary, for the children */
};

struct serve_session;
struct serve_index;
struct serve_streams;
struct serve_lab;
struct serve_actions;
struct serve_http;

/* The server. */
struct serve {
    struct serve_opts opts;
    lil_env *env;
    lil_store *store;
    bool is_pg;        /* the store is PostgreSQL */
    char *store_label; /* the store as shown (a URI without password) */
    char origin[160];  /* "http://127.0.0.1:8420": what Origin must be */
    struct serve_index *index;
    struct serve_streams *streams;
    struct serve_lab *lab;
    struct serve_actions *actions; /* serve_jobs.c's: the jobs of the actions */
    struct cli_jobs jobs;
    struct serve_http *http; /* serve_http.c's */
    /* serve_auth.c's */
    struct serve_session *sessions;
    char login_token[SERVE_SECRET_HEX + 1]; /* the one-time login token */
};

/* A logged-in browser (serve_auth.c). */
struct serve_session {
    char id[SERVE_SECRET_HEX + 1];   /* the cookie's value */
    char csrf[SERVE_SECRET_HEX + 1]; /* what X-CSRF-Token must say */
    char user[SERVE_USER_MAX + 1];
    int64_t last_ms;
    struct serve_session *next;
};

/* ---- serve_query.c ------------------------------------------------------ */

/* A query string or an application/x-www-form-urlencoded body, decoded. */
struct serve_query {
    size_t n;

    struct {
        char *key, *value; /* decoded, NUL-terminated, never NULL */
    } kv[SERVE_QUERY_MAX];
};

/* Parse raw (len bytes: "a=1&b=x%20y", no leading '?') into q.  0, or -1
 * with the reason in err (too many parameters, a value too long, a bad
 * escape, a NUL, a key given twice, not UTF-8); q is then empty. */
int serve_query_parse(const char *raw, size_t len, struct serve_query *q, char *err,
                      size_t err_len);
void serve_query_free(struct serve_query *q);
/* The value of key, or NULL. */
const char *serve_query_get(const struct serve_query *q, const char *key);
/* key as an integer in [min, max]: 0 and *out (dflt when absent), or -1 with
 * the reason in err. */
int serve_query_int(const struct serve_query *q, const char *key, int64_t min,
                    int64_t max, int64_t dflt, int64_t *out, char *err, size_t err_len);

/* ---- serve_route.c ------------------------------------------------------ */

struct serve_call;
struct serve_answer;
typedef void (*serve_handler)(struct serve_call *c, struct serve_answer *a);

enum {
    SERVE_PUBLIC = 1u << 0,  /* no session needed (assets, login) */
    SERVE_CHANGES = 1u << 1, /* POST that changes something: session, CSRF,
                                Origin; refused with --read-only */
    SERVE_STREAM = 1u << 2,  /* answers an event stream (serve_stream.c) */
    SERVE_RUN_ARG = 1u << 3, /* the path's {id} is a run id (lil_run_id_check) */
};

struct serve_route {
    const char *method;  /* "GET", "POST" */
    const char *pattern; /* "/api/runs/{id}/events": one {id} segment at most */
    unsigned flags;
    serve_handler handler;
};

/* The route for method and path (decoded, without the query): 0 and *route,
 * the {id} segment copied to arg (arg_len bytes at most); 404 (no such path)
 * or 405 (the path, not that method) with nothing set. */
int serve_route_find(const char *method, const char *path,
                     const struct serve_route **route, char *arg, size_t arg_len);

/* ---- JSON text made once, sent many times (serve_answer.c) -------------- */

/* A document's compact JSON text, shared by the answers and the events
 * that send it: counted references (one thread: a plain count), freed when
 * the last goes.  The index keeps the text of the pages it answered, so
 * the same page asked for again is a lookup, and libmicrohttpd sends the
 * bytes from here (no copy) while it holds a reference. */
struct serve_text {
    size_t refs;
    size_t len;  /* bytes of data, the NUL aside */
    size_t cap;  /* bytes data has room for, the NUL aside */
    char data[]; /* NUL-terminated */
};

/* doc as compact JSON text, one reference (NULL: out of memory). */
struct serve_text *serve_text_of(const json_t *doc);
/* An empty text with room for cap bytes, one reference (NULL: out of
 * memory).  serve_text_add appends len bytes to a text nobody else holds
 * yet (it may move: *t updated): 0, or -1 out of memory (*t is then freed
 * and NULL). */
struct serve_text *serve_text_new(size_t cap);
int serve_text_add(struct serve_text **t, const char *bytes, size_t len);
/* One more reference to t (t NULL: NULL). */
struct serve_text *serve_text_ref(struct serve_text *t);
/* One reference fewer (t NULL: nothing). */
void serve_text_unref(struct serve_text *t);

/* ---- handlers: what a call has, what it answers ------------------------ */

struct serve_call {
    struct serve *srv;
    struct serve_session *sess; /* NULL only on a SERVE_PUBLIC route */
    const char *arg;            /* the path's {id}, or "" */
    const struct serve_query *query;
    json_t *body; /* a POST's JSON object, or NULL (borrowed) */
};

struct serve_answer {
    unsigned status;         /* HTTP status; 200 unless set */
    json_t *json;            /* the body (taken), or NULL: {"error"} of serve_fail */
    struct serve_text *text; /* or the body as text already (a reference, taken):
                                sent as it is when set, json then ignored */
};

/* Answer with status and {"error": message}. */
void serve_fail(struct serve_answer *a, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Answer 200 with doc (taken; NULL: 500 out of memory). */
void serve_ok(struct serve_answer *a, json_t *doc);
/* Answer 200 with the text t (a reference, taken; NULL: 500 out of memory). */
void serve_ok_text(struct serve_answer *a, struct serve_text *t);

/* serve_api_runs.c */
void serve_get_runs(struct serve_call *c, struct serve_answer *a);
void serve_get_run(struct serve_call *c, struct serve_answer *a);
void serve_get_run_events(struct serve_call *c, struct serve_answer *a);
void serve_get_run_state(struct serve_call *c, struct serve_answer *a);
void serve_get_run_spec(struct serve_call *c, struct serve_answer *a);

/* serve_actions.c (serve_get_jobs: serve_jobs.c) */
void serve_post_stop(struct serve_call *c, struct serve_answer *a);
void serve_post_approve(struct serve_call *c, struct serve_answer *a);
void serve_post_recover(struct serve_call *c, struct serve_answer *a);
void serve_post_resume(struct serve_call *c, struct serve_answer *a);
void serve_get_jobs(struct serve_call *c, struct serve_answer *a);

/* serve_lab.c */
void serve_get_lab(struct serve_call *c, struct serve_answer *a);
void serve_post_lab_start(struct serve_call *c, struct serve_answer *a);
void serve_post_lab_kill(struct serve_call *c, struct serve_answer *a);
void serve_post_lab_resume(struct serve_call *c, struct serve_answer *a);
void serve_post_lab_recover(struct serve_call *c, struct serve_answer *a);

/* serve_auth.c */
void serve_get_session(struct serve_call *c, struct serve_answer *a);
void serve_post_logout(struct serve_call *c, struct serve_answer *a);

/* ---- serve_auth.c --------------------------------------------------------- */

/* A new one-time login token (after start, and after each login): the URL
 * to print is <origin>/login?token=<login_token>. */
int serve_auth_new_token(struct serve *srv);
/* The session a Cookie header names, or NULL. */
struct serve_session *serve_auth_session(struct serve *srv, const char *cookie);
/* A login with token (compared in constant time; consumed) for user: the new
 * session, or NULL with the HTTP status and reason. */
struct serve_session *serve_auth_login(struct serve *srv, const char *token,
                                       const char *user, unsigned *status, char *err,
                                       size_t err_len);
void serve_auth_free(struct serve *srv);
/* Two secrets are equal, in time that does not depend on where they differ. */
bool serve_same_secret(const char *a, const char *b);
/* The actor journaled for sess: "web:<user>" (1 to 200 bytes). */
const char *serve_actor(const struct serve_session *sess, char *buf, size_t len);

/* ---- serve_stream.c ------------------------------------------------------- */

/* Send one event (`event: type`, `data: <doc>`) to every stream, or to
 * those that watch run_id (run_id NULL: every stream).  doc borrowed. */
void serve_broadcast(struct serve *srv, const char *type, const char *run_id,
                     json_t *doc);
/* The run ids some stream watches now (?run=ID): fn for each, once. */
void serve_streams_watched(struct serve *srv, void (*fn)(const char *run_id, void *ud),
                           void *ud);

/* ---- serve_index.c -------------------------------------------------------- */

struct serve_filter {
    const char *status; /* a status word, or a comma list of them, or NULL */
    const char *kind;   /* "loop", "program", or NULL */
    const char *q;      /* a substring of the run id or loop id, or NULL */
    const char *sort;   /* "last" (last activity, newest first; default) or "id" */
    size_t offset, limit;
};

/* Read every run's row (startup).  0, or -1 with the reason in err. */
int serve_index_open(struct serve *srv, char *err, size_t err_len);
void serve_index_free(struct serve *srv);
/* One page, as JSON text (a reference): {"runs": [row...], "total",
 * "offset", "limit", "counts": {status: n} of every run, "store",
 * "indexing"}.  The same page asked for again while no row changed is the
 * same text.  NULL: out of memory. */
struct serve_text *serve_index_page(struct serve *srv, const struct serve_filter *f);
/* Look again at run_id now (an action touched it). */
void serve_index_touch(struct serve *srv, const char *run_id);
/* Called each tick: look at what may have changed, within its time budget;
 * broadcast "runs" with the rows that changed. */
void serve_index_tick(struct serve *srv);
/* Are rows still unread (the index filling after the start, or after many
 * runs were made)?  serve_http.c then calls serve_index_tick every
 * SERVE_FILL_TICK_MS too, so a slow store is read in about the time its
 * runs take to read, and a request still waits at most one budget. */
bool serve_index_filling(const struct serve *srv);

/* ---- serve_jobs.c, serve_lab.c ------------------------------------------ */

/* Called each tick: reap children, report ended jobs ("job" events). */
void serve_actions_tick(struct serve *srv);
void serve_actions_free(struct serve *srv);
void serve_lab_tick(struct serve *srv);
void serve_lab_free(struct serve *srv);

/* ---- serve_http.c ---------------------------------------------------------- */

/* Serve until SIGINT or SIGTERM: the CLI's exit status. */
int serve_run(struct serve *srv);
/* Everything each tick does (index, actions, lab, streams' keep-alives). */
void serve_tick(struct serve *srv);
int64_t serve_now_ms(void);

#endif
