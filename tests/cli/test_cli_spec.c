/*
 * test_cli_spec.c -- the loop-spec verbs through the `lil` binary:
 * validate (valid, warnings only, invalid with the exact caret lines, a
 * position after tabs and non-ASCII text, unreadable, several files,
 * --json, usage errors), new (every pattern and blueprint validates with no
 * cap-only-termination or ungrounded-exit warning; --out, refusing to
 * overwrite, --force, no temporary file left; --from-shell with awkward CMD
 * and EXPR that survive the YAML quoting byte for byte; a bad ID is a usage
 * error, 64; a bad EXPR is told once at its column in EXPR, writes
 * nothing, exits 1, and so does a missing --until),
 * explain (injected caps, --json), every reference example and every
 * examples/loops spec validating, and bad input (empty, binary, 2 MiB,
 * 10000 nested '[', truncated, invalid UTF-8): exit 1 with a
 * file:line:col: diagnostic, no crash.
 */
#include <dirent.h>
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* A valid spec without any diagnostic. */
static const char valid_spec[] =
    "loopspec: \"0.1\"\n"
    "id: t\n"
    "pattern: react\n"
    "state: { vars: { done: { type: boolean, init: false } } }\n"
    "body:\n"
    "  - { id: w, kind: agent, harness: claude-code, prompt: do,\n"
    "      on_done: { set: { done: true } } }\n"
    "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
    "caps: { max_iterations: 5, budget: { wallclock: \"1h\" } }\n";

/* The same with an undeclared state var in a guard, on line 12. */
static const char bad_ref_spec[] =
    "loopspec: \"0.1\"\n"
    "id: t\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    done: { type: boolean, init: false }\n"
    "body:\n"
    "  - id: w\n"
    "    kind: agent\n"
    "    harness: claude-code\n"
    "    prompt: do\n"
    "    when: \"${state.nope == 1}\"\n"
    "    on_done: { set: { done: true } }\n"
    "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
    "caps: { max_iterations: 5, budget: { wallclock: \"1h\" } }\n";

static const char *const patterns[] = {
    "react",          "plan-execute-reflect", "evaluator-optimizer",
    "loop-until-dry", "map-reduce",           "poll-until",
    "cron",
};

#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    T_REQUIRE(f);
    T_CHECK(fwrite(data, 1, len, f) == len);
    T_CHECK(fclose(f) == 0);
}

/* Write text to name in the test's directory; returns its path. */
static const char *spec_file(const char *name, const char *text)
{
    const char *p = t_path(name);

    write_file(p, text, strlen(text));
    return p;
}

/* s single-quoted for /bin/sh (static buffer, rotates 4). */
static const char *shq(const char *s)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    size_t n = 0;

    b[n++] = '\'';
    for (; *s && n < sizeof(bufs[0]) - 8; s++) {
        if (*s == '\'') {
            memcpy(b + n, "'\\''", 4);
            n += 4;
        } else {
            b[n++] = *s;
        }
    }
    b[n++] = '\'';
    b[n] = '\0';
    return b;
}

/* The content of path (static buffer, truncated to 64 KiB). */
static const char *slurp(const char *path)
{
    static char buf[65536];
    FILE *f = fopen(path, "rb");
    size_t n = 0;

    if (f) {
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

static bool file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* Number of entries of the test's directory whose name starts with pfx. */
static int count_entries(const char *pfx)
{
    DIR *d = opendir(t_tmpdir());
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, pfx, strlen(pfx)) == 0)
            n++;
    }
    closedir(d);
    return n;
}

/* The line of text that starts with prefix (copied into buf), or NULL. */
static const char *line_starting(const char *text, const char *prefix, char *buf,
                                 size_t cap)
{
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) == 0 && len < cap) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            return buf;
        }
        p = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* The n-th line (0-based) after the line that starts with prefix. */
static const char *line_after(const char *text, const char *prefix, int n, char *buf,
                              size_t cap)
{
    const char *p = strstr(text, prefix);

    if (!p || (p != text && p[-1] != '\n'))
        return NULL;
    for (int i = 0; i <= n && p; i++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p)
        return NULL;
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len >= cap)
        return NULL;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* The caret line that docs/cli.md's rule gives for column col (characters)
 * of the source line src (for the bytes the tests use): gutter, then a tab
 * for a tab, 1 blank per ASCII or 2-byte UTF-8 character, 4 per escaped
 * byte. */
static void expect_caret(const char *src, unsigned line, unsigned col, char *buf,
                         size_t cap)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t n = 0, i = 0, len = strlen(src);
    int w = line >= 10000 ? 6 : 5;

    n += (size_t)snprintf(buf, cap, "%*s | ", w, "");
    for (unsigned c = 1; c < col && n + 8 < cap; c++) {
        if (i < len && s[i] == '\t') {
            buf[n++] = '\t';
            i++;
        } else if (i < len && (s[i] < 0x20 || s[i] == 0x7f)) {
            memcpy(buf + n, "    ", 4);
            n += 4;
            i++;
        } else if (i + 1 < len && s[i] >= 0xc2 && s[i] < 0xe0 &&
                   (s[i + 1] & 0xc0) == 0x80) {
            buf[n++] = ' ';
            i += 2;
        } else if (i < len && s[i] >= 0x80) {
            memcpy(buf + n, "    ", 4);
            n += 4;
            i++;
        } else {
            buf[n++] = ' ';
            i++;
        }
    }
    buf[n++] = '^';
    buf[n] = '\0';
}

