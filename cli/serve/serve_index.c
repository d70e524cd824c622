/*
 * serve_index.c -- every run's row for `lil serve` (serve.h), kept fresh
 * without reading the whole store again each tick.
 *
 * A row is the cheap part of a run's facts (lil_run_facts; docs/serve.md,
 * "A page of runs").  Each tick (serve_index_tick) looks, within a time
 * budget, at what may have changed, and carries on where it stopped at
 * the next tick:
 *
 *   1. the list: lil_store_poll says when runs may have been created or
 *      removed (one fstat, one query); only then are the ids listed again
 *      (lil_store_foreach_run) and merged with the index;
 *   2. runs an event stream watches (serve_streams_watched) and runs that
 *      have not ended and may move: held by a process, queued, paused,
 *      waiting, uncertain, or with a record in the last INDEX_RECENT_NS:
 *      one lil_run_poll each (one fstat, or one indexed query), the row
 *      read again only when the run grew (and no sooner than 20 times what
 *      its last read took after it: a long journal that grows every tick
 *      costs the server at most a twentieth of its time); a run a process
 *      holds, or the queue has, is also read again every INDEX_REFRESH_US
 *      (its holder may die, a worker may claim it, without a record);
 *   3. runs not read yet (the index is filled a budget at a time; a run
 *      just listed is read in the tick that listed it, whatever listing
 *      the store took: INDEX_NEW_US at least);
 *   4. the others -- ended runs, and "running" ones nobody holds that have
 *      been quiet for a while (a program that died) -- round robin, at most
 *      INDEX_SWEEP_MAX a tick: an outside `lil resume` is seen within
 *      seconds, and a store of many dead runs costs no more than one of
 *      ended runs.
 *
 * Rows that changed are broadcast as one "runs" event ({"rows", "removed"})
 * at the end of the tick.  A watched run that grew also gets a "run" event
 * ({"run", "last_seq"}) on the streams that watch it.
 */
#include "serve_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli.h"
#include "serve.h"

#define INDEX_TICK_US      20000   /* a tick's budget, once the index is full */
#define INDEX_FILL_TICK_US 60000   /* a tick's budget while runs are unread */
#define INDEX_OPEN_US      1500000 /* serve_index_open's budget */
#define INDEX_REFRESH_US   1000000 /* a held or queued run: read again so often */
#define INDEX_NEW_US       10000   /* runs just listed: read within this at least */
#define INDEX_SWEEP_MAX    300     /* quiet runs looked at per tick */
#define INDEX_RECENT_NS    INT64_C(10000000000) /* a record this recent: active */
#define INDEX_COST_FACTOR  20 /* a run is read again after 20 times its last read */

const char *const serve_index_words[] = {
    "running", "completed", "failed",   "uncertain", "stopped", "paused",
    "waiting", "damaged",   "queued",   "claimed",   "parked",  "error",
    "locked",  "key?",      "version?", "unborn",    NULL};

int64_t index_clock_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- entries ------------------------------------------------------------- */

static void run_clear(struct index_run *e)
{
    free(e->id);
    free(e->row);
    free(e->loop_id);
    memset(e, 0, sizeof(*e));
}

/* The entry of id: true and *at, or false and *at where it would go. */
static bool find_run(const struct serve_index *ix, const char *id, size_t *at)
{
    size_t lo = 0, hi = ix->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ix->runs[mid].id, id);

        if (c == 0) {
            *at = mid;
            return true;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return false;
}

/* ---- the queue (PostgreSQL) ---------------------------------------------- */

/* The queue's row of id (lil_queue_list), read once a tick at most; NULL
 * for a store without a queue or a run it does not have. */
static const json_t *queue_row(struct serve *srv, const char *id)
{
    struct serve_index *ix = srv->index;
    lil_bytes b = {NULL, 0};
    json_t *doc = NULL, *q;
    size_t i;

    if (!srv->is_pg)
        return NULL;
    if (!ix->queue || ix->queue_tick != ix->tick) {
        json_decref(ix->queue);
        ix->queue = json_object();
        ix->queue_tick = ix->tick;
        if (lil_queue_list(srv->store, &b) == LIL_OK)
            doc = json_loadb(b.data, b.len, 0, NULL);
        lil_free(b.data);
        json_array_foreach(json_object_get(doc, "runs"), i, q)
        {
            const char *rid = json_string_value(json_object_get(q, "run"));
            if (rid && ix->queue)
                json_object_set(ix->queue, rid, q);
        }
        json_decref(doc);
    }
    return json_object_get(ix->queue, id);
}

