/*
 * cmd_explain.c -- `lil explain SPEC [--json]`: say what a loop will do.
 *
 * The source is lil_spec_explain's document (described at the top of
 * src/spec/explain.c and in docs/loopspec.md); --json prints it as it is.
 * The text shows, in this order: the loop's id and pattern; the caps in
 * force and where they come from (the spec, or injected for the pattern);
 * the exit: signal, predicate, the state it reads, the steps that write
 * that state (how, and whether guarded), how the exit is grounded and
 * whether a writer is live; then the steps in order (a reduce's body
 * indented under it) with kind, guard and writes; last, the warnings and
 * notes of validation, one line each.
 *
 *     loop test-green: pattern react
 *
 *     caps (from the spec):
 *       max_iterations   12
 *       ...
 *
 * A spec with errors is reported as `lil validate` does (diagnostics and
 * verdict on stdout, or the validate document with --json) and exits 1.
 * Text from the spec (ids, guards) is escaped like diagnostics are.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "spec_cli.h"

#define COL 17 /* width of the label column */

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "";
}

/* "  label            " then the value's text. */
static void label(const char *indent, const char *name)
{
    printf("%s%-*s", indent, COL, name);
}

/* ------------------------------------------------------------------------ */
/* caps                                                                      */

static void print_budget(const json_t *b)
{
    const json_t *tokens = json_object_get(b, "tokens");
    const json_t *usd = json_object_get(b, "usd");
    const char *wall = json_string_value(json_object_get(b, "wallclock"));
    const char *sep = "";

    label("  ", "budget");
    if (json_is_integer(tokens)) {
        printf("tokens %" JSON_INTEGER_FORMAT, json_integer_value(tokens));
        sep = ", ";
    }
    if (json_is_number(usd)) {
        printf("%susd %g", sep, json_number_value(usd));
        sep = ", ";
    }
    if (wall) {
        printf("%swallclock ", sep);
        cli_put_text(stdout, wall);
        sep = ", ";
    }
    printf("%s\n", *sep ? "" : "none");
}

static void print_caps(const json_t *caps)
{
    const json_t *np = json_object_get(caps, "no_progress");
    const json_t *budget = json_object_get(caps, "budget");

    if (json_is_true(json_object_get(caps, "injected")))
        printf("caps (%s: the spec has no caps):\n", jstr(caps, "source"));
    else
        printf("caps (from the spec):\n");
    label("  ", "max_iterations");
    printf("%" JSON_INTEGER_FORMAT "\n",
           json_integer_value(json_object_get(caps, "max_iterations")));
    if (json_is_object(budget))
        print_budget(budget);
    else
        printf("  %-*snone\n", COL, "budget");
    label("  ", "no_progress");
    if (json_is_object(np)) {
        printf("stop when ");
        cli_put_text(stdout, jstr(np, "fingerprint"));
        printf(" is the same %" JSON_INTEGER_FORMAT " times in a row\n",
               json_integer_value(json_object_get(np, "max_repeats")) + 1);
    } else {
        printf("none\n");
    }
    label("  ", "on_cap_exceeded");
    printf("%s\n", jstr(caps, "on_cap_exceeded"));
}

/* ------------------------------------------------------------------------ */
/* exit                                                                      */

static const char *grounding_words(const char *g)
{
    if (strcmp(g, "external") == 0)
        return "external: shell or http results decide";
    if (strcmp(g, "agent") == 0)
        return "agent: only an agent's output decides (ungrounded)";
    if (strcmp(g, "mixed") == 0)
        return "mixed: agent output and shell or http results decide";
    if (strcmp(g, "structural") == 0)
        return "structural: the loop's own writes or the iteration count decide";
    if (strcmp(g, "none") == 0)
        return "none: no step writes what the exit reads";
    return g;
}

static void print_reads(const json_t *ex)
{
    const json_t *reads = json_object_get(ex, "reads"), *v;
    const char *sep = "";
    size_t i;

    label("  ", "reads");
    json_array_foreach(reads, i, v)
    {
        printf("%sstate.", sep);
        cli_put_text(stdout, json_string_value(v) ? json_string_value(v) : "");
        sep = ", ";
    }
    if (json_is_true(json_object_get(ex, "uses_iteration"))) {
        printf("%siteration", sep);
        sep = ", ";
    }
    printf("%s\n", *sep ? "" : "nothing that changes");
}

