/*
 * mcp.h -- `lil mcp`: a Model Context Protocol server over lil's public API.
 *
 * The server lets an AI assistant list, read and steer runs (docs/mcp.md).
 * It is one process and one thread: a transport (mcp_stdio.c, mcp_http.c)
 * owns the loop that waits for input, hands each incoming message to the
 * core (mcp_receive) and calls mcp_server_tick when it wakes, so children
 * are reaped and subscribed runs looked at without a second thread.  What
 * the server reads and changes goes through <lil/lil.h> only; what runs a
 * loop's steps runs in a child process (the `lil` binary itself: run,
 * step, resume, approve, recover; ../jobs.h), so no call blocks the server.
 *
 * Pieces, one a file:
 *   mcp_rpc.c        JSON-RPC 2.0 framing: decode a message, build answers
 *   mcp_dispatch.c   the methods (initialize, ping, tools/..., resources/...,
 *                    prompts/..., logging/setLevel, completion/complete)
 *   mcp_server.c     the server: store, sessions, requests in flight, tick
 *   mcp_tools.c      the tool table: tools/list and tools/call
 *   mcp_tools_read.c list_runs, inspect_run, run_events, validate_spec,
 *                    explain_spec, doctor
 *   mcp_tools_steer.c start_run, step_run, resume_run, stop_run,
 *                    approve_run, recover_run, submit_run
 *   mcp_resources.c  runs as resources, subscriptions, list_changed
 *   mcp_prompts.c    triage-uncertain, review-pause
 *   mcp_stdio.c      newline-delimited JSON-RPC on stdin/stdout
 *   mcp_http.c       Streamable HTTP (libmicrohttpd, external polling)
 *
 * Lifetimes: a message's JSON is the core's; what a transport's callbacks
 * receive is borrowed for the call.  A request (struct mcp_req) lives until
 * it is answered (mcp_req_result, mcp_req_error, mcp_req_tool); its out
 * may go away first (mcp_out_abandon): the answer is then dropped.
 */
#ifndef LIL_CLI_MCP_H
#define LIL_CLI_MCP_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "../jobs.h"

/* JSON-RPC 2.0 error codes. */
enum {
    MCP_PARSE_ERROR = -32700,
    MCP_INVALID_REQUEST = -32600,
    MCP_METHOD_NOT_FOUND = -32601,
    MCP_INVALID_PARAMS = -32602,
    MCP_INTERNAL_ERROR = -32603,
    MCP_RESOURCE_NOT_FOUND = -32002, /* the protocol's for resources/read */
};

/* Caps on what a client may send. */
#define MCP_MESSAGE_MAX  ((size_t)4 << 20) /* one message, bytes: 4 MiB */
#define MCP_JSON_DEPTH   64                /* nesting of a message */
#define MCP_SESSIONS_MAX 64                /* HTTP sessions at once */

/* The protocol versions served, newest first; the first is offered to a
 * client that asks for one not listed. */
extern const char *const mcp_protocol_versions[];

/* What `lil mcp` was asked to do (cmd_mcp.c fills it from the flags). */
struct mcp_opts {
    const char *store;          /* --dir / URI: where the runs are */
    bool shared_store;          /* --shared-store */
    bool read_only;             /* --read-only: the read tools only */
    bool allow_run;             /* --allow-run: start_run is offered */
    const char *spec_root;      /* --spec-root, made absolute (realpath) */
    const char *env_allow;      /* --env-allow, passed to the children */
    const char *http;           /* --http HOST:PORT, or NULL: stdio */
    bool no_token;              /* --no-token: HTTP without a bearer token */
    bool allow_remote;          /* --allow-remote: HTTP may bind non-loopback */
    const char *const *origins; /* --allow-origin values, NULL-terminated */
    const char *lil_exe;        /* this binary, for the children */
};

struct mcp_server;
struct mcp_session;
struct mcp_req;

/* Where the answers to one incoming message go: stdio's stdout, or one HTTP
 * POST's response.  The transport owns it. */
