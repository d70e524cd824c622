/*
 * explain_text.c -- the text of `lil explain` (explain_text.h).
 *
 *     loop test-green: pattern react
 *
 *     schedule:
 *       mode             manual: a run starts when someone starts it (`lil run`)
 *
 *     caps (from the spec):
 *       max_iterations   12, then pause for approval
 *       ...
 *
 * Each section is one function over its part of the document; terms that
 * need a meaning are noted in struct view as they are printed and
 * explained once, at the end.
 */
#include "explain_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "spec_cli.h"

#define COL         17 /* width of the label column */
#define TERMS_WIDTH 80 /* the meanings of terms are wrapped before this column */

enum term {
    TERM_LONG_LIVED,
    TERM_INJECTED,
    TERM_GUARDED,
    TERM_GROUNDING,
    TERM_LIVE,
    TERM_ON_EXIT,
    TERM_HOOK,
    TERM_BREAKPOINT,
    TERM_GATE,
    TERM_REDUCE,
    TERM_COUNT
};

static const struct {
    const char *name, *meaning;
} TERMS[TERM_COUNT] = {
    {"long-lived", "meant to run for long (pattern poll-until, schedule watch or "
                   "forever): caps sized for it"},
    {"injected", "the spec has no caps, so the pattern's defaults apply"},
    {"guarded", "the step has a `when` (or is inside a reduce that has one): it may "
                "not run"},
    {"grounding", "what the exit rests on: results from outside (external), an "
                  "agent's word (agent), both (mixed), the loop's own writes or "
                  "count (structural), nothing (none)"},
    {"live", "a step that can run writes what the exit reads (or the exit reads "
             "the iteration), so the exit can become true"},
    {"on_exit", "runs once when the exit holds, before the run completes; if it "
                "fails, the run fails"},
    {"completed hook", "runs once after the run completed; if it fails, that is "
                       "recorded and the run stays completed"},
    {"breakpoint", "a step that pauses the run (exit 3) until someone approves it "
                   "(`lil approve`, or --yes)"},
    {"gate", "a question asked after a step (or after the body) that pauses the run "
             "like a breakpoint; its `when` decides whether it asks"},
    {"reduce", "a step that runs its body once for each item of `over`, the item "
               "named by `as`"},
};

/* What the text has used so far. */
struct view {
    bool used[TERM_COUNT];
};

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

static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* s on one line: each run of white space (line breaks too) as one space,
 * the ends trimmed, cut after EXPLAIN_LINE_MAX characters with "…". */
static void put_line(const char *s)
{
    char buf[EXPLAIN_LINE_MAX * 4 + 8] = "";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, len = 0, chars = 0;

    while (i < n && is_space(p[i]))
        i++;
    while (i < n && chars < EXPLAIN_LINE_MAX) {
        uint32_t cp;
        size_t k;

        if (is_space(p[i])) {
            while (i < n && is_space(p[i]))
                i++;
            if (i < n)
                buf[len++] = ' ';
            chars++;
            continue;
        }
        k = cli_utf8_decode(p + i, n - i, &cp);
        k = k ? k : 1; /* an invalid byte alone: cli_put_text escapes it */
        memcpy(buf + len, p + i, k);
        len += k;
        i += k;
        chars++;
    }
    while (len > 0 && buf[len - 1] == ' ')
        len--;
    if (i < n) {
        memcpy(buf + len, "\u2026", 3);
        len += 3;
    }
    buf[len] = '\0';
    cli_put_text(stdout, buf);
}

/* ------------------------------------------------------------------------ */
/* schedule                                                                  */

static const char *mode_words(const char *mode, struct view *v)
{
    if (strcmp(mode, "cron") == 0)
        return "a run at each time the expression matches";
    if (strcmp(mode, "watch") == 0 || strcmp(mode, "forever") == 0) {
        v->used[TERM_LONG_LIVED] = true;
        return strcmp(mode, "watch") == 0
                   ? "long-lived: the loop keeps watching until its exit or a cap"
                   : "long-lived: the loop runs until a cap or a stop";
    }
    return "a run starts when someone starts it (`lil run`)";
}

