/*
 * cmd_watch.c -- `lil watch [OPTIONS] -- CMD [ARGS...]` (and `lil watch
 * SCRIPT.py [ARGS...]`, run with python3): restart a command that dies,
 * with backoff and breakers, naming the run and step of each death.
 *
 * A thin user of lil_supervise (lil.h, "Supervision"; docs/supervise.md):
 * this file only parses the flags into lil_supervise_options, passes the
 * store directory (--dir, $LIL_DIR, else .lil: read after each death, never
 * created), and prints the supervisor's events on stderr -- one line
 * "lil watch: <message>" each, or with --json one JSON object per line
 * (stdout is the child's).  lil_supervise does not return: the process
 * ends with the child's status or a give-up status (cli.h).
 *
 * Parsing: the words up to the first one that is not a flag (or up to
 * "--") are lil watch's flags; everything after is the command, passed
 * untouched.  A malformed value exits 64 naming the flag.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

#define MAX_SECONDS 86400.0 /* lil_supervise's limit for any time */
/* Events: one line each; times to 9 significant digits (ns of noise off). */
#define EVENT_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(9))

struct watch_flags {
    const char *restart, *max_restarts, *backoff, *max_backoff, *jitter, *healthy,
        *crash_loop, *same_step;
};

/* ---- values -------------------------------------------------------------- */

/* A number of seconds in [0, MAX_SECONDS] (above 0 unless zero_ok). */
static int parse_seconds(const struct cli_ctx *ctx, const char *flag, const char *text,
                         bool zero_ok, double *out)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < 0 || v > MAX_SECONDS ||
        (!zero_ok && v == 0))
        return cli_usage(ctx, "--%s: '%s' is not a number of seconds (%s to %.0f)",
                         flag, text, zero_ok ? "0" : "above 0", MAX_SECONDS);
    *out = v;
    return CLI_EXIT_OK;
}

/* A whole number in [1, max]. */
static int parse_count(const struct cli_ctx *ctx, const char *flag, const char *text,
                       unsigned long max, unsigned *out)
{
    char *end = NULL;
    unsigned long v;

    errno = 0;
    v = text[0] >= '0' && text[0] <= '9' ? strtoul(text, &end, 10) : 0;
    if (errno || !end || end == text || *end || v < 1 || v > max)
        return cli_usage(ctx, "--%s: '%s' is not a whole number from 1 to %lu", flag,
                         text, max);
    *out = (unsigned)v;
    return CLI_EXIT_OK;
}

static int parse_restart(const struct cli_ctx *ctx, const char *text,
                         lil_restart_policy *out)
{
    if (strcmp(text, "on-failure") == 0)
        *out = LIL_RESTART_ON_FAILURE;
    else if (strcmp(text, "on-crash") == 0)
        *out = LIL_RESTART_ON_CRASH;
    else if (strcmp(text, "always") == 0)
        *out = LIL_RESTART_ALWAYS;
    else
        return cli_usage(ctx, "--restart: '%s' is not on-failure, on-crash or always",
                         text);
    return CLI_EXIT_OK;
}

/* --crash-loop K/T: K deaths in a row, each less than T seconds after its
 * start. */
