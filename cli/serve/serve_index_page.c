/*
 * serve_index_page.c -- a page of the index (serve_index_page, serve.h):
 * the runs a filter keeps, sorted, one slice of them, and the counts.
 *
 * Everything is read from memory (serve_index.h): the filter looks at each
 * entry's status, word, kind and ids, in the index's order (id) or in the
 * order of last activity, which is sorted once and kept, with the counts
 * of the statuses, until a row's status or time changes; only the rows of
 * the slice are parsed.  The last few pages are kept as answered until a
 * row changes: many browsers showing the same page cost one.  Runs not
 * read yet (the index is filling) are in no page and no count: "indexing"
 * says how far it is.
 */
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_index.h"

/* ---- the filter ---------------------------------------------------------- */

/* Is word one of the comma list's items? */
static bool word_in_list(const char *list, const char *word)
{
    size_t wlen = strlen(word);

    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);

        if (len == wlen && memcmp(p, word, len) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

/* c, an ASCII capital made small (other bytes as they are). */
static unsigned char lower(char c)
{
    unsigned char u = (unsigned char)c;

    return u >= 'A' && u <= 'Z' ? (unsigned char)(u | 0x20) : u;
}

/* Does hay hold needle (ASCII letters in any case)? */
static bool holds(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    if (!hay)
        return false;
    for (; *hay; hay++) {
        size_t i = 0;

        while (i < n && hay[i] && lower(hay[i]) == lower(needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return n == 0;
}

static bool kept(const struct index_run *e, const struct serve_filter *f)
{
    if (!e->row)
        return false;
    if (f->status && *f->status && !word_in_list(f->status, e->status) &&
        !word_in_list(f->status, e->word))
        return false;
    if (f->kind && *f->kind && strcmp(f->kind, e->is_loop ? "loop" : "program") != 0)
        return false;
    if (f->q && *f->q && !holds(e->id, f->q) && !holds(e->loop_id, f->q))
        return false;
    return true;
}

/* ---- the order and the counts, kept between pages ------------------------ */

/* An entry to sort: its time and its place in the index (id order). */
struct by_time {
    int64_t last_ns;
    size_t at;
};

/* Last activity first; the same time in id order. */
static int newest_first(const void *a, const void *b)
{
    const struct by_time *x = a, *y = b;

    if (x->last_ns != y->last_ns)
        return x->last_ns > y->last_ns ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

void serve_index_forget_order(struct serve_index *ix)
{
    for (size_t i = 0; i < INDEX_PAGES_KEPT; i++) {
        free(ix->pages[i].key);
        json_decref(ix->pages[i].doc);
        ix->pages[i].key = NULL;
        ix->pages[i].doc = NULL;
    }
    free(ix->by_last);
    ix->by_last = NULL;
    ix->nby_last = 0;
    json_decref(ix->counts);
    ix->counts = NULL;
    ix->dirty = true;
}

/* The read entries by last activity, and the counts of their statuses:
 * made again only when something moved.  0, or -1 (out of memory). */
static int keep_order(struct serve_index *ix)
{
    if (!ix->dirty && ix->by_last && ix->counts)
        return 0;
    struct by_time *t;
    size_t n = 0;
    bool ok;

    serve_index_forget_order(ix);
    t = malloc((ix->n ? ix->n : 1) * sizeof(*t));
    ix->by_last = malloc((ix->n ? ix->n : 1) * sizeof(*ix->by_last));
    ix->counts = json_object();
    ok = t && ix->by_last && ix->counts;
    for (size_t i = 0; ok && i < ix->n; i++) {
        const struct index_run *e = &ix->runs[i];
        json_t *c = json_object_get(ix->counts, e->status);

        if (!e->row)
            continue;
        t[n++] = (struct by_time){e->last_ns, i};
        ok = json_object_set_new(ix->counts, e->status,
                                 json_integer(json_integer_value(c) + 1)) == 0;
    }
    if (!ok) {
        free(t);
        return -1;
    }
    qsort(t, n, sizeof(*t), newest_first);
    for (size_t i = 0; i < n; i++)
        ix->by_last[i] = t[i].at;
    ix->nby_last = n;
    free(t);
    ix->dirty = false;
    return 0;
}

/* ---- making a page ------------------------------------------------------- */

struct walk {
    const struct serve_filter *f;
    json_t *rows;
    size_t total;
    bool oom;
};

/* One entry in the page's order: counted when kept, its row parsed when
 * it falls in the slice. */
static void walk_one(struct walk *w, const struct index_run *e)
{
    json_t *row;

    if (!kept(e, w->f))
        return;
    if (w->total >= w->f->offset && w->total - w->f->offset < w->f->limit) {
        row = json_loads(e->row, 0, NULL);
        if (!row || json_array_append_new(w->rows, row) != 0)
            w->oom = true;
    }
    w->total++;
}

/* A page made from the index (NULL: out of memory). */
static json_t *make_page(struct serve *srv, const struct serve_filter *f)
{
    struct serve_index *ix = srv->index;
    struct walk w = {f, json_array(), 0, false};
    bool by_id = f->sort && strcmp(f->sort, "id") == 0;

    if (!w.rows || keep_order(ix) != 0) {
        json_decref(w.rows);
        return NULL;
    }
    if (by_id) /* the index is in id order */
        for (size_t i = 0; i < ix->n && !w.oom; i++)
            walk_one(&w, &ix->runs[i]);
    else
        for (size_t i = 0; i < ix->nby_last && !w.oom; i++)
            walk_one(&w, &ix->runs[ix->by_last[i]]);
    if (w.oom) {
        json_decref(w.rows);
        return NULL;
    }
    return json_pack("{s:o, s:I, s:I, s:I, s:O, s:s?, s:{s:I, s:I}}", "runs", w.rows,
                     "total", (json_int_t)w.total, "offset", (json_int_t)f->offset,
                     "limit", (json_int_t)f->limit, "counts", ix->counts, "store",
                     srv->store_label ? srv->store_label : lil_store_path(srv->store),
                     "indexing", "done", (json_int_t)ix->nread, "total",
                     (json_int_t)ix->n);
}

/* ---- pages kept ---------------------------------------------------------- */

/* The filter as one string (the key of a page kept): a new string, or NULL. */
static char *page_key(const struct serve_filter *f)
{
    bool by_id = f->sort && strcmp(f->sort, "id") == 0;
    char *key = NULL;

    if (asprintf(&key, "%s\x1f%s\x1f%s\x1f%d\x1f%zu\x1f%zu", f->status ? f->status : "",
                 f->kind ? f->kind : "", f->q ? f->q : "", by_id, f->offset,
                 f->limit) < 0)
        return NULL;
    return key;
}

/* The page kept for key at the index's version (a new reference), or NULL. */
static json_t *page_kept(const struct serve_index *ix, const char *key)
{
    for (size_t i = 0; key && i < INDEX_PAGES_KEPT; i++)
        if (ix->pages[i].key && ix->pages[i].version == ix->version &&
            strcmp(ix->pages[i].key, key) == 0)
            return json_incref(ix->pages[i].doc);
    return NULL;
}

/* Keep doc as the page of key (key taken). */
static void keep_page(struct serve_index *ix, char *key, json_t *doc)
{
    size_t at = ix->next_page;

    if (!key || !doc) {
        free(key);
        return;
    }
    ix->next_page = (at + 1) % INDEX_PAGES_KEPT;
    free(ix->pages[at].key);
    json_decref(ix->pages[at].doc);
    ix->pages[at].key = key;
    ix->pages[at].version = ix->version;
    ix->pages[at].doc = json_incref(doc);
}

/* ---- the page ------------------------------------------------------------ */

json_t *serve_index_page(struct serve *srv, const struct serve_filter *f)
{
    struct serve_index *ix = srv->index;
    char *key = ix ? page_key(f) : NULL;
    json_t *doc = ix ? page_kept(ix, key) : NULL;

    if (doc || !ix) {
        free(key);
        return doc;
    }
    doc = make_page(srv, f);
    keep_page(ix, key, doc);
    return doc;
}
