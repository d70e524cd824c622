/*
 * cmd_schedule.c -- `lil schedule add|ls|rm|run|install`: the schedules of
 * cron loops kept in the store, which `lil tick` fires (docs/loops.md,
 * "Schedules"; sched_cli.c fires them).
 *
 *   add SPEC [--catch-up all|latest|none] [--inputs FILE] [--id ID]
 *       [--replace] [--now TIME]
 *            a valid spec with schedule.mode cron becomes schedule ID (the
 *            loop's id by default), bound to the spec's path, digest and
 *            the directory add runs in; catch-up: the flag, else the spec's
 *            schedule.catch_up, else latest.  Slots after now fire.
 *   ls       one line per schedule: id, cron, catch-up, last slot fired,
 *            next slot, spec (--json: an array of the documents).
 *   rm SPEC|ID  removes the schedule (its runs stay).
 *   run      a long-lived process instead of cron: `lil tick` now, then
 *            at each next slot (at least once a minute, for parked runs)
 *            until SIGTERM or SIGINT, which ends it cleanly (exit 0).
 *   install [--write] prints a crontab line and a systemd timer and service
 *            that run `lil tick --dir DIR` every minute; --write writes
 *            the two units into --unit-dir (else ~/.config/systemd/user of
 *            the user's home), atomically, refusing to replace a different
 *            file there.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sched_cli.h"
#include "spec_cli.h"

struct sched_opts {
    const char *catch_up, *inputs, *id, *now, *unit_dir;
    bool catch_up_set, inputs_set, id_set, replace, now_set, write, unit_dir_set;
};

static int now_or_clock(const struct cli_ctx *ctx, const struct sched_opts *o,
                        int64_t *out)
{
    *out = cli_now_ns() / 1000000;
    if (o->now_set && !cli_sched_parse_now(o->now, out))
        return cli_usage(ctx,
                         "--now '%s' is not a time: give 2026-12-02T14:05Z or "
                         "epoch ms",
                         o->now);
    return CLI_EXIT_OK;
}

/* ---- add ------------------------------------------------------------------------ */

/* The spec's schedule object from its normalized JSON (a new reference). */
static json_t *spec_schedule(const lil_spec *spec)
{
    lil_bytes b = {NULL, 0};
    json_t *doc = NULL, *s = NULL;

    if (lil_spec_json(spec, &b) == LIL_OK && (doc = json_loadb(b.data, b.len, 0, NULL)))
        s = json_incref(json_object_get(doc, "schedule"));
    json_decref(doc);
    lil_free(b.data);
    return s;
}

static json_t *read_inputs(const struct cli_ctx *ctx, const struct sched_opts *o,
                           int *ex)
{
    json_error_t jerr;
    json_t *v;

    if (!o->inputs_set)
        return json_null();
    v = json_load_file(o->inputs, 0, &jerr);
    if (!v || !json_is_object(v)) {
        *ex = CLI_EXIT_FAIL;
        cli_err(ctx, "--inputs %s: %s", o->inputs, v ? "not a JSON object" : jerr.text);
        json_decref(v);
        return NULL;
    }
    return v;
}

static json_t *make_doc(const struct cli_ctx *ctx, const lil_spec *spec,
                        const char *path, const struct sched_opts *o, int64_t now_ms,
                        int *ex)
{
    char real[PATH_MAX], cwd[PATH_MAX], sha[65];
    json_t *sch = spec_schedule(spec), *inputs;
    const char *cron = json_string_value(json_object_get(sch, "cron"));
    const char *mode = json_string_value(json_object_get(sch, "mode"));
    const char *cu = o->catch_up_set
                         ? o->catch_up
                         : json_string_value(json_object_get(sch, "catch_up"));
    json_t *doc = NULL;

    *ex = CLI_EXIT_FAIL;
    if (!mode || strcmp(mode, "cron") != 0 || !cron)
        cli_err(ctx,
                "%s has schedule.mode %s: nothing to fire (give it schedule: "
                "{mode: cron, cron: \"...\"})",
                path, mode ? mode : "manual");
    else if (!realpath(path, real) || !getcwd(cwd, sizeof(cwd)))
        cli_err(ctx, "%s: %s", path, strerror(errno));
    else if (lil_spec_digest(spec, sha) != LIL_OK)
        cli_err(ctx, "%s: %s", path, lil_errmsg());
    else if ((inputs = read_inputs(ctx, o, ex)) != NULL) {
        doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:I, s:s}", "id",
                        o->id_set ? o->id : lil_spec_id(spec), "spec", real, "cwd", cwd,
                        "cron", cron, "catch_up", cu ? cu : "latest", "inputs", inputs,
                        "spec_sha256", sha, "added_ms", (json_int_t)now_ms, "added_by",
                        cli_user("unknown"));
        *ex = doc ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    json_decref(sch);
    return doc;
}