static void print_writers(const json_t *ex)
{
    json_t *writers = json_object_get(ex, "writers"), *list;
    const json_t *w;
    const char *var, *lead = "written by";
    size_t i;

    json_object_foreach(writers, var, list)
    {
        json_array_foreach(list, i, w)
        {
            label("  ", lead);
            printf("state.");
            cli_put_text(stdout, var);
            printf(" <- ");
            cli_put_text(stdout, jstr(w, "step"));
            printf(" (%s, %s, %s)\n", jstr(w, "kind"), jstr(w, "how"),
                   json_is_true(json_object_get(w, "guarded")) ? "guarded"
                                                               : "unguarded");
            lead = "";
        }
    }
    if (*lead)
        printf("  %-*sno step\n", COL, lead);
}

static void print_on_exit(const json_t *oe)
{
    const char *kind = jstr(oe, "kind");

    label("  ", "on_exit");
    printf("%s: ", kind);
    if (strcmp(kind, "http") == 0) {
        printf("%s ", jstr(oe, "method"));
        cli_put_text(stdout, jstr(oe, "url"));
    } else if (strcmp(kind, "agent") == 0) {
        printf("harness %s, prompt ", jstr(oe, "harness"));
        cli_put_text(stdout, jstr(oe, "prompt"));
    } else {
        cli_put_text(stdout, jstr(oe, "cmd"));
    }
    putchar('\n');
}

static void print_exit(const json_t *ex)
{
    if (!json_is_object(ex)) {
        printf("exit: none (the spec has no terminate)\n");
        return;
    }
    printf("exit (signal %s):\n", jstr(ex, "signal"));
    label("  ", "until");
    cli_put_text(stdout, jstr(ex, "until"));
    putchar('\n');
    print_reads(ex);
    print_writers(ex);
    label("  ", "grounding");
    printf("%s\n", grounding_words(jstr(ex, "grounding")));
    label("  ", "live");
    printf("%s\n", json_is_true(json_object_get(ex, "live"))
                       ? "yes: a writer of that state can run"
                       : "no: nothing makes it true; only a cap stops the loop");
    if (json_is_object(json_object_get(ex, "on_exit")))
        print_on_exit(json_object_get(ex, "on_exit"));
}

/* ------------------------------------------------------------------------ */
/* steps                                                                     */

static void print_writes(const json_t *writes, const char *pad)
{
    const json_t *w;
    const char *sep = "";
    size_t i;

    if (json_array_size(writes) == 0)
        return;
    printf("%swrites  ", pad);
    json_array_foreach(writes, i, w)
    {
        printf("%sstate.", sep);
        cli_put_text(stdout, jstr(w, "var"));
        printf(" (%s)", jstr(w, "how"));
        sep = ", ";
    }
    putchar('\n');
}

/* One step: "N. id (kind)", then its guard, items and writes aligned
 * under the id; a reduce's body follows, indented the same way. */
static void print_step(const json_t *s, const char *num, size_t indent, int depth);

static void print_steps(const json_t *steps, const char *prefix, size_t indent,
                        int depth)
{
    char num[80];
    const json_t *s;
    size_t i;

    json_array_foreach(steps, i, s)
    {
        snprintf(num, sizeof(num), "%s%zu.", prefix, i + 1);
        print_step(s, num, indent, depth);
    }
}

static void print_step(const json_t *s, const char *num, size_t indent, int depth)
{
    const json_t *body = json_object_get(s, "body");
    size_t sub = indent + strlen(num) + 1;
    char pad[128];

    snprintf(pad, sizeof(pad), "%*s", (int)(sub < 100 ? sub : 100), "");
    printf("%*s%s ", (int)indent, "", num);
    cli_put_text(stdout, jstr(s, "id"));
    printf(" (%s)\n", jstr(s, "kind"));
    if (json_object_get(s, "when")) {
        printf("%swhen    ", pad);
        cli_put_text(stdout, jstr(s, "when"));
        putchar('\n');
    }
    if (json_object_get(s, "over")) {
        printf("%sover    ", pad);
        cli_put_text(stdout, jstr(s, "over"));
        printf(" as %s\n", json_object_get(s, "as") ? jstr(s, "as") : "item");
    }
    if (json_object_get(s, "for")) {
        printf("%sfor     ", pad);
        cli_put_text(stdout, jstr(s, "for"));
        putchar('\n');
    }
    if (json_object_get(s, "until")) {
        printf("%suntil   ", pad);
        cli_put_text(stdout, jstr(s, "until"));
        putchar('\n');
    }
    print_writes(json_object_get(s, "writes"), pad);
    if (json_is_array(body) && depth < 8)
        print_steps(body, num, sub, depth + 1);
}