/* Line number and column of the first diagnostic header "name:L:C: ". */
static bool first_position(const char *text, const char *name, unsigned *line,
                           unsigned *col)
{
    char pat[256];
    const char *p;

    snprintf(pat, sizeof(pat), "%s:", name);
    for (p = strstr(text, pat); p; p = strstr(p + 1, pat)) {
        if (p != text && p[-1] != '\n')
            continue;
        if (sscanf(p + strlen(pat), "%u:%u: ", line, col) == 2)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------------ */
/* validate                                                                  */

T_TEST(validate_valid_spec)
{
    const char *p = spec_file("ok.yaml", valid_spec);
    char want[512];

    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 0);
    snprintf(want, sizeof(want), "%s: \u2713 valid (no diagnostics)\n", p);
    T_EQ_STR(out, want);
    T_EQ_STR(err, "");
}

T_TEST(validate_warnings_only_is_exit_0)
{
    char spec[sizeof(valid_spec) + 64], want[512];
    const char *p;

    /* explicit caps without a budget: warning no-budget */
    snprintf(spec, sizeof(spec), "%.*s",
             (int)(strstr(valid_spec, "caps:") - valid_spec), valid_spec);
    strcat(spec, "caps: { max_iterations: 5 }\n");
    p = spec_file("warn.yaml", spec);
    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 0);
    T_CONTAINS(out, ": warning: ");
    T_CONTAINS(out, "[no-budget]");
    snprintf(want, sizeof(want), "%s: \u2713 valid \u2014 1 warning(s), 0 note(s)\n",
             p);
    T_CONTAINS(out, want);
}

T_TEST(validate_invalid_caret_exact)
{
    const char *p = spec_file("bad.yaml", bad_ref_spec);
    const char *src = "    when: \"${state.nope == 1}\"";
    char head[1024], line[1024], caret[1024], want[1024], pfx[512];
    unsigned ln = 0, col = 0;

    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 1);
    T_REQUIRE(first_position(out, p, &ln, &col));
    T_EQ_I64(ln, 12);
    T_CHECK(col >= 11 && col <= 30); /* on the guard */
    snprintf(pfx, sizeof(pfx), "%s:12:%u: error: ", p, col);
    T_REQUIRE(line_starting(out, pfx, head, sizeof(head)));
    T_CONTAINS(head, "state.nope");
    T_CONTAINS(head, " [bad-ref]");
    T_REQUIRE(line_after(out, pfx, 0, line, sizeof(line)));
    snprintf(want, sizeof(want), "   12 | %s", src);
    T_EQ_STR(line, want);
    T_REQUIRE(line_after(out, pfx, 1, caret, sizeof(caret)));
    expect_caret(src, 12, col, want, sizeof(want));
    T_EQ_STR(caret, want);
    /* the only writer of done is guarded by the bad guard: a warning too */
    snprintf(want, sizeof(want), "%s: \u2717 invalid \u2014 1 error(s), 1 warning(s)\n",
             p);
    T_CONTAINS(out, "[cap-only-termination]");
    T_CONTAINS(out, want);
}

/* The error sits after a tab and a two-byte character on its line: the
 * caret line repeats the tab and gives the character one blank. */
T_TEST(validate_caret_after_tab_and_utf8)
{
    char spec[2048], head[1024], line[1024], caret[1024], want[1024], pfx[512];
    const char *src =
        "  - {id: w,\tkind: agent, harness: pi, prompt: \"h\xc3\xa9llo\", "
        "when: \"${state.nope == 1}\",";
    const char *p;
    unsigned ln = 0, col = 0;

    snprintf(
        spec, sizeof(spec),
        "loopspec: \"0.1\"\nid: t\npattern: react\n"
        "state: { vars: { done: { type: boolean, init: false } } }\n"
        "body:\n%s\n      on_done: { set: { done: true } } }\n"
        "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
        "caps: { max_iterations: 5, budget: { wallclock: \"1h\" } }\n",
        src);
    p = spec_file("tab.yaml", spec);
    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 1);
    T_REQUIRE(first_position(out, p, &ln, &col));
    T_EQ_I64(ln, 6);
    T_CHECK(col > 50); /* after the tab and the é */
    snprintf(pfx, sizeof(pfx), "%s:6:%u: error: ", p, col);
    T_REQUIRE(line_starting(out, pfx, head, sizeof(head)));
    T_CONTAINS(head, "[bad-ref]");
    T_REQUIRE(line_after(out, pfx, 0, line, sizeof(line)));
    snprintf(want, sizeof(want), "    6 | %s", src);
    T_EQ_STR(line, want);
    T_REQUIRE(line_after(out, pfx, 1, caret, sizeof(caret)));
    expect_caret(src, 6, col, want, sizeof(want));
    T_EQ_STR(caret, want);
    T_CHECK(strchr(caret, '\t') != NULL);
}

/* A line longer than 240 bytes is shown as a window around the column,
 * with "..." at the cuts; the caret still sits under the column's byte. */
T_TEST(validate_long_line_window)
{
    static char spec[4096], src[2048];
    char pfx[512], line[4096], caret[4096];
    unsigned ln = 0, col = 0;
    const char *p, *hat;
    size_t at;

    snprintf(src, sizeof(src),
             "  - { id: w, kind: agent, harness: pi, prompt: \"%0300d\", "
             "when: \"${state.nope == 1}\", on_done: { set: { done: true } }, "
             "cmd: \"%0300d\" }",
             0, 0);
    snprintf(
        spec, sizeof(spec),
        "loopspec: \"0.1\"\nid: t\npattern: react\n"
        "state: { vars: { done: { type: boolean, init: false } } }\n"
        "body:\n%s\n"
        "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
        "caps: { max_iterations: 5, budget: { wallclock: \"1h\" } }\n",
        src);
    p = spec_file("long.yaml", spec);
    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 1);
    T_REQUIRE(first_position(out, p, &ln, &col));
    T_EQ_I64(ln, 6);
    T_REQUIRE(col > 300 && col < 700);
    snprintf(pfx, sizeof(pfx), "%s:6:%u: ", p, col);
    T_REQUIRE(line_after(out, pfx, 0, line, sizeof(line)));
    T_REQUIRE(line_after(out, pfx, 1, caret, sizeof(caret)));
    T_CHECK(strncmp(line, "    6 | ...", 11) == 0);
    T_CHECK(strlen(line) == 8 + 3 + 240 + 3); /* the window and both cuts */
    hat = strchr(caret, '^');
    T_REQUIRE(hat);
    at = (size_t)(hat - caret);
    T_EQ_I64(at, 8 + 3 + 80);
    T_CHECK(at < strlen(line) && line[at] == src[col - 1]);
}