struct mcp_out {
    /* Give one message to the client: a response, or a notification about
     * a request of this out (notifications/progress).  msg is borrowed. */
    void (*send)(struct mcp_out *o, json_t *msg);
    /* Every request of the message is answered: the core will not touch o
     * again.  May be called from inside mcp_receive (all answered at once)
     * or later, from mcp_server_tick. */
    void (*done)(struct mcp_out *o);
    size_t pending; /* the core's: requests of o not yet answered */
    size_t sent;    /* the core's: messages given to send */
};

/* One client.  stdio has one; HTTP one per Mcp-Session-Id. */
struct mcp_session {
    char id[40];           /* HTTP: the Mcp-Session-Id; stdio: "" */
    char *client_name;     /* clientInfo.name of initialize, or NULL */
    char *client_version;  /* clientInfo.version, or NULL */
    char version[16];      /* the protocol version agreed, "" before */
    bool initialized;      /* notifications/initialized was received */
    int log_level;         /* logging/setLevel: 0 debug .. 7 emergency */
    json_t *subscriptions; /* object: uri -> {"run", "seq", "stamp"} */
    /* A message not tied to a request (resources/updated, list_changed,
     * a log message): stdio writes it out; HTTP sends it on the session's
     * GET stream when one is open and drops it otherwise.  Borrowed. */
    void (*notify)(struct mcp_session *s, json_t *msg);
    void *transport; /* the transport's */
    struct mcp_server *srv;
};

/* A request being answered. */
struct mcp_req {
    struct mcp_server *srv;
    struct mcp_session *s;
    struct mcp_out *out; /* NULL once its client went away */
    json_t *id;          /* the request's id (string or integer) */
    char *method;
    json_t *progress_token; /* params._meta.progressToken, or NULL */
    /* The handler's, for a request it answers later: on_drop is called
     * when r is dropped unanswered (notifications/cancelled named it, or
     * its session ended), just before r is freed: detach whatever points
     * to r there (cli_job_detach).  ud is the handler's too. */
    void (*on_drop)(struct mcp_req *r);
    void *ud;
    struct mcp_req *next; /* the server's list of requests in flight */
};

/* ---- mcp_rpc.c: framing --------------------------------------------------- */

/* What one incoming message is. */
enum mcp_kind {
    MCP_MSG_REQUEST,      /* method and id */
    MCP_MSG_NOTIFICATION, /* method, no id */
    MCP_MSG_RESPONSE,     /* result or error, and id: a client's answer */
    MCP_MSG_BATCH,        /* an array of messages (protocol 2025-03-26) */
};

/* Decode len bytes of buf into *msg (a new reference) and *kind.  On error
 * *err (a new reference) is the JSON-RPC error response to send (parse
 * error -32700, not a request -32600; id null or the message's id) and
 * *msg is NULL.  Never reads past len; never crashes or hangs on any input
 * (fuzz/fuzz_mcp.c).  Caps: MCP_MESSAGE_MAX bytes, MCP_JSON_DEPTH deep. */
void mcp_rpc_decode(const char *buf, size_t len, json_t **msg, enum mcp_kind *kind,
                    json_t **err);

/* Check one element of a batch (or a lone message that is already JSON):
 * 0 and *kind, or -1 and *err (a new reference) as above. */
int mcp_rpc_classify(json_t *msg, enum mcp_kind *kind, json_t **err);

/* Append n bytes of p to the growable buffer (*data, *len, *cap), its
 * capacity doubled from 4 KiB as needed: what the transports gather
 * (stdio's line, a POST's body, an event stream's bytes).  false when out
 * of memory, the buffer then unchanged. */
bool mcp_append(char **data, size_t *len, size_t *cap, const void *p, size_t n);

/* {"jsonrpc": "2.0", "id": id, "result": result}; steals result. */
json_t *mcp_rpc_result(json_t *id, json_t *result);

/* {"jsonrpc": "2.0", "id": id, "error": {"code", "message", "data"?}};
 * id NULL is null; steals data (may be NULL). */
