/*
 * serve_jobs.c -- the jobs of `lil serve`'s actions (serve_jobs.h): their
 * children (cli/jobs.c), their records, GET /api/jobs and the tick.
 *
 * A record is made when a job starts and kept, newest first, until
 * SERVE_JOBS_KEPT newer ones have come (a job still running is kept until
 * it ends).  At its start and at its end the job's document goes to every
 * event stream ("job") and its run is looked at again (serve_index_touch).
 * A child's end is read from what it left: its stdout is the loop result
 * of `--json`, whose "status" is the job's; without one, its stderr less
 * its progress events is the job's error (the CLI's own words).  Nothing
 * the child wrote reaches a document unchecked: it goes in as a JSON
 * string, escaped where it is not UTF-8.
 */
#include "serve_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli.h"

#define ERROR_MAX 2000 /* bytes of a child's stderr kept as a job's error */

struct serve_job {
    struct serve_job *next; /* the job started before */
    struct serve *srv;
    struct cli_job *child; /* the child while it runs, else NULL */
    json_int_t id;
    char *run, *verb, *actor, *reason;
    json_int_t pid; /* the child's; 0: none */
    int64_t started_ms;
    bool ended;
    bool exited; /* a child exited: exit_code is its status */
    int exit_code;
    char *status, *error;
};

struct serve_actions {
    struct serve_job *jobs; /* newest first */
    json_int_t last_id;
};

/* ---- records --------------------------------------------------------------- */

static struct serve_actions *actions_of(struct serve *srv)
{
    if (!srv->actions)
        srv->actions = calloc(1, sizeof(*srv->actions));
    return srv->actions;
}

static void job_free(struct serve_job *j)
{
    if (!j)
        return;
    free(j->run);
    free(j->verb);
    free(j->actor);
    free(j->reason);
    free(j->status);
    free(j->error);
    free(j);
}

/* Now, ms since the epoch (what a page shows as a time). */
static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct serve_job *job_new(struct serve *srv, const struct serve_job_what *w)
{
    struct serve_actions *sa = actions_of(srv);
    struct serve_job *j = sa ? calloc(1, sizeof(*j)) : NULL;

    if (!j)
        return NULL;
    j->srv = srv;
    j->run = strdup(w->run);
    j->verb = strdup(w->verb);
    j->actor = strdup(w->actor);
    j->reason = strdup(w->reason);
    if (!j->run || !j->verb || !j->actor || !j->reason) {
        job_free(j);
        return NULL;
    }
    j->id = ++sa->last_id;
    j->started_ms = wall_ms();
    return j;
}

/* text as a JSON string (escaped where not UTF-8), or null. */
static json_t *text_or_null(const char *text)
{
    json_t *s = text ? cli_json_str(text, strlen(text)) : NULL;

    return s ? s : json_null();
}

static json_t *job_doc(const struct serve_job *j)
{
    json_t *o = json_object();

    if (!o)
        return NULL;
    json_object_set_new(o, "id", json_integer(j->id));
    json_object_set_new(o, "run", text_or_null(j->run));
    json_object_set_new(o, "verb", text_or_null(j->verb));
    json_object_set_new(o, "actor", text_or_null(j->actor));
    json_object_set_new(o, "reason", text_or_null(j->reason));
    json_object_set_new(o, "pid", j->pid ? json_integer(j->pid) : json_null());
    json_object_set_new(o, "started_ms", json_integer(j->started_ms));
    json_object_set_new(o, "state", json_string(j->ended ? "ended" : "running"));
    json_object_set_new(o, "exit_code",
                        j->exited ? json_integer(j->exit_code) : json_null());
    json_object_set_new(o, "status", text_or_null(j->status));
    json_object_set_new(o, "error", text_or_null(j->error));
    return o;
}

/* Tell every stream about j (a "job" event) and look at its run again. */
static void job_told(struct serve_job *j)
{
    json_t *doc = job_doc(j);

    if (doc)
        serve_broadcast(j->srv, "job", NULL, doc);
    json_decref(doc);
    serve_index_touch(j->srv, j->run);
}

/* Forget the ended jobs past the SERVE_JOBS_KEPT newest. */
static void keep_recent(struct serve_actions *sa)
{
    struct serve_job **p = &sa->jobs, *j;
    size_t kept = 0;

    while ((j = *p) != NULL) {
        if (kept >= SERVE_JOBS_KEPT && j->ended) {
            *p = j->next;
            job_free(j);
            continue;
        }
        kept++;
        p = &j->next;
    }
}

/* j goes first in the list and is told: its document (a new reference). */
static json_t *job_add(struct serve_job *j)
{
    struct serve_actions *sa = j->srv->actions;

    j->next = sa->jobs;
    sa->jobs = j;
    keep_recent(sa);
    job_told(j);
    return job_doc(j);
}

/* ---- a child's end ------------------------------------------------------------ */