/* An error inside a folded block scalar, after non-ASCII text: the header
 * names the line of the reference and its column in characters, the caret
 * sits under it, and --json gives the byte offset as well. */
T_TEST(validate_position_inside_folded_string)
{
    static const char src[] =
        "      d\xc3\xa9j\xc3\xa0 vu \xe2\x80\x94 ${state.atempt} ok";
    char spec[2048], pfx[512], line[1024], caret[1024], want[1024];
    unsigned ln = 0, col = 0;
    const char *p;
    json_t *doc, *d;

    snprintf(spec, sizeof(spec),
             "loopspec: \"0.1\"\nid: t\npattern: react\n"
             "state: { vars: { done: { type: boolean, init: false } } }\n"
             "body:\n  - id: w\n    kind: agent\n    harness: claude-code\n"
             "    prompt: >-\n      first line\n%s\n"
             "    on_done: { set: { done: true } }\n"
             "terminate: { signal: state-predicate, until: \"${state.done}\" }\n"
             "caps: { max_iterations: 5, budget: { wallclock: \"1h\" } }\n",
             src);
    p = spec_file("folded.yaml", spec);
    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 1);
    T_REQUIRE(first_position(out, p, &ln, &col));
    T_EQ_I64(ln, 11);
    T_EQ_I64(col, 19); /* 6 blanks and "déjà vu — ${": 18 characters, 22 bytes */
    snprintf(pfx, sizeof(pfx), "%s:11:19: error: ", p);
    T_REQUIRE(line_after(out, pfx, 0, line, sizeof(line)));
    snprintf(want, sizeof(want), "   11 | %s", src);
    T_EQ_STR(line, want);
    T_REQUIRE(line_after(out, pfx, 1, caret, sizeof(caret)));
    snprintf(want, sizeof(want), "      | %18s^", "");
    T_EQ_STR(caret, want);

    T_EQ_I64(c_lil(out, err, "validate --json %s", shq(p)), 1);
    doc = c_json(out);
    T_REQUIRE(doc);
    d = json_array_get(json_object_get(doc, "diagnostics"), 0);
    T_EQ_STR(json_string_value(json_object_get(d, "code")), "bad-ref");
    T_EQ_I64(json_integer_value(json_object_get(d, "line")), 11);
    T_EQ_I64(json_integer_value(json_object_get(d, "column")), 19);
    T_EQ_I64(json_integer_value(json_object_get(d, "offset")),
             strstr(spec, "state.atempt") - spec);
    json_decref(doc);
}

T_TEST(validate_unreadable_file)
{
    const char *p = t_path("no/such/loop.yaml");

    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 1);
    T_CONTAINS(err, "lil: validate: ");
    T_CONTAINS(err, p);
    T_EQ_STR(out, "");
    /* a directory is not readable as a spec either */
    T_EQ_I64(c_lil(out, err, "validate %s", shq(t_tmpdir())), 1);
    T_CONTAINS(err, "lil: validate: ");
}

T_TEST(validate_json)
{
    const char *p = spec_file("bad.yaml", bad_ref_spec);
    json_t *doc, *diags, *d = NULL;
    size_t i;

    T_EQ_I64(c_lil(out, err, "validate --json %s", shq(p)), 1);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_STR(json_string_value(json_object_get(doc, "file")), p);
    T_CHECK(json_is_false(json_object_get(doc, "ok")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "errors")), 1);
    T_EQ_I64(json_integer_value(json_object_get(doc, "warnings")), 1);
    T_CHECK(json_is_integer(json_object_get(doc, "infos")));
    diags = json_object_get(doc, "diagnostics");
    T_REQUIRE(json_is_array(diags));
    json_array_foreach(diags, i, d)
    {
        if (strcmp(json_string_value(json_object_get(d, "severity")), "error") == 0)
            break;
    }
    T_REQUIRE(d && i < json_array_size(diags));
    T_EQ_STR(json_string_value(json_object_get(d, "code")), "bad-ref");
    T_CONTAINS(json_string_value(json_object_get(d, "message")), "state.nope");
    T_CHECK(json_is_string(json_object_get(d, "path")));
    T_EQ_I64(json_integer_value(json_object_get(d, "line")), 12);
    T_EQ_I64(json_integer_value(json_object_get(d, "column")), 14); /* state.nope */
    T_EQ_I64(json_integer_value(json_object_get(d, "offset")),
             strstr(bad_ref_spec, "state.nope") - bad_ref_spec);
    json_decref(doc);

    p = spec_file("ok.yaml", valid_spec);
    T_EQ_I64(c_lil(out, err, "validate %s --json", shq(p)), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_true(json_object_get(doc, "ok")));
    T_EQ_I64(json_array_size(json_object_get(doc, "diagnostics")), 0);
    json_decref(doc);
}

