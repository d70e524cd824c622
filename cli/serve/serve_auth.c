/*
 * serve_auth.c -- who may use `lil serve` (serve.h, serve_http.h): the
 * one-time login token, the sessions, the login and logout.
 *
 * The login token (32 random bytes in hex) is printed at start; a login
 * with it (GET /login?token= with --user, or POST /login with the token
 * and a user name) consumes it, prints the next one, and makes a session:
 * a random id sent as the cookie lil_session (HttpOnly, SameSite=Strict,
 * Path=/) and a random CSRF token the page reads from GET /api/session
 * and sends back as X-CSRF-Token.  Secrets are compared in constant time.
 * At most SERVE_SESSIONS_MAX sessions, kept most recently used first: a
 * new one ends the least recently used.  A session ends at logout (its event streams
 * close with it) or when the server stops.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../net.h"
#include "serve_http.h"

#define LOGIN_REFUSED \
    "the login token is wrong or was used: use the next login URL lil serve printed"

int serve_random_hex(char out[SERVE_SECRET_HEX + 1])
{
    return cli_net_random_hex(out, SERVE_SECRET_HEX / 2);
}

bool serve_same_secret(const char *a, const char *b)
{
    return cli_net_same_secret(a, b);
}

bool serve_user_ok(const char *user)
{
    size_t len = user ? strlen(user) : 0;
    uint32_t cp;

    if (len == 0 || len > SERVE_USER_MAX)
        return false;
    for (size_t i = 0; i < len;) {
        size_t k = cli_utf8_decode((const unsigned char *)user + i, len - i, &cp);
        if (k == 0 || cli_is_control_cp(cp))
            return false;
        i += k;
    }
    return true;
}

int serve_auth_new_token(struct serve *srv)
{
    return serve_random_hex(srv->login_token);
}

const char *serve_actor(const struct serve_session *sess, char *buf, size_t len)
{
    snprintf(buf, len, "web:%s", sess ? sess->user : "");
    return buf;
}

/* ---- sessions -------------------------------------------------------------- */

static void session_end(struct serve *srv, struct serve_session *sess)
{
    for (struct serve_session **p = &srv->sessions; *p; p = &(*p)->next)
        if (*p == sess) {
            *p = sess->next;
            break;
        }
    serve_streams_close(srv, sess);
    free(sess);
}

/* Make room for one more session: the least recently used (the list's
 * last: a session used moves to the front) ends. */
static void make_room(struct serve *srv)
{
    size_t n = 0;
    struct serve_session *last = NULL;

    for (struct serve_session *s = srv->sessions; s; s = s->next) {
        n++;
        last = s;
    }
    if (n >= SERVE_SESSIONS_MAX && last)
        session_end(srv, last);
}

/* sess was used now: first on the list. */
static void touch(struct serve *srv, struct serve_session *sess)
{
    sess->last_ms = serve_now_ms();
    for (struct serve_session **p = &srv->sessions; *p; p = &(*p)->next)
        if (*p == sess) {
            *p = sess->next;
            break;
        }
    sess->next = srv->sessions;
    srv->sessions = sess;
}

static struct serve_session *session_new(struct serve *srv, const char *user)
{
    struct serve_session *sess = calloc(1, sizeof(*sess));

    if (!sess)
        return NULL;
    if (serve_random_hex(sess->id) != 0 || serve_random_hex(sess->csrf) != 0) {
        free(sess);
        return NULL;
    }
    snprintf(sess->user, sizeof(sess->user), "%s", user);
    sess->last_ms = serve_now_ms();
    make_room(srv);
    sess->next = srv->sessions;
    srv->sessions = sess;
    return sess;
}

/* The session whose id is value (vlen bytes), or NULL. */
static struct serve_session *find_session(struct serve *srv, const char *value,
                                          size_t vlen)
{
    char id[SERVE_SECRET_HEX + 1];

    if (vlen != SERVE_SECRET_HEX)
        return NULL;
    memcpy(id, value, vlen);
    id[vlen] = '\0';
    for (struct serve_session *s = srv->sessions; s; s = s->next)
        if (serve_same_secret(id, s->id))
            return s;
    return NULL;
}

struct serve_session *serve_auth_session(struct serve *srv, const char *cookie)
{
    static const char name[] = SERVE_SESSION_COOKIE "=";

    while (cookie && *cookie) {
        size_t n = strcspn(cookie, ";");
        const char *c = cookie;
        while (*c == ' ' || *c == '\t')
            c++;
        if ((size_t)(c - cookie) < n && strncmp(c, name, sizeof(name) - 1) == 0) {
            const char *v = c + sizeof(name) - 1;
            size_t vlen = n - (size_t)(v - cookie);
            struct serve_session *s;
            while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                vlen--;
            s = find_session(srv, v, vlen);
            if (s) {
                touch(srv, s);
                return s;
            }
        }
        cookie += n + (cookie[n] == ';');
    }
    return NULL;
}

struct serve_session *serve_auth_request(struct serve_req *req)
{
    return serve_auth_session(req->srv, serve_header(req, MHD_HTTP_HEADER_COOKIE));
}

