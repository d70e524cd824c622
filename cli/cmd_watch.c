/*
 * cmd_watch.c -- `lil watch [OPTIONS] -- CMD [ARGS...]` and `lil watch CMD
 * [ARGS...] [OPTIONS]` (SCRIPT.py: run with the environment's python3):
 * restart a command that dies, with backoff and breakers, naming the run
 * and step of each death.
 *
 * A thin user of lil_supervise (lil.h, "Supervision"; docs/supervise.md):
 * this file parses the options into lil_supervise_options (watch_args.h
 * splits the words between lil watch and the command), chooses the exit
 * codes never restarted (126 and 127; lil's own 2 to 5 too when the
 * command is lil), passes the store directory (--dir, $LIL_DIR, else .lil:
 * read after each death, never created), and prints the supervisor's
 * events on stderr -- one line "lil watch: <message>" each, or with --json
 * one JSON object per line (stdout is the child's).  lil_supervise does
 * not return: the process ends with the child's status or a give-up
 * status (cli.h).  A malformed value exits 64 naming the option.
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
#include "watch_args.h"

#define MAX_SECONDS 86400.0 /* lil_supervise's limit for any time */
/* Events: one line each; times to 9 significant digits (ns of noise off). */
#define EVENT_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(9))

#define EXIT_CODES 256 /* exit codes 0..255 */

struct watch_flags {
    const char *restart, *max_restarts, *backoff, *max_backoff, *jitter, *healthy,
        *healthy_threshold, *crash_loop, *max_rapid_failures, *same_step,
        *no_restart_on;
};

/* What the event printer needs. */
struct watch_state {
    const struct cli_ctx *ctx;
    bool is_lil;           /* the command is lil itself */
    int last_code;         /* the last death's exit code, -1 for a signal */
    int codes[EXIT_CODES]; /* the no-restart codes passed to lil_supervise */
};

/* lil's statuses that a restart cannot change (docs/cli.md, "Exit status"):
 * what each says, for the report of a lil command that ends with one. */
static const char *const lil_status_text[] = {
    NULL,
    NULL,
    "uncertain: an effect's outcome is unknown (lil resolve)",
    "paused: the run waits for an approval (lil approve)",
    "waiting: the run is parked until its wake time (lil tick, lil resume)",
    "stopped: the run was stopped",
};

#define LIL_FIRST_KEPT 2 /* lil's uncertain .. stopped: 2 to 5 */
#define LIL_LAST_KEPT  5

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

/* --no-restart-on: "none", or codes and ranges "2-5,126,127"; each once. */
static int parse_no_restart(const struct cli_ctx *ctx, const char *text, int *codes,
                            size_t *n)
{
    bool seen[EXIT_CODES] = {false};
    const char *p = text;

    *n = 0;
    if (strcmp(text, "none") == 0)
        return CLI_EXIT_OK;
    for (;;) {
        char *end = NULL;
        long lo = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1, hi = lo;
        if (end && *end == '-' && end[1] >= '0' && end[1] <= '9')
            hi = strtol(end + 1, &end, 10);
        if (!end || (*end != ',' && *end) || lo < 0 || hi < lo || hi >= EXIT_CODES)
            return cli_usage(ctx,
                             "--no-restart-on: '%s' is not none or a list of exit "
                             "codes 0 to 255 and ranges (e.g. 2-5,126,127)",
                             text);
        for (long c = lo; c <= hi; c++)
            if (!seen[c]) {
                seen[c] = true;
                codes[(*n)++] = (int)c;
            }
        if (!*end)
            return CLI_EXIT_OK;
        p = end + 1;
    }
}

/* The letitloop names: --healthy-threshold is --healthy; --max-rapid-failures
 * N is the crash-loop breaker with N deaths in a row, each before the
 * child was healthy (lil_supervise's crash_loop_t_s 0). */
static int letitloop_names(const struct cli_ctx *ctx, const struct watch_flags *f,
                           lil_supervise_options *o)
{
    int rc = CLI_EXIT_OK;

    if (f->healthy && f->healthy_threshold)
        return cli_usage(ctx, "--healthy and --healthy-threshold are one option: give "
                              "one");
    if (f->crash_loop && f->max_rapid_failures)
        return cli_usage(ctx, "--crash-loop and --max-rapid-failures both set the "
                              "crash-loop breaker: give one");
    if (f->healthy_threshold)
        rc = parse_seconds(ctx, "healthy-threshold", f->healthy_threshold, false,
                           &o->healthy_s);
    if (rc == CLI_EXIT_OK && f->max_rapid_failures)
        rc = parse_count(ctx, "max-rapid-failures", f->max_rapid_failures, 1000000,
                         &o->crash_loop_k);
    return rc;
}