T_TEST(validate_several_files)
{
    char ok[512], bad[512], want[600];
    json_t *doc;

    snprintf(ok, sizeof(ok), "%s", spec_file("ok.yaml", valid_spec));
    snprintf(bad, sizeof(bad), "%s", spec_file("bad.yaml", bad_ref_spec));
    T_EQ_I64(c_lil(out, err, "validate %s %s", shq(ok), shq(ok)), 0);
    T_EQ_I64(c_lil(out, err, "validate %s %s", shq(ok), shq(bad)), 1);
    snprintf(want, sizeof(want), "%s: \u2713 valid", ok);
    T_CONTAINS(out, want);
    snprintf(want, sizeof(want), "%s: \u2717 invalid", bad);
    T_CONTAINS(out, want);
    /* an unreadable file among them: reported, the others still checked */
    T_EQ_I64(c_lil(out, err, "validate %s nope.yaml %s", shq(ok), shq(ok)), 1);
    T_CONTAINS(err, "nope.yaml");
    T_CHECK(strstr(out, "valid") && strstr(strstr(out, "valid") + 1, "valid"));
    /* --json: an array, one document per file, in order */
    T_EQ_I64(c_lil(out, err, "validate --json %s %s nope.yaml", shq(ok), shq(bad)), 1);
    doc = c_json(out);
    T_REQUIRE(json_is_array(doc));
    T_EQ_I64(json_array_size(doc), 3);
    T_CHECK(json_is_true(json_object_get(json_array_get(doc, 0), "ok")));
    T_CHECK(json_is_false(json_object_get(json_array_get(doc, 1), "ok")));
    T_CHECK(json_is_false(json_object_get(json_array_get(doc, 2), "ok")));
    T_EQ_STR(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_array_get(doc, 2), "diagnostics"), 0),
            "code")),
        "io");
    json_decref(doc);
}

T_TEST(validate_usage)
{
    T_EQ_I64(c_lil(out, err, "validate"), 64);
    T_CONTAINS(err, "missing argument SPEC");
    T_EQ_I64(c_lil(out, err, "validate --bogus x.yaml"), 64);
    T_EQ_I64(c_lil(out, err, "validate --help"), 0);
    T_CONTAINS(out, "Usage: lil validate SPEC");
    /* "--" ends the flags: a file named like a flag */
    spec_file("-odd.yaml", valid_spec);
    T_EQ_I64(c_lil(out, err, "--dir x validate -- -odd.yaml"), 0);
    T_CONTAINS(out, "-odd.yaml: \u2713 valid");
}

/* Validate the n files in one run of the binary: exit 0, one verdict
 * "valid" per file, no error; strict: no warning that V42 forbids (nor
 * no-budget). */
static void validate_many(char files[][4096], size_t n, bool strict)
{
    char cmd[4000] = "validate";
    size_t valid = 0;
    int rc;

    for (size_t i = 0; i < n; i++) {
        T_REQUIRE(strlen(cmd) + strlen(files[i]) + 8 < sizeof(cmd));
        strcat(cmd, " ");
        strcat(cmd, shq(files[i]));
    }
    rc = c_lil(out, err, "%s", cmd);
    if (rc != 0)
        fprintf(stderr, "%s%s", out, err);
    T_EQ_I64(rc, 0);
    for (const char *p = strstr(out, ": \u2713 valid"); p;
         p = strstr(p + 1, ": \u2713 valid"))
        valid++;
    T_EQ_I64(valid, n);
    T_CHECK(strstr(out, ": error: ") == NULL);
    if (strict) {
        T_CHECK(strstr(out, "[ungrounded-exit]") == NULL);
        T_CHECK(strstr(out, "[cap-only-termination]") == NULL);
        T_CHECK(strstr(out, "[no-budget]") == NULL);
    }
}

static char files[32][4096];

/* Collect the *.yaml of dir into files; returns their count. */
static size_t list_yaml(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;

    T_CHECK(d != NULL);
    while (d && (e = readdir(d)) != NULL && n < 32) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0)
            snprintf(files[n++], sizeof(files[0]), "%s/%s", dir, e->d_name);
    }
    if (d)
        closedir(d);
    return n;
}

T_TEST(reference_examples_validate)
{
    size_t n = list_yaml(T_DATA_DIR "/reference-examples");

    T_EQ_I64(n, 13);
    validate_many(files, n, false);
}

T_TEST(own_examples_validate)
{
    size_t n = list_yaml(T_EXAMPLES_DIR);

    T_CHECK(n >= 7);
    validate_many(files, n, true);
}

/* ------------------------------------------------------------------------ */
/* new                                                                       */

/* Validate path; it must have no error and no V42 warning. */
static void check_generated(const char *path, const char *pattern)
{
    char want[128];

    snprintf(files[0], sizeof(files[0]), "%s", path);
    validate_many(files, 1, true);
    snprintf(want, sizeof(want), "\npattern: %s\n", pattern);
    T_CONTAINS(slurp(path), want);
}

/* Every pattern (--pattern) and every blueprint (--blueprint, from
 * --list --json) gives a spec that validates without a V42 warning. */
T_TEST(new_every_pattern_and_blueprint_validates)
{
    json_t *list, *bp;
    size_t i, n = 0;
    char want[128];
    bool seen[NPATTERNS] = {false};

    for (i = 0; i < NPATTERNS; i++, n++) {
        snprintf(files[n], sizeof(files[0]), "%s/p%zu.yaml", t_tmpdir(), i);
        T_EQ_I64(c_lil(out, err, "new loop-%zu --pattern %s --out %s", i, patterns[i],
                       shq(files[n])),
                 0);
        T_CONTAINS(out, "wrote ");
        snprintf(want, sizeof(want), "\npattern: %s\n", patterns[i]);
        T_CONTAINS(slurp(files[n]), want);
    }
    T_EQ_I64(c_lil(out, err, "new --list --json"), 0);
    list = c_json(out);
    T_REQUIRE(json_is_array(list));
    T_EQ_I64(json_array_size(list), NPATTERNS);
    json_array_foreach(list, i, bp)
    {
        const char *bname = json_string_value(json_object_get(bp, "name"));
        const char *pat = json_string_value(json_object_get(bp, "pattern"));
        T_REQUIRE(bname && pat);
        T_CHECK(strlen(json_string_value(json_object_get(bp, "summary"))) > 10);
        for (size_t k = 0; k < NPATTERNS; k++)
            seen[k] = seen[k] || strcmp(patterns[k], pat) == 0;
        snprintf(files[n], sizeof(files[0]), "%s/b%zu.yaml", t_tmpdir(), i);
        T_EQ_I64(c_lil(out, err, "new b.1 --blueprint %s > %s", bname, shq(files[n])),
                 0);
        snprintf(want, sizeof(want), "\npattern: %s\n", pat);
        T_CONTAINS(slurp(files[n]), want);
        n++;
    }
    for (size_t k = 0; k < NPATTERNS; k++)
        T_CHECK(seen[k]);
    json_decref(list);
    validate_many(files, n, true);
    /* the text list: one line per blueprint with name and pattern */
    T_EQ_I64(c_lil(out, err, "new --list"), 0);
    T_CONTAINS(out, "wait-for-deploy  poll-until ");
    n = 0;
    for (const char *p = out; (p = strchr(p, '\n')) != NULL; p++)
        n++;
    T_EQ_I64(n, NPATTERNS);
}