/* The word a queued run shows while the queue has it (as `lil ls`), or
 * NULL once its own status says where it is. */
static const char *queue_word(const json_t *q)
{
    static const char *const words[][2] = {{"queued", "queued"},
                                           {"running", "claimed"},
                                           {"parked", "parked"},
                                           {"error", "error"}};
    const char *state = json_string_value(json_object_get(q, "state"));

    for (size_t i = 0; state && i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(state, words[i][0]) == 0)
            return words[i][1];
    return NULL;
}

/* ---- a row --------------------------------------------------------------- */

static json_t *or_null(json_t *v)
{
    return v ? json_incref(v) : json_null();
}

/* [{"name", "used", "limit"}] of the facts' "budget". */
static json_t *budget_of(const json_t *facts)
{
    static const char *const names[] = {"tokens", "usd", "wallclock_ms"};
    const json_t *budget = json_object_get(facts, "budget");
    json_t *a = json_array(), *b;

    for (size_t i = 0; a && i < sizeof(names) / sizeof(names[0]); i++) {
        b = json_object_get(budget, names[i]);
        if (json_is_object(b))
            json_array_append_new(a, json_pack("{s:s, s:O?, s:O?}", "name", names[i],
                                               "used", json_object_get(b, "used"),
                                               "limit", json_object_get(b, "limit")));
    }
    return a;
}

static json_t *usage_of(const json_t *facts)
{
    const json_t *u = json_object_get(facts, "usage");

    if (!json_is_object(u))
        return json_null();
    return json_pack("{s:O?, s:O?}", "tokens", json_object_get(u, "tokens"), "usd",
                     json_object_get(u, "usd"));
}

static json_t *queue_json(const json_t *q)
{
    if (!q)
        return json_null();
    return json_pack("{s:O?, s:O?}", "state", json_object_get(q, "state"), "worker",
                     json_object_get(q, "worker"));
}

/* The row of a run from its facts and its queue row (or NULL). */
static json_t *row_of(const json_t *f, const json_t *q)
{
    const json_t *loop = json_object_get(f, "loop");
    const char *status = json_string_value(json_object_get(f, "status"));
    const char *word = queue_word(q);
    json_t *row = json_object();

    if (!row)
        return NULL;
    json_object_set_new(row, "run", or_null(json_object_get(f, "run")));
    json_object_set_new(row, "kind", or_null(json_object_get(f, "kind")));
    json_object_set_new(row, "status", json_string(status ? status : "error"));
    json_object_set_new(row, "word",
                        json_string(word     ? word
                                    : status ? status
                                             : "error"));
    json_object_set_new(row, "ended", or_null(json_object_get(f, "ended")));
    json_object_set_new(row, "loop_id", or_null(json_object_get(loop, "loop")));
    json_object_set_new(row, "iteration", or_null(json_object_get(f, "iteration")));
    json_object_set_new(row, "steps", or_null(json_object_get(f, "steps")));
    json_object_set_new(row, "created_ns", or_null(json_object_get(f, "created_ns")));
    json_object_set_new(row, "last_ns", or_null(json_object_get(f, "last_ns")));
    json_object_set_new(row, "last_seq", or_null(json_object_get(f, "last_seq")));
    json_object_set_new(row, "holder", or_null(json_object_get(f, "holder")));
    json_object_set_new(row, "queue", queue_json(q));
    json_object_set_new(row, "usage", usage_of(f));
    json_object_set_new(row, "budget", budget_of(f));
    json_object_set_new(row, "paused", or_null(json_object_get(f, "paused")));
    json_object_set_new(
        row, "uncertain",
        json_integer((json_int_t)json_array_size(json_object_get(f, "uncertain"))));
    return row;
}

/* The row of a run whose facts could not be read: its word says why, its
 * "error" the library's words (a message that is no UTF-8 left out). */
static json_t *failed_row(lil_store *st, const char *id, lil_status rc)
{
    const char *word = cli_failure_word(rc);
    json_t *msg =
        json_string(rc == LIL_E_NOMEM ? "out of memory" : lil_store_errmsg(st));

    return json_pack(
        "{s:s, s:n, s:s, s:s, s:b, s:n, s:n, s:n, s:n, s:n, s:n, s:n, s:n, s:n, s:[], "
        "s:n, s:i, s:{s:s, s:o?}}",
        "run", id, "kind", "status", word, "word", word, "ended", 0, "loop_id",
        "iteration", "steps", "created_ns", "last_ns", "last_seq", "holder", "queue",
        "usage", "budget", "paused", "uncertain", 0, "error", "code",
        lil_status_name(rc), "message", msg);
}

