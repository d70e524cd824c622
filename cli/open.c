/*
 * open.c -- opening the store and runs for the verbs, the paths a server
 * verb needs (its spec root, this binary), and mapping library
 * errors to exit statuses.
 *
 * The library creates a missing store directory on open; an inspection
 * tool must not, so cli_store_open looks first and reports a missing
 * directory as an error.  A PostgreSQL store (--dir postgresql://...) is
 * opened as it is: the library creates nothing there (`lil db init`).  Runs are always
 * opened with LIL_OPEN_EXISTING: no verb of this file creates a run.
 *
 * Library errors become exit statuses in one place, cli_fail: a run held
 * by another process (LIL_E_LOCKED) is CLI_EXIT_LOCKED (75, EX_TEMPFAIL)
 * whatever the verb, with a message that names the run and, when it is
 * known, the holder's pid, and says to try again; anything else is
 * CLI_EXIT_FAIL.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_fail(const struct cli_ctx *ctx, lil_status s, const char *fmt, ...)
{
    char msg[4608]; /* a path, and the library's message */
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (s == LIL_E_ROLLBACK) {
        cli_err(ctx, "%s", msg);
        return CLI_EXIT_ROLLBACK;
    }
    if (s != LIL_E_LOCKED) {
        cli_err(ctx, "%s", msg);
        return CLI_EXIT_FAIL;
    }
    cli_err(ctx, "%s; try again when it is done", msg);
    return CLI_EXIT_LOCKED;
}

/* The pid holding run_id, as a read-only open (which takes no lock) sees
 * it: the pid, -1 when a process whose pid is not known holds the run, 0
 * when none does or the run cannot be opened read-only. */
static int holder_pid(lil_store *st, const char *run_id)
{
    lil_run_opts opts;
    lil_run_info info;
    lil_run *run = NULL;
    int pid = 0;

    memset(&opts, 0, sizeof(opts));
    opts.struct_size = sizeof(opts);
    opts.flags = LIL_OPEN_EXISTING | LIL_OPEN_READONLY;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (lil_run_open(st, run_id, &opts, &run) == LIL_OK &&
        lil_run_get_info(run, &info) == LIL_OK)
        pid = info.holder_pid;
    lil_run_close(run);
    return pid;
}

int cli_held(const struct cli_ctx *ctx, lil_store *st, const char *run_id)
{
    int pid = holder_pid(st, run_id);

    if (pid > 0)
        return cli_fail(ctx, LIL_E_LOCKED, "run %s is held by pid %d", run_id, pid);
    return cli_fail(ctx, LIL_E_LOCKED, "run %s is held by another process", run_id);
}

/* The library's rule (lil_store_location): --dir, else $LIL_DIR when set
 * and not empty, else ".lil".  Asked again only when --dir changes; the
 * answer lives until the process exits. */