T_TEST(new_default_is_react_on_stdout)
{
    T_EQ_I64(c_lil(out, err, "new my-loop"), 0);
    T_CONTAINS(out, "\npattern: react\n");
    T_CONTAINS(out, "\nid: \"my-loop\"\n");
    T_EQ_STR(err, "");
    /* an id that YAML would read as a number stays a string */
    T_EQ_I64(c_lil(out, err, "new 1.5 > %s", shq(t_path("n.yaml"))), 0);
    check_generated(t_path("n.yaml"), "react");
    /* "-" validates stdin */
    T_EQ_I64(c_lil(out, err, "new piped | '%s' validate -", t_lil_bin()), 0);
    T_EQ_STR(out, "<stdin>: \u2713 valid (no diagnostics)\n");
}

T_TEST(new_out_refuses_overwrite)
{
    const char *p = t_path("loop.yaml");
    uint64_t h;

    T_EQ_I64(c_lil(out, err, "new a --out %s", shq(p)), 0);
    T_REQUIRE(file_exists(p));
    h = c_file_hash(p);
    T_EQ_I64(c_lil(out, err, "new b --pattern cron --out %s", shq(p)), 1);
    T_CONTAINS(err, "exists");
    T_CONTAINS(err, "--force");
    T_EQ_I64(c_file_hash(p), h);
    T_EQ_I64(c_lil(out, err, "new b --pattern cron --out %s --force", shq(p)), 0);
    T_CHECK(c_file_hash(p) != h);
    T_EQ_I64(c_lil(out, err, "validate %s", shq(p)), 0);
    T_EQ_I64(count_entries(".lil-new"), 0); /* no temporary file left */
    /* a directory that does not exist */
    T_EQ_I64(c_lil(out, err, "new a --out %s", shq(t_path("no/dir/x.yaml"))), 1);
    T_CONTAINS(err, "lil: new: ");
}

T_TEST(new_usage_errors)
{
    /* a bad ID is a usage error (64), like an invalid run id */
    T_EQ_I64(c_lil(out, err, "new 'bad id'"), 64);
    T_CONTAINS(err, "invalid loop id");
    T_EQ_I64(c_lil(out, err, "new ''"), 64);
    T_EQ_I64(c_lil(out, err, "new 'a/b'"), 64);
    T_EQ_I64(c_lil(out, err, "new"), 64);
    T_EQ_I64(c_lil(out, err, "new a b"), 64);
    T_EQ_I64(c_lil(out, err, "new a --pattern nope"), 64);
    T_CONTAINS(err, "unknown pattern");
    T_EQ_I64(c_lil(out, err, "new a --blueprint nope"), 64);
    T_EQ_I64(c_lil(out, err, "new a --pattern react --blueprint fix-tests"), 64);
    /* --from-shell without --until: exit 1, as the reference's loopc new */
    T_EQ_I64(c_lil(out, err, "new a --from-shell true"), 1);
    T_CONTAINS(err, "needs --until EXPR");
    T_EQ_STR(out, "");
    T_EQ_I64(c_lil(out, err, "new a --until 'state.code == 0'"), 64);
    T_EQ_I64(c_lil(out, err, "new --list a"), 64);
    T_EQ_I64(c_lil(out, err, "new a --force"), 64);
    T_EQ_I64(c_lil(out, err, "new a --out x.json"), 64);
    /* a forgotten value is not silently the next flag (docs/cli.md, "lil new") */
    T_EQ_I64(c_lil(out, err, "new a --out --force"), 64);
    T_CONTAINS(err, "needs a value");
    T_CHECK(!file_exists("--force"));
    T_EQ_I64(c_lil(out, err, "new a --from-shell=--version --until 'state.code == 0'"),
             0);
    T_CONTAINS(out, "cmd: \"--version\"");
    T_EQ_I64(c_lil(out, err, "new a --from-shell \"$(printf 'a\\377b')\" --until x"),
             64);
    T_EQ_STR(out, "");
    T_EQ_I64(count_entries("x.json"), 0);
}

/* The "cmd" of the first body step and the "until" of the normalized spec
 * at path (lil_spec_json), or false. */
static bool spec_cmd_until(const char *path, char *cmd, char *until, size_t cap)
{
    lil_spec *spec = NULL;
    lil_bytes js = {NULL, 0};
    json_t *doc = NULL;
    const char *c, *u;
    bool ok = false;

    if (lil_spec_load(NULL, path, NULL, &spec) != LIL_OK ||
        lil_spec_json(spec, &js) != LIL_OK)
        goto done;
    doc = json_loadb(js.data, js.len, 0, NULL);
    c = json_string_value(
        json_object_get(json_array_get(json_object_get(doc, "body"), 0), "cmd"));
    u = json_string_value(json_object_get(json_object_get(doc, "terminate"), "until"));
    if (c && u && strlen(c) < cap && strlen(u) < cap) {
        strcpy(cmd, c);
        strcpy(until, u);
        ok = true;
    }
done:
    json_decref(doc);
    lil_free(js.data);
    lil_spec_free(spec);
    return ok;
}

