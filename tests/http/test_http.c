/*
 * test_http.c -- the http effect (src/effects/effect_http.h) against a real
 * HTTP server on 127.0.0.1 (server.py, started once per process and ended
 * when this process closes its stdin):
 *   - every vector of the reference's http results, default and envelope mode,
 *     any JSON value, non-JSON and empty bodies, numbers as JSON.parse
 *     reads them, text decoding (U+FFFD, BOM), response headers;
 *   - what is sent: body forms (string as is, JSON.stringify of the rest),
 *     the content type fetch gives a body and none other, Content-Length
 *     of empty POST/PUT, the caller's headers, the URL as fetch encodes it;
 *   - redirects as fetch follows them (method and body changes, headers
 *     dropped for another origin, the limit, non-http targets);
 *   - errors: the timeout (also mid-body and across redirects), a closed
 *     port, the size cap (Content-Length, chunked, gzip, headers), bad
 *     requests; messages name the URL without its secrets;
 *   - redaction and the identity's exact bytes (secrets as their SHA-256);
 *   - every allocation of one request failed in turn: LIL_E_NOMEM and
 *     nothing leaked (LeakSanitizer in the asan preset).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/env.h"
#include "effects/effect_http.h"
#include "effects/http_int.h"
#include "faults.h"
#include "json/json.h"
#include "t.h"

#ifndef T_SERVER
#error "T_SERVER must name tests/http/server.py"
#endif

/* ---- the server ------------------------------------------------------------ */

static pid_t server_pid;
static int server_stdin = -1;
static char base_url[64]; /* "http://127.0.0.1:PORT" */

static void stop_server(void)
{
    if (server_stdin >= 0)
        close(server_stdin); /* the server exits at EOF */
    if (server_pid > 0)
        waitpid(server_pid, NULL, 0);
}

static void server_child(int in[2], int out[2])
{
    dup2(in[0], 0);
    dup2(out[1], 1);
    execlp("python3", "python3", T_SERVER, (char *)NULL);
    _exit(127);
}

static const char *base(void)
{
    int in[2], out[2];
    char line[32] = {0};
    FILE *f;

    if (base_url[0])
        return base_url;
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("https_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        return "http://127.0.0.1:1";
    server_pid = fork();
    if (server_pid == 0)
        server_child(in, out);
    close(in[0]);
    close(out[1]);
    server_stdin = in[1];
    atexit(stop_server);
    f = fdopen(out[0], "r");
    if (!f || !fgets(line, sizeof(line), f) || atoi(line) <= 0) {
        fprintf(stderr, "the test server did not start (python3 %s)\n", T_SERVER);
        return "http://127.0.0.1:1";
    }
    fclose(f);
    snprintf(base_url, sizeof(base_url), "http://127.0.0.1:%d", atoi(line));
    return base_url;
}

/* ---- helpers ----------------------------------------------------------------- */

static lil_env *test_env(void)
{
    static lil_env *env;

    if (!env && lil_env_new(&env) != LIL_OK)
        abort();
    return env;
}

static struct lil_err last_err;

/* The canonical text of v (a static buffer; the last 4 rotate). */
static const char *canon(json_t *v)
{
    static char bufs[4][8192];
    static int next;
    char *b = bufs[next++ % 4];
    struct lil_buf out;
    struct lil_err err;

    lil__buf_init(&out, test_env(), sizeof(bufs[0]) - 1);
    if (!v)
        snprintf(b, sizeof(bufs[0]), "(null)");
    else if (lil__json_canon(test_env(), &err, v, &out) != LIL_OK)
        snprintf(b, sizeof(bufs[0]), "(cannot print: %s)", err.msg);
    else
        snprintf(b, sizeof(bufs[0]), "%s", out.data);
    lil__buf_free(&out);
    return b;
}

/* The request whose JSON text is fmt with "%s" standing for the server's
 * base URL (every %s) and "%%" for "%". */
static json_t *request(const char *fmt)
{
    char text[4096];
    size_t o = 0;
    json_error_t je;
    json_t *v;

    for (const char *p = fmt; *p && o < sizeof(text) - 64; p++) {
        if (p[0] == '%' && p[1] == 's') {
            o += (size_t)snprintf(text + o, sizeof(text) - o, "%s", base());
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            text[o++] = *p++;
        } else {
            text[o++] = *p;
        }
    }
    text[o] = '\0';
    v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!v)
        fprintf(stderr, "bad request text in the test: %s: %s\n", text, je.text);
    return v;
}

/* Perform the request; its result (a new reference) or NULL, the error in
 * last_err. */
static json_t *perform_with(const struct lil_http_opts *o, lil_status *rc,
                            const char *fmt)
{
    json_t *req = request(fmt), *out = NULL;

    lil__clearerr(&last_err);
    *rc = lil__http_perform(test_env(), &last_err, req, o, &out);
    json_decref(req);
    return out;
}

