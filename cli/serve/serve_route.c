/*
 * serve_route.c -- the routes of `lil serve` (serve.h; docs/serve.md
 * lists them): a method, a pattern of path segments, the checks the
 * request passes (flags) and the handler.  A pattern's `{id}` segment
 * takes any segment (the run id: SERVE_RUN_ARG checks it), `{file}` a
 * segment naming one of the page's files.  The routes without a handler
 * are answered by serve_request.c itself: the page's files, the login and
 * the event stream.
 */
#include <stdio.h>
#include <string.h>

#include "serve_http.h"

#define PUB SERVE_PUBLIC
#define CHG SERVE_CHANGES
#define RUN SERVE_RUN_ARG

static const struct serve_route routes[] = {
    {"GET", "/", PUB, NULL},
    {"GET", "/login", PUB, NULL},
    {"POST", "/login", PUB, NULL},
    {"GET", "/api/session", 0, serve_get_session},
    {"POST", "/api/logout", CHG, serve_post_logout},
    {"GET", "/api/runs", 0, serve_get_runs},
    {"GET", "/api/runs/{id}", RUN, serve_get_run},
    {"GET", "/api/runs/{id}/events", RUN, serve_get_run_events},
    {"GET", "/api/runs/{id}/state", RUN, serve_get_run_state},
    {"GET", "/api/runs/{id}/spec", RUN, serve_get_run_spec},
    {"POST", "/api/runs/{id}/stop", CHG | RUN, serve_post_stop},
    {"POST", "/api/runs/{id}/approve", CHG | RUN, serve_post_approve},
    {"POST", "/api/runs/{id}/recover", CHG | RUN, serve_post_recover},
    {"POST", "/api/runs/{id}/resume", CHG | RUN, serve_post_resume},
    {"GET", "/api/jobs", 0, serve_get_jobs},
    {"GET", "/api/lab", 0, serve_get_lab},
    {"POST", "/api/lab/start", CHG, serve_post_lab_start},
    {"POST", "/api/lab/kill", CHG, serve_post_lab_kill},
    {"POST", "/api/lab/resume", CHG, serve_post_lab_resume},
    {"POST", "/api/lab/recover", CHG, serve_post_lab_recover},
    {"GET", "/api/stream", SERVE_STREAM, NULL},
    {"GET", "/{file}", PUB, NULL},
};

/* path matches pattern: the segment of `{id}` or `{file}` copied to arg. */
static bool matches(const char *pattern, const char *path, char *arg, size_t arg_len)
{
    const char *p = pattern, *s = path;

    while (*p && *s) {
        size_t pn = strcspn(p + 1, "/") + 1, sn = strcspn(s + 1, "/") + 1;
        bool any = pn == 5 && strncmp(p, "/{id}", 5) == 0;
        bool file = pn == 7 && strncmp(p, "/{file}", 7) == 0;

        if (any || file) {
            if (sn < 2 || sn - 1 >= arg_len)
                return false;
            memcpy(arg, s + 1, sn - 1);
            arg[sn - 1] = '\0';
            if (file && !serve_asset_find(arg))
                return false;
        } else if (pn != sn || strncmp(p, s, pn) != 0) {
            return false;
        }
        p += pn;
        s += sn;
    }
    return !*p && !*s;
}

int serve_route_find(const char *method, const char *path,
                     const struct serve_route **route, char *arg, size_t arg_len)
{
    char seg[SERVE_ARG_MAX + 1] = "";
    bool path_known = false;

    if (!path || path[0] != '/')
        return 404;
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (!matches(routes[i].pattern, path, seg, sizeof(seg)))
            continue;
        path_known = true;
        if (strcmp(routes[i].method, method) != 0)
            continue;
        if (strlen(seg) >= arg_len && strchr(routes[i].pattern, '{'))
            return 404;
        if (arg_len > 0)
            snprintf(arg, arg_len, "%s", strchr(routes[i].pattern, '{') ? seg : "");
        *route = &routes[i];
        return 0;
    }
    return path_known ? 405 : 404;
}

void serve_route_methods(const char *path, char *out, size_t len)
{
    char seg[SERVE_ARG_MAX + 1];
    size_t n = 0;

    out[0] = '\0';
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]) && n < len; i++)
        if (path && matches(routes[i].pattern, path, seg, sizeof(seg)) &&
            !strstr(out, routes[i].method))
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "",
                                  routes[i].method);
}