T_TEST(new_from_shell_awkward_text)
{
    /* quotes, backslashes, a newline, a shell ${...}, non-ASCII, a tab */
    const char *cmd = "printf '{\"ready\": %s}' \"$(test -f \\\"${HOME}/x\\\" && "
                      "echo true || echo false)\"\n# caf\xc3\xa9 \xe2\x9c\x93\t$${X}";
    const char *cmd_spec =
        "printf '{\"ready\": %s}' \"$(test -f \\\"${'$'}{HOME}/x\\\" && "
        "echo true || echo false)\"\n# caf\xc3\xa9 \xe2\x9c\x93\t$${'$'}{X}";
    const char *expr =
        "  ${state.out.ready == true && state.out.note != 'a\\'b\"c\\\\d}'}  ";
    const char *until =
        "${state.out.ready == true && state.out.note != 'a\\'b\"c\\\\d}'}";
    const char *p = t_path("poll.yaml");
    char got_cmd[4096], got_until[4096];

    T_EQ_I64(c_lil(out, err, "new poller --from-shell %s --until %s --out %s", shq(cmd),
                   shq(expr), shq(p)),
             0);
    check_generated(p, "poll-until");
    T_REQUIRE(spec_cmd_until(p, got_cmd, got_until, sizeof(got_cmd)));
    T_EQ_STR(got_cmd, cmd_spec);
    T_EQ_STR(got_until, until);
    /* a poll loop: no no_progress cap (the same answer is a wait) */
    T_EQ_I64(c_lil(out, err,
                   "new p2 --from-shell 'test -f /tmp/x' --until 'state.code == 0'"),
             0);
    T_CHECK(strstr(out, "no_progress:") == NULL);
    T_CONTAINS(out, "on_cap_exceeded: fail");
    T_CONTAINS(out, "until: \"${state.code == 0}\"");
    T_CONTAINS(out, "cmd: \"test -f /tmp/x\"");
    T_EQ_I64(c_lil(out, err, "new p3 --from-shell true --until 'state.polls >= 3'"), 0);
}

/* A --from-shell spec has no no_progress cap on purpose: validate and run
 * print the LoopSpec warning no-fingerprint (docs/cli.md, "lil new"), and
 * nothing else changes -- validate's exit 0 and JSON, run's exit status
 * and JSON result. */
T_TEST(new_from_shell_spec_warns_no_fingerprint_only)
{
    const char *p = t_path("ready.yaml");
    json_error_t jerr;
    json_t *doc;

    T_EQ_I64(c_lil(out, err,
                   "new ready --from-shell true --until 'state.code == 0' "
                   "--out %s",
                   shq(p)),
             0);
    T_EQ_I64(c_lil(out, err, "validate --json %s", shq(p)), 0);
    doc = json_loads(out, 0, &jerr);
    T_REQUIRE(doc != NULL);
    T_CHECK(json_is_true(json_object_get(doc, "ok")));
    T_EQ_I64(json_integer_value(json_object_get(doc, "warnings")), 1);
    T_EQ_STR(json_string_value(json_object_get(
                 json_array_get(json_object_get(doc, "diagnostics"), 0), "code")),
             "no-fingerprint");
    json_decref(doc);
    T_EQ_I64(c_lil(out, err, "--dir %s run %s --json --progress off",
                   shq(t_path("store")), shq(p)),
             0);
    T_CONTAINS(err, "warning: pattern poll-until should set caps.no_progress");
    T_CONTAINS(err, "[no-fingerprint]");
    doc = json_loads(out, 0, &jerr);
    T_REQUIRE(doc != NULL);
    T_EQ_STR(json_string_value(json_object_get(doc, "status")), "completed");
    json_decref(doc);
}

T_TEST(new_from_shell_bad_expr)
{
    const char *p = t_path("bad.yaml");

    /* an undeclared var: bad-ref, told once, at its column in EXPR (not
     * at lines of the generated file, nor inside the wait's `not (...)`);
     * nothing written */
    T_EQ_I64(c_lil(out, err,
                   "new x --from-shell true --until 'state.code == 0 && state.nope' "
                   "--out %s",
                   shq(p)),
             1);
    T_EQ_STR(err, "lil: new: --until, column 20: reference to undeclared state var "
                  "'state.nope' [bad-ref]\n"
                  "    state.code == 0 && state.nope\n"
                  "                       ^\n"
                  "lil: new: --until EXPR has errors (above); nothing written\n");
    T_CHECK(!file_exists(p));
    T_EQ_I64(count_entries(".lil-new"), 0);
    /* a syntax error, to stdout: nothing printed there; the column is the
     * one in EXPR as typed (inside its "${...}") */
    T_EQ_I64(c_lil(out, err, "new x --from-shell true --until ' ${foo(1}'"), 1);
    T_EQ_STR(out, "");
    T_CONTAINS(err, "--until, column 7: ");
    T_CONTAINS(err, "[bad-expr]");
    T_CHECK(strstr(err, "generated") == NULL);
    T_CHECK(strstr(err, "not (") == NULL);
    T_CHECK(strstr(err, "terminate.until") == NULL);
    /* "${" inside an expression is not allowed */
    T_EQ_I64(c_lil(out, err, "new x --from-shell true --until 'state.code == ${1}'"),
             1);
    T_EQ_STR(out, "");
}

/* ------------------------------------------------------------------------ */
/* explain                                                                   */

