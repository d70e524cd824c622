/*
 * serve_index.h -- what serve_index.c (the rows, kept fresh) and
 * serve_index_page.c (filter, sort, page) share.
 *
 * The index holds one entry per run of the store, in byte order of the
 * ids (so a run is found by bisection).  An entry keeps its row as compact
 * JSON text (a row's json_t is heavy; 10,000 of them as text fit in a few
 * MB) and, beside it, what filters and sorts read: status, word, kind,
 * loop id, last activity.  A page parses the rows it returns, no others.
 */
#ifndef LIL_CLI_SERVE_INDEX_H
#define LIL_CLI_SERVE_INDEX_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define INDEX_WORD_MAX   16 /* bytes of a status word and its NUL */
#define INDEX_PAGES_KEPT 8  /* pages kept for the same request again */

/* One run. */
struct index_run {
    char *id;
    char *row;                   /* the row as compact JSON, NULL until read */
    char *loop_id;               /* a loop run's loop id, or NULL */
    char status[INDEX_WORD_MAX]; /* the row's "status" */
    char word[INDEX_WORD_MAX];   /* the row's "word" */
    bool is_loop;
    bool ended;           /* the row says so */
    bool pinned;          /* held, queued, paused, waiting or uncertain: looked at
                             each tick (lil_run_poll), like a run active lately */
    bool refresh;         /* held or queued: also read again every INDEX_REFRESH_US */
    int64_t last_ns;      /* the row's "last_ns" (0: none) */
    int64_t read_us;      /* when the row was read (index_clock_us) */
    int64_t read_cost_us; /* what that read took */
    bool stale;           /* it grew since: to be read again */
    unsigned watched;     /* the tick that found an event stream watching it */
    lil_run_mark mark;
};

struct serve_index {
    struct index_run *runs; /* by id, byte order */
    size_t n;
    size_t nread;        /* entries whose row was read */
    size_t read_at;      /* where the next unread entry is looked for */
    size_t live_at;      /* where the next tick's look at live runs starts */
    size_t sweep_at;     /* the round robin of ended runs */
    int64_t store_stamp; /* lil_store_poll's */
    unsigned tick;
    json_t *queue;       /* PostgreSQL: lil_queue_list's rows by run id, or NULL */
    unsigned queue_tick; /* the tick that read it */
    json_t *changed;     /* rows changed since the last broadcast */
    json_t *removed;     /* ids removed since the last broadcast */
    /* serve_index_page's, made again when a row's status or time changed,
     * or the list did (ix->dirty) */
    bool dirty;
    size_t *by_last; /* the read entries' indexes, last activity first */
    size_t nby_last;
    json_t *counts;   /* {status: n} of the read entries */
    uint64_t version; /* moves whenever a row or the list changes */

    /* the last pages answered, kept while the version stays (many browsers
     * show the same page) */
    struct {
        char *key; /* the filter, as page_key writes it */
        uint64_t version;
        json_t *doc;
    } pages[INDEX_PAGES_KEPT];

    size_t next_page; /* the slot the next page takes */
};

/* What serve_index_page keeps: forget it (serve_index_page.c). */
void serve_index_forget_order(struct serve_index *ix);

/* The status words a row can have: the runs' ("running", "completed",
 * ...), the queue's ("queued", "claimed", ...) and those of a run that
 * could not be read ("damaged", "locked", ...).  NULL-terminated. */
extern const char *const serve_index_words[];

/* The monotonic clock, microseconds. */
int64_t index_clock_us(void);

#endif
