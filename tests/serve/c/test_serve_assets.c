/*
 * test_serve_assets.c -- the page's files as `lil serve` serves them: from
 * / and /login, every file the page names (an HTML src or href, a
 * module's import, a url() of the CSS) is followed and must answer 200,
 * without a session, with the Content-Type of its extension and nosniff;
 * nothing is named outside the server.  What the Content-Security-Policy
 * forbids is not there: no inline script, style or event handler in the
 * HTML, and no script that parses data as markup or code (innerHTML,
 * insertAdjacentHTML, document.write, eval, new Function).
 */
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve_client.h"
#include "t.h"

#define FILES_MAX 64
#define NAME_MAX_ 128

struct crawl {
    char names[FILES_MAX][NAME_MAX_]; /* "/app.js": found so far */
    size_t n;
};

static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');

    return dot && (!slash || dot > slash) ? dot : "";
}

/* What the extension's Content-Type must start with. */
static const char *type_for(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {{".html", "text/html"}, {".js", "text/javascript"},
                 {".css", "text/css"},   {".svg", "image/svg+xml"},
                 {".png", "image/png"},  {".ico", "image/x-icon"},
                 {"", "text/html"}}; /* "/" and "/login" */

    const char *ext = ext_of(path);

    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(ext, types[i].ext) == 0)
            return types[i].type;
    return "?";
}

/* Add a reference found in a file: "./x.js" and "/x.js" are "/x.js";
 * anchors and routes of the page ("#/runs") are not files; anything
 * outside the server fails. */
static void add_ref(struct crawl *c, const char *ref, size_t len, const char *from)
{
    char name[NAME_MAX_];

    if (len == 0 || ref[0] == '#')
        return;
    if ((len > 5 && strncasecmp(ref, "http:", 5) == 0) ||
        (len > 6 && strncasecmp(ref, "https:", 6) == 0) ||
        (len > 2 && strncmp(ref, "//", 2) == 0) ||
        (len > 5 && strncasecmp(ref, "data:", 5) == 0)) {
        fprintf(stderr, "%s names something outside the server: %.*s\n", from, (int)len,
                ref);
        T_CHECK(!"a file of the page names something outside the server");
        return;
    }
    if (len > 2 && strncmp(ref, "./", 2) == 0) {
        ref += 1;
        len -= 1;
    }
    T_REQUIRE(len + 2 < sizeof(name));
    snprintf(name, sizeof(name), "%s%.*s", ref[0] == '/' ? "" : "/", (int)len, ref);
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0)
            return;
    T_REQUIRE(c->n < FILES_MAX);
    snprintf(c->names[c->n++], NAME_MAX_, "%s", name);
}

/* Every quoted value after each of the markers in body (paths_only: only
 * those that are paths, "./x" or "/x": a module's text holds " from " in
 * its words and strings too). */
static void scan(struct crawl *c, const char *body, const char *marker, bool paths_only,
                 const char *from)
{
    size_t mlen = strlen(marker);

    for (const char *p = strstr(body, marker); p; p = strstr(p + mlen, marker)) {
        const char *v = p + mlen, *end;
        char quote;

        while (*v == ' ')
            v++;
        quote = *v;
        if (quote != '"' && quote != '\'')
            continue;
        end = strchr(v + 1, quote);
        if (paths_only && v[1] != '/' && strncmp(v + 1, "./", 2) != 0)
            continue;
        if (end)
            add_ref(c, v + 1, (size_t)(end - v - 1), from);
    }
}

static bool contains_ci(const char *hay, const char *needle)
{
    return strcasestr(hay, needle) != NULL;
}

/* An attribute " on<letters>=" (an inline event handler). */
static bool has_handler(const char *html)
{
    for (const char *p = html; (p = strcasestr(p, " on")) != NULL; p += 3) {
        const char *q = p + 3;

        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z'))
            q++;
        if (q > p + 3 && *q == '=')
            return true;
    }
    return false;
}

/* Every <script ...> has a src. */
static bool inline_script(const char *html)
{
    for (const char *p = html; (p = strcasestr(p, "<script")) != NULL; p += 7) {
        const char *end = strchr(p, '>');

        if (!end)
            return true;
        if (!memmem(p, (size_t)(end - p), " src=", 5))
            return true;
    }
    return false;
}

