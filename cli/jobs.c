/*
 * jobs.c -- the children of a long-lived `lil` server (`lil mcp`,
 * `lil serve`): `lil VERB ...` spawned, watched, its output collected
 * (jobs.h).
 *
 * A child is spawned in its own session (so it outlives the server and a
 * Ctrl-C meant for it), stdin /dev/null, stdout and stderr two anonymous
 * files (memfd): nothing to poll and no pipe to fill, so a child never
 * blocks on the server.  Its environment is the server's with LIL_DIR
 * naming the store (a PostgreSQL URI with its password stays out of argv),
 * LIL_SHARED_STORE=1 when asked, and the server's --env-allow added to
 * LIL_EFFECT_ENV (what every loop verb reads, also those that take no
 * --env-allow).  Each tick reads the stderr written since the last one,
 * hands each complete line to on_line, and reaps the child (WNOHANG); at
 * its exit on_end gets its stdout and stderr (the first 1 MiB of stdout,
 * the last 1 MiB of stderr: the CLI's words come last) and the record
 * goes.  A detached job is reaped the same way, its callbacks no longer
 * called.
 */
#include "jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <lil/lil.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUTPUT_MAX      (1u << 20) /* bytes of stdout and of stderr kept */
#define STDERR_LINE_MAX 65536      /* a longer stderr line is cut there */
#define READ_STEP       65536

struct cli_job {
    struct cli_job *next;
    struct cli_jobs *jobs;
    pid_t pid;
    int out_fd, err_fd; /* the child's stdout and stderr (memfd) */
    off_t err_read;     /* stderr bytes handed out as lines so far */
    char *line;         /* the stderr line being read */
    size_t line_len;
    bool line_cut;     /* the line passed STDERR_LINE_MAX: the rest is dropped */
    off_t err_dropped; /* stderr bytes given back to the system (trim_stderr) */
    bool attached;     /* callbacks are called */
    cli_job_line_fn on_line;
    cli_job_end_fn on_end;
    void *ud;
};

/* ---- the child's environment ---------------------------------------------- */

static bool replaced(const char *entry)
{
    static const char *const names[] = {
        "LIL_DIR=", "LIL_SHARED_STORE=", "LIL_EFFECT_ENV="};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strncmp(entry, names[i], strlen(names[i])) == 0)
            return true;
    return false;
}

/* "NAME=value" (malloc), or NULL when out of memory. */
static char *env_entry(const char *name, const char *a, const char *b)
{
    size_t len = strlen(name) + strlen(a) + (b ? strlen(b) + 1 : 0) + 2;
    char *e = malloc(len);

    if (e)
        snprintf(e, len, "%s=%s%s%s", name, a, b ? "," : "", b ? b : "");
    return e;
}

/* The server's environment with the store and the allowed variables set;
 * the entries this file made are the last ones (freed by free_env). */
static char **child_env(const struct cli_jobs *jobs, size_t *n_made)
{
    const char *allow = jobs->env_allow;
    char *effect_env = NULL; /* the value in force (its LOOPY_ name too) */
    size_t n = 0, k = 0;
    char **env;

    while (environ[n])
        n++;
    env = calloc(n + 4, sizeof(*env));
    if (!env || lil_setting("LIL_EFFECT_ENV", &effect_env) == LIL_E_NOMEM) {
        free(env);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!replaced(environ[i]))
            env[k++] = environ[i];
    *n_made = 0;
    env[k + (*n_made)++] =
        env_entry("LIL_DIR", jobs->store ? jobs->store : ".lil", NULL);
    if (jobs->shared_store)
        env[k + (*n_made)++] = env_entry("LIL_SHARED_STORE", "1", NULL);
    if (allow && *allow)
        env[k + (*n_made)++] = effect_env && *effect_env
                                   ? env_entry("LIL_EFFECT_ENV", effect_env, allow)
                                   : env_entry("LIL_EFFECT_ENV", allow, NULL);
    else if (effect_env)
        env[k + (*n_made)++] = env_entry("LIL_EFFECT_ENV", effect_env, NULL);
    lil_free(effect_env);
    for (size_t i = 0; i < *n_made; i++)
        if (!env[k + i]) {
            for (size_t j = 0; j < *n_made; j++)
                free(env[k + j]);
            free(env);
            return NULL;
        }
    return env;
}

static void free_env(char **env, size_t n_made)
{
    size_t n = 0;

    if (!env)
        return;
    while (env[n])
        n++;
    for (size_t i = n - n_made; i < n; i++)
        free(env[i]);
    free(env);
}