/* The canonical result of a request that must succeed. */
static const char *ok(const char *fmt)
{
    lil_status rc;
    json_t *out = perform_with(NULL, &rc, fmt);
    const char *s = canon(out);

    if (rc != LIL_OK)
        fprintf(stderr, "  %s: %s\n", lil_status_name(rc), last_err.msg);
    json_decref(out);
    return rc == LIL_OK ? s : "(failed)";
}

/* The status of a request that must fail (its message in last_err). */
static lil_status failing(const struct lil_http_opts *o, const char *fmt)
{
    lil_status rc;
    json_t *out = perform_with(o, &rc, fmt);

    if (out)
        fprintf(stderr, "  unexpected result %s\n", canon(out));
    json_decref(out);
    return rc;
}

/* The echo of a request: what the server received. */
static json_t *echo(const char *fmt)
{
    lil_status rc;
    json_t *out = perform_with(NULL, &rc, fmt);

    if (rc != LIL_OK)
        fprintf(stderr, "  %s: %s\n", lil_status_name(rc), last_err.msg);
    return out;
}

static const char *field(json_t *v, const char *name)
{
    json_t *f = json_object_get(v, name);

    return json_is_string(f) ? json_string_value(f) : NULL;
}

/* A header the server received, or NULL. */
static const char *sent_header(json_t *echoed, const char *lower_name)
{
    return field(json_object_get(echoed, "headers"), lower_name);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the reference's vectors -------------------------------------------- */

T_TEST(vector_json_200_is_the_parsed_value)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/json\"}"), "{\"state\":\"green\"}");
}

T_TEST(vector_text_503_is_status_and_raw)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/text503\"}"),
             "{\"raw\":\"not json\",\"status\":503}");
}

T_TEST(vector_envelope_json_503)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/json503\",\"envelope\":true}"),
             "{\"body\":{\"state\":\"red\"},\"headers\":{\"content-length\":\"15\","
             "\"content-type\":\"application/json\"},\"ok\":false,\"status\":503}");
}

T_TEST(vector_envelope_plain_200)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/plain\",\"envelope\":true}"),
             "{\"body\":\"plain ok\",\"headers\":{\"content-length\":\"8\","
             "\"content-type\":\"text/plain\"},\"ok\":true,\"status\":200}");
}

T_TEST(envelope_false_is_the_default_mode)
{
    T_EQ_STR(
        ok("{\"method\":\"GET\",\"url\":\"%s/json503\",\"envelope\":false}"),
        "{\"state\":\"red\"}"); /* the status is invisible (the reason for envelope) */
}

T_TEST(any_json_value_is_a_result)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=%%5B1,2%%5D\"}"), "[1,2]");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=42\"}"), "42");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=%%22s%%22\"}"), "\"s\"");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=null\"}"), "null");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=+true+\"}"), "true");
}

T_TEST(empty_and_non_json_bodies_are_raw_text)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?status=204\"}"),
             "{\"raw\":\"\",\"status\":204}");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=%%7B%%22a%%22:\"}"),
             "{\"raw\":\"{\\\"a\\\":\",\"status\":200}");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?status=404&body=nope\","
                "\"envelope\":true}"),
             "{\"body\":\"nope\",\"headers\":{\"content-length\":\"4\"},\"ok\":false,"
             "\"status\":404}");
}

T_TEST(http_error_statuses_are_results)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?status=500&body=%%7B%%7D\"}"),
             "{}");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/nowhere\"}"),
             "{\"raw\":\"no such route\",\"status\":404}");
}

T_TEST(numbers_as_json_parse_reads_them)
{
    /* 1.0 and -0.0 are integers for JavaScript */
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=%%5B1.0,-0.0,0.5,"
                "9007199254740993%%5D\"}"),
             "[1,0,0.5,9007199254740993]");
    /* an integer beyond 64 bits: all numbers are doubles, as in JavaScript */
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?body=%%5B"
                "123456789012345678901234567890,9007199254740993,1%%5D\"}"),
             "[1.2345678901234568e29,9007199254740992,1]");
}

T_TEST(text_is_decoded_as_textdecoder_does)
{
    /* "a", E2 82 (truncated), "b", C0 (never valid), F0 9F 98 80 (U+1F600) */
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?hex=61e28262c0f09f9880\"}"),
             "{\"raw\":\"a\xef\xbf\xbd"
             "b\xef\xbf\xbd\xf0\x9f\x98\x80\",\"status\":200}");
    /* a BOM is dropped, so the JSON after it parses */
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?hex=efbbbf7b2261223a317d\"}"),
             "{\"a\":1}");
    /* a NUL byte stays in the text */
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/raw?hex=610062\"}"),
             "{\"raw\":\"a\\u0000b\",\"status\":200}");
}

