/*
 * serve_client.h -- a client of `lil serve` for the C tests of
 * tests/serve/c/ (each test_serve_*.c is linked with serve_client.c and
 * the harness of tests/harness/t.h).
 *
 * A test starts the real binary (LIL_BIN, through t_lil_bin) on a free
 * port, logs in as a browser would, and talks to it with libcurl:
 *
 *     struct sc_server sv;
 *     struct sc_reply r;
 *
 *     T_REQUIRE(sc_start(&sv, t_path("store"), NULL) == 0);
 *     T_REQUIRE(sc_login(&sv, "alice") == 0);      // cookie and csrf kept
 *     T_REQUIRE(sc_get(&sv, "/api/runs?limit=5", &r) == 0);
 *     T_EQ_I64(r.status, 200);                     // r.json: the body parsed
 *     T_CHECK(r.server_ms < 200);                  // its Server-Timing
 *     sc_reply_free(&r);
 *     T_REQUIRE(sc_post(&sv, "/api/runs/R/stop", "{\"reason\":\"x\"}", &r) == 0);
 *     ...
 *     T_EQ_I64(sc_stop(&sv, SIGTERM), 0);          // the exit status
 *
 * Every call returns 0, or -1 when the request could not be made at all
 * (the server is gone, out of memory): an HTTP error is a reply with its
 * status.  Nothing here calls T_* macros; the test decides what fails.
 *
 * Sessions: sc_login does what the login page does -- POST /login with the
 * token the server printed last (form-encoded: token, user), the cookie of
 * its 303 kept, then GET /api/session for the csrf -- and reads the next
 * token the server prints.  The session is sv.sess; a test with several
 * sessions copies it (struct sc_session) and puts another back.
 *
 * Event streams: sc_stream_open(&sv, run, &st) opens GET /api/stream
 * (?run=ID when run is not NULL) with the session; sc_stream_wait reads
 * until an event of a type arrives (events of other types are skipped),
 * with a timeout.
 */
#ifndef LIL_TESTS_SERVE_CLIENT_H
#define LIL_TESTS_SERVE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#define SC_SECRET_MAX 128

/* A logged-in browser: its cookie and CSRF token. */
struct sc_session {
    char cookie[SC_SECRET_MAX + 32]; /* "lil_session=<id>", or "" */
    char csrf[SC_SECRET_MAX + 1];
    char user[80]; /* as GET /api/session said */
};

/* A `lil serve` started by sc_start. */
struct sc_server {
    pid_t pid; /* 0 once stopped */
    int err_fd;
    unsigned port;
    char base[64];                 /* "http://127.0.0.1:PORT": where requests go */
    char token[SC_SECRET_MAX + 1]; /* the login token printed last */
    struct sc_session sess;
    char err[65536]; /* the server's stderr so far (the start cut when full) */
    size_t err_len;
};

/* An answer. */
struct sc_reply {
    long status; /* the HTTP status */
    char *body;  /* NUL-terminated (body_len bytes) */
    size_t body_len;
    json_t *json;     /* the body parsed as JSON, or NULL */
    char *headers;    /* the response's header lines, as sent */
    double server_ms; /* its Server-Timing app;dur, or -1 */
};

/* Flags of sc_request. */
enum {
    SC_NO_COOKIE = 1u << 0, /* send no session cookie */
    SC_NO_CSRF = 1u << 1,   /* send no X-CSRF-Token */
    SC_NO_TYPE = 1u << 2,   /* a POST with no Content-Type: application/json */
};

/* Start `lil serve --listen 127.0.0.1:0 --dir dir EXTRA...` (extra
 * NULL-terminated, may be NULL; at most 12; a --listen there wins) and
 * read its two lines (the port, the login token).  Requests go to
 * 127.0.0.1 and that port.  0, or -1 (the server is then stopped; its
 * stderr is in sv->err). */
int sc_start(struct sc_server *sv, const char *dir, const char *const *extra);
/* Start with argv as the words after `lil` (NULL-terminated), and wait at
 * most ms for its exit: the exit status, or -1 (it did not end: killed).
 * Its stderr in sv->err.  For the refusals at start (bad flags). */
int sc_run_to_exit(struct sc_server *sv, const char *const *argv, int ms);
/* Read the server's stderr until pattern appears (true) or ms pass. */
bool sc_wait_err(struct sc_server *sv, const char *pattern, int ms);
/* Send sig, wait (5 s at most; then SIGKILL): the exit status (128 + N
 * for a death by signal N), or -1. */
int sc_stop(struct sc_server *sv, int sig);

/* Log in as user with the last token printed (user NULL: none sent, for
 * --user); sv->sess is then the new session.  0, or -1 (the answer was not
 * a 303 with a cookie, or GET /api/session failed). */
int sc_login(struct sc_server *sv, const char *user);

/* A request: method, path (with its query), a body (NULL: none) and its
 * length, more header lines ("Origin: http://x"; "Name:" removes one;
 * NULL-terminated, may be NULL), flags SC_*.  The session's cookie goes
 * with it, and with a POST its csrf and Content-Type: application/json,
 * unless flags say not. */
int sc_request(struct sc_server *sv, const char *method, const char *path,
               const char *body, size_t body_len, const char *const *headers,
               unsigned flags, struct sc_reply *r);
int sc_get(struct sc_server *sv, const char *path, struct sc_reply *r);
/* POST a JSON text (NULL: "{}"). */
int sc_post(struct sc_server *sv, const char *path, const char *json,
            struct sc_reply *r);
void sc_reply_free(struct sc_reply *r);
/* The value of a response header (the first; case of the name ignored),
 * into buf; NULL when absent. */
const char *sc_header(const struct sc_reply *r, const char *name, char *buf,
                      size_t cap);
/* A string member of the reply's JSON object, or NULL. */
const char *sc_str(const struct sc_reply *r, const char *key);

/* ---- event streams --------------------------------------------------------- */

struct sc_stream;

/* Open GET /api/stream[?run=run] with the session: 0 and *out once the
 * response's headers are in (its status in *status: 200, or the refusal),
 * or -1. */
int sc_stream_open(struct sc_server *sv, const char *run, struct sc_stream **out,
                   long *status);
/* Wait at most ms for an event of type: true and *data (the data parsed,
 * the caller's; may be NULL) when one came.  Events before it are
 * dropped. */
bool sc_stream_wait(struct sc_stream *st, const char *type, int ms, json_t **data);
/* The stream ended (the server closed it); reads for at most ms. */
bool sc_stream_ended(struct sc_stream *st, int ms);
void sc_stream_close(struct sc_stream *st);

#endif