/* The warnings and notes of validation, one line each. */
static void print_soft_diags(const lil_spec *spec)
{
    size_t n = lil_spec_diag_count(spec);
    bool any = false;

    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        if (!d || d->severity == LIL_SEV_ERROR)
            continue;
        if (!any)
            printf("\nvalidation:\n");
        any = true;
        printf("  %s [", d->severity == LIL_SEV_WARNING ? "warning" : "note");
        cli_put_text(stdout, d->code);
        printf("] ");
        cli_put_text(stdout, d->message);
        if (d->line)
            printf(" (line %u)", d->line);
        putchar('\n');
    }
}

static void print_text(const json_t *doc, const lil_spec *spec)
{
    printf("loop ");
    cli_put_text(stdout, jstr(doc, "id"));
    printf(": pattern %s%s\n", jstr(doc, "pattern"),
           json_is_true(json_object_get(doc, "long_lived")) ? ", long-lived" : "");
    if (strcmp(jstr(doc, "name"), jstr(doc, "id")) != 0) {
        printf("name: ");
        cli_put_text(stdout, jstr(doc, "name"));
        putchar('\n');
    }
    putchar('\n');
    print_caps(json_object_get(doc, "caps"));
    putchar('\n');
    print_exit(json_object_get(doc, "exit"));
    printf("\nsteps, in order:\n");
    print_steps(json_object_get(doc, "steps"), "", 2, 0);
    print_soft_diags(spec);
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

static int explain(const struct cli_ctx *ctx, const lil_spec *spec, const char *path)
{
    lil_bytes b = {NULL, 0};
    lil_status s;
    json_t *doc;

    if (!lil_spec_ok(spec))
        return report_invalid(ctx, spec, path);
    s = lil_spec_explain(spec, &b);
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
    print_text(doc, spec);
    json_decref(doc);
    return CLI_EXIT_OK;
}

static int explain_path(const struct cli_ctx *ctx, const char *path)
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
        rc = explain(ctx, spec, cli_spec_name(path));
    }
    lil_spec_free(spec);
    lil_env_free(env);
    return rc;
}

static int cmd_explain(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"SPEC", NULL};
    const char *pos[1] = {NULL};
    struct cli_args a = {NULL, names, pos};
    int rc = cli_parse(ctx, argc, argv, &a);

    if (rc == CLI_PARSE_HELP)
        return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    return explain_path(ctx, pos[0]);
}

const struct cli_verb cli_verb_explain = {
    "explain",
    "say what a loop spec will do: caps, exit, grounding, steps",
    "Usage: lil explain SPEC [--json]\n"
    "\n"
    "Say what the loop of SPEC will do:\n"
    "\n"
    "  - its id and pattern (and whether it is long-lived);\n"
    "  - the caps in force and where they come from: the spec, or injected\n"
    "    for the pattern when the spec has no caps block;\n"
    "  - the exit: signal and predicate (until), the state it reads, the steps\n"
    "    that write that state (how, guarded or not), how the exit is grounded\n"
    "    (external, agent, mixed, structural, none) and whether a writer can\n"
    "    make it true (live), and the exit action;\n"
    "  - the steps in order, a reduce's body indented, with kind, guard (when)\n"
    "    and the state each writes;\n"
    "  - the warnings and notes of validation.\n"
    "\n"
    "A spec with errors is reported as `lil validate` does, and exit is 1.\n"
    "\n"
    "Flags:\n"
    "  --json      the explain document of lil_spec_explain as it is\n"
    "              (docs/loopspec.md); for a spec with errors, the document\n"
    "              of `lil validate --json`\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 explained; 1 the spec has\n"
    "errors or cannot be read; 64 on a usage error.\n",
    cmd_explain,
};
