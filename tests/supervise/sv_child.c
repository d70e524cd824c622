/*
 * sv_child.c -- the program the supervisor tests run under `lil watch`.
 *
 *   sv_child steps N LOG [--kill-at K1,K2,...] [--effect] [--poison K]
 *       A run "sv" in the store $LIL_DIR of N steps named "s" (identities
 *       s, s#2, ... s#N), or effects with --effect.  Each step's function
 *       appends "start K attempt A" to LOG when it starts and "done K" just
 *       before it returns: the steps count themselves.  --kill-at: on
 *       attempt A ($LIL_ATTEMPT), step number K_A kills the process with
 *       SIGKILL after logging its start (attempt 1 dies in K1, attempt 2 in
 *       K2, ...).  --poison K: step K kills the process on every attempt.
 *       An effect found uncertain on a restart makes the program exit 2.
 *       Exit 0 once the run is completed.
 *   sv_child fds OUT      write the descriptors it holds ("0 1 2"), exit 0
 *   sv_child env OUT      append "LIL_SUPERVISED=.. LIL_ATTEMPT=.." to OUT,
 *                         then exit 1 on attempts below 3, else 0
 *   sv_child trap OUT [--ignore]
 *       Log each SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to
 *       OUT ("SIGTERM") as it arrives, after "ready PID".  A stop signal
 *       (INT, TERM, HUP, QUIT) ends it with exit 3, unless --ignore.
 *       Otherwise it waits (at most 60 s, then exit 4).
 */
#include <dirent.h>
#include <fcntl.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void append(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0)
        return;
    if (write(fd, line, strlen(line)) < 0) {
        /* the test sees the line missing */
    }
    close(fd);
}

static int attempt(void)
{
    const char *a = getenv("LIL_ATTEMPT");

    return a ? atoi(a) : 0;
}

/* ---- steps --------------------------------------------------------------- */

struct steps {
    const char *log;
    int kill_at[16];
    int nkill;
    int poison;
    int k; /* the step running */
};

static int step_fn(lil_call *call, void *ud)
{
    struct steps *s = ud;
    char line[64];
    int a = attempt();

    snprintf(line, sizeof(line), "start %d attempt %d\n", s->k, a);
    append(s->log, line);
    if (s->k == s->poison || (a >= 1 && a <= s->nkill && s->kill_at[a - 1] == s->k))
        raise(SIGKILL);
    usleep(20000);
    snprintf(line, sizeof(line), "done %d\n", s->k);
    append(s->log, line);
    return lil_call_set_result(call, line, strlen(line)) == LIL_OK ? 0 : 1;
}

static void parse_list(struct steps *s, const char *text)
{
    const char *p = text;

    while (*p && s->nkill < 16) {
        s->kill_at[s->nkill++] = atoi(p);
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
}

static int run_steps(struct steps *s, int n, int effect)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_status rc = lil_store_open(NULL, NULL, &st);

    if (rc == LIL_OK)
        rc = lil_run_open(st, "sv", NULL, &run);
    for (s->k = 1; rc == LIL_OK && s->k <= n; s->k++) {
        lil_bytes out = {0};
        if (effect)
            rc = lil_effect(run, "s", &s->k, sizeof(s->k), step_fn, s, &out);
        else
            rc = lil_step(run, "s", step_fn, s, &out);
        lil_free(out.data);
    }
    if (rc == LIL_OK || rc == LIL_E_DONE)
        rc = lil_run_complete(run, "ok", 2);
    if (rc == LIL_E_DONE)
        rc = LIL_OK;
    if (rc != LIL_OK)
        fprintf(stderr, "sv_child: %s: %s\n", lil_status_name(rc), lil_errmsg());
    lil_run_close(run);
    lil_store_close(st);
    return rc == LIL_OK ? 0 : rc == LIL_E_UNCERTAIN ? 2 : 1;
}

static int cmd_steps(int argc, char **argv)
{
    struct steps s = {.log = argv[3]};
    int effect = 0;

    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--kill-at") == 0 && i + 1 < argc)
            parse_list(&s, argv[++i]);
        else if (strcmp(argv[i], "--poison") == 0 && i + 1 < argc)
            s.poison = atoi(argv[++i]);
        else if (strcmp(argv[i], "--effect") == 0)
            effect = 1;
    }
    return run_steps(&s, atoi(argv[2]), effect);
}

/* ---- descriptors, environment -------------------------------------------- */

static int cmd_fds(const char *out)
{
    char line[4096] = "";
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    size_t n = 0;

    if (!d)
        return 1;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
            continue;
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", n ? " " : "",
                              e->d_name);
        if (n >= sizeof(line))
            break;
    }
    closedir(d);
    append(out, line);
    append(out, "\n");
    return 0;
}

static int cmd_env(const char *out)
{
    char line[256];
    const char *sup = getenv("LIL_SUPERVISED");
    const char *att = getenv("LIL_ATTEMPT");

    snprintf(line, sizeof(line), "LIL_SUPERVISED=%s LIL_ATTEMPT=%s\n", sup ? sup : "-",
             att ? att : "-");
    append(out, line);
    return attempt() < 3 ? 1 : 0;
}

/* ---- signals ------------------------------------------------------------- */

static const char *trap_out;
static volatile sig_atomic_t stop_now;
static int ignore_stops;

static void on_signal(int sig)
{
    char line[32];

    snprintf(line, sizeof(line), "SIG%s\n", sigabbrev_np(sig));
    append(trap_out, line);
    if (sig != SIGUSR1 && sig != SIGUSR2 && !ignore_stops)
        stop_now = 1;
}

static int cmd_trap(int argc, char **argv)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    struct sigaction sa;
    char line[64];

    trap_out = argv[2];
    ignore_stops = argc > 3 && strcmp(argv[3], "--ignore") == 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
    snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
    append(trap_out, line);
    for (int i = 0; i < 6000 && !stop_now; i++)
        usleep(10000);
    return stop_now ? 3 : 4;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "steps") == 0)
        return cmd_steps(argc, argv);
    if (argc == 3 && strcmp(argv[1], "fds") == 0)
        return cmd_fds(argv[2]);
    if (argc == 3 && strcmp(argv[1], "env") == 0)
        return cmd_env(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "trap") == 0)
        return cmd_trap(argc, argv);
    fprintf(stderr, "usage: sv_child steps|fds|env|trap ...\n");
    return 64;
}