/* The row of run id now (NULL: out of memory). */
static json_t *read_row(struct serve *srv, const char *id)
{
    lil_bytes b = {NULL, 0};
    lil_status rc = lil_run_facts(srv->store, id, &b);
    json_t *f, *row;

    if (rc != LIL_OK)
        return failed_row(srv->store, id, rc);
    f = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!f)
        return NULL;
    row = row_of(f, queue_row(srv, id));
    json_decref(f);
    return row;
}

/* ---- an entry's row ------------------------------------------------------ */

static void copy_word(char *dst, const json_t *row, const char *key)
{
    const char *s = json_string_value(json_object_get(row, key));

    snprintf(dst, INDEX_WORD_MAX, "%s", s ? s : "");
}

/* What filters and sorts read, from the row; the page's order and counts
 * are made again when its status or time moved. */
static void note_row(struct serve_index *ix, struct index_run *e, const json_t *row)
{
    const char *loop_id = json_string_value(json_object_get(row, "loop_id"));
    const char *kind = json_string_value(json_object_get(row, "kind"));
    bool ended = json_is_true(json_object_get(row, "ended"));
    bool failed = json_object_get(row, "error") != NULL;
    const char *status = json_string_value(json_object_get(row, "status"));
    int64_t last_ns = (int64_t)json_integer_value(json_object_get(row, "last_ns"));

    if (last_ns != e->last_ns || !status || strcmp(status, e->status) != 0)
        ix->dirty = true;
    copy_word(e->status, row, "status");
    copy_word(e->word, row, "word");
    e->is_loop = kind && strcmp(kind, "loop") == 0;
    e->last_ns = (int64_t)json_integer_value(json_object_get(row, "last_ns"));
    e->ended = ended || failed;
    e->refresh = !ended && (!json_is_null(json_object_get(row, "holder")) ||
                            !json_is_null(json_object_get(row, "queue")));
    e->pinned = e->refresh || (!e->ended && strcmp(e->status, "running") != 0);
    free(e->loop_id);
    e->loop_id = loop_id ? strdup(loop_id) : NULL;
}

/* Read e's row again; a row that changed joins ix->changed.  The mark is
 * the facts' last seq: a record appended since makes the next poll say
 * so (a stamp of 0 is always looked at). */
static void refresh_row(struct serve *srv, struct index_run *e)
{
    struct serve_index *ix = srv->index;
    int64_t start = index_clock_us();
    json_t *row = read_row(srv, e->id);
    char *text;

    e->read_us = index_clock_us();
    e->read_cost_us = e->read_us - start;
    e->stale = false;
    if (!row)
        return;
    text = json_dumps(row, JSON_COMPACT);
    if (!text) {
        json_decref(row);
        return;
    }
    if (!e->row)
        ix->nread++;
    if (!e->row || strcmp(e->row, text) != 0) {
        ix->version++;
        note_row(ix, e, row);
        if (ix->changed)
            json_array_append(ix->changed, row);
        free(e->row);
        e->row = text;
    } else {
        free(text);
    }
    e->mark.last_seq = (uint64_t)json_integer_value(json_object_get(row, "last_seq"));
    json_decref(row);
}

/* A watched run that grew: a "run" event to the streams that watch it. */
static void tell_watchers(struct serve *srv, const struct index_run *e)
{
    json_t *doc =
        json_pack("{s:s, s:I}", "run", e->id, "last_seq", (json_int_t)e->mark.last_seq);

    if (doc)
        serve_broadcast(srv, "run", e->id, doc);
    json_decref(doc);
}

/* One look at e (lil_run_poll); its row read again when it grew, or when
 * it is due a refresh -- but not sooner than INDEX_COST_FACTOR times what
 * its last read cost after that read (a long run that grows every tick is
 * read again less often; e->stale remembers it is owed one). */
static void look_at(struct serve *srv, struct index_run *e)
{
    int changed = 0;
    lil_status rc = lil_run_poll(srv->store, e->id, &e->mark, &changed);
    int64_t since = index_clock_us() - e->read_us;

    if (rc != LIL_OK && rc != LIL_E_NOTFOUND)
        changed = since >= INDEX_REFRESH_US;
    if (changed && e->watched == srv->index->tick)
        tell_watchers(srv, e);
    if (!changed && !e->stale && !(e->refresh && since >= INDEX_REFRESH_US))
        return;
    if (since < INDEX_COST_FACTOR * e->read_cost_us) {
        e->stale = true;
        return;
    }
    refresh_row(srv, e);
}

