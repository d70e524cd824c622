/*
 * run_events.h -- a run's typed events (lil_run_events, docs/api.md
 * "Reading runs") for the commands that show a run's records: every page
 * fetched in turn, each event handed to a callback, up to a record.
 *
 * The commands that open a run to walk its records also read its events
 * here (only the events or the part of them they need: the options of
 * lil_run_events_with), so that what a record is (a loop's effect, snapshot, control
 * record, ...) is the library's answer, never decoded again by the
 * command.  Events are read after the run was opened: they cover every
 * record the open saw (upto), and later ones are passed over.
 */
#ifndef LIL_CLI_RUN_EVENTS_H
#define LIL_CLI_RUN_EVENTS_H

#include <lil/lil.h>

#include <jansson.h>

/* Called for each event in order; return 0 to go on, non-zero to stop. */
typedef int (*cli_event_fn)(void *ud, const json_t *ev);

/* Call fn for every event of run_id from records 1 to upto (0: all).
 * LIL_OK, or the error of lil_run_events (its message on the store);
 * LIL_E_NOMEM for a page that cannot be parsed. */
lil_status cli_run_events(lil_store *st, const char *run_id, uint64_t upto,
                          cli_event_fn fn, void *ud);

/* What to ask lil_run_events_with for (lil_events_opts' fields), and
 * what its first page said. */
struct cli_events_query {
    const char *types;         /* NULL: every type */
    unsigned flags;            /* LIL_EVENTS_* */
    size_t last_iterations;    /* 0: from the first record */
    int64_t iterations_before; /* out: the first page's "iterations_before" */
};

/* cli_run_events with the page's options q (NULL: none). */
lil_status cli_run_events_query(lil_store *st, const char *run_id, uint64_t upto,
                                struct cli_events_query *q, cli_event_fn fn, void *ud);

/* cli_run_events_query from record from on (1: the first): a reader that
 * follows a run asks only for what it has not seen. */
lil_status cli_run_events_from(lil_store *st, const char *run_id, uint64_t from,
                               uint64_t upto, struct cli_events_query *q,
                               cli_event_fn fn, void *ud);

/* The seq of event ev (the record it comes from). */
uint64_t cli_event_seq(const json_t *ev);

#endif
