/*
 * test_cli_explain.c -- `lil explain` shows the whole loop, through the
 * `lil` binary, in text and with --json:
 *
 *   - the schedule: mode, cron expression and the next three fire times in
 *     UTC counted from --now (ISO strings and epoch ms in JSON); the forms
 *     of --now and its usage errors; a cron that never fires and one that
 *     is not used (remarks);
 *   - every cap line says what happens when it trips, for each
 *     on_cap_exceeded (pause for approval, fail, stop);
 *   - each step shows what it runs (command with args, prompt, request,
 *     question) on one line cut with an ellipsis, JSON the full text;
 *   - gates, on_exit and the completion hook (shell and http);
 *   - the terms the text used are explained once, at the end, and only
 *     those;
 *   - --json carries the warnings and notes the text shows (the same as
 *     `lil validate --json`'s) and explain's remarks.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

#define NOW "--now 2025-01-01T12:00:00Z"

/* Every part explain shows: a cron schedule, each step kind, gates, an
 * exit action and a completion hook.  Valid, no diagnostics. */
static const char full_spec[] =
    "loopspec: \"0.1\"\n"
    "id: nightly\n"
    "pattern: cron\n"
    "state:\n"
    "  vars:\n"
    "    sent: { type: boolean, init: false }\n"
    "    code: { type: number, init: 1 }\n"
    "    items: { type: list, init: [] }\n"
    "body:\n"
    "  - id: fetch\n"
    "    kind: shell\n"
    "    cmd: ./fetch.sh\n"
    "    args: [\"--day\", \"yesterday\"]\n"
    "    save: { code: \"$.code\" }\n"
    "  - id: summarize\n"
    "    kind: agent\n"
    "    harness: claude-code\n"
    "    prompt: |\n"
    "      Summarize the metrics of yesterday in five short lines of plain text.\n"
    "      Do not use markdown.\n"
    "  - id: each\n"
    "    kind: reduce\n"
    "    over: \"${state.items}\"\n"
    "    as: it\n"
    "    body:\n"
    "      - { id: note, kind: shell, cmd: \"echo ${shq(it)}\" }\n"
    "  - id: ok\n"
    "    kind: breakpoint\n"
    "    ask: \"Post the digest?\"\n"
    "    strategy: quorum\n"
    "    auto_approve_in: [ci]\n"
    "  - id: pause\n"
    "    kind: sleep\n"
    "    for: 5m\n"
    "  - id: post\n"
    "    kind: http\n"
    "    request: { method: POST, url: \"https://hooks.example/digest\" }\n"
    "    on_done: { set: { sent: true } }\n"
    "terminate:\n"
    "  signal: state-predicate\n"
    "  until: \"${state.sent == true}\"\n"
    "  on_exit: { kind: shell, cmd: \"echo done\" }\n"
    "caps:\n"
    "  max_iterations: 2\n"
    "  no_progress: { fingerprint: \"${state.code}\", max_repeats: 3 }\n"
    "  budget: { tokens: 60000, usd: 1.0, wallclock: \"15m\" }\n"
    "  on_cap_exceeded: fail\n"
    "schedule: { mode: cron, cron: \"0 7 * * *\" }\n"
    "gates:\n"
    "  - { after: summarize, when: \"${state.code != 0}\", ask: \"Is the summary "
    "right?\" }\n"
    "  - { ask: \"Another round?\", auto_approve_in: [nonInteractive] }\n"
    "observe:\n"
    "  hooks:\n"
    "    completed: { kind: shell, cmd: \"./record-completion.sh ${state.sent}\" }\n";

/* A small loop; %s: extra top-level YAML (caps, schedule, hooks). */
static const char small_fmt[] =
    "loopspec: \"0.1\"\n"
    "id: small\n"
    "pattern: react\n"
    "state: { vars: { done: { type: boolean, init: false } } }\n"
    "body:\n"
    "  - { id: w, kind: agent, harness: claude-code, prompt: do,\n"
    "      on_done: { set: { done: true } } }\n"
    "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
    "%s";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    T_REQUIRE(f);
    T_CHECK(fwrite(text, 1, strlen(text), f) == strlen(text));
    T_CHECK(fclose(f) == 0);
}