static int add(const struct cli_ctx *ctx, lil_store *st, const char *path,
               const struct sched_opts *o)
{
    lil_spec *spec = NULL;
    json_t *doc = NULL;
    char msg[1024], *text = NULL, next_text[40] = "never";
    int64_t now_ms, next = 0;
    size_t n = 0;
    int ex = now_or_clock(ctx, o, &now_ms);
    const char *id;

    if (ex != CLI_EXIT_OK)
        return ex;
    if (o->catch_up_set && strcmp(o->catch_up, "all") != 0 &&
        strcmp(o->catch_up, "latest") != 0 && strcmp(o->catch_up, "none") != 0)
        return cli_usage(ctx, "--catch-up '%s': give all, latest or none", o->catch_up);
    if (cli_spec_load(NULL, path, &spec, msg, sizeof(msg)) != LIL_OK) {
        cli_err(ctx, "%s", msg);
        return CLI_EXIT_FAIL;
    }
    if (!lil_spec_ok(spec)) {
        cli_err(ctx, "%s has errors (`lil validate %s`)", path, path);
        lil_spec_free(spec);
        return CLI_EXIT_FAIL;
    }
    doc = make_doc(ctx, spec, path, o, now_ms, &ex);
    id = json_string_value(json_object_get(doc, "id"));
    if (ex == CLI_EXIT_OK && !(text = json_dumps(doc, JSON_COMPACT)))
        ex = CLI_EXIT_FAIL;
    if (ex == CLI_EXIT_OK && lil_schedule_put(st, id, text, o->replace) != LIL_OK)
        ex = cli_fail(ctx, LIL_E_INVAL, "schedule %s: %s%s", id, lil_store_errmsg(st),
                      o->replace ? "" : " (--replace to bind it anew)");
    if (ex == CLI_EXIT_OK) {
        if (lil_schedule_due(json_string_value(json_object_get(doc, "cron")), "all",
                             now_ms, now_ms + INT64_C(400) * 86400000, &next, 1,
                             &n) == LIL_OK &&
            n)
            cli_sched_slot_text(next, next_text, sizeof(next_text));
        if (ctx->json)
            ex = cli_json_print(ctx, json_incref(doc), false);
        else
            printf("schedule '%s' %s: %s, cron %s (UTC), catch-up %s; next slot %s\n",
                   id, o->replace ? "written" : "added",
                   json_string_value(json_object_get(doc, "spec")),
                   json_string_value(json_object_get(doc, "cron")),
                   json_string_value(json_object_get(doc, "catch_up")), next_text);
    }
    free(text);
    json_decref(doc);
    lil_spec_free(spec);
    return ex;
}

/* ---- ls, rm ---------------------------------------------------------------------- */

struct ls {
    const struct cli_ctx *ctx;
    lil_store *st;
    int64_t now_ms;
    json_t *all;
    int ex;
};

static void ls_line(const struct ls *l, json_t *doc, int64_t mark)
{
    char last[40] = "never", next_text[40] = "never";
    int64_t next = 0;
    size_t n = 0;

    if (mark)
        cli_sched_slot_text(mark, last, sizeof(last));
    if (lil_schedule_due(json_string_value(json_object_get(doc, "cron")), "all",
                         l->now_ms, l->now_ms + INT64_C(400) * 86400000, &next, 1,
                         &n) == LIL_OK &&
        n)
        cli_sched_slot_text(next, next_text, sizeof(next_text));
    if (l->all) {
        cli_json_set(doc, "last_fired", mark ? json_string(last) : json_null());
        cli_json_set(doc, "next", n ? json_string(next_text) : json_null());
        json_array_append(l->all, doc);
        return;
    }
    printf("%-24s %-16s %-6s last %-17s next %-17s %s\n",
           json_string_value(json_object_get(doc, "id")),
           json_string_value(json_object_get(doc, "cron")),
           json_string_value(json_object_get(doc, "catch_up")), last, next_text,
           json_string_value(json_object_get(doc, "spec")));
}