static int64_t wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Is e looked at each tick (not only in the sweep)? */
static bool is_hot(const struct index_run *e, unsigned tick, int64_t now_ns)
{
    if (!e->row)
        return false;
    if (e->watched == tick || e->pinned)
        return true;
    return !e->ended && now_ns - e->last_ns < INDEX_RECENT_NS;
}

/* ---- the list ------------------------------------------------------------ */

struct id_list {
    char **ids;
    size_t n, cap;
    bool oom;
};

static int collect_id(void *ud, const char *id)
{
    struct id_list *l = ud;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        char **grown = realloc(l->ids, cap * sizeof(*grown));

        if (!grown)
            return l->oom = true, 1;
        l->ids = grown;
        l->cap = cap;
    }
    if (!(l->ids[l->n] = strdup(id)))
        return l->oom = true, 1;
    l->n++;
    return 0;
}

static int cmp_ids(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool sorted(const struct id_list *l)
{
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->ids[i - 1], l->ids[i]) >= 0)
            return false;
    return true;
}

static void ids_free(struct id_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->ids[i]);
    free(l->ids);
}

/* An id that left the store: its entry goes, its id joins ix->removed. */
static void drop_run(struct serve_index *ix, struct index_run *e)
{
    if (ix->removed)
        json_array_append_new(ix->removed, json_string(e->id));
    if (e->row)
        ix->nread--;
    ix->version++;
    run_clear(e);
}

/* The entries of the ids l lists (sorted): kept, new (unread), the rest
 * dropped.  The ids are taken. */
static int merge_ids(struct serve_index *ix, struct id_list *l)
{
    struct index_run *runs = calloc(l->n ? l->n : 1, sizeof(*runs));
    size_t i = 0, k = 0;

    if (!runs)
        return -1;
    while (k < l->n) {
        int c = i < ix->n ? strcmp(ix->runs[i].id, l->ids[k]) : 1;

        if (c < 0) {
            drop_run(ix, &ix->runs[i++]);
        } else if (c == 0) {
            runs[k] = ix->runs[i++];
            free(l->ids[k++]);
        } else {
            runs[k].id = l->ids[k];
            k++;
        }
    }
    while (i < ix->n)
        drop_run(ix, &ix->runs[i++]);
    free(ix->runs);
    free(l->ids);
    l->ids = NULL;
    l->n = 0;
    ix->runs = runs;
    ix->n = k;
    ix->read_at = ix->live_at = ix->sweep_at = 0;
    ix->dirty = true;
    ix->version++;
    return 0;
}

/* List the store's runs again and merge them into the index. */
static int relist(struct serve *srv, char *err, size_t err_len)
{
    struct id_list l = {NULL, 0, 0, false};
    lil_status rc = lil_store_foreach_run(srv->store, collect_id, &l);
    int res = -1;

    if (rc != LIL_OK || l.oom) {
        snprintf(err, err_len, "%s",
                 l.oom || rc == LIL_E_NOMEM ? "out of memory"
                                            : lil_store_errmsg(srv->store));
    } else {
        if (!sorted(&l)) /* the stores list in byte order: this is a guard */
            qsort(l.ids, l.n, sizeof(*l.ids), cmp_ids);
        res = merge_ids(srv->index, &l);
        if (res != 0)
            snprintf(err, err_len, "out of memory");
    }
    ids_free(&l);
    return res;
}

/* Were runs created or removed?  Then list them again. */
static void follow_list(struct serve *srv)
{
    int changed = 1;
    char err[256];

    if (lil_store_poll(srv->store, &srv->index->store_stamp, &changed) != LIL_OK)
        changed = 1;
    if (changed)
        (void)relist(srv, err, sizeof(err)); /* failed: the index stays as it was */
}

/* ---- the passes of a tick ------------------------------------------------ */
static void note_watched(const char *run_id, void *ud)
{
    struct serve *srv = ud;
    struct serve_index *ix = srv->index;
    size_t at;

    if (find_run(ix, run_id, &at))
        ix->runs[at].watched = ix->tick;
}

/* Live and watched runs, from ix->live_at, until the deadline. */
static void pass_live(struct serve *srv, int64_t deadline)
{
    struct serve_index *ix = srv->index;
    int64_t now_ns = wall_ns();

    for (size_t k = 0; k < ix->n; k++) {
        size_t at = (ix->live_at + k) % ix->n;
        struct index_run *e = &ix->runs[at];

        if (!is_hot(e, ix->tick, now_ns))
            continue;
        if (index_clock_us() >= deadline) {
            ix->live_at = at;
            return;
        }
        look_at(srv, e);
    }
}

