/*
 * serve_jobs.h -- the jobs of `lil serve`'s actions (serve_jobs.c), what
 * serve_actions.c starts through them.
 *
 * A job is one action on one run: a child `lil VERB ...` (approve,
 * recover, resume) watched until it exits, or an action done at once in
 * the server (a program run's effect resolved).  Its document, in every
 * answer, `job` event and GET /api/jobs: {"id", "run", "verb", "actor",
 * "reason", "pid", "started_ms", "state": "running" | "ended",
 * "exit_code", "status", "error"}.
 */
#ifndef LIL_CLI_SERVE_JOBS_H
#define LIL_CLI_SERVE_JOBS_H

#include "serve.h"

#define SERVE_JOBS_KEPT 100 /* jobs GET /api/jobs lists, newest first */

/* What a job does, and for whom. */
struct serve_job_what {
    const char *verb;   /* "approve", "recover", "resume", "resolve" */
    const char *run;    /* the run it acts on */
    const char *actor;  /* journaled: "web:<user>" */
    const char *reason; /* journaled */
};

/* Run `lil argv...` (argv without the program, NULL-terminated) as the
 * child of a new job: its document (a new reference), broadcast as a
 * "job" event; or NULL with a message in msg. */
json_t *serve_job_start(struct serve *srv, const struct serve_job_what *w,
                        const char *const *argv, char *msg, size_t msg_len);

/* Record a job done at once in the server: ended with status (the run's
 * status after it) or error (NULL when it worked).  Its document (a new
 * reference), broadcast as a "job" event; or NULL when out of memory. */
json_t *serve_job_done(struct serve *srv, const struct serve_job_what *w,
                       const char *status, const char *error);

#endif