T_TEST(decoder_replaces_each_maximal_subpart)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate: 3 */
        {"\xf0\x9f\x98", "\xef\xbf\xbd"},                         /* truncated: 1 */
        {"\xe0\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong: 3 */
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xc3\xa9\xff", "\xc3\xa9\xef\xbf\xbd"},
        {"\xef\xbb\xbf\xef\xbb\xbf", "\xef\xbb\xbf"}, /* only the first BOM goes */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct lil_buf out;

        lil__buf_init(&out, test_env(), 100);
        T_CHECK(lil__http_decode_text(&out, (const unsigned char *)cases[i].in,
                                      strlen(cases[i].in)) == LIL_OK);
        T_EQ_STR(out.data ? (const char *)out.data : "", cases[i].out);
        lil__buf_free(&out);
    }
}

T_TEST(response_headers_lower_cased_and_joined)
{
    lil_status rc;
    json_t *out = perform_with(
        NULL, &rc, "{\"method\":\"GET\",\"url\":\"%s/headers\",\"envelope\":true}");
    json_t *h = json_object_get(out, "headers");

    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(field(h, "x-multi"), "a, b");
    T_EQ_STR(field(h, "set-cookie"), "s=1, t=2");
    T_EQ_STR(field(h, "x-latin"), "caf\xc3\xa9"); /* byte E9 read as Latin-1 */
    T_EQ_STR(field(h, "x-blank"), ""); /* libcurl 7.88 leaves a CR in an empty one */
    T_EQ_STR(field(h, "content-type"), "application/json");
    T_EQ_STR(canon(json_object_get(out, "body")), "{}");
    json_decref(out);
}

T_TEST(gzip_bodies_are_decoded)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/gzip?json=1\"}"),
             "{\"zipped\":true}");
}

/* ---- what is sent ------------------------------------------------------------ */

T_TEST(string_body_as_is_labelled_text_plain)
{
    json_t *e =
        echo("{\"method\":\"POST\",\"url\":\"%s/echo\",\"body\":\"a=1&b={x}\"}");

    T_EQ_STR(field(e, "method"), "POST");
    T_EQ_STR(field(e, "body"), "a=1&b={x}");
    T_EQ_STR(sent_header(e, "content-type"), "text/plain;charset=UTF-8");
    T_EQ_STR(sent_header(e, "content-length"), "9");
    json_decref(e);
}

T_TEST(json_body_as_json_stringify_prints_it)
{
    json_t *e =
        echo("{\"method\":\"PUT\",\"url\":\"%s/echo\",\"body\":"
             "{\"b\":[1,2.5,0.1,-0.0,1e21,null,true],\"10\":1,\"2\":\"\\u001f\\n/\","
             "\"a\":{\"\\u00e9\":1.0}}}");

    T_EQ_STR(field(e, "method"), "PUT");
    /* index keys first, ascending; then insertion order; JS numbers */
    T_EQ_STR(field(e, "body"),
             "{\"2\":\"\\u001f\\n/\",\"10\":1,\"b\":[1,2.5,0.1,0,1e+21,"
             "null,true],\"a\":{\"\xc3\xa9\":1}}");
    /* no JSON content type is added: fetch labels every body text/plain */
    T_EQ_STR(sent_header(e, "content-type"), "text/plain;charset=UTF-8");
    json_decref(e);
}

T_TEST(null_and_scalar_bodies_are_stringified)
{
    json_t *e = echo("{\"method\":\"PATCH\",\"url\":\"%s/echo\",\"body\":null}");

    T_EQ_STR(field(e, "body"), "null");
    T_EQ_STR(field(e, "method"), "PATCH");
    json_decref(e);
    e = echo("{\"method\":\"DELETE\",\"url\":\"%s/echo\",\"body\":12.5}");
    T_EQ_STR(field(e, "body"), "12.5");
    T_EQ_STR(field(e, "method"), "DELETE");
    json_decref(e);
    e = echo("{\"method\":\"POST\",\"url\":\"%s/echo\",\"body\":\"\"}");
    T_EQ_STR(sent_header(e, "content-length"), "0");
    T_EQ_STR(sent_header(e, "content-type"), "text/plain;charset=UTF-8");
    json_decref(e);
}

T_TEST(callers_content_type_wins)
{
    json_t *e = echo("{\"method\":\"POST\",\"url\":\"%s/echo\",\"body\":{\"a\":1},"
                     "\"headers\":{\"content-TYPE\":\"application/json\"}}");

    T_EQ_STR(sent_header(e, "content-type"), "application/json");
    T_EQ_STR(field(e, "body"), "{\"a\":1}");
    json_decref(e);
}