/* Is line a progress event of the child ({"event": ...})? */
static bool progress_event(const char *line, size_t len)
{
    json_t *o = len > 0 && line[0] == '{' ? json_loadb(line, len, 0, NULL) : NULL;
    bool is = json_is_string(json_object_get(o, "event"));

    json_decref(o);
    return is;
}

/* The child's stderr without its progress events, its last ERROR_MAX
 * bytes, trimmed (malloc), or NULL when nothing is left. */
static char *cli_words(const char *err)
{
    size_t cap = strlen(err) + 1, n = 0;
    char *words = malloc(cap);

    if (!words)
        return NULL;
    for (const char *p = err; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);

        if (len > 0 && !progress_event(p, len)) {
            if (n > 0)
                words[n++] = '\n';
            memcpy(words + n, p, len);
            n += len;
        }
        p += len + (nl ? 1 : 0);
    }
    while (n > 0 && (words[n - 1] == '\n' || words[n - 1] == ' '))
        n--;
    words[n] = '\0';
    if (n > ERROR_MAX)
        memmove(words, words + n - ERROR_MAX, ERROR_MAX + 1);
    if (n == 0) {
        free(words);
        return NULL;
    }
    return words;
}

/* The job's error when the child left no loop result. */
static char *end_error(const struct cli_job_end *end)
{
    char *words = cli_words(end->err), buf[96];

    if (words)
        return words;
    if (end->exit_code > 128)
        snprintf(buf, sizeof(buf), "the child lil was killed by signal %d",
                 end->exit_code - 128);
    else
        snprintf(buf, sizeof(buf), "the child lil exited with status %d",
                 end->exit_code);
    return strdup(buf);
}

static void on_end(struct cli_job *child, const struct cli_job_end *end, void *ud)
{
    struct serve_job *j = ud;
    json_t *result = end->exit_code >= 0 && end->exit_code <= 5
                         ? json_loads(end->out, JSON_DISABLE_EOF_CHECK, NULL)
                         : NULL;
    const char *status = json_string_value(json_object_get(result, "status"));

    (void)child;
    j->child = NULL;
    j->ended = true;
    j->exited = true;
    j->exit_code = end->exit_code;
    if (status)
        j->status = strdup(status);
    else
        j->error = end_error(end);
    json_decref(result);
    job_told(j);
}

/* ---- serve_jobs.h ----------------------------------------------------------- */

/* The children's settings, from the flags when cmd_serve.c left them. */
static void jobs_ready(struct serve *srv)
{
    if (srv->jobs.lil_exe)
        return;
    srv->jobs.lil_exe = srv->opts.lil_exe;
    srv->jobs.store = srv->opts.store;
    srv->jobs.shared_store = srv->opts.shared_store;
    srv->jobs.env_allow = srv->opts.env_allow;
}

json_t *serve_job_start(struct serve *srv, const struct serve_job_what *w,
                        const char *const *argv, char *msg, size_t msg_len)
{
    struct serve_job *j = job_new(srv, w);

    if (!j) {
        snprintf(msg, msg_len, "out of memory");
        return NULL;
    }
    jobs_ready(srv);
    if (!srv->jobs.lil_exe) {
        snprintf(msg, msg_len, "the lil binary to run is not known");
        job_free(j);
        return NULL;
    }
    if (cli_job_start(&srv->jobs, argv, NULL, on_end, j, &j->child, msg, msg_len) !=
        0) {
        job_free(j);
        return NULL;
    }
    j->pid = (json_int_t)cli_job_pid(j->child);
    return job_add(j);
}

json_t *serve_job_done(struct serve *srv, const struct serve_job_what *w,
                       const char *status, const char *error)
{
    struct serve_job *j = job_new(srv, w);

    if (!j)
        return NULL;
    j->ended = true;
    j->status = status ? strdup(status) : NULL;
    j->error = error ? strdup(error) : NULL;
    return job_add(j);
}

/* ---- serve.h ---------------------------------------------------------------- */

void serve_get_jobs(struct serve_call *c, struct serve_answer *a)
{
    const struct serve_actions *sa = c->srv->actions;
    json_t *list = json_array();

    for (const struct serve_job *j = sa ? sa->jobs : NULL; j && list; j = j->next)
        if (json_array_append_new(list, job_doc(j)) != 0) {
            json_decref(list);
            list = NULL;
        }
    serve_ok(a, list ? json_pack("{s:o}", "jobs", list) : NULL);
}

void serve_actions_tick(struct serve *srv)
{
    cli_jobs_tick(&srv->jobs);
}

void serve_actions_free(struct serve *srv)
{
    struct serve_job *j, *next;

    if (srv->actions) {
        for (j = srv->actions->jobs; j; j = next) {
            next = j->next;
            cli_job_detach(j->child);
            job_free(j);
        }
        free(srv->actions);
        srv->actions = NULL;
    }
    cli_jobs_free(&srv->jobs);
}
