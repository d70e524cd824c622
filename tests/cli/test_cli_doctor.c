/*
 * test_cli_doctor.c -- `lil doctor` through the binary.
 *
 * What each test proves:
 *   - a healthy spec and store: every line in the contract's order, exit
 *     0, the probe file removed, and the journals of the store untouched
 *     even while another process holds one of them (no lock taken);
 *   - a store that does not exist yet: fine when its parent is writable
 *     (and doctor does not create it); a missing parent, a file in the
 *     store's place, and an unwritable directory (/proc) fail;
 *   - budgets: the warning without one, the budget shown, the usd note
 *     saying which harnesses are not available in this version;
 *   - an agent step (or on_exit) with a harness other than internal fails;
 *   - the agent limits: defaults, LOOPY_* names, LIL_* winning, blanks,
 *     and invalid values failing with the variable and its value;
 *   - --json; an invalid spec (1) and usage errors (64).
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

static const char *spec_with(const char *caps, const char *harness)
{
    static char buf[2048];
    const char *p = t_path("loop.yaml");
    FILE *f;

    snprintf(buf, sizeof(buf),
             "loopspec: \"0.1\"\n"
             "id: doc\n"
             "pattern: react\n"
             "state: { vars: { n: { type: int, init: 0 } } }\n"
             "body:\n"
             "  - { id: bump, kind: shell, cmd: \"true\", on_done: { incr: n } }\n"
             "  - { id: think, kind: agent, harness: %s, prompt: \"p\" }\n"
             "terminate: { signal: state-predicate, until: \"${state.n >= 2}\" }\n"
             "%s",
             harness, caps);
    f = fopen(p, "wb");
    if (f) {
        fputs(buf, f);
        fclose(f);
    }
    return p;
}

#define PLAIN spec_with("caps: { max_iterations: 7 }\n", "internal")

static void clear_limits(void)
{
    unsetenv("LIL_AGENT_TIMEOUT_MS");
    unsetenv("LOOPY_AGENT_TIMEOUT_MS");
    unsetenv("LIL_AGENT_MAX_BUFFER");
    unsetenv("LOOPY_AGENT_MAX_BUFFER");
}

static bool exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* Entries of dir named like doctor's probe. */
static int probes(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        n += strncmp(e->d_name, ".lil-doctor-", 12) == 0;
    if (d)
        closedir(d);
    return d ? n : -1;
}

T_TEST(healthy)
{
    T_FILE_ONLY();
    const char *spec = PLAIN;
    uint64_t before;
    pid_t holder;

    clear_limits();
    c_make_run("other", 2, false);
    holder = c_hold("other");
    T_REQUIRE(holder > 0);
    before = c_file_hash(c_journal("other"));
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", c_store(), spec), 0);
    c_release(holder);
    T_CONTAINS(out, "doctor \u2014 loop 'doc'\n"
                    "\u2713 store dir writable (");
    T_CONTAINS(out, ")\n\u26a0 no token/$/wallclock budget\n"
                    "\u2713 agent step 'think': harness 'internal' can run here\n"
                    "\u2713 max_iterations: 7\n"
                    "\u2713 agent limits: cliTimeout=600000ms, llmTimeout=120000ms, "
                    "cliMaxBuffer=16777216 bytes\n"
                    "\u2139 termination signal: state-predicate\n"
                    "\u2139 lil: ");
    T_CONTAINS(out, lil_version());
    T_EQ_I64((int64_t)c_file_hash(c_journal("other")), (int64_t)before);
    T_EQ_I64(probes(c_store()), 0);
}

T_TEST(store_not_there_yet)
{
    const char *spec = PLAIN;
    const char *dir = t_path("fresh");

    clear_limits();
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", dir, spec), 0);
    T_CONTAINS(out, "does not exist yet; its parent");
    T_CONTAINS(out, "is writable (`lil run` creates it)");
    T_CHECK(!exists(dir));
    T_EQ_I64(c_lil(out, err, "--dir '%s/a/b' doctor '%s'", dir, spec), 1);
    T_CONTAINS(out, "\u2717 store dir ");
    T_CONTAINS(out, "is NOT writable");
}

