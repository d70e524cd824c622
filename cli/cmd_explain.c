/*
 * cmd_explain.c -- `lil explain SPEC [--json] [--now TIME]`: say what a
 * loop will do.
 *
 * The source is lil_spec_explain's document (described at the top of
 * src/loopspec/explain.c and in docs/loopspec.md); --json prints it as it is,
 * and the text is explain_text.c's.  --now fixes the time from which the
 * next fire times of a cron schedule are counted (lil_spec_explain_at), so
 * that the output does not depend on the clock: an ISO-8601 UTC time
 * (2025-01-01T12:00:00Z, 2025-01-01T12:00Z or 2025-01-01) or milliseconds
 * since the Unix epoch.
 *
 * A spec with errors is reported as `lil validate` does (diagnostics and
 * verdict on stdout, or the validate document with --json) and exits 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"
#include "explain_text.h"
#include "spec_cli.h"

/* The last millisecond lil_spec_explain_at accepts: the end of 9999. */
#define NOW_MAX_MS INT64_C(253402300799999)

/* A date and time in UTC as ms since the epoch; false when it is no real
 * time (31 April) or out of range. */
static bool civil_ms(int y, int mo, int d, int h, int mi, int s, int64_t *out)
{
    struct tm tm;
    time_t t;

    if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
        h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59)
        return false;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    t = timegm(&tm);
    *out = (int64_t)t * 1000;
    return tm.tm_mday == d && tm.tm_mon == mo - 1; /* timegm moves 31 April on */
}

/* Exactly n ASCII digits at *p into *out; *p moves past them. */
static bool read_digits(const char **p, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9')
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* The character c at *p; *p moves past it. */
static bool read_char(const char **p, char c)
{
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

/* TIME of --now as ms since the epoch; false when it is not one of the
 * forms above or out of range. */
static bool parse_now(const char *text, int64_t *out)
{
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    size_t len = strlen(text);
    const char *p = text;

    if (len > 0 && len <= 15 && strspn(text, "0123456789") == len) {
        *out = (int64_t)strtoll(text, NULL, 10);
        return *out <= NOW_MAX_MS;
    }
    if (!read_digits(&p, 4, &y) || !read_char(&p, '-') || !read_digits(&p, 2, &mo) ||
        !read_char(&p, '-') || !read_digits(&p, 2, &d))
        return false;
    if (read_char(&p, 'T')) {
        if (!read_digits(&p, 2, &h) || !read_char(&p, ':') || !read_digits(&p, 2, &mi))
            return false;
        if (read_char(&p, ':') && !read_digits(&p, 2, &s))
            return false;
        if (!read_char(&p, 'Z'))
            return false;
    }
    return *p == '\0' && civil_ms(y, mo, d, h, mi, s, out);
}

/* ------------------------------------------------------------------------ */
/* The verb                                                                  */

static int report_invalid(const struct cli_ctx *ctx, const lil_spec *spec,
                          const char *path)
{
    if (ctx->json) {
        int rc = cli_json_print(ctx, cli_diag_json(spec, path), false);
        return rc != CLI_EXIT_OK ? rc : CLI_EXIT_FAIL;
    }
    cli_diag_print(stdout, spec, path);
    cli_diag_summary(stdout, spec, path);
    return CLI_EXIT_FAIL;
}

/* now_ms < 0: the clock's time. */
static int explain(const struct cli_ctx *ctx, const lil_spec *spec, const char *path,
                   int64_t now_ms)
{
    lil_bytes b = {NULL, 0};
    lil_status s;
    json_t *doc;

    if (!lil_spec_ok(spec))
        return report_invalid(ctx, spec, path);
    s = now_ms < 0 ? lil_spec_explain(spec, &b) : lil_spec_explain_at(spec, now_ms, &b);
    if (s != LIL_OK) {
        cli_err(ctx, "cannot explain '%s': %s", path, lil_strerror(s));
        return CLI_EXIT_FAIL;
    }
    if (ctx->json) {
        fwrite(b.data, 1, b.len, stdout);
        if (b.len == 0 || ((const char *)b.data)[b.len - 1] != '\n')
            putchar('\n');
        lil_free(b.data);
        return CLI_EXIT_OK;
    }
    doc = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!json_is_object(doc)) {
        json_decref(doc);
        cli_err(ctx, "cannot read the explain document of '%s'", path);
        return CLI_EXIT_FAIL;
    }
    explain_print(doc);
    json_decref(doc);
    return CLI_EXIT_OK;
}

static int explain_path(const struct cli_ctx *ctx, const char *path, int64_t now_ms)
{
    lil_env *env = NULL;
    lil_spec *spec = NULL;
    char msg[1024];
    int rc;

    if (lil_env_new(&env) != LIL_OK) {
        cli_err(ctx, "cannot create an environment: %s", lil_errmsg());
        return CLI_EXIT_FAIL;
    }
    if (cli_spec_load(env, path, &spec, msg, sizeof(msg)) != LIL_OK) {
        cli_err(ctx, "%s", msg);
        rc = CLI_EXIT_FAIL;
    } else {
        rc = explain(ctx, spec, cli_spec_name(path), now_ms);
    }
    lil_spec_free(spec);
    lil_env_free(env);
    return rc;
}

static int cmd_explain(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"SPEC", NULL};
    const char *pos[1] = {NULL}, *now = NULL;
    bool now_set = false;
    const struct cli_flag flags[] = {{"now", true, &now, &now_set},
                                     {NULL, false, NULL, NULL}};
    struct cli_args a = {flags, names, pos};
    int64_t now_ms = -1;
    int rc = cli_parse(ctx, argc, argv, &a);

    if (rc == CLI_PARSE_HELP)
        return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    if (now_set && !parse_now(now, &now_ms))
        return cli_usage(ctx,
                         "--now '%s' is not a time: give 2025-01-01T12:00:00Z, "
                         "2025-01-01 or milliseconds since 1970 (UTC, up to 9999)",
                         now);
    return explain_path(ctx, pos[0], now_ms);
}

