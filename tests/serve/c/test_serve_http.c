/*
 * test_serve_http.c -- the core of `lil serve` from the outside: the
 * binary started on 127.0.0.1:0 (serve_client.c), its two lines, the
 * login and the session cookie, the headers every answer carries, every
 * refusal (no session, CSRF, Origin, Host, a used token, read-only, bad
 * JSON, too large, media type, no such path or method, a bad query), the
 * page's files, the event stream (hello, a broadcast reaching every
 * stream, its end at logout and at SIGTERM, the cap), many sessions, the
 * exit statuses (SIGTERM, SIGINT, a bad --listen, an address in use),
 * IPv6 loopback and the warning of a non-loopback address.
 */
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "serve_client.h"
#include "t.h"

#define SESSIONS_MAX 256 /* SERVE_SESSIONS_MAX */
#define STREAMS_MAX  512 /* SERVE_STREAMS_MAX */

static bool start_logged_in(struct sc_server *sv, const char *const *extra)
{
    if (sc_start(sv, t_path("store"), extra) != 0) {
        fprintf(stderr, "server did not start: %s\n", sv->err);
        return false;
    }
    if (sc_login(sv, "alice") != 0) {
        fprintf(stderr, "login failed: %s\n", sv->err);
        sc_stop(sv, SIGKILL);
        return false;
    }
    return true;
}

/* The reply's status is want and its error names what. */
static void check_refused(struct sc_reply *r, long want, const char *what)
{
    T_EQ_I64(r->status, want);
    T_CONTAINS(sc_str(r, "error"), what);
    sc_reply_free(r);
}

/* The headers every answer carries. */
static void check_headers(const struct sc_reply *r, bool api)
{
    char v[512];

    T_EQ_STR(sc_header(r, "Content-Security-Policy", v, sizeof(v)),
             "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' "
             "data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
             "frame-ancestors 'none'");
    T_EQ_STR(sc_header(r, "X-Content-Type-Options", v, sizeof(v)), "nosniff");
    T_EQ_STR(sc_header(r, "Referrer-Policy", v, sizeof(v)), "no-referrer");
    T_EQ_STR(sc_header(r, "X-Frame-Options", v, sizeof(v)), "DENY");
    if (api)
        T_EQ_STR(sc_header(r, "Cache-Control", v, sizeof(v)), "no-store");
    T_CHECK(sc_header(r, "Server-Timing", v, sizeof(v)) != NULL);
    T_CHECK(strncmp(v, "app;dur=", 8) == 0 && strchr(v, '.') &&
            strlen(strchr(v, '.') + 1) == 3);
    T_CHECK(r->server_ms >= 0 && r->server_ms < 5000);
}