T_TEST(requests_without_a_body)
{
    json_t *e = echo("{\"method\":\"GET\",\"url\":\"%s/echo\"}");

    T_EQ_STR(field(e, "method"), "GET");
    T_CHECK(sent_header(e, "content-type") == NULL);
    T_CHECK(sent_header(e, "content-length") == NULL);
    json_decref(e);
    e = echo(
        "{\"method\":\"POST\",\"url\":\"%s/echo\"}"); /* fetch: Content-Length: 0 */
    T_EQ_STR(sent_header(e, "content-length"), "0");
    T_CHECK(sent_header(e, "content-type") == NULL); /* not libcurl's form type */
    json_decref(e);
    e = echo("{\"method\":\"PUT\",\"url\":\"%s/echo\"}");
    T_EQ_STR(field(e, "method"), "PUT");
    T_EQ_STR(sent_header(e, "content-length"), "0");
    json_decref(e);
    e = echo("{\"method\":\"DELETE\",\"url\":\"%s/echo\"}");
    T_EQ_STR(field(e, "method"), "DELETE");
    T_CHECK(sent_header(e, "content-length") == NULL);
    json_decref(e);
}

T_TEST(headers_sent_as_given)
{
    json_t *e =
        echo("{\"method\":\"POST\",\"url\":\"%s/echo\",\"headers\":{"
             "\"Authorization\":\"Bearer abc\",\"X-Trim\":\"  v  \",\"X-Empty\":\"\","
             "\"Content-Length\":\"999\",\"Connection\":\"close\"},"
             "\"body\":\"x\"}");

    T_EQ_STR(sent_header(e, "authorization"), "Bearer abc");
    T_EQ_STR(sent_header(e, "x-trim"), "v");
    T_EQ_STR(sent_header(e, "x-empty"), "");
    T_EQ_STR(sent_header(e, "content-length"), "1"); /* the transport's own */
    T_CHECK(sent_header(e, "connection") == NULL);
    T_EQ_STR(sent_header(e, "user-agent"), "lil/" LIL_VERSION);
    T_EQ_STR(sent_header(e, "accept"), "*/*");
    json_decref(e);
    e = echo(
        "{\"method\":\"GET\",\"url\":\"%s/echo\",\"headers\":{\"User-Agent\":\"me\"}}");
    T_EQ_STR(sent_header(e, "user-agent"), "me");
    json_decref(e);
}

T_TEST(large_body_sent_without_expect)
{
    static char body[200001];
    json_t *req = request("{\"method\":\"POST\",\"url\":\"%s/echo\"}"), *e = NULL;
    lil_status rc;

    memset(body, 'x', sizeof(body) - 1);
    json_object_set_new(req, "body", json_string(body));
    rc = lil__http_perform(test_env(), &last_err, req, NULL, &e);
    T_EQ_I64(rc, LIL_OK);
    T_CHECK(sent_header(e, "expect") == NULL);
    T_EQ_STR(sent_header(e, "content-length"), "200000");
    T_EQ_STR(field(e, "body"), body);
    json_decref(e);
    json_decref(req);
}

T_TEST(url_encoded_as_fetch_does)
{
    json_t *e =
        echo("{\"method\":\"GET\",\"url\":\"  %s/echo?q=a b&c=\\u00e9\\\"'#frag \"}");

    T_EQ_STR(field(e, "path"), "/echo?q=a%20b&c=%C3%A9%22%27");
    json_decref(e);
}

/* ---- bad requests -------------------------------------------------------------- */

T_TEST(bad_requests_are_inval_before_any_traffic)
{
    static const char *const bad[] = {
        "[]",
        "{\"url\":\"%s/json\"}",
        "{\"method\":\"get\",\"url\":\"%s/json\"}",
        "{\"method\":\"HEAD\",\"url\":\"%s/json\"}",
        "{\"method\":\"GET\"}",
        "{\"method\":\"GET\",\"url\":\"ftp://h/x\"}",
        "{\"method\":\"GET\",\"url\":\"/relative\"}",
        "{\"method\":\"GET\",\"url\":\"http://user:pw@127.0.0.1/\"}",
        "{\"method\":\"GET\",\"url\":\"%s/json\",\"body\":\"x\"}",
        "{\"method\":\"GET\",\"url\":\"%s/json\",\"headers\":[]}",
        "{\"method\":\"GET\",\"url\":\"%s/json\",\"headers\":{\"X\":1}}",
        "{\"method\":\"GET\",\"url\":\"%s/json\",\"headers\":{\"X Y\":\"1\"}}",
        "{\"method\":\"GET\",\"url\":\"%s/json\",\"headers\":{\"X\":\"a\\r\\nB: c\"}}",
        "{\"method\":\"GET\",\"url\":\"%s/json\",\"envelope\":1}",
        "{\"method\":\"GET\",\"url\":\"%s/json\",\"extra\":1}",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        T_EQ_I64(failing(NULL, bad[i]), LIL_E_INVAL);
        T_CONTAINS(last_err.msg, "http request: ");
    }
    T_CONTAINS(last_err.msg, "unknown field 'extra'");
}