const struct cli_verb cli_verb_explain = {
    "explain",
    "say what a loop spec will do: schedule, caps, exit, steps, gates",
    "Usage: lil explain SPEC [--json] [--now TIME]\n"
    "\n"
    "Say what the loop of SPEC will do:\n"
    "\n"
    "  - its id and pattern (and whether it is long-lived);\n"
    "  - the schedule: mode, and for cron the expression and its next three\n"
    "    fire times, in UTC;\n"
    "  - the caps in force, where they come from (the spec, or injected for\n"
    "    the pattern when the spec has no caps block) and what happens when\n"
    "    one trips (on_cap_exceeded: pause for approval, fail or stop);\n"
    "  - the exit: signal and predicate (until), the state it reads, the steps\n"
    "    that write that state (how, guarded or not), how the exit is grounded\n"
    "    (external, agent, mixed, structural, none) and whether a writer can\n"
    "    make it true (live), the exit action and the completion hook;\n"
    "  - the steps in order, a reduce's body indented, with kind, guard (when),\n"
    "    what each runs (command, prompt, request or question, on one line)\n"
    "    and the state each writes; then the gates;\n"
    "  - the warnings and notes of validation, explain's own remarks, and the\n"
    "    meaning of the terms the text used.\n"
    "\n"
    "A spec with errors is reported as `lil validate` does, and exit is 1.\n"
    "\n"
    "Flags:\n"
    "  --json      the explain document of lil_spec_explain as it is\n"
    "              (docs/loopspec.md: full texts, fire times as ISO strings\n"
    "              and epoch ms, warnings and remarks); for a spec with\n"
    "              errors, the document of `lil validate --json`\n"
    "  --now TIME  count the fire times from TIME instead of the clock:\n"
    "              2025-01-01T12:00:00Z, 2025-01-01T12:00Z, 2025-01-01 (UTC)\n"
    "              or milliseconds since 1970\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 explained; 1 the spec has\n"
    "errors or cannot be read; 64 on a usage error (a bad --now too).\n",
    cmd_explain,
};