T_TEST(start_lines_and_session)
{
    struct sc_server sv;
    struct sc_reply r;

    T_REQUIRE(start_logged_in(&sv, NULL));
    T_CONTAINS(sv.err, "lil serve: listening on http://127.0.0.1:");
    T_CONTAINS(sv.err, "lil serve: log in at http://127.0.0.1:");
    T_CONTAINS(sv.err, "lil serve: next login at http://127.0.0.1:");
    T_CHECK(strstr(sv.err, "warning") == NULL);
    T_EQ_I64(strlen(sv.token), 64);
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_I64(r.status, 200);
    check_headers(&r, true);
    T_EQ_STR(sc_str(&r, "user"), "alice");
    T_EQ_I64(strlen(sc_str(&r, "csrf") ? sc_str(&r, "csrf") : ""), 64);
    T_CHECK(json_is_false(json_object_get(r.json, "read_only")));
    T_EQ_STR(sc_str(&r, "store_kind"), "file");
    T_CONTAINS(sc_str(&r, "store"), "store");
    T_CHECK(sc_str(&r, "version") != NULL);
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(login_cookie_and_tokens)
{
    struct sc_server sv;
    struct sc_reply r;
    char v[512], form[256];
    const char *form_type[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    const char *used;
    char old[SC_SECRET_MAX + 1];

    T_REQUIRE(sc_start(&sv, t_path("store"), NULL) == 0);
    snprintf(old, sizeof(old), "%s", sv.token);
    /* a bad user name keeps the token */
    snprintf(form, sizeof(form), "token=%s&user=%%01bad", sv.token);
    T_OK(sc_request(&sv, "POST", "/login", form, strlen(form), form_type, SC_NO_TYPE,
                    &r));
    T_EQ_I64(r.status, 400);
    sc_reply_free(&r);
    snprintf(form, sizeof(form), "token=%s&user=", sv.token);
    T_OK(sc_request(&sv, "POST", "/login", form, strlen(form), form_type, SC_NO_TYPE,
                    &r));
    T_EQ_I64(r.status, 400);
    sc_reply_free(&r);
    /* a wrong token */
    snprintf(form, sizeof(form), "token=%064d&user=bob", 7);
    T_OK(sc_request(&sv, "POST", "/login", form, strlen(form), form_type, SC_NO_TYPE,
                    &r));
    T_EQ_I64(r.status, 403);
    T_CONTAINS(r.body, "login token");
    sc_reply_free(&r);
    /* the login: the cookie's flags */
    snprintf(form, sizeof(form), "token=%s&user=bob", sv.token);
    T_OK(sc_request(&sv, "POST", "/login", form, strlen(form), form_type, SC_NO_TYPE,
                    &r));
    T_EQ_I64(r.status, 303);
    T_EQ_STR(sc_header(&r, "Location", v, sizeof(v)), "/");
    T_REQUIRE(sc_header(&r, "Set-Cookie", v, sizeof(v)) != NULL);
    T_CHECK(strncmp(v, "lil_session=", 12) == 0);
    T_CONTAINS(v, "; HttpOnly");
    T_CONTAINS(v, "; SameSite=Strict");
    T_CONTAINS(v, "; Path=/");
    check_headers(&r, true);
    sc_reply_free(&r);
    /* the token is used: refused again, and a new one was printed */
    T_OK(sc_request(&sv, "POST", "/login", form, strlen(form), form_type, SC_NO_TYPE,
                    &r));
    T_EQ_I64(r.status, 403);
    sc_reply_free(&r);
    T_CHECK(sc_wait_err(&sv, "lil serve: next login at", 2000));
    used = strstr(sv.err, old);
    T_CHECK(used != NULL);
    T_REQUIRE(sc_login(&sv, "carol") == 0);
    T_CHECK(strcmp(sv.token, old) != 0);
    T_EQ_STR(sv.sess.user, "carol");
    /* the form decoded: '+' a space, %XX a byte, UTF-8 kept */
    T_REQUIRE(sc_login(&sv, "Ren%C3%A9e+O%27Hara%2B1") == 0);
    T_EQ_STR(sv.sess.user, "Ren\xc3\xa9"
                           "e O'Hara+1");
    /* JSON login for scripts */
    snprintf(form, sizeof(form), "{\"token\":\"%s\",\"user\":\"dave\"}", sv.token);
    T_OK(sc_request(&sv, "POST", "/login", form, strlen(form), NULL,
                    SC_NO_COOKIE | SC_NO_CSRF, &r));
    T_EQ_I64(r.status, 303);
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(refusals)
{
    struct sc_server sv;
    struct sc_reply r;
    struct sc_session good;
    const char *evil_origin[] = {"Origin: http://evil.example", NULL};
    const char *null_origin[] = {"Origin: null", NULL};
    const char *cross[] = {"Sec-Fetch-Site: cross-site", NULL};
    const char *same_origin[] = {NULL, NULL};
    const char *evil_host[] = {"Host: evil.example:80", NULL};
    const char *text_type[] = {"Content-Type: text/plain", NULL};
    char origin[96], *big;

    T_REQUIRE(start_logged_in(&sv, NULL));
    good = sv.sess;
    /* no session */
    T_OK(sc_request(&sv, "GET", "/api/runs", NULL, 0, NULL, SC_NO_COOKIE, &r));
    check_headers(&r, true);
    check_refused(&r, 401, "log in");
    T_OK(sc_request(&sv, "GET", "/api/session", NULL, 0, NULL, SC_NO_COOKIE, &r));
    check_refused(&r, 401, "log in");
    snprintf(sv.sess.cookie, sizeof(sv.sess.cookie), "lil_session=%064d", 1);
    T_OK(sc_get(&sv, "/api/session", &r));
    check_refused(&r, 401, "log in");
    sv.sess = good;
    /* CSRF missing, wrong */
    T_OK(sc_request(&sv, "POST", "/api/runs/r1/stop", "{}", 2, NULL, SC_NO_CSRF, &r));
    check_headers(&r, true);
    check_refused(&r, 403, "X-CSRF-Token");
    snprintf(sv.sess.csrf, sizeof(sv.sess.csrf), "%064d", 3);
    T_OK(sc_post(&sv, "/api/runs/r1/stop", "{}", &r));
    check_refused(&r, 403, "X-CSRF-Token");
    sv.sess = good;
    /* Origin: another, "null", cross-site; its own is fine */
    T_OK(sc_request(&sv, "POST", "/api/logout", "{}", 2, evil_origin, 0, &r));
    check_refused(&r, 403, "origin");
    T_OK(sc_request(&sv, "POST", "/api/logout", "{}", 2, null_origin, 0, &r));
    check_refused(&r, 403, "origin");
    T_OK(sc_request(&sv, "POST", "/api/logout", "{}", 2, cross, 0, &r));
    check_refused(&r, 403, "origin");
    /* Host of another name (DNS rebinding), even with a session */
    T_OK(sc_request(&sv, "GET", "/api/session", NULL, 0, evil_host, 0, &r));
    check_headers(&r, true);
    check_refused(&r, 403, "DNS rebinding");
    T_OK(sc_request(&sv, "GET", "/", NULL, 0, evil_host, 0, &r));
    check_refused(&r, 403, "DNS rebinding");
    /* media type, JSON, size */
    T_OK(sc_request(&sv, "POST", "/api/runs/r1/stop", "{}", 2, text_type, SC_NO_TYPE,
                    &r));
    check_refused(&r, 415, "application/json");
    T_OK(sc_post(&sv, "/api/runs/r1/stop", "{\n  \"reason\": }", &r));
    check_refused(&r, 400, "line 2 column");
    T_OK(sc_post(&sv, "/api/runs/r1/stop", "[1]", &r));
    check_refused(&r, 400, "JSON object");
    T_OK(sc_post(&sv, "/api/runs/r1/stop", "{\"a\":1,\"a\":2}", &r));
    check_refused(&r, 400, "not JSON");
    big = malloc((1 << 20) + 10);
    T_REQUIRE(big != NULL);
    memset(big, ' ', (1 << 20) + 10);
    big[0] = '{';
    big[(1 << 20) + 9] = '}';
    T_OK(
        sc_request(&sv, "POST", "/api/runs/r1/stop", big, (1 << 20) + 10, NULL, 0, &r));
    check_refused(&r, 413, "Too Large");
    free(big);
    /* paths, methods, ids, queries */
    T_OK(sc_get(&sv, "/api/nope", &r));
    check_headers(&r, true);
    check_refused(&r, 404, "Not Found");
    T_OK(sc_get(&sv, "/api/runs/", &r));
    check_refused(&r, 404, "Not Found");
    T_OK(sc_get(&sv, "/nope.js", &r));
    check_refused(&r, 404, "Not Found");
    T_OK(sc_post(&sv, "/api/runs", "{}", &r));
    T_EQ_STR(sc_header(&r, "Allow", origin, sizeof(origin)), "GET");
    check_refused(&r, 405, "Method Not Allowed");
    T_OK(sc_get(&sv, "/login?x=1", &r)); /* public, with a query */
    T_EQ_I64(r.status, 200);
    sc_reply_free(&r);
    T_OK(sc_request(&sv, "PUT", "/login", NULL, 0, NULL, 0, &r));
    T_EQ_STR(sc_header(&r, "Allow", origin, sizeof(origin)), "GET, POST");
    check_refused(&r, 405, "Method Not Allowed");
    T_OK(sc_request(&sv, "DELETE", "/api/session", NULL, 0, NULL, 0, &r));
    check_refused(&r, 405, "Method Not Allowed");
    T_OK(sc_get(&sv, "/api/runs/..", &r));
    check_refused(&r, 400, "run id");
    T_OK(sc_get(&sv, "/api/runs?limit=%zz", &r));
    check_refused(&r, 400, "escape");
    T_OK(sc_get(&sv, "/api/runs?q=a&q=b", &r));
    check_refused(&r, 400, "twice");
    T_OK(sc_get(&sv, "/api/runs?q=%00", &r));
    check_refused(&r, 400, "NUL");
    T_OK(sc_get(&sv, "/api/runs?q=%ff", &r));
    check_refused(&r, 400, "UTF-8");
    T_OK(sc_get(&sv, "/api/stream?run=..", &r));
    check_refused(&r, 400, "run id");
    /* the server's own origin passes the checks (logout needs no body) */
    snprintf(origin, sizeof(origin), "Origin: %s", sv.base);
    same_origin[0] = origin;
    T_OK(sc_request(&sv, "POST", "/api/logout", NULL, 0, same_origin, 0, &r));
    T_EQ_I64(r.status, 200);
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(logout_ends_session_and_streams)
{
    struct sc_server sv;
    struct sc_reply r;
    struct sc_stream *st = NULL;
    struct sc_session first;
    long status;
    json_t *hello = NULL;
    char v[256];

    T_REQUIRE(start_logged_in(&sv, NULL));
    first = sv.sess;
    T_REQUIRE(sc_stream_open(&sv, NULL, &st, &status) == 0);
    T_EQ_I64(status, 200);
    T_CHECK(sc_stream_wait(st, "hello", 3000, &hello));
    T_CHECK(json_integer_value(json_object_get(hello, "server_ms")) > 1600000000000);
    json_decref(hello);
    /* a second session stays when the first logs out */
    T_REQUIRE(sc_login(&sv, "bob") == 0);
    sv.sess = first;
    T_OK(sc_post(&sv, "/api/logout", NULL, &r));
    T_EQ_I64(r.status, 200);
    T_CHECK(json_is_true(json_object_get(r.json, "ok")));
    T_REQUIRE(sc_header(&r, "Set-Cookie", v, sizeof(v)) != NULL);
    T_CONTAINS(v, "lil_session=;");
    T_CONTAINS(v, "Max-Age=0");
    sc_reply_free(&r);
    T_CHECK(sc_stream_ended(st, 3000));
    sc_stream_close(st);
    T_OK(sc_get(&sv, "/api/session", &r));
    check_refused(&r, 401, "log in");
    T_OK(sc_post(&sv, "/api/logout", NULL, &r));
    check_refused(&r, 401, "log in");
    T_REQUIRE(sc_login(&sv, "carol") == 0);
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_STR(sc_str(&r, "user"), "carol");
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGINT), 0);
}

T_TEST(read_only)
{
    struct sc_server sv;
    struct sc_reply r;
    const char *const extra[] = {"--read-only", NULL};

    T_REQUIRE(start_logged_in(&sv, extra));
    T_OK(sc_get(&sv, "/api/session", &r));
    T_CHECK(json_is_true(json_object_get(r.json, "read_only")));
    sc_reply_free(&r);
    T_OK(sc_post(&sv, "/api/runs/r1/stop", "{\"reason\":\"x\"}", &r));
    check_refused(&r, 403, "read-only");
    T_OK(sc_post(&sv, "/api/lab/start", NULL, &r));
    check_refused(&r, 403, "read-only");
    T_OK(sc_post(&sv, "/api/logout", NULL, &r));
    T_EQ_I64(r.status, 200);
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(user_flag_logs_in_from_the_url)
{
    struct sc_server sv;
    struct sc_reply r;
    const char *const extra[] = {"--user", "ops", NULL};
    char path[256], v[256];

    T_REQUIRE(sc_start(&sv, t_path("store"), extra) == 0);
    snprintf(path, sizeof(path), "/login?token=%064d", 5);
    T_OK(sc_request(&sv, "GET", path, NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_EQ_I64(r.status, 403);
    T_CONTAINS(r.body, "login-error");
    sc_reply_free(&r);
    snprintf(path, sizeof(path), "/login?token=%s", sv.token);
    T_OK(sc_request(&sv, "GET", path, NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_EQ_I64(r.status, 303);
    T_REQUIRE(sc_header(&r, "Set-Cookie", v, sizeof(v)) != NULL);
    snprintf(sv.sess.cookie, sizeof(sv.sess.cookie), "%.*s", (int)strcspn(v, ";"), v);
    sc_reply_free(&r);
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_I64(r.status, 200);
    T_EQ_STR(sc_str(&r, "user"), "ops");
    sc_reply_free(&r);
    /* a POST's user is ignored too */
    T_REQUIRE(sc_wait_err(&sv, "next login at", 2000));
    T_REQUIRE(sc_login(&sv, "someone") == 0);
    T_EQ_STR(sv.sess.user, "ops");
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(page_files)
{
    struct sc_server sv;
    struct sc_reply r;
    char v[256];

    T_REQUIRE(sc_start(&sv, t_path("store"), NULL) == 0);
    T_OK(sc_request(&sv, "GET", "/", NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_EQ_I64(r.status, 200);
    check_headers(&r, false);
    T_CONTAINS(sc_header(&r, "Content-Type", v, sizeof(v)), "text/html");
    T_CONTAINS(r.body, "<script src=\"/app.js\"");
    sc_reply_free(&r);
    T_OK(sc_request(&sv, "GET", "/app.js", NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_EQ_I64(r.status, 200);
    T_CONTAINS(sc_header(&r, "Content-Type", v, sizeof(v)), "text/javascript");
    sc_reply_free(&r);
    T_OK(sc_request(&sv, "GET", "/app.css", NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_CONTAINS(sc_header(&r, "Content-Type", v, sizeof(v)), "text/css");
    sc_reply_free(&r);
    T_OK(sc_request(&sv, "GET", "/login", NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_EQ_I64(r.status, 200);
    T_CONTAINS(r.body, "id=\"login\"");
    T_CONTAINS(r.body, "id=\"login-token\"");
    check_headers(&r, false);
    sc_reply_free(&r);
    T_OK(sc_request(&sv, "POST", "/app.js", "{}", 2, NULL, 0, &r));
    check_refused(&r, 405, "Method");
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(many_sessions)
{
    struct sc_server sv;
    struct sc_reply r;
    struct sc_session first, second;

    T_REQUIRE(start_logged_in(&sv, NULL));
    first = sv.sess;
    T_REQUIRE(sc_login(&sv, "u1") == 0);
    second = sv.sess;
    sv.sess = first; /* used last: the second is now the least recent */
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_I64(r.status, 200);
    sc_reply_free(&r);
    for (int i = 2; i < SESSIONS_MAX; i++)
        T_REQUIRE(sc_login(&sv, "many") == 0);
    /* SESSIONS_MAX sessions: the first still works */
    sv.sess = first;
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_I64(r.status, 200);
    sc_reply_free(&r);
    /* one more: the least recently used (the second) ends */
    T_REQUIRE(sc_login(&sv, "last") == 0);
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_STR(sc_str(&r, "user"), "last");
    sc_reply_free(&r);
    sv.sess = second;
    T_OK(sc_get(&sv, "/api/session", &r));
    check_refused(&r, 401, "log in");
    sv.sess = first;
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_STR(sc_str(&r, "user"), "alice");
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(streams_cap)
{
    struct sc_server sv;
    struct sc_stream *st[STREAMS_MAX + 1] = {0};
    struct sc_reply r;
    long status = 0;
    size_t open = 0;
    char v[64];

    T_REQUIRE(start_logged_in(&sv, NULL));
    for (size_t i = 0; i < STREAMS_MAX; i++) {
        if (sc_stream_open(&sv, i % 2 ? "r1" : NULL, &st[i], &status) != 0 ||
            status != 200)
            break;
        open++;
    }
    T_EQ_I64(open, STREAMS_MAX);
    T_OK(sc_get(&sv, "/api/stream", &r));
    T_EQ_STR(sc_header(&r, "Retry-After", v, sizeof(v)), "1");
    check_refused(&r, 503, "too many");
    /* one closed makes room */
    sc_stream_close(st[0]);
    st[0] = NULL;
    for (int tries = 0; tries < 50; tries++) {
        T_OK(sc_get(&sv, "/api/session", &r)); /* lets the server see it gone */
        sc_reply_free(&r);
        sc_stream_close(st[STREAMS_MAX]);
        st[STREAMS_MAX] = NULL;
        if (sc_stream_open(&sv, NULL, &st[STREAMS_MAX], &status) == 0 && status == 200)
            break;
        usleep(20000);
    }
    T_EQ_I64(status, 200);
    T_CHECK(sc_stream_wait(st[STREAMS_MAX], "hello", 3000, NULL));
    for (size_t i = 0; i <= STREAMS_MAX; i++)
        sc_stream_close(st[i]);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(exit_statuses)
{
    struct sc_server sv, other;
    const char *bad[][6] = {
        {"serve", "--dir", "s", "--listen", "nonsense", NULL},
        {"serve", "--dir", "s", "--listen", "127.0.0.1:99999", NULL},
        {"serve", "--dir", "s", "--listen", "127.0.0.1:", NULL},
        {"serve", "--dir", "s", "--listen", "no.such.host.invalid:80", NULL},
        {"serve", "--dir", "s", "--user", "", NULL},
        {"serve", "--dir", "s", "--no-such-flag", NULL},
    };
    char listen[64];
    const char *busy[] = {"serve", "--dir", "s", "--listen", listen, NULL};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = sc_run_to_exit(&sv, bad[i], 10000);
        if (rc != 64)
            fprintf(stderr, "case %zu: %d: %s\n", i, rc, sv.err);
        T_EQ_I64(rc, 64);
    }
    /* the address in use: 1 */
    T_REQUIRE(sc_start(&other, t_path("store"), NULL) == 0);
    snprintf(listen, sizeof(listen), "127.0.0.1:%u", other.port);
    T_EQ_I64(sc_run_to_exit(&sv, busy, 10000), 1);
    T_CONTAINS(sv.err, "cannot listen");
    T_EQ_I64(sc_stop(&other, SIGINT), 0);
}

T_TEST(non_loopback_warns)
{
    struct sc_server sv;
    struct sc_reply r;
    const char *const extra[] = {"--listen", "0.0.0.0:0", NULL};
    char host[64];
    const char *hdr[] = {host, NULL};

    T_REQUIRE(sc_start(&sv, t_path("store"), extra) == 0);
    T_CONTAINS(sv.err, "lil serve: warning: listening on a non-loopback address");
    T_CONTAINS(sv.err, "lil serve: listening on http://0.0.0.0:");
    T_REQUIRE(sc_login(&sv, "alice") == 0);
    /* every address of the host may be named, not another name */
    snprintf(host, sizeof(host), "Host: 10.1.2.3:%u", sv.port);
    T_OK(sc_request(&sv, "GET", "/api/session", NULL, 0, hdr, 0, &r));
    T_EQ_I64(r.status, 200);
    sc_reply_free(&r);
    snprintf(host, sizeof(host), "Host: attacker.example:%u", sv.port);
    T_OK(sc_request(&sv, "GET", "/api/session", NULL, 0, hdr, 0, &r));
    check_refused(&r, 403, "DNS rebinding");
    snprintf(host, sizeof(host), "Host: 10.1.2.3:%u", sv.port + 1);
    T_OK(sc_request(&sv, "GET", "/api/session", NULL, 0, hdr, 0, &r));
    check_refused(&r, 403, "DNS rebinding");
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(ipv6_loopback)
{
    struct sc_server sv;
    struct sc_reply r;
    const char *const extra[] = {"--listen", "[::1]:0", NULL};

    T_REQUIRE(sc_start(&sv, t_path("store"), extra) == 0);
    T_CONTAINS(sv.err, "lil serve: listening on http://[::1]:");
    T_CHECK(strstr(sv.err, "warning") == NULL);
    snprintf(sv.base, sizeof(sv.base), "http://[::1]:%u", sv.port);
    T_REQUIRE(sc_login(&sv, "alice") == 0);
    T_OK(sc_get(&sv, "/api/session", &r));
    T_EQ_I64(r.status, 200);
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_TEST(sigterm_ends_open_streams)
{
    struct sc_server sv;
    struct sc_stream *st[3] = {0};
    long status;

    T_REQUIRE(start_logged_in(&sv, NULL));
    for (size_t i = 0; i < 3; i++) {
        T_REQUIRE(sc_stream_open(&sv, i ? "r1" : NULL, &st[i], &status) == 0);
        T_CHECK(sc_stream_wait(st[i], "hello", 3000, NULL));
    }
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
    for (size_t i = 0; i < 3; i++) {
        T_CHECK(sc_stream_ended(st[i], 3000));
        sc_stream_close(st[i]);
    }
}

/* A shell step, then a breakpoint: paused once, completed when approved. */
static const char paused_spec[] = "loopspec: \"0.1\"\n"
                                  "id: bp\n"
                                  "pattern: react\n"
                                  "state:\n"
                                  "  vars:\n"
                                  "    n: {type: int, init: 0}\n"
                                  "body:\n"
                                  "  - id: work\n"
                                  "    kind: shell\n"
                                  "    cmd: \"true\"\n"
                                  "    on_done: {incr: n}\n"
                                  "  - id: ask\n"
                                  "    kind: breakpoint\n"
                                  "    ask: \"go on?\"\n"
                                  "terminate: {signal: state-predicate, until: "
                                  "\"${state.n >= 1}\"}\n"
                                  "caps: {max_iterations: 5}\n";

/* What the server broadcasts to every stream (a job's start and end)
 * reaches every stream, whatever run each watches. */
T_TEST(broadcast_reaches_every_stream)
{
    struct sc_server sv;
    struct sc_stream *st[3] = {0};
    const char *watch[3] = {NULL, "bp", "another"};
    struct sc_reply r;
    char cmd[1024], out[256];
    FILE *f;
    long status;
    json_t *job;

    f = fopen(t_path("bp.yaml"), "w");
    T_REQUIRE(f != NULL);
    fputs(paused_spec, f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' --dir store run bp.yaml --run-id bp",
             t_tmpdir(), t_lil_bin());
    T_EQ_I64(t_run(cmd, out, sizeof(out), 1), 3); /* paused */
    T_REQUIRE(start_logged_in(&sv, NULL));
    for (size_t i = 0; i < 3; i++) {
        T_REQUIRE(sc_stream_open(&sv, watch[i], &st[i], &status) == 0 && status == 200);
        T_CHECK(sc_stream_wait(st[i], "hello", 3000, NULL));
    }
    T_OK(sc_post(&sv, "/api/runs/bp/approve",
                 "{\"reason\":\"go\",\"pause_id\":\"pause.1\"}", &r));
    T_EQ_I64(r.status, 202);
    sc_reply_free(&r);
    for (size_t i = 0; i < 3; i++) {
        job = NULL;
        T_CHECK(sc_stream_wait(st[i], "job", 30000, &job));
        T_EQ_STR(json_string_value(json_object_get(job, "run")), "bp");
        json_decref(job);
        sc_stream_close(st[i]);
    }
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_MAIN()