json_t *mcp_rpc_error(json_t *id, int code, const char *message, json_t *data);

/* {"jsonrpc": "2.0", "method": method, "params": params}; steals params
 * (may be NULL). */
json_t *mcp_rpc_notification(const char *method, json_t *params);

/* ---- mcp_server.c: the server -------------------------------------------- */

struct mcp_server {
    struct mcp_opts opts;
    lil_store *store;
    bool is_pg; /* the store is PostgreSQL (a queue) */
    struct mcp_session **sessions;
    size_t n_sessions;
    struct mcp_req *reqs;    /* requests in flight */
    struct cli_jobs jobs;    /* children (../jobs.c) */
    json_t *runs_seen;       /* resources: the run ids last listed, for
                                notifications/resources/list_changed */
    int64_t runs_checked_ms; /* when they were last looked at */
    int64_t runs_stamp;      /* lil_store_poll's stamp of that look */
    bool draining;           /* stdin ended: finish what is in flight */
};

/* Make the server (*out, freed with mcp_server_free) over store, which it
 * takes (closed by mcp_server_free, also when this fails).  0, or -1 when
 * out of memory. */
int mcp_server_new(const struct mcp_opts *opts, lil_store *store,
                   struct mcp_server **out);
void mcp_server_free(struct mcp_server *srv);

/* A new session (the transport sets notify and transport), or NULL when
 * out of memory or MCP_SESSIONS_MAX are open. */
struct mcp_session *mcp_session_new(struct mcp_server *srv);
/* End s: its requests in flight lose their out (their children go on),
 * its subscriptions end.  NULL is a no-op. */
void mcp_session_free(struct mcp_session *s);
/* The session with this id, or NULL. */
struct mcp_session *mcp_session_find(struct mcp_server *srv, const char *id);

/* Take one incoming message of session s (len bytes of buf).  Its answers
 * go to out; out->done is called when every request in it is answered,
 * maybe before this returns. */
void mcp_receive(struct mcp_server *srv, struct mcp_session *s, const char *buf,
                 size_t len, struct mcp_out *out);

/* notifications/cancelled: drop s's request id unanswered (not an
 * initialize). */
void mcp_server_cancel(struct mcp_server *srv, const struct mcp_session *s, json_t *id);

/* out is going away (an HTTP client disconnected): requests answering to it
 * keep going, their answers are dropped. */
void mcp_out_abandon(struct mcp_server *srv, const struct mcp_out *out);

/* Do what is due: reap children and answer the requests that waited for
 * them, send progress, look at subscribed runs and the list of runs.
 * Returns the ms until the next tick is wanted (a transport may wake
 * sooner; -1: nothing pending, wake on input only). */
int mcp_server_tick(struct mcp_server *srv);

/* Requests or children the server still waits for (stdio's EOF waits until
 * none is left that has a client to answer). */
bool mcp_server_busy(const struct mcp_server *srv);

/* The actor of steering by session s: "mcp:<client name>" ("mcp:unknown"
 * before initialize named one).  Valid until s is freed. */
const char *mcp_session_actor(struct mcp_session *s, char *buf, size_t len);

/* ---- answering a request ------------------------------------------------- */

/* A new request of s for method and id (the server's list holds it). */
struct mcp_req *mcp_req_new(struct mcp_server *srv, struct mcp_session *s,
                            struct mcp_out *out, json_t *id, const char *method,
                            json_t *params);