/* Write text to name in the test's directory; returns its path (which has
 * no character the shell would read), kept until the fourth next call
 * (t_path's buffers are reused by every c_lil). */
static const char *spec_file(const char *name, const char *text)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];

    snprintf(p, sizeof(paths[0]), "%s", t_path(name));
    write_file(p, text);
    return p;
}

/* The path of a file spec_file wrote. */
static const char *spec_path(const char *name)
{
    static char p[512];

    snprintf(p, sizeof(p), "%s", t_path(name));
    return p;
}

/* small_fmt with extra, written to name. */
static const char *small_file(const char *name, const char *extra)
{
    static char text[4096];

    snprintf(text, sizeof(text), small_fmt, extra);
    return spec_file(name, text);
}

/* `lil explain --json --now 2025-01-01T12:00:00Z PATH`: the document, or
 * NULL. */
static json_t *explain_json(const char *path)
{
    if (c_lil(out, err, "explain --json " NOW " %s", path) != 0)
        return NULL;
    return c_json(out);
}

static const json_t *at(const json_t *o, const char *key)
{
    return json_object_get(o, key);
}

/* How many times needle occurs in hay. */
static int count(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ------------------------------------------------------------------------ */
/* schedule                                                                  */

T_TEST(schedule_cron_next_three_in_utc)
{
    const char *p = spec_file("full.yaml", full_spec);

    T_EQ_I64(c_lil(out, err, "explain " NOW " %s", p), 0);
    T_CONTAINS(out, "loop nightly: pattern cron\n\n"
                    "schedule (times in UTC):\n"
                    "  mode             cron: a run at each time the expression "
                    "matches\n"
                    "  cron             0 7 * * *\n"
                    "  next             2025-01-02T07:00:00Z (Thu)\n"
                    "                   2025-01-03T07:00:00Z (Fri)\n"
                    "                   2025-01-04T07:00:00Z (Sat)\n"
                    "  counted from     2025-01-01T12:00:00Z\n\n");
    /* the same time in the other forms of --now; a time at a fire time is
     * not counted */
    T_EQ_I64(c_lil(out, err, "explain --now 2025-01-01T12:00Z %s", p), 0);
    T_CONTAINS(out, "  next             2025-01-02T07:00:00Z (Thu)\n");
    T_EQ_I64(c_lil(out, err, "explain --now=1735732800000 %s", p), 0);
    T_CONTAINS(out, "  next             2025-01-02T07:00:00Z (Thu)\n");
    T_EQ_I64(c_lil(out, err, "explain --now 2025-01-02 %s", p), 0);
    T_CONTAINS(out, "  next             2025-01-02T07:00:00Z (Thu)\n");
    T_EQ_I64(c_lil(out, err, "explain --now 2025-01-02T07:00:00Z %s", p), 0);
    T_CONTAINS(out, "  next             2025-01-03T07:00:00Z (Fri)\n");
    /* without --now: the clock; three times all the same */
    T_EQ_I64(c_lil(out, err, "explain %s", p), 0);
    T_EQ_I64(count(out, ":00:00Z ("), 3);
}

T_TEST(schedule_cron_json_iso_and_epoch_ms)
{
    static const char *const iso[] = {"2025-01-02T07:00:00Z", "2025-01-03T07:00:00Z",
                                      "2025-01-04T07:00:00Z"};
    json_t *doc = explain_json(spec_file("full.yaml", full_spec));
    const json_t *s, *next, *t;
    size_t i;

    T_REQUIRE(json_is_object(doc));
    s = at(doc, "schedule");
    T_EQ_STR(json_string_value(at(s, "mode")), "cron");
    T_EQ_STR(json_string_value(at(s, "cron")), "0 7 * * *");
    T_EQ_STR(json_string_value(at(s, "timezone")), "UTC");
    T_EQ_STR(json_string_value(at(s, "from")), "2025-01-01T12:00:00Z");
    T_EQ_I64(json_integer_value(at(s, "from_ms")), 1735732800000);
    next = at(s, "next");
    T_EQ_I64((int64_t)json_array_size(next), 3);
    json_array_foreach(next, i, t)
    {
        T_EQ_STR(json_string_value(at(t, "iso")), iso[i]);
        T_EQ_I64(json_integer_value(at(t, "epoch_ms")),
                 1735801200000 + (int64_t)i * 86400000);
    }
    json_decref(doc);
}

T_TEST(schedule_now_usage_errors)
{
    const char *p = spec_file("full.yaml", full_spec);
    static const char *const bad[] = {
        "abc",
        "2025-02-30",
        "2025-01-01T25:00Z",
        "2025-01-01T12:00",
        "1969-12-31",
        "253402300800000",
        "2025-1-1x",
        "x2025-01-01",
        "10000-01-01",
        "2025-01-01T12:00:00+01:00",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        T_EQ_I64(c_lil(out, err, "explain --now '%s' %s", bad[i], p), 64);
        T_CONTAINS(err, "is not a time");
        T_EQ_STR(out, "");
    }
    /* the last millisecond of 9999 is a time; the times after it are shown */
    T_EQ_I64(c_lil(out, err, "explain --now 253402300799999 %s", p), 0);
    T_CONTAINS(out, "  next             10000-01-01T07:00:00Z");
    T_EQ_I64(c_lil(out, err, "explain --now"), 64);
}

T_TEST(schedule_manual_unused_and_never)
{
    json_t *doc;
    const json_t *s, *r;

    /* manual: no times */
    T_EQ_I64(c_lil(out, err, "explain %s", small_file("manual.yaml", "")), 0);
    T_CONTAINS(out, "\nschedule:\n"
                    "  mode             manual: a run starts when someone starts it "
                    "(`lil run`)\n\ncaps");
    T_CHECK(strstr(out, "next ") == NULL);
    doc = explain_json(spec_path("manual.yaml"));
    T_REQUIRE(doc);
    s = at(doc, "schedule");
    T_EQ_STR(json_string_value(at(s, "mode")), "manual");
    T_CHECK(at(s, "next") == NULL && at(s, "timezone") == NULL);
    json_decref(doc);

    /* a cron given with mode watch: shown, not used (a remark) */
    T_EQ_I64(c_lil(out, err, "explain %s",
                   small_file("watch.yaml",
                              "schedule: { mode: watch, cron: \"*/5 * * * *\" }\n")),
             0);
    T_CONTAINS(out, "loop small: pattern react, long-lived\n");
    T_CONTAINS(out, "  mode             watch: long-lived: the loop keeps watching "
                    "until its exit or a cap\n"
                    "  cron             */5 * * * *\n\n");
    T_CONTAINS(out, "\nremarks:\n  [cron-unused] schedule.cron '*/5 * * * *' is not "
                    "used: schedule.mode is watch, not cron\n");
    T_CONTAINS(out, "\n  long-lived       ");

    /* 30 February never comes */
    T_EQ_I64(c_lil(out, err, "explain " NOW " %s",
                   small_file("never.yaml",
                              "schedule: { mode: cron, cron: \"0 0 30 2 *\" }\n")),
             0);
    T_CONTAINS(out, "  next             none in the next 400 years\n"
                    "  counted from     2025-01-01T12:00:00Z\n");
    T_CONTAINS(out, "[cron-never-fires] schedule.cron '0 0 30 2 *' matches no time "
                    "in the 400 years after 2025-01-01T12:00:00Z");
    doc = explain_json(spec_path("never.yaml"));
    T_REQUIRE(doc);
    T_EQ_I64((int64_t)json_array_size(at(at(doc, "schedule"), "next")), 0);
    r = json_array_get(at(doc, "remarks"), 0);
    T_EQ_STR(json_string_value(at(r, "code")), "cron-never-fires");
    json_decref(doc);
}

/* ------------------------------------------------------------------------ */
/* caps                                                                      */

T_TEST(caps_say_what_happens_when_they_trip)
{
    static const struct {
        const char *action, *trip, *words;
    } cases[] = {
        {"fail", "fail", "fail: the run ends failed (exit 1)"},
        {"exit-clean", "stop", "exit-clean: the run ends stopped (exit 5)"},
        {"breakpoint", "pause for approval",
         "breakpoint: the run pauses (exit 3) until approved (`lil approve`, or "
         "--approve)"},
    };

    char extra[512], want[1024];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(extra, sizeof(extra),
                 "caps:\n"
                 "  max_iterations: 9\n"
                 "  no_progress: { fingerprint: \"${state.done}\", max_repeats: 2 }\n"
                 "  budget: { tokens: 1000, usd: 2.5, wallclock: \"2h\" }\n"
                 "  on_cap_exceeded: %s\n",
                 cases[i].action);
        T_EQ_I64(c_lil(out, err, "explain %s", small_file("caps.yaml", extra)), 0);
        snprintf(want, sizeof(want),
                 "caps (from the spec):\n"
                 "  max_iterations   9, then %s\n"
                 "  budget           tokens 1000, usd 2.5, wallclock 2h; past any, "
                 "%s\n"
                 "  no_progress      if ${state.done} is the same 3 times in a row, "
                 "%s\n"
                 "  on_cap_exceeded  %s\n",
                 cases[i].trip, cases[i].trip, cases[i].trip, cases[i].words);
        T_CONTAINS(out, want);
    }
    /* without a budget or a fingerprint: "none" */
    T_EQ_I64(c_lil(out, err, "explain %s",
                   small_file("bare.yaml", "caps: { max_iterations: 3 }\n")),
             0);
    T_CONTAINS(out, "  max_iterations   3, then pause for approval\n"
                    "  budget           none\n"
                    "  no_progress      none\n");
}