/* "2026-12-02T07:00:00Z (Wed)" */
static void print_time(const json_t *t)
{
    static const char *const DAYS[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    time_t s = (time_t)(json_integer_value(json_object_get(t, "epoch_ms")) / 1000);
    struct tm tm;

    printf("%s", jstr(t, "iso"));
    if (gmtime_r(&s, &tm) && tm.tm_wday >= 0 && tm.tm_wday < 7)
        printf(" (%s)", DAYS[tm.tm_wday]);
    putchar('\n');
}

static void print_schedule(const json_t *s, struct view *v)
{
    const json_t *next = json_object_get(s, "next"), *t;
    const char *cron = json_string_value(json_object_get(s, "cron"));
    size_t i;

    if (json_is_array(next))
        printf("schedule (times in %s):\n", jstr(s, "timezone"));
    else
        printf("schedule:\n");
    label("  ", "mode");
    printf("%s: %s\n", jstr(s, "mode"), mode_words(jstr(s, "mode"), v));
    if (cron) {
        label("  ", "cron");
        cli_put_text(stdout, cron);
        putchar('\n');
    }
    if (!json_is_array(next))
        return;
    json_array_foreach(next, i, t)
    {
        label("  ", i == 0 ? "next" : "");
        print_time(t);
    }
    if (json_array_size(next) == 0)
        printf("  %-*snone in the next 400 years\n", COL, "next");
    label("  ", "counted from");
    printf("%s\n", jstr(s, "from"));
}

/* ------------------------------------------------------------------------ */
/* caps                                                                      */

/* What a cap that trips does, short ("pause for approval"), and long. */
static const char *trip_words(const char *action)
{
    if (strcmp(action, "fail") == 0)
        return "fail";
    if (strcmp(action, "exit-clean") == 0)
        return "stop";
    return "pause for approval";
}

static const char *action_words(const char *action)
{
    if (strcmp(action, "fail") == 0)
        return "the run ends failed (exit 1)";
    if (strcmp(action, "exit-clean") == 0)
        return "the run ends stopped (exit 5)";
    return "the run pauses (exit 3) until approved (`lil approve`, or --approve)";
}

static void print_budget(const json_t *b, const char *trip)
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
    if (*sep)
        printf("; past any, %s\n", trip);
    else
        printf("none\n");
}

static void print_caps(const json_t *caps, struct view *v)
{
    const json_t *np = json_object_get(caps, "no_progress");
    const json_t *budget = json_object_get(caps, "budget");
    const char *action = jstr(caps, "on_cap_exceeded");
    const char *trip = trip_words(action);

    if (json_is_true(json_object_get(caps, "injected"))) {
        printf("caps (%s: the spec has no caps):\n", jstr(caps, "source"));
        v->used[TERM_INJECTED] = true;
    } else {
        printf("caps (from the spec):\n");
    }
    label("  ", "max_iterations");
    printf("%" JSON_INTEGER_FORMAT ", then %s\n",
           json_integer_value(json_object_get(caps, "max_iterations")), trip);
    if (json_is_object(budget))
        print_budget(budget, trip);
    else
        printf("  %-*snone\n", COL, "budget");
    label("  ", "no_progress");
    if (json_is_object(np)) {
        printf("if ");
        cli_put_text(stdout, jstr(np, "fingerprint"));
        printf(" is the same %" JSON_INTEGER_FORMAT " times in a row, %s\n",
               json_integer_value(json_object_get(np, "max_repeats")) + 1, trip);
    } else {
        printf("none\n");
    }
    label("  ", "on_cap_exceeded");
    printf("%s: %s\n", action, action_words(action));
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

static void print_writers(const json_t *ex, struct view *v)
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
            v->used[TERM_GUARDED] = true;
            lead = "";
        }
    }
    if (*lead)
        printf("  %-*sno step\n", COL, lead);
}

/* An exit action or hook: "shell: CMD", "http: POST URL", "agent: harness
 * H, prompt P", the texts on one line. */
static void print_action(const char *name, const json_t *a)
{
    const char *kind = jstr(a, "kind");

    label("  ", name);
    printf("%s: ", kind);
    if (strcmp(kind, "http") == 0) {
        printf("%s ", jstr(a, "method"));
        put_line(jstr(a, "url"));
    } else if (strcmp(kind, "agent") == 0) {
        printf("harness %s, prompt ", jstr(a, "harness"));
        put_line(jstr(a, "prompt"));
    } else {
        put_line(jstr(a, "cmd"));
    }
    putchar('\n');
}

