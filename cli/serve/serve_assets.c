/*
 * serve_assets.c -- the page of `lil serve` (serve_http.h): the files of
 * cli/serve/assets/, compiled in (cmake/Embed.cmake writes them into
 * serve_assets.h with a table by name), found by name, with a
 * Content-Type by extension (serve_request.c answers GET / with
 * index.html and GET /<file> with any of them).
 */
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