T_TEST(bad_options_are_inval)
{
    struct lil_http_opts o;

    lil__http_opts_init(&o);
    o.max_redirects = -1;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/json\"}"), LIL_E_INVAL);
    lil__http_opts_init(&o);
    o.timeout_ms = 0;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/json\"}"), LIL_E_INVAL);
}

/* ---- redirects ------------------------------------------------------------------- */

T_TEST(redirects_are_followed)
{
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/redirect?to=/json\"}"),
             "{\"state\":\"green\"}");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/chain?n=19\"}"),
             "{\"state\":\"green\"}");
}

T_TEST(post_becomes_get_on_302_and_303_but_not_307)
{
    json_t *e = echo("{\"method\":\"POST\",\"url\":\"%s/redirect?code=302&to=/echo\","
                     "\"body\":\"b\",\"headers\":{\"Content-Type\":\"text/x\"}}");

    T_EQ_STR(field(e, "method"), "GET");
    T_EQ_STR(field(e, "body"), "");
    T_CHECK(sent_header(e, "content-type") == NULL);
    json_decref(e);
    e = echo(
        "{\"method\":\"PUT\",\"url\":\"%s/redirect?code=303&to=/echo\",\"body\":\"b\"}");
    T_EQ_STR(field(e, "method"), "GET");
    json_decref(e);
    e = echo(
        "{\"method\":\"PUT\",\"url\":\"%s/redirect?code=301&to=/echo\",\"body\":\"b\"}");
    T_EQ_STR(field(e, "method"), "PUT"); /* 301/302 change only a POST */
    T_EQ_STR(field(e, "body"), "b");
    json_decref(e);
    e = echo(
        "{\"method\":\"POST\",\"url\":\"%s/redirect?code=307&to=/echo\",\"body\":\"b\"}");
    T_EQ_STR(field(e, "method"), "POST");
    T_EQ_STR(field(e, "body"), "b");
    T_EQ_STR(sent_header(e, "content-type"), "text/plain;charset=UTF-8");
    json_decref(e);
    e = echo(
        "{\"method\":\"PATCH\",\"url\":\"%s/redirect?code=308&to=/echo\",\"body\":\"b\"}");
    T_EQ_STR(field(e, "method"), "PATCH");
    T_EQ_STR(field(e, "body"), "b");
    json_decref(e);
}

T_TEST(credentials_stay_with_their_origin)
{
    char req[512];
    json_t *e;

    e = echo(
        "{\"method\":\"GET\",\"url\":\"%s/redirect?to=/echo\",\"headers\":"
        "{\"Authorization\":\"Bearer abc\",\"Cookie\":\"c=1\",\"X-Other\":\"o\"}}");
    T_EQ_STR(sent_header(e, "authorization"), "Bearer abc");
    T_EQ_STR(sent_header(e, "cookie"), "c=1");
    json_decref(e);
    /* 127.0.0.1 -> localhost: another origin */
    snprintf(req, sizeof(req),
             "{\"method\":\"GET\",\"url\":\"%%s/redirect?to=http://localhost:%s/echo\","
             "\"headers\":{\"Authorization\":\"Bearer abc\",\"Cookie\":\"c=1\","
             "\"X-Other\":\"o\"}}",
             strrchr(base(), ':') + 1);
    e = echo(req);
    T_CHECK(sent_header(e, "authorization") == NULL);
    T_CHECK(sent_header(e, "cookie") == NULL);
    T_EQ_STR(sent_header(e, "x-other"), "o");
    json_decref(e);
}

T_TEST(redirect_limit)
{
    struct lil_http_opts o;

    T_EQ_I64(failing(NULL, "{\"method\":\"GET\",\"url\":\"%s/chain?n=20\"}"),
             LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "more than 20 redirects");
    lil__http_opts_init(&o);
    o.max_redirects = 0;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/chain?n=0\"}"), LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "more than 0 redirects");
    o.max_redirects = 1;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/chain?n=1\"}"), LIL_E_HTTP);
}

T_TEST(redirect_elsewhere_or_nowhere)
{
    T_EQ_I64(failing(NULL, "{\"method\":\"GET\",\"url\":\"%s/redirect?to=ftp://h/f\"}"),
             LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "not http: or https:");
    /* no Location: the 302 itself is the response */
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/redirect\"}"),
             "{\"raw\":\"moved\",\"status\":302}");
}

/* ---- errors: timeout, network, caps ------------------------------------------------
 */

T_TEST(timeout_is_an_http_error)
{
    struct lil_http_opts o;
    double t0 = now_s();

    lil__http_opts_init(&o);
    o.timeout_ms = 300;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/slow?ms=3000\"}"),
             LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "timed out after 300 ms");
    T_CONTAINS(last_err.msg, "/slow?ms=3000");
    T_CHECK(now_s() - t0 < 2.5);
}