T_TEST(store_unusable)
{
    const char *spec = PLAIN;
    FILE *f = fopen(t_path("afile"), "wb");

    clear_limits();
    if (f)
        fclose(f);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_path("afile"), spec), 1);
    T_CONTAINS(out, "is NOT a directory");
    T_EQ_I64(c_lil(out, err, "--dir /proc doctor '%s'", spec), 1); /* even for root */
    T_CONTAINS(out, "\u2717 store dir NOT writable: /proc/.lil-doctor-");
}

T_TEST(budgets)
{
    const char *spec = spec_with(
        "caps: { max_iterations: 7, budget: { tokens: 100, usd: 2.5 } }\n", "internal");

    clear_limits();
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "\u2713 budget set: {\"tokens\":100,\"usd\":2.5}\n");
    T_CONTAINS(out, "\u2139 usd budget ($2.5): claude-code and pi report their cost");
    T_CONTAINS(out, "\u2713 agent step 'think': harness 'internal' can run here");
}

T_TEST(unavailable_harness)
{
    const char *spec = spec_with("caps: { max_iterations: 7 }\n", "claude-code");

    clear_limits();
    setenv("LIL_CLAUDE_CODE_BIN", "/nonexistent/claude", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 1);
    T_CONTAINS(out,
               "\u2717 agent step 'think': harness 'claude-code' cannot run here: ");
    unsetenv("LIL_CLAUDE_CODE_BIN");
}

T_TEST(agent_limits)
{
    const char *spec = PLAIN;

    clear_limits();
    setenv("LOOPY_AGENT_TIMEOUT_MS", "5000", 1);
    setenv("LOOPY_AGENT_MAX_BUFFER", " 4096 ", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "cliTimeout=5000ms, llmTimeout=5000ms, cliMaxBuffer=4096 bytes");
    setenv("LIL_AGENT_TIMEOUT_MS", "7000", 1); /* LIL_ wins */
    setenv("LIL_AGENT_MAX_BUFFER", "  ", 1);   /* blank: the LOOPY_ one */
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "cliTimeout=7000ms, llmTimeout=7000ms, cliMaxBuffer=4096 bytes");
    setenv("LIL_AGENT_TIMEOUT_MS", "12abc", 1);
    setenv("LOOPY_AGENT_MAX_BUFFER", "0", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 1);
    T_CONTAINS(out,
               "\u2717 invalid agent limits: LIL_AGENT_TIMEOUT_MS must be a positive "
               "integer; got '12abc'\n");
    T_CONTAINS(out, "\u2717 invalid agent limits: LOOPY_AGENT_MAX_BUFFER must be a "
                    "positive integer; got '0'\n");
    T_CHECK(strstr(out, "\u2713 agent limits") == NULL);
    clear_limits();
}

T_TEST(json_document)
{
    const char *spec = PLAIN;
    json_t *doc, *checks;

    clear_limits();
    setenv("LIL_AGENT_TIMEOUT_MS", "-1", 1);
    T_EQ_I64(c_lil(out, err, "--json --dir '%s' doctor '%s'", t_tmpdir(), spec), 1);
    clear_limits();
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_STR(json_string_value(json_object_get(doc, "loop")), "doc");
    T_CHECK(json_is_false(json_object_get(doc, "ok")));
    T_EQ_STR(json_string_value(json_object_get(doc, "version")), lil_version());
    checks = json_object_get(doc, "checks");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(checks, 0), "check")),
             "store");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(checks, 4), "level")),
             "fail");
    T_CONTAINS(json_string_value(json_object_get(json_array_get(checks, 4), "message")),
               "LIL_AGENT_TIMEOUT_MS must be a positive integer; got '-1'");
    json_decref(doc);
}

T_TEST(bad_input)
{
    FILE *f = fopen(t_path("bad.yaml"), "wb");

    if (f) {
        fputs("loopspec: \"0.1\"\nid: t\npattern: react\n", f);
        fclose(f);
    }
    T_EQ_I64(c_lil(out, err, "doctor '%s'", t_path("bad.yaml")), 1);
    T_CONTAINS(err, "is not a valid loop spec");
    T_EQ_I64(c_lil(out, err, "doctor '%s'", t_path("missing.yaml")), 1);
    T_EQ_I64(c_lil(out, err, "doctor"), 64);
    T_EQ_I64(c_lil(out, err, "doctor a.yaml b.yaml"), 64);
    T_EQ_I64(c_lil(out, err, "doctor a.yaml --fix"), 64);
}

T_MAIN()
