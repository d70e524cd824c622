/*
 * serve_index_page.c -- a page of the index (serve_index_page, serve.h):
 * the runs a filter keeps, sorted, one slice of them, and the counts.
 *
 * Everything is read from memory (serve_index.h): the filter looks at each
 * entry's status, word, kind and ids, in the index's order (id) or in the
 * order of last activity, which is sorted once and kept, with the counts
 * of the statuses, until a row's status or time changes (and then sorted
 * again only when the order no longer holds: a run that moves is most
 * often the newest already).  The page's text is made from the slice's
 * rows as the index keeps them (text), none parsed.  The last few pages'
 * texts are kept until a row changes: many browsers showing the same page
 * cost one, and the same bytes are sent to each.  Runs not read yet (the
 * index is filling) are in no page and no count: "indexing" says how far
 * it is.
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
        serve_text_unref(ix->pages[i].text);
        ix->pages[i].key = NULL;
        ix->pages[i].text = NULL;
    }
    free(ix->by_last);
    ix->by_last = NULL;
    ix->nby_last = 0;
    json_decref(ix->counts);
    ix->counts = NULL;
    ix->dirty = true;
}

/* The counts of the read entries' statuses, made again.  0, or -1 (out of
 * memory). */
static int count_statuses(struct serve_index *ix)
{
    size_t n[32] = {0}, words = 0;
    json_t *counts = json_object();
    bool ok = counts != NULL;

    while (words < 32 && serve_index_words[words])
        words++;
    for (size_t k = 0; ok && k < ix->nby_last; k++) {
        const char *status = ix->runs[ix->by_last[k]].status;
        size_t w = 0;

        while (w < words && strcmp(serve_index_words[w], status) != 0)
            w++;
        if (w < words)
            n[w]++;
        else /* not a word of the list: counted by name */
            ok = json_object_set_new(
                     counts, status,
                     json_integer(json_integer_value(json_object_get(counts, status)) +
                                  1)) == 0;
    }
    for (size_t w = 0; ok && w < words; w++)
        if (n[w] > 0)
            ok = json_object_set_new(counts, serve_index_words[w],
                                     json_integer((json_int_t)n[w])) == 0;
    json_decref(ix->counts);
    ix->counts = ok ? counts : NULL;
    if (!ok)
        json_decref(counts);
    return ok ? 0 : -1;
}

/* Is the order kept still last activity first (ties in id order)? */
static bool order_holds(const struct serve_index *ix)
{
    for (size_t k = 1; k < ix->nby_last; k++) {
        const struct index_run *a = &ix->runs[ix->by_last[k - 1]];
        const struct index_run *b = &ix->runs[ix->by_last[k]];

        if (a->last_ns < b->last_ns ||
            (a->last_ns == b->last_ns && ix->by_last[k - 1] > ix->by_last[k]))
            return false;
    }
    return true;
}

/* The read entries by last activity, and the counts of their statuses:
 * made again only when something moved (when a row's time moved and the
 * order still holds -- the busiest run was first already -- only the
 * counts).  0, or -1 (out of memory). */
static int keep_order(struct serve_index *ix)
{
    if (!ix->dirty && ix->by_last && ix->counts) {
        if (!ix->reorder)
            return 0;
        ix->reorder = false;
        if (order_holds(ix))
            return count_statuses(ix);
    }
    struct by_time *t;
    size_t n = 0;

    serve_index_forget_order(ix);
    t = malloc((ix->n ? ix->n : 1) * sizeof(*t));
    ix->by_last = malloc((ix->n ? ix->n : 1) * sizeof(*ix->by_last));
    if (!t || !ix->by_last) {
        free(t);
        return -1;
    }
    for (size_t i = 0; i < ix->n; i++)
        if (ix->runs[i].row)
            t[n++] = (struct by_time){ix->runs[i].last_ns, i};
    qsort(t, n, sizeof(*t), newest_first);
    for (size_t i = 0; i < n; i++)
        ix->by_last[i] = t[i].at;
    ix->nby_last = n;
    free(t);
    if (count_statuses(ix) != 0)
        return -1;
    ix->dirty = ix->reorder = false;
    return 0;
}

/* ---- making a page ------------------------------------------------------- */