static void print_exit(const json_t *ex, const json_t *hooks, struct view *v)
{
    const json_t *hook = json_object_get(hooks, "completed");

    if (!json_is_object(ex)) {
        printf("exit: none (the spec has no terminate)\n");
    } else {
        printf("exit (signal %s):\n", jstr(ex, "signal"));
        label("  ", "until");
        cli_put_text(stdout, jstr(ex, "until"));
        putchar('\n');
        print_reads(ex);
        print_writers(ex, v);
        label("  ", "grounding");
        printf("%s\n", grounding_words(jstr(ex, "grounding")));
        label("  ", "live");
        printf("%s\n", json_is_true(json_object_get(ex, "live"))
                           ? "yes: a writer of that state can run"
                           : "no: nothing makes it true; only a cap stops the loop");
        v->used[TERM_GROUNDING] = v->used[TERM_LIVE] = true;
        if (json_is_object(json_object_get(ex, "on_exit"))) {
            print_action("on_exit", json_object_get(ex, "on_exit"));
            v->used[TERM_ON_EXIT] = true;
        }
    }
    if (json_is_object(hook)) {
        print_action("completed hook", hook);
        v->used[TERM_HOOK] = true;
    }
}

/* ------------------------------------------------------------------------ */
/* steps and gates                                                           */

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

/* "NAME    " and a text of the spec on one line. */
static void print_text_line(const char *pad, const char *name, const char *text)
{
    printf("%s%-8s", pad, name);
    put_line(text);
    putchar('\n');
}

/* The question of a breakpoint or gate and whether it pauses. */
static void print_approval(const json_t *o, const char *pad)
{
    const char *strategy = jstr(o, "strategy");

    print_text_line(pad, "ask", jstr(o, "ask"));
    printf("%spauses  ", pad);
    if (json_is_true(json_object_get(o, "auto_approved"))) {
        printf("never: auto_approve_in holds nonInteractive\n");
        return;
    }
    printf("until approved (`lil approve`)");
    if (*strategy && strcmp(strategy, "single") != 0)
        printf(", strategy %s", strategy);
    putchar('\n');
}

/* The command with its args, space-separated (cut when very long: it is
 * shortened to a line anyway). */
static void print_command(const json_t *s, const char *pad)
{
    const json_t *args = json_object_get(s, "args"), *a;
    char all[1024];
    size_t i, len;

    snprintf(all, sizeof(all), "%s", jstr(s, "cmd"));
    json_array_foreach(args, i, a)
    {
        len = strlen(all);
        snprintf(all + len, sizeof(all) - len, " %s",
                 json_string_value(a) ? json_string_value(a) : "");
    }
    print_text_line(pad, "cmd", all);
}

/* What a step runs: its command, prompt, request or question. */
static void print_runs(const json_t *s, const char *pad, struct view *v)
{
    const char *kind = jstr(s, "kind");

    if (strcmp(kind, "shell") == 0) {
        print_command(s, pad);
    } else if (strcmp(kind, "agent") == 0) {
        print_text_line(pad, "prompt", jstr(s, "prompt"));
        print_text_line(pad, "harness", jstr(s, "harness"));
    } else if (strcmp(kind, "http") == 0) {
        printf("%srequest %s ", pad, jstr(s, "method"));
        put_line(jstr(s, "url"));
        putchar('\n');
    } else if (strcmp(kind, "breakpoint") == 0) {
        print_approval(s, pad);
        v->used[TERM_BREAKPOINT] = true;
    } else if (strcmp(kind, "reduce") == 0) {
        v->used[TERM_REDUCE] = true;
    }
}

/* A sleep's for and until, a reduce's over. */
static void print_waits(const json_t *s, const char *pad)
{
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
}

/* One step: "N. id (kind)", then its guard, what it runs, waits and writes
 * aligned under the id; a reduce's body follows, indented the same way. */
static void print_step(const json_t *s, const char *num, size_t indent, int depth,
                       struct view *v);

static void print_steps(const json_t *steps, const char *prefix, size_t indent,
                        int depth, struct view *v)
{
    char num[80];
    const json_t *s;
    size_t i;

    json_array_foreach(steps, i, s)
    {
        snprintf(num, sizeof(num), "%s%zu.", prefix, i + 1);
        print_step(s, num, indent, depth, v);
    }
}