T_TEST(timeout_covers_the_body_and_the_redirects)
{
    struct lil_http_opts o;

    lil__http_opts_init(&o);
    o.timeout_ms = 400;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/slowbody?ms=3000\"}"),
             LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "timed out");
    /* four hops of 250 ms each: every hop alone is within the timeout */
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/slowchain?n=3&ms=250\"}"),
             LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "timed out");
    o.timeout_ms = 5000;
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/slowchain?n=2&ms=10\"}"),
             "{\"state\":\"end of chain\"}");
}

/* A port on 127.0.0.1 that nothing listens on. */
static int closed_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return 9;
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

T_TEST(network_error_names_the_url_without_secrets)
{
    char req[256];

    snprintf(req, sizeof(req),
             "{\"method\":\"POST\",\"url\":\"http://127.0.0.1:%d/x?token=s3cret&q=1\","
             "\"headers\":{\"Authorization\":\"Bearer s3cret\"}}",
             closed_port());
    T_EQ_I64(failing(NULL, req), LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "http POST http://127.0.0.1:");
    T_CONTAINS(last_err.msg, "/x?token=[redacted]&q=1: ");
    T_CONTAINS(last_err.msg, "onnect");
    T_CHECK(strstr(last_err.msg, "s3cret") == NULL);
}

T_TEST(unknown_host_is_an_http_error)
{
    struct lil_http_opts o;

    lil__http_opts_init(&o);
    o.timeout_ms = 5000; /* a resolver without a network may be slow to say no */
    T_EQ_I64(
        failing(&o, "{\"method\":\"GET\",\"url\":\"http://no-such-host.invalid/\"}"),
        LIL_E_HTTP);
    T_CONTAINS(last_err.msg, "no-such-host.invalid");
}

T_TEST(size_cap)
{
    struct lil_http_opts o;
    lil_status rc;
    json_t *out;

    lil__http_opts_init(&o);
    o.max_bytes = 1 << 20;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/big?n=2000000\"}"),
             LIL_E_TOOBIG);
    T_CONTAINS(last_err.msg, "over the limit of 1048576 bytes");
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/big?n=2000000&chunked=1\"}"),
             LIL_E_TOOBIG);
    T_CONTAINS(last_err.msg, "body is over the limit of 1048576 bytes");
    /* decoded bytes count: 50 MB of spaces in a small gzip body */
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/gzip?n=50000000\"}"),
             LIL_E_TOOBIG);
    /* exactly the cap is fine */
    out = perform_with(&o, &rc,
                       "{\"method\":\"GET\",\"url\":\"%s/big?n=1048576&chunked=1\"}");
    T_EQ_I64(rc, LIL_OK);
    T_EQ_I64(json_string_length(json_object_get(out, "raw")), 1048576);
    json_decref(out);
    /* the default cap is 16 MiB */
    T_EQ_I64(
        failing(NULL, "{\"method\":\"GET\",\"url\":\"%s/big?n=17000000&chunked=1\"}"),
        LIL_E_TOOBIG);
    T_CONTAINS(last_err.msg, "16777216");
}

T_TEST(header_cap)
{
    struct lil_http_opts o;

    lil__http_opts_init(&o);
    o.max_bytes = 4000;
    T_EQ_I64(failing(&o, "{\"method\":\"GET\",\"url\":\"%s/bighead?n=5000\"}"),
             LIL_E_TOOBIG);
    T_CONTAINS(last_err.msg, "headers are over the limit of 4000 bytes");
    T_EQ_STR(ok("{\"method\":\"GET\",\"url\":\"%s/bighead?n=3000\"}"), "{}");
}

/* ---- redaction and identity ---------------------------------------------------------
 */

T_TEST(secret_names)
{
    static const char *const secret[] = {
        "Authorization", "proxy-authorization", "Cookie",   "Set-Cookie", "X-Api-Key",
        "X-Auth-Token",  "x-goog-api-key",      "X-Secret", "X-PASSWORD", "apikey",
        "X-Session-Id",  "X-Amz-Security-Token"};
    static const char *const plain[] = {"Content-Type", "Accept", "X-Request-Id",
                                        "User-Agent",   "sig",    "pass"};

    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
        T_CHECK(lil__http_secret_name(secret[i], strlen(secret[i]), false));
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        T_CHECK(!lil__http_secret_name(plain[i], strlen(plain[i]), false));
    T_CHECK(lil__http_secret_name("sig", 3, true));
    T_CHECK(lil__http_secret_name("PASS", 4, true));
    T_CHECK(!lil__http_secret_name("q", 1, true));
}

static const char *redacted_url(const char *url)
{
    static char b[512];
    struct lil_buf out;

    lil__buf_init(&out, test_env(), sizeof(b) - 1);
    if (lil__http_redact_url(&out, url) != LIL_OK)
        snprintf(b, sizeof(b), "(failed)");
    else
        snprintf(b, sizeof(b), "%s", out.data ? (const char *)out.data : "");
    lil__buf_free(&out);
    return b;
}