/* A page's text is made from the rows' texts as the index keeps them
 * (compact JSON): {"runs":[ row,row... ], then the rest of the document,
 * dumped by jansson; no row is parsed. */
struct walk {
    const struct serve_filter *f;
    struct serve_text *text; /* NULL once out of memory */
    size_t total, shown;
};

/* One entry in the page's order: counted when kept, its row added when it
 * falls in the slice. */
static void walk_one(struct walk *w, const struct index_run *e)
{
    if (!kept(e, w->f))
        return;
    if (w->total >= w->f->offset && w->total - w->f->offset < w->f->limit) {
        if (w->shown++ > 0)
            (void)serve_text_add(&w->text, ",", 1);
        if (w->text)
            (void)serve_text_add(&w->text, e->row, strlen(e->row));
    }
    w->total++;
}

/* What follows the rows: "total" ... "indexing" and the closing brace, as
 * text (a new string, or NULL). */
static char *page_rest(struct serve *srv, const struct walk *w)
{
    const struct serve_index *ix = srv->index;
    json_t *doc = json_pack(
        "{s:I, s:I, s:I, s:O, s:s?, s:{s:I, s:I}}", "total", (json_int_t)w->total,
        "offset", (json_int_t)w->f->offset, "limit", (json_int_t)w->f->limit, "counts",
        ix->counts, "store",
        srv->store_label ? srv->store_label : lil_store_path(srv->store), "indexing",
        "done", (json_int_t)ix->nread, "total", (json_int_t)ix->n);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;

    json_decref(doc);
    return text;
}

/* A page made from the index (NULL: out of memory). */
static struct serve_text *make_page(struct serve *srv, const struct serve_filter *f)
{
    static const char head[] = "{\"runs\":[";
    struct serve_index *ix = srv->index;
    struct walk w = {f, serve_text_new(f->limit < 64 ? 16384 : f->limit * 512), 0, 0};
    bool by_id = f->sort && strcmp(f->sort, "id") == 0;
    char *rest;

    if (!w.text || keep_order(ix) != 0 ||
        serve_text_add(&w.text, head, sizeof(head) - 1) != 0) {
        serve_text_unref(w.text);
        return NULL;
    }
    if (by_id) /* the index is in id order */
        for (size_t i = 0; i < ix->n && w.text; i++)
            walk_one(&w, &ix->runs[i]);
    else
        for (size_t i = 0; i < ix->nby_last && w.text; i++)
            walk_one(&w, &ix->runs[ix->by_last[i]]);
    rest = w.text ? page_rest(srv, &w) : NULL;
    if (!rest || serve_text_add(&w.text, "],", 2) != 0 ||
        serve_text_add(&w.text, rest + 1, strlen(rest + 1)) != 0) {
        free(rest);
        serve_text_unref(w.text);
        return NULL;
    }
    free(rest);
    return w.text;
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
static struct serve_text *page_kept(const struct serve_index *ix, const char *key)
{
    for (size_t i = 0; key && i < INDEX_PAGES_KEPT; i++)
        if (ix->pages[i].key && ix->pages[i].version == ix->version &&
            strcmp(ix->pages[i].key, key) == 0)
            return serve_text_ref(ix->pages[i].text);
    return NULL;
}

/* Keep text as the page of key (key taken). */
static void keep_page(struct serve_index *ix, char *key, struct serve_text *text)
{
    size_t at = ix->next_page;

    if (!key || !text) {
        free(key);
        return;
    }
    ix->next_page = (at + 1) % INDEX_PAGES_KEPT;
    free(ix->pages[at].key);
    serve_text_unref(ix->pages[at].text);
    ix->pages[at].key = key;
    ix->pages[at].version = ix->version;
    ix->pages[at].text = serve_text_ref(text);
}

/* ---- the page ------------------------------------------------------------ */

struct serve_text *serve_index_page(struct serve *srv, const struct serve_filter *f)
{
    struct serve_index *ix = srv->index;
    char *key = ix ? page_key(f) : NULL;
    struct serve_text *text = ix ? page_kept(ix, key) : NULL;

    if (text || !ix) {
        free(key);
        return text;
    }
    text = make_page(srv, f);
    keep_page(ix, key, text);
    return text;
}
