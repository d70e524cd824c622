/*
 * mcp_http_check.c -- the checks of the Streamable HTTP transport
 * (mcp_http.h): what every request must show (a loopback Host, an Origin
 * allowed, the bearer token, the path, a method served; a browser's
 * preflight OPTIONS from an Origin allowed is answered before the token is
 * asked for, as it carries none), what a POST must
 * show before its body is read (JSON, an Accept of JSON and event
 * streams, a length under the cap), and the MCP-Protocol-Version header.
 * Each refusal is queued as a JSON-RPC error with id null.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../net.h"
#include "mcp_http.h"

/* ---- headers ------------------------------------------------------------- */

const char *http_header(struct http_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

/* The media type of a Content-Type (or an Accept item) is want: the part
 * before ';' or ',', spaces trimmed, compared without case. */
static bool media_is_n(const char *p, size_t n, const char *want)
{
    while (n > 0 && isspace((unsigned char)*p))
        p++, n--;
    for (size_t i = 0; i < n; i++)
        if (p[i] == ';')
            n = i;
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    return n == strlen(want) && strncasecmp(p, want, n) == 0;
}

/* The Accept header allows type ("text/event-stream"): it lists it, its
 * family ("text/ *") or anything. */
bool http_accepts(const char *accept, const char *type)
{
    char family[32];
    const char *slash = strchr(type, '/');

    snprintf(family, sizeof(family), "%.*s/*", (int)(slash - type), type);
    while (accept && *accept) {
        size_t n = strcspn(accept, ",");
        if (media_is_n(accept, n, type) || media_is_n(accept, n, family) ||
            media_is_n(accept, n, "*/*"))
            return true;
        accept += n + (accept[n] == ',');
    }
    return false;
}

static bool host_allowed(struct http_req *req)
{
    const char *host = http_header(req, MHD_HTTP_HEADER_HOST);
    const char *names[] = {"127.0.0.1", "localhost", "[::1]", req->h->bind_host};
    char want[96];

    if (req->h->srv->opts.allow_remote)
        return true;
    for (size_t i = 0; host && i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(want, sizeof(want), "%s:%u", names[i], req->h->port);
        if (strcasecmp(host, want) == 0)
            return true;
    }
    return false;
}

static bool origin_allowed(struct http_req *req)
{
    const char *origin = http_header(req, "Origin");
    const char *const *extra = req->h->srv->opts.origins;
    const char *names[] = {"127.0.0.1", "localhost", "[::1]", req->h->bind_host};
    char want[128];

    if (!origin)
        return true;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(want, sizeof(want), "http://%s:%u", names[i], req->h->port);
        if (strcasecmp(origin, want) == 0)
            return true;
    }
    for (size_t i = 0; extra && extra[i]; i++)
        if (strcasecmp(origin, extra[i]) == 0)
            return true;
    return false;
}

static bool token_ok(struct http_req *req)
{
    const char *auth = http_header(req, MHD_HTTP_HEADER_AUTHORIZATION);

    if (!req->h->need_token)
        return true;
    if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
        return false;
    auth += 7;
    while (*auth == ' ')
        auth++;
    return cli_net_same_secret(auth, req->h->token);
}

/* A MCP-Protocol-Version header, when given, is one served. */
bool http_version_ok(struct http_req *req)
{
    const char *v = http_header(req, "MCP-Protocol-Version");

    for (size_t i = 0; v && mcp_protocol_versions[i]; i++)
        if (strcmp(v, mcp_protocol_versions[i]) == 0)
            return true;
    return v == NULL;
}

enum MHD_Result http_bad_version(struct http_req *req)
{
    char msg[256];
    size_t n = (size_t)snprintf(
        msg, sizeof(msg), "Bad Request: unsupported MCP-Protocol-Version (served:");

    for (size_t i = 0; mcp_protocol_versions[i] && n < sizeof(msg); i++)
        n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s %s", i ? "," : "",
                              mcp_protocol_versions[i]);
    if (n < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - n, ")");
    return http_reply_error(req, MHD_HTTP_BAD_REQUEST, -32000, msg);
}

/* The checks every request passes: MHD_YES and *refused false, or the
 * refusal queued. */
enum MHD_Result http_check_common(struct http_req *req, const char *url,
                                  const char *method, bool *refused)
{
    *refused = true;
    if (!host_allowed(req))
        return http_reply_error(
            req, MHD_HTTP_FORBIDDEN, -32000,
            "Forbidden: the Host header must name this server on "
            "loopback (127.0.0.1, localhost or [::1] with its port)");
    if (!origin_allowed(req))
        return http_reply_error(
            req, MHD_HTTP_FORBIDDEN, -32000,
            "Forbidden: Origin not allowed (the server's own, or one "
            "given with --allow-origin)");
    req->origin = http_header(req, "Origin");
    if (req->origin && strcmp(method, "OPTIONS") == 0 && strcmp(url, HTTP_PATH) == 0)
        return http_reply_preflight(req); /* a browser asks before it sends */
    if (!token_ok(req))
        return http_reply_error(req, MHD_HTTP_UNAUTHORIZED, -32000,
                                "Unauthorized: missing or wrong bearer token "
                                "(Authorization: Bearer TOKEN, printed at start)");
    if (strcmp(url, HTTP_PATH) != 0)
        return http_reply_error(req, MHD_HTTP_NOT_FOUND, -32000,
                                "Not Found: the endpoint is /mcp");
    if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0 &&
        strcmp(method, "DELETE") != 0)
        return http_reply_error(req, MHD_HTTP_METHOD_NOT_ALLOWED, -32000,
                                "Method Not Allowed: POST, GET or DELETE");
    *refused = false;
    return MHD_YES;
}

/* The checks of a POST's headers, before its body is read. */
enum MHD_Result http_check_post(struct http_req *req, bool *refused)
{
    const char *type = http_header(req, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *accept = http_header(req, MHD_HTTP_HEADER_ACCEPT);
    const char *length = http_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);

    *refused = true;
    if (!type || !media_is_n(type, strlen(type), "application/json"))
        return http_reply_error(req, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32000,
                                "Unsupported Media Type: Content-Type must be "
                                "application/json");
    if (!http_accepts(accept, "application/json") ||
        !http_accepts(accept, "text/event-stream"))
        return http_reply_error(
            req, MHD_HTTP_NOT_ACCEPTABLE, -32000,
            "Not Acceptable: a POST must accept both application/json "
            "and text/event-stream");
    if (length && strtoull(length, NULL, 10) > MCP_MESSAGE_MAX)
        return http_reply_error(req, HTTP_TOO_LARGE, -32000,
                                "Payload Too Large: a message is at most 4 MiB");
    *refused = false;
    return MHD_YES;
}
