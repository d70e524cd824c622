/*
 * cmd_verify.c -- `lil verify SPEC [--fixtures FILE.json]` and `lil score
 * SPEC [--fixtures FILE.json]` (docs/loops.md, "Verify and score").
 *
 * Both load the spec (an invalid one: its diagnostics, exit 1), read the
 * fixtures file (at most 1 MiB), call lil_spec_verify -- three dry runs
 * with mocked effects in a temporary store -- and print its report: verify
 * the verdicts and issues, score the scorecard.  --json prints the whole
 * report (the same document for both).  Exit status: 0 when the report is
 * ok (bounded, deterministic, resume-stable), 1 when it is not or
 * something failed (a bad fixtures file: its path and what is wrong), 64
 * on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "spec_cli.h"

#define FIXTURES_MAX (1u << 20)
#define NAME_WIDTH   18 /* "termination safety" */

struct verify_cli {
    const char *spec_path, *fixtures_path;
    char *fixtures;
    lil_spec *spec;
    json_t *report;
};

/* ---- input
 * ------------------------------------------------------------------------------ */

static int read_fixtures(const struct cli_ctx *ctx, struct verify_cli *vc)
{
    FILE *f;
    size_t n;

    if (!vc->fixtures_path)
        return CLI_EXIT_OK;
    f = fopen(vc->fixtures_path, "rb");
    if (!f) {
        cli_err(ctx, "cannot read --fixtures '%s': %s", vc->fixtures_path,
                strerror(errno));
        return CLI_EXIT_FAIL;
    }
    vc->fixtures = malloc(FIXTURES_MAX + 2);
    n = vc->fixtures ? fread(vc->fixtures, 1, FIXTURES_MAX + 1, f) : 0;
    (void)fclose(f); /* read only: nothing to lose */
    if (!vc->fixtures) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    vc->fixtures[n] = '\0';
    if (n > FIXTURES_MAX) {
        cli_err(ctx, "%s: verification fixtures are larger than 1 MiB",
                vc->fixtures_path);
        return CLI_EXIT_FAIL;
    }
    if (strlen(vc->fixtures) != n) {
        cli_err(ctx, "%s: invalid verification fixture JSON: it holds a NUL byte",
                vc->fixtures_path);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int load_spec(const struct cli_ctx *ctx, struct verify_cli *vc)
{
    char msg[1024];

    if (cli_spec_load(NULL, vc->spec_path, &vc->spec, msg, sizeof(msg)) != LIL_OK) {
        cli_err(ctx, "%s", msg);
        return CLI_EXIT_FAIL;
    }
    if (!lil_spec_ok(vc->spec)) {
        cli_diag_print(stderr, vc->spec, cli_spec_name(vc->spec_path));
        cli_err(ctx, "%s is not a valid loop spec: nothing was run",
                cli_spec_name(vc->spec_path));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Parse, load, verify: vc->report on CLI_EXIT_OK. */
static int verify_spec(struct cli_ctx *ctx, int argc, char **argv,
                       struct verify_cli *vc)
{
    static const char *const names[] = {"SPEC", NULL};
    const char *pos[1] = {NULL};
    const struct cli_flag flags[] = {{"fixtures", true, &vc->fixtures_path, NULL},
                                     {NULL, false, NULL, NULL}};
    const struct cli_args a = {flags, names, pos};
    lil_bytes out = {0};
    lil_status rc;
    int ex = cli_parse(ctx, argc, argv, &a);

    vc->spec_path = pos[0];
    if (ex == CLI_EXIT_OK)
        ex = load_spec(ctx, vc);
    if (ex == CLI_EXIT_OK)
        ex = read_fixtures(ctx, vc);
    if (ex != CLI_EXIT_OK)
        return ex;
    rc = lil_spec_verify(NULL, vc->spec, vc->fixtures, &out);
    if (rc != LIL_OK) {
        bool fixture_error =
            vc->fixtures_path && (rc == LIL_E_INVAL || rc == LIL_E_TOOBIG);

        cli_err(ctx, "%s%s%s", fixture_error ? vc->fixtures_path : "",
                fixture_error ? ": " : "", lil_errmsg());
        return CLI_EXIT_FAIL;
    }
    vc->report = json_loadb(out.data, out.len, 0, NULL);
    lil_free(out.data);
    if (!vc->report) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static void verify_cli_free(struct verify_cli *vc)
{
    lil_spec_free(vc->spec);
    free(vc->fixtures);
    json_decref(vc->report);
}

/* ---- report fields
 * ------------------------------------------------------------------------ */

static bool flag(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

static const char *str(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : dflt;
}

static const char *mark(bool ok)
{
    return ok ? "\u2713" : "\u2717";
}

/* ---- verify
 * ------------------------------------------------------------------------------- */

static void print_dry_run(const json_t *d)
{
    long long n = (long long)json_integer_value(json_object_get(d, "iteration"));
    const char *status = str(d, "status", "?");
    const json_t *wake = json_object_get(d, "wakeAt");

    if (flag(d, "ceilingReached")) {
        printf("  dry-run reached the verify ceiling after %lld iteration(s)\n", n);
        return;
    }
    printf("  dry-run ended '%s' after %lld iteration(s) (", status, n);
    if (json_object_get(d, "reason"))
        cli_put_text(stdout, str(d, "reason", ""));
    else if (wake)
        printf("parked on a sleep until %lld", (long long)json_integer_value(wake));
    else
        fputs(strcmp(status, "completed") == 0 ? "terminate.until held" : "no reason",
              stdout);
    fputs(")\n", stdout);
}

static const char *severity_mark(const char *severity)
{
    if (strcmp(severity, "error") == 0)
        return "\u2717";
    return strcmp(severity, "warning") == 0 ? "\u26a0" : "\u2139";
}

/* The issues of severity only (NULL: all). */
static void print_issues(const json_t *report, const char *only)
{
    const json_t *issues = json_object_get(report, "issues");
    size_t i;
    json_t *is;

    json_array_foreach(issues, i, is)
    {
        const char *sev = str(is, "severity", "info");

        if (only && strcmp(sev, only) != 0)
            continue;
        printf("  %s %s: ", severity_mark(sev), sev);
        cli_put_text(stdout, str(is, "message", ""));
        printf(" [%s]\n", str(is, "code", "?"));
    }
}

static void print_verify(const json_t *r)
{
    printf("%s verify %s\n", mark(flag(r, "ok")), flag(r, "ok") ? "PASSED" : "FAILED");
    printf("  bounded: %s  deterministic: %s  resume-stable: %s\n",
           mark(flag(r, "bounded")), mark(flag(r, "deterministic")),
           mark(flag(r, "resumeStable")));
    print_dry_run(json_object_get(r, "dryRun"));
    print_issues(r, NULL);
}

/* ---- score
 * -------------------------------------------------------------------------------- */

/* A number with at most two decimals and no trailing zeros: 25.5, 30. */
static void fmt_points(double v, char *buf, size_t cap)
{
    char *end;

    snprintf(buf, cap, "%.2f", v);
    end = buf + strlen(buf) - 1;
    while (end > buf && *end == '0')
        *end-- = '\0';
    if (end > buf && *end == '.')
        *end = '\0';
}

static void print_dimension(const json_t *d)
{
    double score = json_number_value(json_object_get(d, "score"));
    int cells = (int)(score * 10 + 0.5);
    char points[32];

    fputs("  ", stdout);
    for (int i = 0; i < 10; i++)
        fputs(i < cells ? "\u2588" : "\u2591", stdout);
    fmt_points(json_number_value(json_object_get(d, "points")), points, sizeof(points));
    printf("  %-*s  %s/%lld  %s\n", NAME_WIDTH, str(d, "name", "?"), points,
           (long long)json_integer_value(json_object_get(d, "weight")),
           str(d, "note", ""));
}

static void print_score(const json_t *r)
{
    const json_t *s = json_object_get(r, "score");
    const json_t *dims = json_object_get(s, "dimensions");
    size_t i;
    json_t *d;

    printf("Scorecard: %lld/100  (%s)\n",
           (long long)json_integer_value(json_object_get(s, "total")),
           str(s, "grade", "?"));
    json_array_foreach(dims, i, d)
    {
        print_dimension(d);
    }
    if (!flag(r, "ok")) {
        printf("%s verify FAILED (`lil verify` shows why):\n", mark(false));
        print_issues(r, "error");
    }
}

/* ---- the verbs
 * ------------------------------------------------------------------------------ */

static int run_verb(struct cli_ctx *ctx, int argc, char **argv, bool score)
{
    struct verify_cli vc;
    int ex;

    memset(&vc, 0, sizeof(vc));
    ex = verify_spec(ctx, argc, argv, &vc);
    if (ex == CLI_EXIT_OK) {
        bool ok = flag(vc.report, "ok");

        if (ctx->json)
            ex = cli_json_print(ctx, json_incref(vc.report), false);
        else if (score)
            print_score(vc.report);
        else
            print_verify(vc.report);
        if (ex == CLI_EXIT_OK && !ok)
            ex = CLI_EXIT_FAIL;
    }
    verify_cli_free(&vc);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

static int cmd_verify(struct cli_ctx *ctx, int argc, char **argv)
{
    return run_verb(ctx, argc, argv, false);
}

static int cmd_score(struct cli_ctx *ctx, int argc, char **argv)
{
    return run_verb(ctx, argc, argv, true);
}

#define VERIFY_FLAGS_HELP                                                                \
    "Flags:\n"                                                                           \
    "  --fixtures FILE.json  what every effect returns: a JSON object (at most 1 MiB)\n" \
    "                        with keys shell, http, agent (each default {})\n"           \
    "  --json                print the whole report as JSON\n"                           \
    "\n"                                                                                 \
    "Exit status (the table is in `lil --help`): 0 the loop is bounded,\n"               \
    "deterministic and resume-stable; 1 it is not, the spec is invalid or the\n"         \
    "fixtures are bad; 64 usage error.\n"

const struct cli_verb cli_verb_verify = {
    "verify", "dry-run a loop spec with mocked effects: bounded, deterministic, stable",
    "Usage: lil verify SPEC [--fixtures FILE.json] [--json]\n"
    "\n"
    "Run the loop three times in a temporary store, every shell, http and agent\n"
    "effect answered from the fixtures instead of run (nothing outside that store\n"
    "is touched): straight through, again from scratch, and with a restart between\n"
    "every iteration.  Breakpoints are approved, inputs without a default get a\n"
    "sample value, at most 1000 iterations.  It proves, under those fixtures only:\n"
    "  bounded        the loop ends cleanly (completed, stopped, paused, or a cap)\n"
    "  deterministic  two dry runs end with the same status and state\n"
    "  resume-stable  restarting between iterations changes nothing\n"
    "Sleeps take no real time: a dry run has its own clock (from 0, 1 s more at\n"
    "every reading) on which every sleep is over at once; only a sleep.until\n"
    "whose guard stays false under the fixtures parks it (not bounded).\n"
    "\n" VERIFY_FLAGS_HELP,
    cmd_verify};

const struct cli_verb cli_verb_score = {
    "score",
    "the scorecard of a loop spec (termination, caps, observability, dry runs)",
    "Usage: lil score SPEC [--fixtures FILE.json] [--json]\n"
    "\n"
    "Verify SPEC as `lil verify` does and print its scorecard out of 100:\n"
    "termination safety (30: the signal, capped by how the exit is grounded),\n"
    "caps (25: explicit, no_progress, budget), observability (15: journal trace,\n"
    "a completion hook or an active notify), resumability (15) and determinism\n"
    "(15) from the dry runs.  Grades: A >= 90, B >= 80, C >= 70, D >= 60, else F.\n"
    "\n" VERIFY_FLAGS_HELP,
    cmd_score};