T_TEST(urls_redacted)
{
    T_EQ_STR(redacted_url("https://user:pass@host/p"), "https://[redacted]@host/p");
    T_EQ_STR(redacted_url("https://user@host:8443"), "https://[redacted]@host:8443");
    T_EQ_STR(redacted_url("https://a:b@c@host/x@y"), "https://[redacted]@host/x@y");
    T_EQ_STR(redacted_url("https://host/a@b?x=1"), "https://host/a@b?x=1");
    T_EQ_STR(redacted_url("https://host/p?api_key=abc&q=1&token=&sig=zz&t"),
             "https://host/p?api_key=[redacted]&q=1&token=[redacted]&sig=[redacted]&t");
    T_EQ_STR(redacted_url("https://host/cb#access_token=xyz&state=s"),
             "https://host/cb#access_token=[redacted]&state=s");
    T_EQ_STR(redacted_url("http://[::1]:80/?Password=p"),
             "http://[::1]:80/?Password=[redacted]");
    T_EQ_STR(redacted_url("not a url?key=v"), "not a url?key=[redacted]");
    T_EQ_STR(redacted_url(" \thttps://u:p@h/ \n"), " \thttps://[redacted]@h/ \n");
    T_EQ_STR(redacted_url(""), "");
}

/* The identity of the request fmt, its secrets digested under key (NULL:
 * plain SHA-256). */
static const char *identity_keyed(const char *fmt, const char *key)
{
    static char bufs[2][1024];
    static int next;
    char *b = bufs[next++ % 2];
    json_t *req = request(fmt);
    struct lil_buf out;
    struct lil_err err;

    lil__buf_init(&out, test_env(), sizeof(bufs[0]) - 1);
    if (lil__http_identity(test_env(), &err, req, (const uint8_t *)key,
                           key ? strlen(key) : 0, &out) != LIL_OK)
        snprintf(b, sizeof(bufs[0]), "(error: %s)", err.msg);
    else
        snprintf(b, sizeof(bufs[0]), "%s", out.data);
    lil__buf_free(&out);
    json_decref(req);
    return b;
}

static const char *identity(const char *fmt)
{
    return identity_keyed(fmt, NULL);
}

/* A run's digest key: HMAC-SHA-256 (RFC 4231, test case 2), "hmac-sha256:";
 * another key, another digest; the plain one without a key. */
T_TEST(identity_keyed_digests)
{
    static const char req[] =
        "{\"url\":\"http://h/\",\"method\":\"GET\","
        "\"headers\":{\"X-Api-Key\":\"what do ya want for nothing?\"}}";

    T_EQ_STR(identity_keyed(req, "Jefe"),
             "{\"headers\":{\"X-Api-Key\":\"hmac-sha256:"
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843\"},"
             "\"method\":\"GET\",\"url\":\"http://h/\"}");
    T_CHECK(strcmp(identity_keyed(req, "Jeff"), identity_keyed(req, "Jefe")) != 0);
    T_CONTAINS(identity(req), "\"sha256:");
}

T_TEST(identity_bytes)
{
    /* keys sorted, secrets as the SHA-256 of their bytes, the rest as is */
    T_EQ_STR(identity("{\"url\":\"https://h/x?api_key=k123&q=1\",\"method\":\"POST\","
                      "\"headers\":{\"X-B\":\"2\",\"Authorization\":\"Bearer abc\"},"
                      "\"body\":{\"z\":1,\"a\":[true]},\"envelope\":true}"),
             "{\"body\":{\"a\":[true],\"z\":1},\"envelope\":true,\"headers\":{"
             "\"Authorization\":\"sha256:"
             "c355dce96c1612880d11940ffdd9014d386c253e0c3652a6cd06a7226f7bd2b6\","
             "\"X-B\":\"2\"},\"method\":\"POST\",\"url\":\"https://h/x?api_key=sha256:"
             "66164fd1c9a8234940536d902d18a712e7a9e74c6819b41fb014e33740f6e0dc&q=1\"}");
    /* absent fields stay absent */
    T_EQ_STR(identity("{\"method\":\"GET\",\"url\":\"http://h/\"}"),
             "{\"method\":\"GET\",\"url\":\"http://h/\"}");
    T_EQ_STR(
        identity("{\"method\":\"GET\",\"url\":\"http://h/\",\"envelope\":false,"
                 "\"headers\":{}}"),
        "{\"envelope\":false,\"headers\":{},\"method\":\"GET\",\"url\":\"http://h/\"}");
    T_CONTAINS(identity("{\"method\":\"GET\"}"), "(error: http request: ");
}