/* ------------------------------------------------------------------------ */
/* steps, gates, exit action, hook                                           */

T_TEST(steps_show_what_they_run)
{
    const char *p = spec_file("full.yaml", full_spec);
    json_t *doc;
    const json_t *steps;

    T_EQ_I64(c_lil(out, err, "explain %s", p), 0);
    T_CONTAINS(out, "\nsteps, in order:\n"
                    "  1. fetch (shell)\n"
                    "     cmd     ./fetch.sh --day yesterday\n"
                    "     writes  state.code (save)\n"
                    "  2. summarize (agent)\n"
                    "     prompt  Summarize the metrics of yesterday in five short "
                    "lines of pl\u2026\n"
                    "     harness claude-code\n"
                    "  3. each (reduce)\n"
                    "     over    ${state.items} as it\n"
                    "     3.1. note (shell)\n"
                    "          cmd     echo ${shq(it)}\n"
                    "  4. ok (breakpoint)\n"
                    "     ask     Post the digest?\n"
                    "     pauses  until approved (`lil approve`), strategy quorum\n"
                    "  5. pause (sleep)\n"
                    "     for     5m\n"
                    "  6. post (http)\n"
                    "     request POST https://hooks.example/digest\n"
                    "     writes  state.sent (set)\n\n");
    doc = explain_json(p);
    T_REQUIRE(doc);
    steps = at(doc, "steps");
    T_EQ_STR(json_string_value(at(json_array_get(steps, 0), "cmd")), "./fetch.sh");
    T_EQ_STR(json_string_value(json_array_get(at(json_array_get(steps, 0), "args"), 1)),
             "yesterday");
    T_EQ_STR(json_string_value(at(json_array_get(steps, 1), "prompt")),
             "Summarize the metrics of yesterday in five short lines of plain text.\n"
             "Do not use markdown.\n");
    T_EQ_STR(json_string_value(at(json_array_get(steps, 1), "harness")), "claude-code");
    T_EQ_STR(json_string_value(
                 at(json_array_get(at(json_array_get(steps, 2), "body"), 0), "cmd")),
             "echo ${shq(it)}");
    T_EQ_STR(json_string_value(at(json_array_get(steps, 3), "ask")),
             "Post the digest?");
    T_EQ_STR(json_string_value(at(json_array_get(steps, 3), "strategy")), "quorum");
    T_CHECK(json_is_false(at(json_array_get(steps, 3), "auto_approved")));
    T_EQ_STR(json_string_value(at(json_array_get(steps, 5), "method")), "POST");
    T_EQ_STR(json_string_value(at(json_array_get(steps, 5), "url")),
             "https://hooks.example/digest");
    /* the keys scripts read stay */
    T_EQ_STR(json_string_value(at(json_array_get(steps, 4), "for")), "5m");
    T_EQ_I64(json_integer_value(at(json_array_get(steps, 4), "for_ms")), 300000);
    T_EQ_STR(json_string_value(at(json_array_get(steps, 0), "path")), "body[0]:fetch");
    json_decref(doc);
}