static int ls_one(void *ud, const char *id)
{
    struct ls *l = ud;
    lil_bytes b = {NULL, 0};
    int64_t mark = 0;
    json_t *doc = NULL;

    if (lil_schedule_get(l->st, id, &b, &mark) != LIL_OK ||
        !(doc = json_loadb(b.data, b.len, 0, NULL))) {
        cli_err(l->ctx, "schedule '%s': %s", id,
                b.data ? "not JSON" : lil_store_errmsg(l->st));
        l->ex = CLI_EXIT_FAIL;
    } else {
        ls_line(l, doc, mark);
    }
    json_decref(doc);
    lil_free(b.data);
    return 0;
}

static int ls(const struct cli_ctx *ctx, lil_store *st, const struct sched_opts *o)
{
    struct ls l = {ctx, st, 0, NULL, CLI_EXIT_OK};
    int ex = now_or_clock(ctx, o, &l.now_ms);

    if (ex != CLI_EXIT_OK)
        return ex;
    if (ctx->json && !(l.all = json_array()))
        return CLI_EXIT_FAIL;
    if (lil_schedule_foreach(st, ls_one, &l) != LIL_OK)
        l.ex = cli_fail(ctx, LIL_E_IO, "%s", lil_store_errmsg(st));
    if (l.all && l.ex == CLI_EXIT_OK)
        return cli_json_print(ctx, l.all, false);
    json_decref(l.all);
    return l.ex;
}

/* SPEC|ID: an id of a schedule, else a spec file whose loop id is one. */
static int rm(const struct cli_ctx *ctx, lil_store *st, const char *what)
{
    lil_spec *spec = NULL;
    char msg[1024];
    lil_bytes b = {NULL, 0};
    int64_t mark;
    const char *id = what;
    lil_status rc = lil_run_id_check(what) == LIL_OK
                        ? lil_schedule_get(st, what, &b, &mark)
                        : LIL_E_NOTFOUND;

    lil_free(b.data);
    if (rc == LIL_E_NOTFOUND && access(what, F_OK) == 0 &&
        cli_spec_load(NULL, what, &spec, msg, sizeof(msg)) == LIL_OK &&
        lil_spec_id(spec))
        id = lil_spec_id(spec);
    rc = lil_schedule_remove(st, id);
    if (rc == LIL_OK && !ctx->json)
        printf("schedule '%s' removed (its runs stay: `lil ls`)\n", id);
    else if (rc == LIL_OK)
        rc = cli_json_print(ctx, json_pack("{s:s, s:b}", "id", id, "removed", 1), false)
                 ? LIL_E_NOMEM
                 : LIL_OK;
    lil_spec_free(spec);
    return rc == LIL_OK ? CLI_EXIT_OK : cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
}

/* ---- run ------------------------------------------------------------------------- */

/* Sleep until at_ms (at most a minute from now), waking for a signal. */
static void sleep_until(int64_t at_ms)
{
    int64_t now = cli_now_ns() / 1000000, end = now + 60000;

    if (at_ms && at_ms < end)
        end = at_ms;
    while (!cli_tick_stopping() && (now = cli_now_ns() / 1000000) < end) {
        int64_t left = end - now > 250 ? 250 : end - now;
        struct timespec ts = {0, (long)left * 1000000L};

        nanosleep(&ts, NULL);
    }
}

