/*
 * serve_index.c -- every run's row for `lil serve` (serve.h).
 */
#include "serve.h"

int serve_index_open(struct serve *srv, char *err, size_t err_len)
{
    (void)srv;
    (void)err;
    (void)err_len;
    return 0;
}

void serve_index_free(struct serve *srv)
{
    (void)srv;
}

json_t *serve_index_page(struct serve *srv, const struct serve_filter *f)
{
    (void)srv;
    (void)f;
    return json_pack("{s:[],s:i}", "runs", "total", 0);
}

void serve_index_touch(struct serve *srv, const char *run_id)
{
    (void)srv;
    (void)run_id;
}

void serve_index_tick(struct serve *srv)
{
    (void)srv;
}