T_TEST(long_texts_are_one_line_with_an_ellipsis)
{
    static char spec[8192];
    char want[300];

    /* over three lines, with tabs, runs of spaces and multi-byte characters */
    snprintf(
        spec, sizeof(spec), "%s",
        "loopspec: \"0.1\"\n"
        "id: long\n"
        "pattern: react\n"
        "state: { vars: { done: { type: boolean, init: false } } }\n"
        "body:\n"
        "  - { id: w, kind: agent, harness: claude-code,\n"
        "      prompt: \"   \u00e9t\u00e9 line one\\n\\n   line\\ttwo  \u2192 "
        "0123456789012345678901234567890123456789012345678901234567890123456789\",\n"
        "      on_done: { set: { done: true } } }\n"
        "  - { id: short, kind: shell, cmd: \"  exactly\\n  this  \" }\n"
        "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
        "caps: { max_iterations: 3 }\n");
    T_EQ_I64(c_lil(out, err, "explain %s", spec_file("long.yaml", spec)), 0);
    /* white space runs are one space; 60 characters, then the ellipsis */
    snprintf(want, sizeof(want), "     prompt  %s\u2026\n",
             "\u00e9t\u00e9 line one line two \u2192 "
             "012345678901234567890123456789012345");
    T_CONTAINS(out, want);
    T_CONTAINS(out, "     cmd     exactly this\n");
}

