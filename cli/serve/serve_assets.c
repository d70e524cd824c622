/*
 * serve_assets.c -- the page of `lil serve` (serve_http.h): the files of
 * cli/serve/assets/, compiled in (cmake/Embed.cmake writes them into
 * serve_assets.h with a table by name), served with a Content-Type by
 * extension.  GET / is index.html; GET /<file> any of them.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "serve_http.h"

/* The files: serve_asset_table[], generated. */
#include "serve_assets.h" /* NOLINT(bugprone-suspicious-include) */

static const struct {
    const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".json", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
};

const struct serve_asset *serve_asset_find(const char *name)
{
    for (size_t i = 0; i < sizeof(serve_asset_table) / sizeof(serve_asset_table[0]);
         i++)
        if (strcmp(serve_asset_table[i].name, name) == 0)
            return &serve_asset_table[i];
    return NULL;
}

const char *serve_asset_type(const char *name)
{
    const char *dot = strrchr(name, '.');

    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcasecmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

enum MHD_Result serve_asset_reply(struct serve_req *req, const char *name)
{
    const struct serve_asset *a = serve_asset_find(name);
    struct MHD_Response *resp;

    if (!a)
        return serve_reply_error(req, 404, "Not Found: no such file");
    /* libmicrohttpd takes void *; it only reads a persistent buffer */
    resp = MHD_create_response_from_buffer(a->len, (void *)(uintptr_t)a->data,
                                           MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, serve_asset_type(name));
    return serve_queue(req, 200, resp, false);
}