T_TEST(identity_sees_a_changed_credential)
{
    const char *a = identity("{\"method\":\"GET\",\"url\":\"http://h/\",\"headers\":"
                             "{\"Authorization\":\"Bearer one\"}}");
    const char *b = identity("{\"method\":\"GET\",\"url\":\"http://h/\",\"headers\":"
                             "{\"Authorization\":\"Bearer two\"}}");

    T_CHECK(strcmp(a, b) != 0);
    T_CHECK(strstr(a, "one") == NULL && strstr(b, "two") == NULL);
    T_EQ_STR(identity("{\"method\":\"GET\",\"url\":\"http://h/\",\"headers\":"
                      "{\"Authorization\":\"Bearer one\"}}"),
             a);
}

/* ---- JSON.stringify, directly -------------------------------------------------------
 */

T_TEST(stringify_as_javascript)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"\"a\\\"b\\\\c\\u0001\\u007f\\u2028\"",
         "\"a\\\"b\\\\c\\u0001\x7f\xe2\x80\xa8\""},
        {"[0.1,1e-7,123456789012345678,-5,1.5e300]",
         "[0.1,1e-7,123456789012345680,-5,1.5e+300]"},
        {"{\"4294967295\":1,\"4294967294\":2,\"01\":3,\"1\":4,\"x\":5,\"0\":6}",
         "{\"0\":6,\"1\":4,\"4294967294\":2,\"4294967295\":1,\"01\":3,\"x\":5}"},
        {"{}", "{}"},
        {"[]", "[]"},
        {"[[],{},[{}]]", "[[],{},[{}]]"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = json_loads(cases[i].in, JSON_DECODE_ANY, NULL);
        struct lil_buf out;
        struct lil_err err;

        T_CHECK(v != NULL);
        lil__buf_init(&out, test_env(), 1000);
        T_EQ_I64(lil__http_stringify(test_env(), &err, v, &out), LIL_OK);
        T_EQ_STR(out.data ? (const char *)out.data : "", cases[i].out);
        lil__buf_free(&out);
        json_decref(v);
    }
}

T_TEST(stringify_refuses_deep_nesting)
{
    json_t *v = json_array(), *inner = v;
    struct lil_buf out;
    struct lil_err err;

    for (int i = 0; i < LIL_HTTP_MAX_DEPTH + 5; i++) {
        json_t *a = json_array();

        json_array_append_new(inner, a);
        inner = a;
    }
    lil__buf_init(&out, test_env(), SIZE_MAX / 4);
    T_EQ_I64(lil__http_stringify(test_env(), &err, v, &out), LIL_E_TOOBIG);
    T_EQ_I64(out.len, 0);
    lil__buf_free(&out);
    json_decref(v);
}

/* ---- allocation failures ------------------------------------------------------------
 */

static lil_status one_request(lil_env *env, json_t *req, json_t **out)
{
    struct lil_err err;
    struct lil_buf id;
    lil_status rc;

    lil__buf_init(&id, env, SIZE_MAX / 4);
    rc = lil__http_identity(env, &err, req, (const uint8_t *)"k", 1, &id);
    if (rc == LIL_OK)
        rc = lil__http_perform(env, &err, req, NULL, out);
    if (rc != LIL_OK && rc != LIL_E_NOMEM)
        fprintf(stderr, "  %s: %s\n", lil_status_name(rc), err.msg);
    lil__buf_free(&id);
    return rc;
}

/* Fail allocation k of one request (identity, a redirect, a
 * JSON body, an envelope), for every k: LIL_E_NOMEM whenever one failed,
 * the same result otherwise, and no block left. */
T_TEST(allocation_failures_are_nomem_and_leak_nothing)
{
    json_t *req =
        request("{\"method\":\"POST\",\"url\":\"%s/redirect?code=307&to=/echo\","
                "\"headers\":{\"Authorization\":\"Bearer abc\",\"X-A\":\"1\"},"
                "\"body\":{\"k\":[1,2,{\"v\":0.5}]},\"envelope\":true}");
    unsigned long k;

    for (k = 1; k < 100000; k++) {
        struct t_alloc a = {.fail_at = k};
        lil_env *env = NULL;
        json_t *out = NULL;
        lil_status rc;

        T_REQUIRE(lil_env_new(&env) == LIL_OK);
        T_REQUIRE(t_alloc_install(env, &a) == LIL_OK);
        rc = one_request(env, req, &out);
        T_EQ_STR(lil_status_name(rc), a.failed ? "LIL_E_NOMEM" : "LIL_OK");
        if (rc == LIL_OK)
            T_EQ_STR(field(json_object_get(out, "body"), "method"), "POST");
        json_decref(out);
        lil_env_free(env);
        T_EQ_I64(a.live, 0);
        if (!a.failed)
            break;
    }
    T_CHECK(k > 50); /* about 130 allocations */
    json_decref(req);
}

T_MAIN()