static int parse_crash_loop(const struct cli_ctx *ctx, const char *text,
                            lil_supervise_options *o)
{
    const char *slash = strchr(text, '/');
    char k[32];

    if (!slash || (size_t)(slash - text) >= sizeof(k) || slash == text)
        return cli_usage(ctx,
                         "--crash-loop: '%s' is not K/T (K deaths in a row, each less "
                         "than T seconds after its start; e.g. 5/60)",
                         text);
    memcpy(k, text, (size_t)(slash - text));
    k[slash - text] = '\0';
    if (parse_count(ctx, "crash-loop", k, 1000000, &o->crash_loop_k) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    return parse_seconds(ctx, "crash-loop", slash + 1, false, &o->crash_loop_t_s);
}

static int parse_max_restarts(const struct cli_ctx *ctx, const char *text,
                              unsigned *out)
{
    if (strcmp(text, "unlimited") == 0) {
        *out = LIL_SUPERVISE_UNLIMITED;
        return CLI_EXIT_OK;
    }
    return parse_count(ctx, "max-restarts", text, 1000000000, out);
}

/* 0 means none (the API's 0 is the default). */
static int parse_zero_none(const struct cli_ctx *ctx, const char *flag,
                           const char *text, double max, double *out)
{
    int rc = parse_seconds(ctx, flag, text, true, out);

    if (rc == CLI_EXIT_OK && *out > max)
        return cli_usage(ctx, "--%s: '%s' is above %g", flag, text, max);
    if (rc == CLI_EXIT_OK && *out == 0)
        *out = LIL_SUPERVISE_NONE;
    return rc;
}

static int to_options(const struct cli_ctx *ctx, const struct watch_flags *f,
                      lil_supervise_options *o)
{
    int rc = CLI_EXIT_OK;

    if (f->restart)
        rc = parse_restart(ctx, f->restart, &o->restart);
    if (rc == CLI_EXIT_OK && f->max_restarts)
        rc = parse_max_restarts(ctx, f->max_restarts, &o->max_restarts);
    if (rc == CLI_EXIT_OK && f->backoff)
        rc = parse_zero_none(ctx, "backoff", f->backoff, MAX_SECONDS, &o->backoff_s);
    if (rc == CLI_EXIT_OK && f->max_backoff)
        rc =
            parse_seconds(ctx, "max-backoff", f->max_backoff, false, &o->max_backoff_s);
    if (rc == CLI_EXIT_OK && f->jitter)
        rc = parse_zero_none(ctx, "jitter", f->jitter, 1.0, &o->jitter);
    if (rc == CLI_EXIT_OK && f->healthy)
        rc = parse_seconds(ctx, "healthy", f->healthy, false, &o->healthy_s);
    if (rc == CLI_EXIT_OK && f->crash_loop)
        rc = parse_crash_loop(ctx, f->crash_loop, o);
    if (rc == CLI_EXIT_OK && f->same_step)
        rc = parse_count(ctx, "same-step", f->same_step, 1000000, &o->same_step);
    return rc;
}

/* ---- the command line ---------------------------------------------------- */

static bool flag_takes_value(const struct cli_flag *flags, const char *word)
{
    const char *name = word + 2;

    if (word[0] != '-' || word[1] != '-' || strchr(name, '='))
        return false;
    if (strcmp(name, "dir") == 0)
        return true;
    for (const struct cli_flag *f = flags; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f->has_value;
    return false;
}

/* Where the command starts in argv (argc when there is none); *nflags: the
 * words before it that are lil watch's flags ("--" excluded). */
static int command_start(const struct cli_flag *flags, int argc, char **argv,
                         int *nflags)
{
    int i = 0;

    for (; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0) {
            *nflags = i;
            return i + 1;
        }
        if (w[0] != '-' || w[1] == '\0')
            break;
        if (flag_takes_value(flags, w) && i + 1 < argc)
            i++;
    }
    *nflags = i;
    return i;
}

/* The command to run: argv as given, or python3 first for a .py script. */
static const char **command_argv(char **cmd, int n)
{
    size_t len = strlen(cmd[0]);
    bool py = len > 3 && strcmp(cmd[0] + len - 3, ".py") == 0;
    const char **v = calloc((size_t)n + 2, sizeof(*v));
    int k = 0;

    if (!v)
        return NULL;
    if (py)
        v[k++] = "python3";
    for (int i = 0; i < n; i++)
        v[k++] = cmd[i];
    return v;
}

/* ---- events -------------------------------------------------------------- */

static void set_str(json_t *o, const char *key, const char *v)
{
    if (v)
        cli_json_set(o, key, json_string(v));
}

static json_t *event_json(const lil_supervise_event *ev)
{
    json_t *o = json_object();
    bool death = strcmp(ev->kind, "death") == 0;
    char name[32];

    if (!o)
        return NULL;
    set_str(o, "event", ev->kind);
    cli_json_set(o, "time_ms", json_integer(ev->time_ms));
    cli_json_set(o, "attempt", json_integer(ev->attempt));
    if (ev->pid > 0)
        cli_json_set(o, "pid", json_integer(ev->pid));
    if (death && ev->signal) {
        const char *abbrev = sigabbrev_np(ev->signal);
        if (abbrev)
            snprintf(name, sizeof(name), "SIG%s", abbrev);
        else
            snprintf(name, sizeof(name), "%d", ev->signal);
        set_str(o, "signal", name);
        cli_json_set(o, "signo", json_integer(ev->signal));
    } else if (death || strcmp(ev->kind, "giveup") == 0 ||
               strcmp(ev->kind, "exit") == 0) {
        cli_json_set(o, "exit_code", json_integer(ev->exit_code));
    }
    if (death) {
        cli_json_set(o, "uptime_s", json_real(ev->uptime_s));
        set_str(o, "run", ev->run_id);
        set_str(o, "step", ev->step);
        if (ev->step)
            cli_json_set(o, "step_started", json_boolean(ev->step_started));
    }
    if (strcmp(ev->kind, "backoff") == 0)
        cli_json_set(o, "delay_s", json_real(ev->delay_s));
    cli_json_set(o, "restarts", json_integer(ev->restarts));
    set_str(o, "message", ev->message);
    return o;
}

static void on_event(void *ud, const lil_supervise_event *ev)
{
    const struct cli_ctx *ctx = ud;
    char line[8192];
    json_t *o;
    size_t n;

    if (!ctx->json) {
        fprintf(stderr, "lil watch: %s\n", ev->message);
        return;
    }
    /* One line in one write: the child writes to the same stderr. */
    o = event_json(ev);
    n = o ? json_dumpb(o, line, sizeof(line) - 1, EVENT_JSON_FLAGS) : 0;
    if (n > 0 && n < sizeof(line) - 1) {
        line[n++] = '\n';
        fwrite(line, 1, n, stderr);
    } else if (o) {
        json_dumpf(o, stderr, EVENT_JSON_FLAGS);
        fputc('\n', stderr);
    }
    json_decref(o);
}

/* ---- the verb ------------------------------------------------------------ */

static int watch_run(struct cli_ctx *ctx, int argc, char **argv)
{
    struct watch_flags f = {0};
    const struct cli_flag flags[] = {
        {"restart", true, &f.restart, NULL},
        {"max-restarts", true, &f.max_restarts, NULL},
        {"backoff", true, &f.backoff, NULL},
        {"max-backoff", true, &f.max_backoff, NULL},
        {"jitter", true, &f.jitter, NULL},
        {"healthy", true, &f.healthy, NULL},
        {"crash-loop", true, &f.crash_loop, NULL},
        {"same-step", true, &f.same_step, NULL},
        {NULL, false, NULL, NULL},
    };
    struct cli_args a = {flags, NULL, NULL};
    lil_supervise_options o = {.struct_size = sizeof(o)};
    int nflags, start = command_start(flags, argc, argv, &nflags);
    int rc = cli_parse(ctx, nflags, argv, &a);
    const char **cmd;
    lil_status s;

    if (rc == CLI_PARSE_HELP)
        return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    if (start >= argc)
        return cli_usage(ctx, "missing COMMAND (lil watch [OPTIONS] -- CMD [ARGS...])");
    rc = to_options(ctx, &f, &o);
    if (rc != CLI_EXIT_OK)
        return rc;
    cmd = command_argv(argv + start, argc - start);
    if (!cmd) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    o.argv = cmd;
    o.dir = cli_store_dir(ctx);
    o.on_event = on_event;
    o.ud = ctx;
    (void)signal(SIGPIPE, SIG_IGN); /* a closed stderr must not end the supervisor */
    s = lil_supervise(&o);          /* returns only when it could not start */
    free(cmd);
    cli_err(ctx, "%s", lil_errmsg());
    return s == LIL_E_INVAL ? CLI_EXIT_USAGE : CLI_EXIT_OSERR;
}

const struct cli_verb cli_verb_watch = {
    "watch",
    "run a command and restart it when it dies (a supervisor)",
    "Usage: lil watch [OPTIONS] -- CMD [ARGS...]\n"
    "       lil watch [OPTIONS] SCRIPT.py [ARGS...]    (run with python3)\n"
    "\n"
    "Run CMD and start it again when it dies, with a growing delay, until it\n"
    "exits 0 or a limit stops it.  The restarted program resumes from its\n"
    "journal.  After each death, the store (--dir, $LIL_DIR, else .lil; read\n"
    "only) says which run and step the program died in.  The program sees\n"
    "LIL_SUPERVISED=1 and LIL_ATTEMPT=<n>; it runs in a process group of its own\n"
    "and gets SIGTERM if lil watch dies.  docs/supervise.md has the details.\n"
    "\n"
    "Options:\n"
    "  --restart on-failure|on-crash|always\n"
    "                      on-failure (default): after a death by a signal or a\n"
    "                      non-zero exit; on-crash: after a signal only; always:\n"
    "                      after exit 0 too.  Never after SIGINT, or after lil\n"
    "                      watch itself was told to stop\n"
    "  --max-restarts N|unlimited\n"
    "                      give up after N restarts (default 10): exit 80\n"
    "  --backoff S         delay before the first restart, doubling with each\n"
    "                      (default 1; 0: none)\n"
    "  --max-backoff S     the delay's ceiling (default 60)\n"
    "  --jitter F          take up to F of each delay off at random, 0 to 1\n"
    "                      (default 0.2; 0: none)\n"
    "  --healthy S         a program that ran S seconds starts the doubling over\n"
    "                      (default 30)\n"
    "  --crash-loop K/T    give up after K deaths in a row, each less than T\n"
    "                      seconds after its start: exit 81 (default: off)\n"
    "  --same-step K       give up after K deaths in a row at the same step of the\n"
    "                      same run (a poison input): exit 82 (default: off)\n"
    "  --dir DIR           the store the program writes (default $LIL_DIR, .lil)\n"
    "  --json              events as JSON lines on stderr\n"
    "\n"
    "Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT go to the program's process\n"
    "group and stop the supervision (a second one kills the group); SIGUSR1,\n"
    "SIGUSR2, SIGWINCH, SIGCONT and SIGTSTP are passed on.\n"
    "\n"
    "Exit status: the program's (128 + N for a death by signal N); 80 restart\n"
    "limit, 81 crash loop, 82 same step; 126 / 127 when CMD cannot be executed /\n"
    "is not found; 71 when lil watch cannot fork; 64 on a usage error.\n",
    watch_run,
};