static int run(const struct cli_ctx *ctx, lil_store *st, const struct sched_opts *o)
{
    bool ok = true;

    (void)o;
    if (!ctx->json)
        printf("lil schedule run: firing the schedules of %s until SIGTERM\n",
               cli_store_dir(ctx));
    (void)fflush(stdout); /* a failed write shows at exit (main.c) */
    cli_catch_signals(cli_tick_signal);
    while (!cli_tick_stopping()) {
        int64_t now_ms = cli_now_ns() / 1000000;

        ok = cli_tick_pass(ctx, st, now_ms, NULL, false) && ok;
        (void)fflush(stdout);
        sleep_until(cli_sched_next(st, now_ms));
    }
    cli_catch_signals(NULL);
    if (!ctx->json)
        printf("lil schedule run: stopped\n");
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- install --------------------------------------------------------------------- */

static const char service_fmt[] =
    "[Unit]\n"
    "Description=lil tick: fire the schedules and wake the parked runs of %s\n"
    "\n"
    "[Service]\n"
    "Type=oneshot\n"
    "WorkingDirectory=%s\n"
    "ExecStart=%s tick --dir %s\n";

static const char timer_text[] = "[Unit]\n"
                                 "Description=lil tick every minute\n"
                                 "\n"
                                 "[Timer]\n"
                                 "OnCalendar=*-*-* *:*:00\n"
                                 "AccuracySec=1s\n"
                                 "Persistent=true\n"
                                 "\n"
                                 "[Install]\n"
                                 "WantedBy=timers.target\n";

/* Write text at path atomically; an existing file with other bytes is
 * refused (1), the same bytes are left alone. */
static int write_unit(const struct cli_ctx *ctx, const char *path, const char *text)
{
    char tmp[PATH_MAX + 64], have[8192];
    FILE *f = fopen(path, "re");
    size_t n;
    int fd;

    if (f) {
        n = fread(have, 1, sizeof(have) - 1, f);
        (void)fclose(f); /* read only */
        have[n] = '\0';
        if (strcmp(have, text) == 0)
            return CLI_EXIT_OK;
        cli_err(ctx, "%s exists with other contents: not replaced (remove it first)",
                path);
        return CLI_EXIT_FAIL;
    }
    fd = cli_create_temp(path, 0644, tmp, sizeof(tmp));
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
        fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
        cli_err(ctx, "writing %s: %s", path, strerror(errno));
        if (fd >= 0)
            unlink(tmp);
        return CLI_EXIT_FAIL;
    }
    printf("wrote %s\n", path);
    return CLI_EXIT_OK;
}

/* --unit-dir, else ~/.config/systemd/user of the user's home directory
 * (the password database's: the environment is the library's to read). */