struct serve_session *serve_auth_login(struct serve *srv, const char *token,
                                       const char *user, unsigned *status, char *err,
                                       size_t err_len)
{
    struct serve_session *sess;

    *status = 400;
    if (srv->opts.user)
        user = srv->opts.user;
    if (!serve_user_ok(user)) {
        snprintf(err, err_len,
                 "the user name must be 1 to %d bytes of UTF-8 without "
                 "control characters",
                 SERVE_USER_MAX);
        return NULL;
    }
    *status = 403;
    if (!token || !srv->login_token[0] || !serve_same_secret(token, srv->login_token)) {
        snprintf(err, err_len, "%s", LOGIN_REFUSED);
        return NULL;
    }
    *status = 500;
    sess = session_new(srv, user);
    if (!sess) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    if (serve_auth_new_token(srv) != 0) {
        srv->login_token[0] = '\0'; /* used: no login until a restart */
        fputs("lil serve: no random bytes for the next login token\n", stderr);
    } else {
        fprintf(stderr, "lil serve: next login at %s/login?token=%s\n", srv->origin,
                srv->login_token);
    }
    (void)fflush(stderr);
    return sess;
}

void serve_auth_free(struct serve *srv)
{
    while (srv->sessions) {
        struct serve_session *next = srv->sessions->next;
        free(srv->sessions);
        srv->sessions = next;
    }
}

/* ---- the routes -------------------------------------------------------------- */

void serve_get_session(struct serve_call *c, struct serve_answer *a)
{
    const struct serve *srv = c->srv;

    serve_ok(a,
             json_pack("{s:s,s:s,s:b,s:s,s:s,s:s}", "user", c->sess->user, "csrf",
                       c->sess->csrf, "read_only", srv->opts.read_only, "store",
                       srv->store_label ? srv->store_label : "", "store_kind",
                       srv->is_pg ? "postgresql" : "file", "version", lil_version()));
}

void serve_post_logout(struct serve_call *c, struct serve_answer *a)
{
    session_end(c->srv, c->sess);
    c->sess = NULL;
    serve_ok(a, json_pack("{s:b}", "ok", 1));
}

/* text with <, >, &, " and ' escaped, into out (cut to fit). */
static void html_escape(const char *text, char *out, size_t cap)
{
    size_t n = 0;

    for (; *text && n + 7 < cap; text++) {
        const char *e = *text == '<'    ? "&lt;"
                        : *text == '>'  ? "&gt;"
                        : *text == '&'  ? "&amp;"
                        : *text == '"'  ? "&quot;"
                        : *text == '\'' ? "&#39;"
                                        : NULL;
        if (e) {
            memcpy(out + n, e, strlen(e));
            n += strlen(e);
        } else {
            out[n++] = *text;
        }
    }
    out[n] = '\0';
}

/* A refused login: JSON for a script, a short page for a browser's form. */
static enum MHD_Result login_refused(struct serve_req *req, unsigned status,
                                     const char *msg, bool json)
{
    char page[2048], text[1024];
    int n;

    if (json)
        return serve_reply_error(req, status, "%s", msg);
    html_escape(msg, text, sizeof(text));
    n = snprintf(page, sizeof(page),
                 "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<title>lil serve: login refused</title></head><body>"
                 "<p id=\"login-error\">%s</p><p><a href=\"/login\">Log in</a></p>"
                 "</body></html>\n",
                 text);
    return serve_reply(req, status, "text/html; charset=utf-8", page,
                       n > 0 && (size_t)n < sizeof(page) ? (size_t)n : 0, true);
}

/* Log in with token and user: 303 to the page with the cookie, or refused. */
static enum MHD_Result login(struct serve_req *req, const char *token, const char *user,
                             bool json)
{
    char err[256];
    unsigned status;
    struct serve_session *sess =
        serve_auth_login(req->srv, token, user, &status, err, sizeof(err));
    struct MHD_Response *resp;

    if (!sess)
        return login_refused(req, status, err, json);
    snprintf(req->set_cookie, sizeof(req->set_cookie),
             SERVE_SESSION_COOKIE "=%s; HttpOnly; SameSite=Strict; Path=/", sess->id);
    resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, "/");
    return serve_queue(req, 303, resp, true);
}

enum MHD_Result serve_login_get(struct serve_req *req, const struct serve_query *q)
{
    const char *token = serve_query_get(q, "token");

    if (req->srv->opts.user && token)
        return login(req, token, NULL, false);
    return serve_asset_reply(req, "login.html");
}

enum MHD_Result serve_login_post(struct serve_req *req)
{
    bool json = serve_media_is(serve_header(req, MHD_HTTP_HEADER_CONTENT_TYPE),
                               "application/json");
    struct serve_query form = {0};
    json_t *doc = NULL;
    char err[256];
    enum MHD_Result ret;

    if (req->too_big)
        return login_refused(req, SERVE_TOO_LARGE, "the form is too large", json);
    if (json) {
        doc = json_loadb(req->body ? req->body : "", req->body_len, 0, NULL);
        if (!json_is_object(doc)) {
            json_decref(doc);
            return login_refused(req, 400, "the body must be a JSON object", true);
        }
        ret = login(req, json_string_value(json_object_get(doc, "token")),
                    json_string_value(json_object_get(doc, "user")), true);
        json_decref(doc);
        return ret;
    }
    if (serve_query_parse(req->body ? req->body : "", req->body_len, &form, err,
                          sizeof(err)) != 0) {
        char msg[300];
        snprintf(msg, sizeof(msg), "the form: %s", err);
        return login_refused(req, 400, msg, false);
    }
    ret = login(req, serve_query_get(&form, "token"), serve_query_get(&form, "user"),
                false);
    serve_query_free(&form);
    return ret;
}