/* ---- spawning -------------------------------------------------------------- */

static void free_argv(char **all)
{
    for (size_t i = 0; all && all[i]; i++)
        free(all[i]);
    free(all);
}

/* {"lil", argv..., NULL}, copies (free_argv), or NULL. */
static char **full_argv(const char *const *argv)
{
    size_t n = 0;
    char **all;

    while (argv[n])
        n++;
    all = calloc(n + 2, sizeof(*all));
    if (!all)
        return NULL;
    for (size_t i = 0; i <= n; i++) {
        all[i] = strdup(i == 0 ? "lil" : argv[i - 1]);
        if (!all[i]) {
            free_argv(all);
            return NULL;
        }
    }
    return all;
}

/* The child's own session, default signals, and its three streams. */
static int spawn_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at,
                       int out_fd, int err_fd)
{
    sigset_t none, dflt;
    int rc;

    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE); /* the server ignores it; the child must not */
    sigaddset(&dflt, SIGINT);
    sigaddset(&dflt, SIGTERM);
    sigaddset(&dflt, SIGHUP);
    rc = posix_spawnattr_setflags(at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                          POSIX_SPAWN_SETSIGDEF);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(at, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(at, &dflt);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY,
                                              0);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(fa, out_fd, STDOUT_FILENO);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(fa, err_fd, STDERR_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    if (rc == 0) /* the server's sockets and files stay its own */
        rc = posix_spawn_file_actions_addclosefrom_np(fa, STDERR_FILENO + 1);
#endif
    return rc;
}