T_TEST(explain_injected_caps)
{
    /* no caps: injected for react (25 iterations, 200000 tokens, $5, 1h) */
    char spec[sizeof(valid_spec)];
    const char *p;
    json_t *doc;

    snprintf(spec, sizeof(spec), "%.*s",
             (int)(strstr(valid_spec, "caps:") - valid_spec), valid_spec);
    p = spec_file("nocaps.yaml", spec);
    T_EQ_I64(c_lil(out, err, "explain %s", shq(p)), 0);
    T_CONTAINS(out, "loop t: pattern react\n");
    T_CONTAINS(out, "\ncaps (injected for pattern react: the spec has no caps):\n"
                    "  max_iterations   25, then pause for approval\n"
                    "  budget           tokens 200000, usd 5, wallclock 1h; past any, "
                    "pause for approval\n"
                    "  no_progress      none\n"
                    "  on_cap_exceeded  breakpoint: the run pauses (exit 3) until "
                    "approved (`lil approve`, or --approve)\n");
    T_CONTAINS(out, "\nexit (signal state-predicate):\n"
                    "  until            ${state.done == true}\n"
                    "  reads            state.done\n"
                    "  written by       state.done <- w (agent, set, unguarded)\n"
                    "  grounding        structural");
    T_CONTAINS(out, "\nsteps, in order:\n"
                    "  1. w (agent)\n"
                    "     prompt  do\n"
                    "     harness claude-code\n"
                    "     writes  state.done (set)\n");
    T_CONTAINS(out, "note [caps-injected]");
    T_EQ_I64(c_lil(out, err, "explain --json %s", shq(p)), 0);
    doc = c_json(out);
    T_REQUIRE(json_is_object(doc));
    T_CHECK(json_is_true(json_object_get(json_object_get(doc, "caps"), "injected")));
    T_EQ_I64(json_integer_value(
                 json_object_get(json_object_get(doc, "caps"), "max_iterations")),
             25);
    T_EQ_STR(json_string_value(json_object_get(doc, "pattern")), "react");
    json_decref(doc);
}

T_TEST(explain_steps_guards_and_reduce)
{
    T_EQ_I64(c_lil(out, err, "explain %s", shq(T_EXAMPLES_DIR "/map-reduce.yaml")), 0);
    T_CONTAINS(out, "caps (from the spec):\n  max_iterations   2, then ");
    T_CONTAINS(out, "  2. measure-each (reduce)\n"
                    "     over    ${state.files} as file\n"
                    "     2.1. measure (shell)\n"
                    "          cmd     wc -c < '${file}' | tr -d ' '\n"
                    "          writes  state.last_size (save)\n"
                    "     2.2. collect (shell)\n"
                    "          cmd     true\n"
                    "          writes  state.sizes (append)\n"
                    "  3. summarize (agent)\n");
    T_EQ_I64(c_lil(out, err, "explain %s", shq(T_EXAMPLES_DIR "/poll-until.yaml")), 0);
    T_CONTAINS(out,
               "  2. wait (sleep)\n"
               "     when    ${state.status != 'ready' && state.status != 'failed'}\n"
               "     for     2s\n");
    T_EQ_I64(c_lil(out, err, "explain %s", shq(T_EXAMPLES_DIR "/react.yaml")), 0);
    T_CONTAINS(out, "  2. fix (agent)\n"
                    "     when    ${state.code != 0}\n"
                    "     prompt  Make the file work/greeting.txt contain exactly one "
                    "line: he\u2026\n"
                    "     harness cli\n"
                    "     writes  state.attempts (incr)\n");
    T_CONTAINS(out, "  grounding        external");
    T_CONTAINS(out, "  on_exit          shell: echo greeting fixed");
    /* stdin */
    T_EQ_I64(c_lil(out, err, "new piped | '%s' explain -", t_lil_bin()), 0);
    T_CONTAINS(out, "loop piped: pattern react\n");
}

T_TEST(explain_invalid_prints_diagnostics)
{
    const char *p = spec_file("bad.yaml", bad_ref_spec);
    json_t *doc;

    T_EQ_I64(c_lil(out, err, "explain %s", shq(p)), 1);
    T_CONTAINS(out, ":12:");
    T_CONTAINS(out, "[bad-ref]");
    T_CONTAINS(out, "\u2717 invalid");
    T_EQ_I64(c_lil(out, err, "explain --json %s", shq(p)), 1);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_CHECK(json_is_false(json_object_get(doc, "ok")));
    json_decref(doc);
    T_EQ_I64(c_lil(out, err, "explain %s", shq(t_path("missing.yaml"))), 1);
    T_CONTAINS(err, "missing.yaml");
    T_EQ_I64(c_lil(out, err, "explain"), 64);
}

/* ------------------------------------------------------------------------ */
/* Bad input                                                                 */

/* Validate the bytes; expect exit 1 and a name:line:col: diagnostic. */
static void bad_input(const char *name, const void *data, size_t len)
{
    const char *p = t_path(name);
    unsigned line = 0, col = 0;
    int rc;

    write_file(p, data, len);
    rc = c_lil(out, err, "validate %s", shq(p));
    if (rc != 1)
        fprintf(stderr, "%s: exit %d\n%.2000s%.2000s\n", name, rc, out, err);
    T_EQ_I64(rc, 1);
    T_CHECK(strstr(err, "Sanitizer") == NULL); /* ASan exits 1 too */
    T_CHECK(strstr(err, "runtime error") == NULL);
    T_CHECK(first_position(out, p, &line, &col));
    T_CHECK(line >= 1 && col >= 1);
    T_CHECK(strlen(out) < 20000); /* a long line is shown as a window */
}

T_TEST(bad_input_empty)
{
    bad_input("empty.yaml", "", 0);
}

