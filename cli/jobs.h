/*
 * jobs.h -- children of a long-lived `lil` server (`lil mcp`, `lil serve`):
 * `lil VERB ...` spawned in its own session, watched without blocking,
 * its output collected (jobs.c).
 *
 * A child runs in its own session (it outlives the server and a Ctrl-C
 * meant for it), stdin /dev/null, stdout and stderr two anonymous files
 * (memfd): nothing to poll, no pipe to fill.  Its environment is the
 * server's with LIL_DIR naming the store (a PostgreSQL URI with its
 * password stays out of argv), LIL_SHARED_STORE=1 when asked, and the
 * server's --env-allow added to LIL_EFFECT_ENV.  cli_jobs_tick reads the
 * stderr written since the last tick, hands each complete line to on_line,
 * reaps the children that ended (WNOHANG) and calls on_end with their
 * output.
 */
#ifndef LIL_CLI_JOBS_H
#define LIL_CLI_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct cli_job;

/* What the children of one server share. */
struct cli_jobs {
    const char *lil_exe;   /* the `lil` binary to run */
    const char *store;     /* LIL_DIR of the children (NULL: ".lil") */
    bool shared_store;     /* LIL_SHARED_STORE=1 */
    const char *env_allow; /* added to LIL_EFFECT_ENV, or NULL */
    struct cli_job *list;  /* the children not yet reaped (jobs.c's) */
};

/* What a finished child left. */
struct cli_job_end {
    int exit_code;   /* its exit status; 128 + N when killed by signal N */
    const char *out; /* its stdout, NUL-terminated (the first 1 MiB kept) */
    const char *err; /* its stderr, NUL-terminated (the last 1 MiB kept) */
};

/* Each line the child writes to stderr (its --progress json events),
 * without its newline, borrowed. */
typedef void (*cli_job_line_fn)(struct cli_job *job, const char *line, void *ud);
/* Once, when the child has exited (from cli_jobs_tick). */
typedef void (*cli_job_end_fn)(struct cli_job *job, const struct cli_job_end *end,
                               void *ud);

/* Run `lil argv[0..]` (argv without the program, NULL-terminated) as a
 * child.  0 and *out (owned by jobs; reaped by cli_jobs_tick), or -1 with
 * a message in msg. */
int cli_job_start(struct cli_jobs *jobs, const char *const *argv,
                  cli_job_line_fn on_line, cli_job_end_fn on_end, void *ud,
                  struct cli_job **out, char *msg, size_t msg_len);
pid_t cli_job_pid(const struct cli_job *job);
/* Stop calling job's callbacks; the child is still reaped. */
void cli_job_detach(struct cli_job *job);
/* Reap and collect every child that ended; read new stderr lines. */
void cli_jobs_tick(struct cli_jobs *jobs);
/* Free the records of every job (the children go on). */
void cli_jobs_free(struct cli_jobs *jobs);
/* Some job still has its callbacks. */
bool cli_jobs_attached(const struct cli_jobs *jobs);

#endif