T_TEST(gates_exit_action_and_hooks)
{
    const char *p = spec_file("full.yaml", full_spec);
    json_t *doc;
    const json_t *g0, *g1, *hook;

    T_EQ_I64(c_lil(out, err, "explain %s", p), 0);
    T_CONTAINS(out, "  on_exit          shell: echo done\n"
                    "  completed hook   shell: ./record-completion.sh ${state.sent}\n");
    T_CONTAINS(out, "\ngates:\n"
                    "  gates[0] after step summarize\n"
                    "     when    ${state.code != 0}\n"
                    "     ask     Is the summary right?\n"
                    "     pauses  until approved (`lil approve`)\n"
                    "  gates[1] after the body, once per iteration\n"
                    "     ask     Another round?\n"
                    "     pauses  never: auto_approve_in holds nonInteractive\n");
    doc = explain_json(p);
    T_REQUIRE(doc);
    g0 = json_array_get(at(doc, "gates"), 0);
    g1 = json_array_get(at(doc, "gates"), 1);
    T_EQ_STR(json_string_value(at(g0, "gate")), "gates[0]");
    T_EQ_STR(json_string_value(at(g0, "after")), "summarize");
    T_EQ_STR(json_string_value(at(g0, "when")), "${state.code != 0}");
    T_EQ_STR(json_string_value(at(g0, "ask")), "Is the summary right?");
    T_EQ_STR(json_string_value(at(g0, "strategy")), "single");
    T_CHECK(json_is_false(at(g0, "auto_approved")));
    T_CHECK(json_is_null(at(g1, "after")));
    T_EQ_STR(json_string_value(json_array_get(at(g1, "auto_approve_in"), 0)),
             "nonInteractive");
    T_CHECK(json_is_true(at(g1, "auto_approved")));
    hook = at(at(doc, "hooks"), "completed");
    T_EQ_STR(json_string_value(at(hook, "kind")), "shell");
    T_EQ_STR(json_string_value(at(hook, "cmd")),
             "./record-completion.sh ${state.sent}");
    T_EQ_STR(json_string_value(at(at(at(doc, "exit"), "on_exit"), "cmd")), "echo done");
    json_decref(doc);

    /* an http hook; and no hook, no gates */
    T_EQ_I64(
        c_lil(out, err, "explain %s",
              small_file("hook.yaml",
                         "caps: { max_iterations: 3 }\n"
                         "observe:\n"
                         "  hooks:\n"
                         "    completed: { kind: http, request: { method: PUT, "
                         "url: \"https://x.example/done?id=${state.done}\" } }\n")),
        0);
    T_CONTAINS(out, "  completed hook   http: PUT "
                    "https://x.example/done?id=${state.done}\n");
    doc = explain_json(spec_path("hook.yaml"));
    T_REQUIRE(doc);
    hook = at(at(doc, "hooks"), "completed");
    T_EQ_STR(json_string_value(at(hook, "method")), "PUT");
    T_EQ_STR(json_string_value(at(hook, "url")),
             "https://x.example/done?id=${state.done}");
    T_EQ_I64((int64_t)json_array_size(at(doc, "gates")), 0);
    json_decref(doc);
    T_EQ_I64(c_lil(out, err, "explain %s", small_file("plain.yaml", "")), 0);
    T_CHECK(strstr(out, "completed hook") == NULL);
    T_CHECK(strstr(out, "\ngates:") == NULL);
    doc = explain_json(spec_path("plain.yaml"));
    T_REQUIRE(doc);
    T_CHECK(json_is_null(at(at(doc, "hooks"), "completed")));
    json_decref(doc);
}