static void print_step(const json_t *s, const char *num, size_t indent, int depth,
                       struct view *v)
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
    print_runs(s, pad, v);
    print_waits(s, pad);
    print_writes(json_object_get(s, "writes"), pad);
    if (json_is_array(body) && depth < 8)
        print_steps(body, num, sub, depth + 1, v);
}

static void print_gates(const json_t *gates, struct view *v)
{
    const json_t *g;
    size_t i;

    if (json_array_size(gates) == 0)
        return;
    v->used[TERM_GATE] = true;
    printf("\ngates:\n");
    json_array_foreach(gates, i, g)
    {
        printf("  %s ", jstr(g, "gate"));
        if (json_is_string(json_object_get(g, "after"))) {
            printf("after step ");
            cli_put_text(stdout, jstr(g, "after"));
            putchar('\n');
        } else {
            printf("after the body, once per iteration\n");
        }
        if (json_object_get(g, "when")) {
            printf("     when    ");
            cli_put_text(stdout, jstr(g, "when"));
            putchar('\n');
        }
        print_approval(g, "     ");
    }
}

/* ------------------------------------------------------------------------ */
/* warnings, remarks, terms                                                  */

/* The warnings and notes of validation, one line each. */
static void print_warnings(const json_t *warnings)
{
    const json_t *w, *line;
    size_t i;

    if (json_array_size(warnings) == 0)
        return;
    printf("\nvalidation:\n");
    json_array_foreach(warnings, i, w)
    {
        line = json_object_get(w, "line");
        printf("  %s [",
               strcmp(jstr(w, "severity"), "warning") == 0 ? "warning" : "note");
        cli_put_text(stdout, jstr(w, "code"));
        printf("] ");
        cli_put_text(stdout, jstr(w, "message"));
        if (json_is_integer(line))
            printf(" (line %" JSON_INTEGER_FORMAT ")", json_integer_value(line));
        putchar('\n');
    }
}

static void print_remarks(const json_t *remarks)
{
    const json_t *r;
    size_t i;

    if (json_array_size(remarks) == 0)
        return;
    printf("\nremarks:\n");
    json_array_foreach(remarks, i, r)
    {
        printf("  [");
        cli_put_text(stdout, jstr(r, "code"));
        printf("] ");
        cli_put_text(stdout, jstr(r, "message"));
        putchar('\n');
    }
}

/* text from column 2 + COL on, its words wrapped before TERMS_WIDTH. */
static void print_wrapped(const char *text)
{
    size_t col = 2 + COL;

    while (*text) {
        size_t w = strcspn(text, " ");

        if (col > 2 + COL && col + 1 + w > TERMS_WIDTH) {
            printf("\n%*s", 2 + COL, "");
            col = 2 + COL;
        } else if (col > 2 + COL) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)w, text);
        col += w;
        text += w;
        text += strspn(text, " ");
    }
    putchar('\n');
}

static void print_terms(const struct view *v)
{
    bool any = false;

    for (int t = 0; t < TERM_COUNT; t++) {
        if (!v->used[t])
            continue;
        if (!any)
            printf("\nterms:\n");
        any = true;
        label("  ", TERMS[t].name);
        print_wrapped(TERMS[t].meaning);
    }
}

void explain_print(const json_t *doc)
{
    struct view v;
    bool long_lived = json_is_true(json_object_get(doc, "long_lived"));

    memset(&v, 0, sizeof(v));
    v.used[TERM_LONG_LIVED] = long_lived;
    printf("loop ");
    cli_put_text(stdout, jstr(doc, "id"));
    printf(": pattern %s%s\n", jstr(doc, "pattern"), long_lived ? ", long-lived" : "");
    if (strcmp(jstr(doc, "name"), jstr(doc, "id")) != 0) {
        printf("name: ");
        cli_put_text(stdout, jstr(doc, "name"));
        putchar('\n');
    }
    putchar('\n');
    print_schedule(json_object_get(doc, "schedule"), &v);
    putchar('\n');
    print_caps(json_object_get(doc, "caps"), &v);
    putchar('\n');
    print_exit(json_object_get(doc, "exit"), json_object_get(doc, "hooks"), &v);
    printf("\nsteps, in order:\n");
    print_steps(json_object_get(doc, "steps"), "", 2, 0, &v);
    print_gates(json_object_get(doc, "gates"), &v);
    print_warnings(json_object_get(doc, "warnings"));
    print_remarks(json_object_get(doc, "remarks"));
    print_terms(&v);
}