T_TEST(bad_input_binary)
{
    unsigned char junk[4096];
    unsigned v = 12345;

    for (size_t i = 0; i < sizeof(junk); i++) {
        v = v * 1103515245u + 12345u;
        junk[i] = (unsigned char)(v >> 16);
    }
    bad_input("junk.yaml", junk, sizeof(junk));
}

T_TEST(bad_input_two_mib)
{
    size_t len = 2u << 20;
    char *big = malloc(len);

    T_REQUIRE(big);
    memset(big, 'a', len);
    memcpy(big, "id: ", 4);
    bad_input("big.yaml", big, len);
    for (size_t i = 80; i < len; i += 80)
        big[i] = '\n';
    bad_input("big-lines.yaml", big, len);
    free(big);
}

T_TEST(bad_input_deep_nesting)
{
    size_t n = 10000;
    char *deep = malloc(n);

    T_REQUIRE(deep);
    memset(deep, '[', n);
    bad_input("deep.yaml", deep, n);
    bad_input("deep.json", deep, n);
    free(deep);
}

T_TEST(bad_input_truncated)
{
    size_t cut = (size_t)(strstr(valid_spec, "until: \"${sta") - valid_spec) + 14;

    bad_input("cut.yaml", valid_spec, cut);
    bad_input("cut2.yaml", valid_spec, 40);
    bad_input("cut.json", "{\"loopspec\": \"0.1\", \"id\": \"t", 28);
}

T_TEST(bad_input_invalid_utf8)
{
    char spec[sizeof(valid_spec) + 8];
    char *at;

    memcpy(spec, valid_spec, sizeof(valid_spec));
    at = strstr(spec, "prompt: do");
    T_REQUIRE(at);
    at[8] = (char)0xff;
    at[9] = (char)0xfe;
    bad_input("utf8.yaml", spec, strlen(valid_spec));
}

T_TEST(bad_input_control_char_escaped)
{
    char spec[sizeof(valid_spec) + 8], line[1024], pfx[512], want[1024];
    unsigned ln = 0, col = 0;
    const char *p = t_path("ctl.yaml");

    snprintf(spec, sizeof(spec), "loopspec: \"0.1\"\nid: t\x01\x7f\n%s",
             strstr(valid_spec, "pattern:"));
    bad_input("ctl.yaml", spec, strlen(spec));
    T_REQUIRE(first_position(out, p, &ln, &col));
    T_EQ_I64(ln, 2);
    T_CHECK(col >= 6);
    snprintf(pfx, sizeof(pfx), "%s:%u:%u: ", p, ln, col);
    T_REQUIRE(line_after(out, pfx, 0, line, sizeof(line)));
    T_EQ_STR(line, "    2 | id: t\\x01\\x7f");
    T_REQUIRE(line_after(out, pfx, 1, line, sizeof(line)));
    expect_caret("id: t\x01\x7f", 2, col, want, sizeof(want));
    T_EQ_STR(line, want);
}

/* An oversized spec: its real size (not the bytes read), the limit and how
 * to raise it, at line 1; LIL_SPEC_MAX_BYTES raises or lowers the limit,
 * for a file and for stdin. */
T_TEST(oversized_spec_says_size_limit_and_how_to_raise)
{
    size_t len = 2u << 20;
    char *big = malloc(len);
    const char *p = t_path("huge.yaml"), *small;
    char want[512];
    int rc;

    T_REQUIRE(big);
    memset(big, '#', len);
    memcpy(big, "loopspec: \"0.1\"\n", 16);
    for (size_t i = 100; i < len; i += 100)
        big[i] = '\n';
    write_file(p, big, len);
    free(big);
    rc = c_lil(out, err, "validate %s", shq(p));
    T_EQ_I64(rc, 1);
    snprintf(want, sizeof(want),
             "%s:1:1: error: the spec is 2097152 bytes, more than the limit of "
             "1048576 bytes: make it smaller, or raise the limit",
             p);
    T_CONTAINS(out, want);
    T_CONTAINS(out, "LIL_SPEC_MAX_BYTES");
    T_CONTAINS(out, "    1 | loopspec: \"0.1\"\n");

    /* raised: the size is no longer the problem */
    T_CHECK(setenv("LIL_SPEC_MAX_BYTES", "3000000", 1) == 0);
    rc = c_lil(out, err, "validate %s", shq(p));
    T_EQ_I64(rc, 1);
    T_CHECK(strstr(out, "more than the limit") == NULL);
    T_CONTAINS(out, "missing required top-level key");

    /* lowered: a small valid spec, then the same text on stdin */
    T_CHECK(setenv("LIL_SPEC_MAX_BYTES", "100", 1) == 0);
    small = spec_file("small.yaml", valid_spec);
    rc = c_lil(out, err, "validate %s", shq(small));
    T_EQ_I64(rc, 1);
    snprintf(want, sizeof(want),
             "%s:1:1: error: the spec is %zu bytes, more than the limit of 100 bytes",
             small, strlen(valid_spec));
    T_CONTAINS(out, want);
    rc = c_lil(out, err, "validate - < %s", shq(small));
    T_EQ_I64(rc, 1);
    snprintf(want, sizeof(want),
             "<stdin>: the spec is %zu bytes, more than the limit of 100 bytes",
             strlen(valid_spec));
    T_CONTAINS(err, want);
    T_CONTAINS(err, "LIL_SPEC_MAX_BYTES");

    /* not a number: refused, naming the variable */
    T_CHECK(setenv("LIL_SPEC_MAX_BYTES", "1MB", 1) == 0);
    rc = c_lil(out, err, "validate %s", shq(small));
    T_EQ_I64(rc, 1);
    T_CONTAINS(err, "LIL_SPEC_MAX_BYTES must be a positive number of bytes, not '1MB'");
    T_CHECK(unsetenv("LIL_SPEC_MAX_BYTES") == 0);
    T_EQ_I64(c_lil(out, err, "validate %s", shq(small)), 0);
}

T_MAIN()