/* ------------------------------------------------------------------------ */
/* terms, warnings, remarks                                                  */

T_TEST(terms_are_explained_once_and_only_when_used)
{
    static const char *const all[] = {"guarded",        "grounding",  "live", "on_exit",
                                      "completed hook", "breakpoint", "gate", "reduce"};
    const char *terms;
    char line[64];

    T_EQ_I64(c_lil(out, err, "explain %s", spec_file("full.yaml", full_spec)), 0);
    terms = strstr(out, "\nterms:\n");
    T_REQUIRE(terms);
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        snprintf(line, sizeof(line), "\n  %-17s", all[i]);
        T_EQ_I64(count(terms, line), 1);
    }
    T_CONTAINS(terms, "\n  breakpoint       a step that pauses the run (exit 3) until "
                      "someone approves it\n"
                      "                   (`lil approve`, or --yes)\n");
    T_CHECK(strstr(terms, "\n  long-lived ") == NULL);
    T_CHECK(strstr(terms, "\n  injected ") == NULL);
    /* the legend is wrapped to 80 columns */
    for (const char *l = terms; *l;) {
        size_t n = strcspn(l, "\n");
        T_CHECK(n <= 80);
        l += n + (l[n] ? 1 : 0);
    }
    /* a plain loop: no breakpoint, gate, reduce, hook or on_exit to explain */
    T_EQ_I64(c_lil(out, err, "explain %s", small_file("plain.yaml", "")), 0);
    terms = strstr(out, "\nterms:\n");
    T_REQUIRE(terms);
    T_CONTAINS(terms, "\n  injected         ");
    T_CONTAINS(terms, "\n  live             ");
    T_CHECK(strstr(terms, "breakpoint ") == NULL);
    T_CHECK(strstr(terms, "\n  gate ") == NULL);
    T_CHECK(strstr(terms, "\n  reduce ") == NULL);
    T_CHECK(strstr(terms, "on_exit ") == NULL);
}