static void check_html(struct crawl *c, const char *name, const char *body)
{
    T_CHECK(!inline_script(body));
    T_CHECK(!has_handler(body));
    T_CHECK(!contains_ci(body, " style="));
    T_CHECK(!contains_ci(body, "<style"));
    T_CHECK(!contains_ci(body, "javascript:"));
    scan(c, body, "src=", false, name);
    scan(c, body, "href=", false, name);
}

static void check_js(struct crawl *c, const char *name, const char *body)
{
    static const char *const banned[] = {
        "innerHTML", "outerHTML",    "insertAdjacentHTML", "document.write",
        "eval(",     "new Function", "setTimeout('",       "setTimeout(\""};

    for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++) {
        if (strstr(body, banned[i])) {
            fprintf(stderr, "%s uses %s\n", name, banned[i]);
            T_CHECK(!"a script parses data as markup or code");
        }
    }
    scan(c, body, " from ", true, name);
    scan(c, body, "import(", true, name);
}

static void check_css(struct crawl *c, const char *name, const char *body)
{
    T_CHECK(!contains_ci(body, "@import"));
    scan(c, body, "url(", false, name);
}

/* Fetch one file without a session and check what it is. */
static void check_file(struct sc_server *sv, struct crawl *c, const char *name)
{
    struct sc_reply r;
    char v[512];
    const char *want = type_for(name), *ext = ext_of(name);

    T_OK(sc_request(sv, "GET", name, NULL, 0, NULL, SC_NO_COOKIE, &r));
    if (r.status != 200)
        fprintf(stderr, "GET %s: %ld\n", name, r.status);
    T_EQ_I64(r.status, 200);
    T_REQUIRE(sc_header(&r, "Content-Type", v, sizeof(v)) != NULL);
    if (strncasecmp(v, want, strlen(want)) != 0)
        fprintf(stderr, "GET %s: Content-Type %s, not %s\n", name, v, want);
    T_CHECK(strncasecmp(v, want, strlen(want)) == 0);
    T_EQ_STR(sc_header(&r, "X-Content-Type-Options", v, sizeof(v)), "nosniff");
    T_CHECK(r.body_len > 0);
    if (strcmp(want, "text/html") == 0)
        check_html(c, name, r.body);
    else if (strcmp(ext, ".js") == 0)
        check_js(c, name, r.body);
    else if (strcmp(ext, ".css") == 0)
        check_css(c, name, r.body);
    sc_reply_free(&r);
}

T_TEST(every_file_of_the_page)
{
    struct sc_server sv;
    struct crawl c = {.n = 0};
    bool has_app = false, has_css = false;

    T_REQUIRE(sc_start(&sv, t_path("store"), NULL) == 0);
    add_ref(&c, "/", 1, "the test");
    add_ref(&c, "/login", 6, "the test");
    for (size_t i = 0; i < c.n; i++) /* c.n grows as files name others */
        check_file(&sv, &c, c.names[i]);
    for (size_t i = 0; i < c.n; i++) {
        has_app = has_app || strcmp(c.names[i], "/app.js") == 0;
        has_css = has_css || strcmp(c.names[i], "/app.css") == 0;
    }
    T_CHECK(has_app && has_css);
    T_CHECK(c.n >= 6); /* the page is split into modules */
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

/* A file the page does not have is 404, and a path that climbs is never
 * a file. */
T_TEST(no_such_file)
{
    struct sc_server sv;
    struct sc_reply r;

    T_REQUIRE(sc_start(&sv, t_path("store"), NULL) == 0);
    T_OK(sc_request(&sv, "GET", "/no-such.js", NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_EQ_I64(r.status, 404);
    sc_reply_free(&r);
    T_OK(sc_request(&sv, "GET", "/../serve.h", NULL, 0, NULL, SC_NO_COOKIE, &r));
    T_CHECK(r.status == 404 || r.status == 400);
    sc_reply_free(&r);
    T_EQ_I64(sc_stop(&sv, SIGTERM), 0);
}

T_MAIN()