/* Answer r with result (stolen) and free r. */
void mcp_req_result(struct mcp_req *r, json_t *result);
/* Answer r with a JSON-RPC error and free r; data stolen, may be NULL. */
void mcp_req_error(struct mcp_req *r, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* notifications/progress for r when its client gave a progressToken
 * (total < 0: unknown; message may be NULL); nothing otherwise. */
void mcp_req_progress(struct mcp_req *r, double progress, double total,
                      const char *message);

/* ---- mcp_dispatch.c: the methods ----------------------------------------- */

/* Handle request r with params (borrowed; may be NULL).  Every path
 * answers r exactly once, now or later. */
void mcp_dispatch_request(struct mcp_req *r, json_t *params);
/* Handle a notification of session s (initialized, cancelled, ...). */
void mcp_dispatch_notification(struct mcp_server *srv, struct mcp_session *s,
                               const char *method, json_t *params);

/* ---- mcp_tools.c: tools ---------------------------------------------------- */

/* A tool's handler: read args (an object, validated against the input
 * schema's required keys and types by mcp_tools.c), then answer r with
 * mcp_req_tool / mcp_req_tool_error, now or later. */
typedef void (*mcp_tool_fn)(struct mcp_req *r, json_t *args);

enum mcp_tool_class {
    MCP_TOOL_READ,  /* offered always */
    MCP_TOOL_STEER, /* not with --read-only */
    MCP_TOOL_START, /* only with --allow-run (and not --read-only) */
};

struct mcp_tool {
    const char *name;
    const char *title;
    const char *description;
    const char *input_schema;  /* JSON text: a JSON Schema object */
    const char *output_schema; /* JSON text: the structuredContent's */
    enum mcp_tool_class cls;
    bool destructive, idempotent, open_world; /* the annotations' hints */
    mcp_tool_fn fn;
};

/* The tables (NULL name ends each). */
extern const struct mcp_tool mcp_tools_read[];
extern const struct mcp_tool mcp_tools_steer[];

/* tools/list and tools/call (mcp_dispatch.c routes them here). */
void mcp_tools_list(struct mcp_req *r, json_t *params);
void mcp_tools_call(struct mcp_req *r, json_t *params);

/* Answer a tool call: content holds structured as text, structuredContent
 * is structured (stolen). */
void mcp_req_tool(struct mcp_req *r, json_t *structured);
/* Answer a tool call that failed: isError true, the message as text (the
 * CLI's words), no structuredContent (clients check it against the output
 * schema even in an error), and _meta {"lil/code": code} when code is not
 * NULL (the library's status name, "LIL_E_NOTFOUND", or "exit N" for a
 * child's exit status). */
void mcp_req_tool_error(struct mcp_req *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Answer a tool call that failed with what its output schema describes:
 * isError true, text as content, structured (stolen) as structuredContent
 * (validate_spec's diagnostics of a broken spec). */
void mcp_req_tool_fail(struct mcp_req *r, json_t *structured, const char *text);

/* Argument helpers: the value of key in args, or dflt when absent.  A
 * present value of the wrong type was already refused by mcp_tools.c. */
const char *mcp_arg_str(json_t *args, const char *key, const char *dflt);
int64_t mcp_arg_int(json_t *args, const char *key, int64_t dflt);
bool mcp_arg_bool(json_t *args, const char *key, bool dflt);

/* ---- mcp_resources.c, mcp_prompts.c --------------------------------------- */

void mcp_resources_list(struct mcp_req *r, json_t *params);
void mcp_resources_templates(struct mcp_req *r, json_t *params);
void mcp_resources_read(struct mcp_req *r, json_t *params);
void mcp_resources_subscribe(struct mcp_req *r, json_t *params);
void mcp_resources_unsubscribe(struct mcp_req *r, json_t *params);
/* Look at subscribed runs and the list of runs; notify what changed. */
void mcp_resources_tick(struct mcp_server *srv);

void mcp_prompts_list(struct mcp_req *r, json_t *params);
void mcp_prompts_get(struct mcp_req *r, json_t *params);

/* ---- transports ------------------------------------------------------------ */

/* Serve session over stdin/stdout until EOF and nothing is in flight.
 * Returns the exit status. */
int mcp_stdio_serve(struct mcp_server *srv);
/* Serve Streamable HTTP on opts.http until SIGINT/SIGTERM.  Prints the
 * URL (and the token) to stderr.  Returns the exit status. */
int mcp_http_serve(struct mcp_server *srv);

#endif