static int unit_dir(const struct cli_ctx *ctx, const struct sched_opts *o, char *out,
                    size_t cap)
{
    const struct passwd *pw = getpwuid(geteuid());
    char base[PATH_MAX - 32];

    if (o->unit_dir_set) {
        snprintf(out, cap, "%s", o->unit_dir);
    } else if (pw && pw->pw_dir && pw->pw_dir[0] == '/') {
        snprintf(base, sizeof(base), "%s/.config", pw->pw_dir);
        mkdir(base, 0700);
        snprintf(out, cap, "%s/systemd", base);
        mkdir(out, 0755);
        snprintf(out, cap, "%s/systemd/user", base);
    } else {
        cli_err(ctx, "no home directory: give --unit-dir");
        return CLI_EXIT_FAIL;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        cli_err(ctx, "mkdir %s: %s", out, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Whether s is one word to a shell as it is (shlex's safe characters). */
static bool shell_safe(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_@%+=:,./-", *s))
            return false;
    return true;
}

/* The store for a crontab line: one shell word (a URI's '?' and '&'
 * quoted), '%' escaped (cron reads it as a newline). */
static void cron_word(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    bool quote = !shell_safe(s);

    if (quote && n + 1 < cap)
        out[n++] = '\'';
    for (; *s && n + 6 < cap; s++) {
        if (*s == '\'' && quote) {
            memcpy(out + n, "'\"'\"'", 5);
            n += 5;
            continue;
        }
        if (*s == '%')
            out[n++] = '\\';
        out[n++] = *s;
    }
    if (quote && n + 1 < cap)
        out[n++] = '\'';
    out[n] = '\0';
}

/* The store for a unit's ExecStart: double-quoted when a shell would need
 * quotes, '%' doubled (systemd's specifiers). */
static void unit_word(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    bool quote = !shell_safe(s);

    if (quote && n + 1 < cap)
        out[n++] = '"';
    for (; *s && n + 4 < cap; s++) {
        if (*s == '%' || (quote && (*s == '"' || *s == '\\')))
            out[n++] = *s == '%' ? '%' : '\\';
        out[n++] = *s;
    }
    if (quote && n + 1 < cap)
        out[n++] = '"';
    out[n] = '\0';
}

static int install(const struct cli_ctx *ctx, const struct sched_opts *o)
{
    char exe[PATH_MAX], dir[PATH_MAX], cwd[PATH_MAX], service[8 * PATH_MAX],
        units[PATH_MAX], path[PATH_MAX + 32], word[3 * PATH_MAX];
    const char *where = cli_store_dir(ctx);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    int ex;

    if (n <= 0 || !getcwd(cwd, sizeof(cwd)))
        return cli_fail(ctx, LIL_E_IO, "cannot tell where lil is: %s", strerror(errno));
    exe[n] = '\0';
    if (cli_store_is_url(where) || !realpath(where, dir))
        snprintf(dir, sizeof(dir), "%s", where);
    unit_word(dir, word, sizeof(word));
    snprintf(service, sizeof(service), service_fmt, dir, cwd, exe, word);
    if (!o->write) {
        cron_word(dir, word, sizeof(word));
        printf("# crontab -e: one line\n* * * * * cd %s && %s tick --dir %s\n\n", cwd,
               exe, word);
        printf("# ~/.config/systemd/user/lil-tick.service\n%s\n", service);
        printf("# ~/.config/systemd/user/lil-tick.timer\n%s\n", timer_text);
        printf("# then: systemctl --user daemon-reload && systemctl --user enable "
               "--now lil-tick.timer\n");
        return CLI_EXIT_OK;
    }
    ex = unit_dir(ctx, o, units, sizeof(units));
    snprintf(path, sizeof(path), "%s/lil-tick.service", units);
    if (ex == CLI_EXIT_OK)
        ex = write_unit(ctx, path, service);
    snprintf(path, sizeof(path), "%s/lil-tick.timer", units);
    if (ex == CLI_EXIT_OK)
        ex = write_unit(ctx, path, timer_text);
    if (ex == CLI_EXIT_OK)
        printf("then: systemctl --user daemon-reload && systemctl --user enable --now "
               "lil-tick.timer\n");
    return ex;
}

/* ---- the verb -------------------------------------------------------------------- */

static int dispatch(struct cli_ctx *ctx, const char *action, const char *const *pos,
                    size_t npos, const struct sched_opts *o)
{
    lil_store *st = NULL;
    bool needs_arg = strcmp(action, "add") == 0 || strcmp(action, "rm") == 0;
    int ex;

    if (strcmp(action, "install") == 0)
        return npos == 1 ? install(ctx, o)
                         : cli_usage(ctx, "install takes no argument");
    if (strcmp(action, "add") != 0 && strcmp(action, "rm") != 0 &&
        strcmp(action, "ls") != 0 && strcmp(action, "run") != 0)
        return cli_usage(ctx, "unknown action '%s' (add, ls, rm, run or install)",
                         action);
    if (npos != (needs_arg ? 2u : 1u))
        return cli_usage(ctx, needs_arg ? "%s takes one argument" : "%s takes none",
                         action);
    ex = strcmp(action, "add") == 0 ? cli_store_create(ctx, &st)
                                    : cli_store_open(ctx, &st);
    if (ex == CLI_EXIT_OK && strcmp(action, "add") == 0)
        ex = add(ctx, st, pos[1], o);
    else if (ex == CLI_EXIT_OK && strcmp(action, "rm") == 0)
        ex = rm(ctx, st, pos[1]);
    else if (ex == CLI_EXIT_OK && strcmp(action, "ls") == 0)
        ex = ls(ctx, st, o);
    else if (ex == CLI_EXIT_OK)
        ex = run(ctx, st, o);
    lil_store_close(st);
    return ex;
}

static int cmd_schedule(struct cli_ctx *ctx, int argc, char **argv)
{
    struct sched_opts o;
    const char **pos = NULL;
    size_t npos = 0;
    int ex;

    memset(&o, 0, sizeof(o));
    {
        const struct cli_flag flags[] = {
            {"catch-up", true, &o.catch_up, &o.catch_up_set},
            {"inputs", true, &o.inputs, &o.inputs_set},
            {"id", true, &o.id, &o.id_set},
            {"replace", false, NULL, &o.replace},
            {"now", true, &o.now, &o.now_set},
            {"write", false, NULL, &o.write},
            {"unit-dir", true, &o.unit_dir, &o.unit_dir_set},
            {NULL, false, NULL, NULL}};
        const struct cli_args a = {flags, NULL, NULL};

        ex = cli_parse_any(ctx, argc, argv, &a, &pos, &npos);
    }
    if (ex == CLI_EXIT_OK && npos == 0)
        ex = cli_usage(ctx, "give an action: add, ls, rm, run or install");
    if (ex == CLI_EXIT_OK && o.id_set && lil_run_id_check(o.id) != LIL_OK)
        ex = cli_usage(ctx, "--id '%s': %s", o.id, lil_errmsg());
    if (ex == CLI_EXIT_OK)
        ex = dispatch(ctx, pos[0], pos, npos, &o);
    free(pos);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_schedule = {
    "schedule",
    "fire cron loops: add, ls, rm schedules; run or install the ticker",
    "Usage: lil schedule add SPEC [--catch-up all|latest|none] [--inputs FILE]\n"
    "                            [--id ID] [--replace]\n"
    "       lil schedule ls | rm SPEC|ID | run | install [--write [--unit-dir DIR]]\n"
    "\n"
    "A loop with `schedule: {mode: cron, cron: \"...\"}` runs at each time its\n"
    "expression matches (UTC) once it is added to the store's schedules: `lil\n"
    "tick` (every minute from cron or a systemd timer) or `lil schedule run`\n"
    "starts a new run \"ID@2026-12-02T14:05Z\" of it for each slot due since\n"
    "the slot it last fired.  Each slot fires once, even with two ticks at\n"
    "once or after a missed tick: its run id is derived from the slot.\n"
    "\n"
    "  add SPEC    add the spec (valid, schedule.mode cron) as schedule ID\n"
    "              (its loop id), bound to the spec file's path and digest\n"
    "              and to the current directory, where its shell steps run;\n"
    "              slots after now fire.  A changed spec file is refused at\n"
    "              its next slot until it is added again with --replace.\n"
    "  ls          one line per schedule: id, cron, catch-up, last slot fired,\n"
    "              next slot, spec (--json: the documents)\n"
    "  rm SPEC|ID  remove the schedule; its runs stay\n"
    "  run         tick now and at each next slot (at least every minute) until\n"
    "              SIGTERM or SIGINT, which stop the run in progress at its next\n"
    "              effect boundary and end the process (exit 0)\n"
    "  install     print a crontab line and a systemd service and timer that run\n"
    "              `lil tick --dir DIR` every minute\n"
    "\n"
    "Flags:\n"
    "  --catch-up P  the slots missed while nothing ticked: all (every one,\n"
    "              oldest first, at most 100 per tick), latest (the newest\n"
    "              only), none (only the current minute's); default: the\n"
    "              spec's schedule.catch_up, else latest\n"
    "  --inputs FILE  a JSON object: the inputs of every run of the schedule\n"
    "  --id ID     the schedule's id (default: the loop's id)\n"
    "  --replace   add over an existing schedule of that id (its last fired\n"
    "              slot is kept)\n"
    "  --now TIME  add, ls: count from TIME (2026-12-02T14:05Z or epoch ms)\n"
    "              instead of the clock\n"
    "  --write     install: write lil-tick.service and lil-tick.timer into\n"
    "              ~/.config/systemd/user\n"
    "  --unit-dir DIR  install --write: into DIR instead\n"
    "  --dir DIR   the store (default $LIL_DIR, else .lil)\n"
    "  --json      add: the schedule's document; ls: an array of them\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 done; 1 the spec cannot be\n"
    "loaded, is invalid or has no cron schedule, the schedule exists (add\n"
    "without --replace) or does not (rm), the store cannot be read; `run`: a\n"
    "slot or a resumed run failed; 64 usage error.\n",
    cmd_schedule,
};