/* The codes of the text's "validation:" lines, one a line. */
static void text_codes(const char *text, char *codes, size_t cap)
{
    const char *v = strstr(text, "\nvalidation:\n"), *p;
    size_t len = 0;

    codes[0] = '\0';
    for (p = v ? strchr(v + 1, '\n') : NULL; p && strncmp(p, "\n  ", 3) == 0;
         p = strchr(p + 1, '\n')) {
        const char *b = strchr(p, '['), *e = b ? strchr(b, ']') : NULL;

        if (!e || len >= cap)
            break;
        len +=
            (size_t)snprintf(codes + len, cap - len, "%.*s\n", (int)(e - b - 1), b + 1);
    }
}

T_TEST(json_carries_the_warnings_the_text_shows)
{
    /* long-lived without caps or fingerprint: warnings and notes */
    const char *p = small_file("warn.yaml", "schedule: { mode: forever }\n");
    char from_text[512], from_json[512] = "", from_validate[512] = "";
    size_t len = 0, vlen = 0, i;
    json_t *doc, *val;
    const json_t *w;

    T_EQ_I64(c_lil(out, err, "explain %s", p), 0);
    text_codes(out, from_text, sizeof(from_text));
    T_CHECK(from_text[0] != '\0');
    doc = explain_json(p);
    T_REQUIRE(doc);
    json_array_foreach(at(doc, "warnings"), i, w)
    {
        len += (size_t)snprintf(from_json + len, sizeof(from_json) - len, "%s\n",
                                json_string_value(at(w, "code")));
        T_CHECK(json_is_string(at(w, "message")));
        T_CHECK(json_is_string(at(w, "severity")));
    }
    T_EQ_STR(from_json, from_text);
    /* the same as validate's: severity, message, line and column */
    T_EQ_I64(c_lil(out, err, "validate --json %s", p), 0);
    val = c_json(out);
    T_REQUIRE(val);
    json_array_foreach(at(val, "diagnostics"), i, w)
    {
        const json_t *mine = json_array_get(at(doc, "warnings"), i);

        vlen += (size_t)snprintf(from_validate + vlen, sizeof(from_validate) - vlen,
                                 "%s\n", json_string_value(at(w, "code")));
        T_CHECK(json_equal(at(w, "severity"), at(mine, "severity")));
        T_CHECK(json_equal(at(w, "message"), at(mine, "message")));
        T_CHECK(json_equal(at(w, "line"), at(mine, "line")));
        T_CHECK(json_equal(at(w, "column"), at(mine, "column")));
    }
    T_EQ_STR(from_validate, from_json);
    json_decref(val);
    json_decref(doc);

    /* remarks: text and JSON */
    doc = explain_json(spec_file("full.yaml", full_spec));
    T_REQUIRE(doc);
    T_EQ_I64((int64_t)json_array_size(at(doc, "warnings")), 0);
    T_EQ_I64((int64_t)json_array_size(at(doc, "remarks")), 3);
    T_EQ_STR(json_string_value(at(json_array_get(at(doc, "remarks"), 0), "code")),
             "auto-approve-inert");
    T_EQ_STR(json_string_value(at(json_array_get(at(doc, "remarks"), 1), "code")),
             "strategy-recorded");
    T_EQ_STR(json_string_value(at(json_array_get(at(doc, "remarks"), 2), "code")),
             "auto-approved");
    json_decref(doc);
    T_EQ_I64(c_lil(out, err, "explain %s", spec_path("full.yaml")), 0);
    T_CHECK(strstr(out, "\nvalidation:") == NULL);
    T_CONTAINS(out,
               "\nremarks:\n"
               "  [auto-approve-inert] breakpoint 'ok': auto_approve_in has no "
               "effect (lil approves without asking only for nonInteractive, or "
               "with --yes); the run pauses until approved\n"
               "  [strategy-recorded] breakpoint 'ok': strategy quorum is recorded "
               "with the approval; one approval lets the run go on\n"
               "  [auto-approved] gates[1] never pauses: its auto_approve_in holds "
               "nonInteractive, which lil approves without asking\n");
}

T_MAIN()