static int spawn_child(const struct cli_jobs *jobs, const char *const *argv, int out_fd,
                       int err_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    size_t n_made = 0;
    char **all = full_argv(argv), **env = child_env(jobs, &n_made);
    int rc = ENOMEM;

    if (all && env && posix_spawn_file_actions_init(&fa) == 0) {
        if (posix_spawnattr_init(&at) == 0) {
            rc = spawn_setup(&fa, &at, out_fd, err_fd);
            if (rc == 0)
                rc = posix_spawn(pid, jobs->lil_exe, &fa, &at, all, env);
            posix_spawnattr_destroy(&at);
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    free_argv(all);
    free_env(env, n_made);
    return rc;
}

int cli_job_start(struct cli_jobs *jobs, const char *const *argv,
                  cli_job_line_fn on_line, cli_job_end_fn on_end, void *ud,
                  struct cli_job **out, char *msg, size_t msg_len)
{
    struct cli_job *job = calloc(1, sizeof(*job));
    int rc;

    *out = NULL;
    if (!job) {
        snprintf(msg, msg_len, "out of memory");
        return -1;
    }
    job->out_fd = memfd_create("lil-job-stdout", MFD_CLOEXEC);
    job->err_fd = memfd_create("lil-job-stderr", MFD_CLOEXEC);
    if (job->out_fd < 0 || job->err_fd < 0) {
        snprintf(msg, msg_len, "cannot make the child's output files: %s",
                 strerror(errno));
        rc = -1;
    } else {
        rc = spawn_child(jobs, argv, job->out_fd, job->err_fd, &job->pid);
        if (rc != 0)
            snprintf(msg, msg_len, "cannot start %s: %s", jobs->lil_exe, strerror(rc));
    }
    if (rc != 0) {
        if (job->out_fd >= 0)
            close(job->out_fd);
        if (job->err_fd >= 0)
            close(job->err_fd);
        free(job);
        return -1;
    }
    job->jobs = jobs;
    job->attached = true;
    job->on_line = on_line;
    job->on_end = on_end;
    job->ud = ud;
    job->next = jobs->list;
    jobs->list = job;
    *out = job;
    return 0;
}

pid_t cli_job_pid(const struct cli_job *job)
{
    return job->pid;
}

void cli_job_detach(struct cli_job *job)
{
    if (job)
        job->attached = false;
}

/* ---- reading the child's output ------------------------------------------- */

/* One more byte of the current line (cut past STDERR_LINE_MAX). */
static void line_add(struct cli_job *job, char c)
{
    if (job->line_cut)
        return;
    if (!job->line) {
        job->line = malloc(STDERR_LINE_MAX + 1);
        if (!job->line) {
            job->line_cut = true;
            return;
        }
    }
    if (job->line_len == STDERR_LINE_MAX) {
        job->line_cut = true;
        return;
    }
    job->line[job->line_len++] = c;
}

static void line_end(struct cli_job *job)
{
    if (job->line && job->attached && job->on_line) {
        job->line[job->line_len] = '\0';
        job->on_line(job, job->line, job->ud);
    }
    job->line_len = 0;
    job->line_cut = false;
}

/* Hand the complete stderr lines written since the last call to on_line
 * (all of it, a last line without newline too, when final). */
static void read_lines(struct cli_job *job, bool final)
{
    char buf[READ_STEP];
    ssize_t n;

    while ((n = pread(job->err_fd, buf, sizeof(buf), job->err_read)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n')
                line_end(job);
            else
                line_add(job, buf[i]);
        }
        job->err_read += n;
    }
    if (final && job->line_len > 0)
        line_end(job);
}

/* What fd holds, NUL-terminated (malloc), or NULL: its first OUTPUT_MAX
 * bytes, or its last ones when tail (stderr: the CLI's words come last). */
static char *read_all(int fd, bool tail)
{
    char *text = malloc(OUTPUT_MAX + 1);
    struct stat sb;
    off_t from = 0;
    size_t len = 0;
    ssize_t n;

    if (!text)
        return NULL;
    if (tail && fstat(fd, &sb) == 0 && sb.st_size > (off_t)OUTPUT_MAX)
        from = sb.st_size - (off_t)OUTPUT_MAX;
    while (len < OUTPUT_MAX &&
           (n = pread(fd, text + len, OUTPUT_MAX - len, from + (off_t)len)) > 0)
        len += (size_t)n;
    text[len] = '\0';
    return text;
}

/* A child that runs for days writes a progress line per event: give back
 * the stderr bytes nobody will read again -- those before its last
 * OUTPUT_MAX bytes and, while lines are handed out, already handed out --
 * by punching them out of the memfd (they read as zeros after). */
static void trim_stderr(struct cli_job *job)
{
    struct stat sb;
    off_t upto;

    if (fstat(job->err_fd, &sb) != 0 || sb.st_size <= (off_t)(2 * OUTPUT_MAX))
        return;
    upto = sb.st_size - (off_t)OUTPUT_MAX;
    if (job->attached && upto > job->err_read)
        upto = job->err_read;
    upto &= ~(off_t)(READ_STEP - 1);
    if (upto < job->err_dropped + (off_t)OUTPUT_MAX)
        return; /* not worth a call yet */
    if (fallocate(job->err_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, upto) ==
        0)
        job->err_dropped = upto;
}

/* ---- reaping ---------------------------------------------------------------- */

static void free_job(struct cli_job *job)
{
    close(job->out_fd);
    close(job->err_fd);
    free(job->line);
    free(job);
}

static void unlink_job(struct cli_jobs *jobs, struct cli_job *job)
{
    struct cli_job **p = &jobs->list;

    while (*p && *p != job)
        p = &(*p)->next;
    if (*p)
        *p = job->next;
}

/* The child has exited with status: tell its end and let the record go. */
static void job_ended(struct cli_job *job, int status)
{
    struct cli_job_end end = {0};
    char *out, *err;

    read_lines(job, true);
    if (job->attached && job->on_end) {
        out = read_all(job->out_fd, false);
        err = read_all(job->err_fd, true);
        end.exit_code =
            WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        end.out = out ? out : "";
        end.err = err ? err : "";
        job->attached = false;
        job->on_end(job, &end, job->ud);
        free(out);
        free(err);
    }
    unlink_job(job->jobs, job);
    free_job(job);
}

void cli_jobs_tick(struct cli_jobs *jobs)
{
    struct cli_job *job = jobs->list, *next;
    int status = 0;
    pid_t got;

    while (job) {
        next = job->next; /* a callback may start jobs: they go before the head */
        if (job->attached)
            read_lines(job, false);
        trim_stderr(job);
        got = waitpid(job->pid, &status, WNOHANG);
        if (got == job->pid)
            job_ended(job, status);
        else if (got < 0 && errno == ECHILD)
            job_ended(job, 255 << 8); /* reaped elsewhere: its status is lost */
        job = next;
    }
}

void cli_jobs_free(struct cli_jobs *jobs)
{
    struct cli_job *job = jobs->list, *next;

    for (; job; job = next) {
        next = job->next;
        free_job(job);
    }
    jobs->list = NULL;
}

bool cli_jobs_attached(const struct cli_jobs *jobs)
{
    for (const struct cli_job *job = jobs->list; job; job = job->next)
        if (job->attached)
            return true;
    return false;
}