static bool same(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

const char *cli_store_dir(const struct cli_ctx *ctx)
{
    static char *where, *given;
    static bool asked;
    char *loc = NULL, *copy = NULL;

    if (asked && same(given, ctx->dir))
        return where;
    if (lil_store_location(ctx->dir, &loc, NULL) != LIL_OK)
        return ctx->dir ? ctx->dir : ".lil"; /* out of memory */
    if (ctx->dir && !(copy = strdup(ctx->dir))) {
        lil_free(loc);
        return ctx->dir;
    }
    lil_free(where);
    free(given);
    where = loc;
    given = copy;
    asked = true;
    return where;
}

const char *cli_user(const char *dflt)
{
    static char *user;
    static bool asked;

    if (!asked) {
        (void)lil_setting("USER", &user);
        asked = true;
    }
    return user && *user ? user : dflt;
}

bool cli_store_is_url(const char *where)
{
    char *loc = NULL;
    int pg = 0;

    (void)lil_store_location(where, &loc, &pg);
    lil_free(loc);
    return pg != 0;
}

/* lil_store_open, with LIL_STORE_SHARED when --shared-store was given. */
static lil_status store_open(const struct cli_ctx *ctx, const char *dir,
                             lil_store **out)
{
    lil_store_opts so;

    memset(&so, 0, sizeof(so));
    so.struct_size = sizeof(so);
    so.flags = ctx->shared_store ? LIL_STORE_SHARED : 0u;
    return lil_store_open_with(NULL, dir, &so, out);
}

int cli_store_open(const struct cli_ctx *ctx, lil_store **out)
{
    const char *dir = cli_store_dir(ctx);
    struct stat sb;
    lil_status rc;

    *out = NULL;
    if (cli_store_is_url(dir)) { /* the library never creates a database */
        rc = store_open(ctx, dir, out);
        return rc == LIL_OK ? CLI_EXIT_OK
                            : cli_fail(ctx, rc, "cannot open store: %s", lil_errmsg());
    }
    if (stat(dir, &sb) != 0) {
        cli_err(ctx, "no store at '%s': %s (use --dir or LIL_DIR)", dir,
                strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_err(ctx, "store '%s' is not a directory", dir);
        return CLI_EXIT_FAIL;
    }
    rc = store_open(ctx, dir, out);
    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "cannot open store '%s': %s", dir, lil_errmsg());
    return CLI_EXIT_OK;
}

int cli_store_create(const struct cli_ctx *ctx, lil_store **out)
{
    const char *dir = cli_store_dir(ctx);
    lil_status rc = store_open(ctx, dir, out);

    if (rc != LIL_OK)
        return cli_fail(ctx, rc, "cannot open or create store '%s': %s", dir,
                        lil_errmsg());
    return CLI_EXIT_OK;
}

int cli_run_id_ok(const struct cli_ctx *ctx, const char *run_id)
{
    if (lil_run_id_check(run_id) == LIL_OK)
        return CLI_EXIT_OK;
    return cli_usage(ctx,
                     "invalid run id '%s' (1 to %d bytes, no '/' and no "
                     "control characters)",
                     run_id, LIL_RUN_ID_MAX);
}

/* Whether the run's journal file (docs/format.md: <store>/<run id>.lil) is
 * there. */
static bool journal_exists(lil_store *st, const char *run_id)
{
    char path[4096];

    if (cli_store_is_url(lil_store_path(st)))
        return false; /* PostgreSQL: a run exists whole or not at all */
    snprintf(path, sizeof(path), "%s/%s.lil", lil_store_path(st), run_id);
    return access(path, F_OK) == 0;
}

bool cli_stop_pending(lil_store *st, const char *run_id, char *out, size_t cap)
{
    lil_bytes b = {NULL, 0};
    json_t *req = NULL;
    const char *actor, *reason;

    if (lil_loop_stop_pending(st, run_id, &b) == LIL_OK)
        req = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    actor = json_string_value(json_object_get(req, "actor"));
    reason = json_string_value(json_object_get(req, "reason"));
    if (reason)
        snprintf(out, cap, "a stop is requested for it (by %s: %s)",
                 actor ? actor : "unknown", reason);
    json_decref(req);
    return reason != NULL;
}

/* "no run 'R' in store 'S'", and the stop request waiting for it if one
 * does (a stop asked before the run's first start). */
static void no_run(const struct cli_ctx *ctx, lil_store *st, const char *run_id)
{
    char stop[1400];

    if (cli_stop_pending(st, run_id, stop, sizeof(stop)))
        cli_err(ctx,
                "no run '%s' in store '%s' yet; %s, so its first `lil run` ends "
                "stopped before any step",
                run_id, lil_store_path(st), stop);
    else
        cli_err(ctx, "no run '%s' in store '%s'", run_id, lil_store_path(st));
}

int cli_run_open(const struct cli_ctx *ctx, lil_store *st, const char *run_id,
                 bool readonly, lil_run **out)
{
    lil_run_opts opts;
    lil_status rc;

    memset(&opts, 0, sizeof(opts));
    opts.struct_size = sizeof(opts);
    opts.flags = LIL_OPEN_EXISTING | (readonly ? LIL_OPEN_READONLY : 0u);
    rc = lil_run_open(st, run_id, &opts, out);
    if (rc == LIL_OK)
        return CLI_EXIT_OK;
    if (rc == LIL_E_NOTFOUND && !journal_exists(st, run_id)) {
        no_run(ctx, st, run_id);
        return CLI_EXIT_FAIL;
    }
    /* LIL_E_LOCKED names the holder ("run R is held by pid P"); a journal
     * with no complete record is no run yet, and the message says why */
    return cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
}

int cli_open_run_arg(struct cli_ctx *ctx, int argc, char **argv,
                     const struct cli_args *a, lil_store **st, lil_run **run,
                     bool *help)
{
    int rc = cli_parse(ctx, argc, argv, a);

    *help = rc == CLI_PARSE_HELP;
    if (rc != CLI_EXIT_OK)
        return *help ? CLI_EXIT_OK : rc;
    rc = cli_run_id_ok(ctx, a->pos[0]);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_open(ctx, st);
    if (rc == CLI_EXIT_OK && run)
        rc = cli_run_open(ctx, *st, a->pos[0], true, run);
    return rc;
}

int cli_on_run_arg(struct cli_ctx *ctx, int argc, char **argv,
                   const struct cli_flag *flags, cli_run_verb_fn fn, void *ud)
{
    static const char *const names[] = {"RUN", NULL};
    const char *pos[1] = {NULL};
    struct cli_args a = {flags, names, pos};
    lil_store *st = NULL;
    bool help = false;
    int rc = cli_open_run_arg(ctx, argc, argv, &a, &st, NULL, &help);

    if (rc == CLI_EXIT_OK && !help)
        rc = fn(ctx, st, pos[0], ud);
    lil_store_close(st);
    return rc;
}

int cli_run_info(const struct cli_ctx *ctx, lil_run *run, lil_run_info *info)
{
    lil_status rc;

    memset(info, 0, sizeof(*info));
    info->struct_size = sizeof(*info);
    rc = lil_run_get_info(run, info);
    if (rc == LIL_OK)
        return CLI_EXIT_OK;
    return cli_fail(ctx, rc, "%s", lil_run_errmsg(run));
}

const char *cli_sync_name(lil_sync sync)
{
    const char *name = lil_sync_name(sync);

    return name ? name : lil_sync_name(LIL_SYNC_DEFAULT);
}

int cli_server_paths(const struct cli_ctx *ctx, const char *spec_root, char *root,
                     char *exe)
{
    ssize_t n;

    if (!realpath(spec_root ? spec_root : ".", root)) {
        cli_err(ctx, "--spec-root %s: not a directory that can be read",
                spec_root ? spec_root : ".");
        return -1;
    }
    n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
    if (n <= 0) {
        cli_err(ctx, "cannot tell where the lil binary is (/proc/self/exe)");
        return -1;
    }
    exe[n] = '\0';
    return 0;
}