static int to_options(const struct cli_ctx *ctx, const struct watch_flags *f,
                      lil_supervise_options *o)
{
    int rc = letitloop_names(ctx, f, o);

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

/* ---- events -------------------------------------------------------------- */

static void set_str(json_t *o, const char *key, const char *v)
{
    if (v)
        cli_json_set(o, key, json_string(v));
}

static json_t *event_json(const lil_supervise_event *ev, const char *message)
{
    json_t *o = json_object();
    bool death = strcmp(ev->kind, "death") == 0 || strcmp(ev->kind, "done") == 0;
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
    set_str(o, "message", message);
    return o;
}

/* The exit event of a lil command that ended with one of lil's statuses
 * 2 to 5 (a no-restart code): say what the status means. */
static const char *exit_message(const struct watch_state *st,
                                const lil_supervise_event *ev, char *buf, size_t cap)
{
    int c = ev->exit_code;

    if (!st->is_lil || strcmp(ev->kind, "exit") != 0 || c != st->last_code ||
        c < LIL_FIRST_KEPT || c > LIL_LAST_KEPT || !strstr(ev->message, "no-restart"))
        return ev->message;
    snprintf(buf, cap, "exiting with %d (lil's status %d, %s; not restarted)", c, c,
             lil_status_text[c]);
    return buf;
}

static void on_event(void *ud, const lil_supervise_event *ev)
{
    struct watch_state *st = ud;
    char line[8192], text[512];
    const char *message;
    json_t *o;
    size_t n;

    if (strcmp(ev->kind, "death") == 0 || strcmp(ev->kind, "done") == 0)
        st->last_code = ev->signal ? -1 : ev->exit_code;
    message = exit_message(st, ev, text, sizeof(text));
    if (!st->ctx->json) {
        fprintf(stderr, "lil watch: %s\n", message);
        return;
    }
    /* One line in one write: the child writes to the same stderr. */
    o = event_json(ev, message);
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

/* Split argv, parse lil watch's options into *f.  CLI_EXIT_OK with the
 * command in *sp (free it), CLI_PARSE_HELP, or a failure status. */
static int parse_words(struct cli_ctx *ctx, int argc, char **argv,
                       struct watch_flags *f, struct watch_split *sp)
{
    const struct cli_flag flags[] = {
        {"restart", true, &f->restart, NULL},
        {"max-restarts", true, &f->max_restarts, NULL},
        {"backoff", true, &f->backoff, NULL},
        {"max-backoff", true, &f->max_backoff, NULL},
        {"jitter", true, &f->jitter, NULL},
        {"healthy", true, &f->healthy, NULL},
        {"healthy-threshold", true, &f->healthy_threshold, NULL},
        {"crash-loop", true, &f->crash_loop, NULL},
        {"max-rapid-failures", true, &f->max_rapid_failures, NULL},
        {"same-step", true, &f->same_step, NULL},
        {"no-restart-on", true, &f->no_restart_on, NULL},
        {NULL, false, NULL, NULL},
    };
    struct cli_args a = {flags, NULL, NULL};
    int rc = watch_split(ctx, flags, argc, argv, sp);

    if (rc != CLI_EXIT_OK)
        return rc;
    rc = cli_parse(ctx, sp->nopts, sp->opts, &a);
    if (rc == CLI_EXIT_OK && sp->ncmd == 0)
        rc = cli_usage(ctx, "missing COMMAND (lil watch [OPTIONS] -- CMD [ARGS...], or "
                            "lil watch CMD [ARGS...] [OPTIONS])");
    if (rc != CLI_EXIT_OK)
        watch_split_free(sp);
    return rc;
}

/* The exit codes never restarted: --no-restart-on's; else, for a lil
 * command, lil's 2 to 5 and 126, 127; else the library's (126, 127). */
static int no_restart_codes(const struct cli_ctx *ctx, const struct watch_flags *f,
                            struct watch_state *st, lil_supervise_options *o)
{
    size_t n = 0;

    if (f->no_restart_on) {
        if (parse_no_restart(ctx, f->no_restart_on, st->codes, &n) != CLI_EXIT_OK)
            return CLI_EXIT_USAGE;
    } else if (st->is_lil) {
        for (int c = LIL_FIRST_KEPT; c <= LIL_LAST_KEPT; c++)
            st->codes[n++] = c;
        st->codes[n++] = 126;
        st->codes[n++] = 127;
    } else {
        return CLI_EXIT_OK;
    }
    o->no_restart_codes = st->codes;
    o->no_restart_count = n;
    return CLI_EXIT_OK;
}

/* Run the command under lil_supervise, with a copy of the options `base`
   (the copy points into this frame); returns only when it cannot start. */
static int supervise(struct cli_ctx *ctx, char **words, int n,
                     const struct watch_flags *f, const lil_supervise_options *base)
{
    struct watch_state st = {ctx, false, 0, {0}};
    lil_supervise_options opts = *base;
    lil_supervise_options *o = &opts;
    struct watch_command cmd;
    lil_status s;
    int rc;

    if (!watch_command(words, n, &cmd)) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    st.is_lil = cmd.is_lil;
    rc = no_restart_codes(ctx, f, &st, o);
    if (rc != CLI_EXIT_OK) {
        watch_command_free(&cmd);
        return rc;
    }
    o->argv = cmd.argv;
    o->dir = cli_store_dir(ctx);
    o->on_event = on_event;
    o->ud = &st;
    (void)signal(SIGPIPE, SIG_IGN); /* a closed stderr must not end the supervisor */
    s = lil_supervise(o);           /* returns only when it could not start */
    watch_command_free(&cmd);
    cli_err(ctx, "%s", lil_errmsg());
    return s == LIL_E_INVAL ? CLI_EXIT_USAGE : CLI_EXIT_OSERR;
}

static int watch_run(struct cli_ctx *ctx, int argc, char **argv)
{
    struct watch_flags f = {0};
    struct watch_split sp;
    lil_supervise_options o = {.struct_size = sizeof(o)};
    int rc = parse_words(ctx, argc, argv, &f, &sp);

    if (rc == CLI_PARSE_HELP)
        return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = to_options(ctx, &f, &o);
    if (rc == CLI_EXIT_OK)
        rc = supervise(ctx, sp.cmd, sp.ncmd, &f, &o);
    watch_split_free(&sp);
    return rc;
}

const struct cli_verb cli_verb_watch = {
    "watch",
    "run a command and restart it when it dies (a supervisor)",
    "Usage: lil watch [OPTIONS] -- CMD [ARGS...]\n"
    "       lil watch [OPTIONS] CMD [ARGS...] [OPTIONS] [-- ARGS...]\n"
    "\n"
    "Run CMD and start it again when it dies, with a growing delay, until it\n"
    "exits 0 or a limit stops it.  The restarted program resumes from its\n"
    "journal.  After each death, the store (--dir, $LIL_DIR, else .lil; read\n"
    "only) says which run and step the program died in.  The program sees\n"
    "LIL_SUPERVISED=1 and LIL_ATTEMPT=<n>; it runs in a process group of its own\n"
    "and gets SIGTERM if lil watch dies.  docs/supervise.md has the details.\n"
    "\n"
    "The command line: after '--', every word is the command's, untouched.\n"
    "Without '--' before the command, lil watch's options may also follow it\n"
    "(argparse style): they are lil watch's wherever they stand, a '--' after\n"
    "the command ends them (the rest goes to the command), and any other word\n"
    "that starts with '-' is a usage error.  CMD ending in .py runs with the\n"
    "environment's python3 ($VIRTUAL_ENV/bin/python3, else the first python3 in\n"
    "PATH).\n"
    "\n"
    "Options:\n"
    "  --restart on-failure|on-crash|always\n"
    "                      on-failure (default): after a death by a signal or a\n"
    "                      non-zero exit; on-crash: after a signal only; always:\n"
    "                      after exit 0 too.  Never after SIGINT, or after lil\n"
    "                      watch itself was told to stop\n"
    "  --no-restart-on CODES|none\n"
    "                      exit codes that are never restarted: lil watch exits\n"
    "                      with the code at once (a list and ranges: 2-5,126,127).\n"
    "                      Default 126,127 (cannot be executed, not found); when\n"
    "                      CMD is lil itself, 2-5,126,127 (lil's uncertain,\n"
    "                      paused, waiting, stopped)\n"
    "  --max-restarts N|unlimited\n"
    "                      give up after N restarts (default 10): exit 80\n"
    "  --backoff S         delay before the first restart, doubling with each\n"
    "                      (default 1; 0: none)\n"
    "  --max-backoff S     the delay's ceiling (default 60)\n"
    "  --jitter F          take up to F of each delay off at random, 0 to 1\n"
    "                      (default 0.2; 0: none)\n"
    "  --healthy S         a program that ran S seconds starts the doubling over\n"
    "                      (default 30); --healthy-threshold S is the same\n"
    "  --crash-loop K/T    give up after K deaths in a row, each less than T\n"
    "                      seconds after its start: exit 81 (default: off)\n"
    "  --max-rapid-failures K\n"
    "                      --crash-loop K/T with T the --healthy time\n"
    "  --same-step K       give up after K deaths in a row at the same step of the\n"
    "                      same run (a poison input): exit 82 (default: off)\n"
    "  --dir DIR           the store the program writes (default $LIL_DIR, .lil)\n"
    "  --json              events as JSON lines on stderr\n"
    "\n"
    "Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT go to the program's process\n"
    "group and stop the supervision (a second one kills the group); SIGUSR1,\n"
    "SIGUSR2, SIGWINCH, SIGCONT and SIGTSTP are passed on.\n"
    "\n"
    "Exit status: the program's (128 + N for a death by signal N), at once for\n"
    "a no-restart code; 80 restart limit, 81 crash loop, 82 same step; 126 / 127\n"
    "when CMD cannot be executed / is not found; 71 when lil watch cannot fork;\n"
    "64 on a usage error.\n",
    watch_run,
};