/* Rows not read yet, until the deadline. */
static void pass_unread(struct serve *srv, int64_t deadline)
{
    struct serve_index *ix = srv->index;

    for (; ix->read_at < ix->n && ix->nread < ix->n; ix->read_at++) {
        if (index_clock_us() >= deadline)
            return;
        if (!ix->runs[ix->read_at].row)
            refresh_row(srv, &ix->runs[ix->read_at]);
    }
}

/* The runs not hot, round robin, INDEX_SWEEP_MAX at most, until the
 * deadline. */
static void pass_sweep(struct serve *srv, int64_t deadline)
{
    struct serve_index *ix = srv->index;
    int64_t now_ns = wall_ns();
    size_t looked = 0;

    for (size_t k = 0; k < ix->n && looked < INDEX_SWEEP_MAX; k++) {
        struct index_run *e = &ix->runs[ix->sweep_at];

        ix->sweep_at = (ix->sweep_at + 1) % ix->n;
        if (!e->row || is_hot(e, ix->tick, now_ns))
            continue;
        if (index_clock_us() >= deadline)
            return;
        look_at(srv, e);
        looked++;
    }
}

/* Broadcast what changed, then forget it. */
static void broadcast_changes(struct serve *srv)
{
    struct serve_index *ix = srv->index;
    json_t *doc;

    if (json_array_size(ix->changed) == 0 && json_array_size(ix->removed) == 0)
        return;
    doc = json_pack("{s:O, s:O}", "rows", ix->changed, "removed", ix->removed);
    if (doc)
        serve_broadcast(srv, "runs", NULL, doc);
    json_decref(doc);
    json_array_clear(ix->changed);
    json_array_clear(ix->removed);
}

/* ---- serve.h ------------------------------------------------------------- */
int serve_index_open(struct serve *srv, char *err, size_t err_len)
{
    struct serve_index *ix = calloc(1, sizeof(*ix));

    if (err_len)
        err[0] = '\0';
    if (!ix || !(ix->changed = json_array()) || !(ix->removed = json_array())) {
        if (ix)
            json_decref(ix->changed);
        free(ix);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    srv->index = ix;
    if (lil_store_poll(srv->store, &ix->store_stamp, &(int){0}) != LIL_OK ||
        relist(srv, err, err_len) != 0) {
        if (!err[0])
            snprintf(err, err_len, "%s", lil_store_errmsg(srv->store));
        serve_index_free(srv);
        return -1;
    }
    pass_unread(srv, index_clock_us() + INDEX_OPEN_US);
    json_array_clear(ix->changed); /* nobody to tell yet */
    return 0;
}

void serve_index_free(struct serve *srv)
{
    struct serve_index *ix = srv ? srv->index : NULL;

    if (!ix)
        return;
    for (size_t i = 0; i < ix->n; i++)
        run_clear(&ix->runs[i]);
    free(ix->runs);
    serve_index_forget_order(ix);
    json_decref(ix->queue);
    json_decref(ix->changed);
    json_decref(ix->removed);
    free(ix);
    srv->index = NULL;
}

void serve_index_touch(struct serve *srv, const char *run_id)
{
    struct serve_index *ix = srv ? srv->index : NULL;
    size_t at;

    if (!ix)
        return;
    if (!find_run(ix, run_id, &at)) {
        follow_list(srv); /* a run just made */
        if (!find_run(ix, run_id, &at)) {
            broadcast_changes(srv);
            return;
        }
    }
    ix->tick++; /* the queue is read again */
    refresh_row(srv, &ix->runs[at]);
    broadcast_changes(srv);
}

void serve_index_tick(struct serve *srv)
{
    struct serve_index *ix = srv ? srv->index : NULL;
    int64_t start = index_clock_us(), deadline, now;

    if (!ix)
        return;
    ix->tick++;
    deadline = start + (ix->nread < ix->n ? INDEX_FILL_TICK_US : INDEX_TICK_US);
    follow_list(srv);
    serve_streams_watched(srv, note_watched, srv);
    pass_live(srv, deadline);
    /* a run just made is read now even when listing took the budget */
    now = index_clock_us();
    pass_unread(srv, deadline > now + INDEX_NEW_US ? deadline : now + INDEX_NEW_US);
    pass_sweep(srv, deadline);
    broadcast_changes(srv);
}
