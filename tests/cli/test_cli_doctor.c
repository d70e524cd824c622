/*
 * test_cli_doctor.c -- `lil doctor` through the binary.
 *
 * What each test proves:
 *   - a healthy spec and store: every line in the order of docs/loops.md, exit
 *     0, the probe file removed, and the journals of the store untouched
 *     even while another process holds one of them (no lock taken);
 *   - a store that does not exist yet: fine when its parent is writable
 *     (and doctor does not create it); a missing parent, a file in the
 *     store's place, and an unwritable directory (/proc) fail;
 *   - budgets: the warning without one, the budget shown, the usd note
 *     saying which harnesses are not available in this version;
 *   - an agent step (or on_exit) with a harness other than internal fails;
 *   - the agent limits: defaults, LOOPY_* names, LIL_* winning, blanks,
 *     and invalid values failing with the variable and its value; the
 *     limits in force with where each came from (max tokens included);
 *   - every harness: ready (internal, a fake CLI named by its _BIN
 *     variable, `cli` with LIL_AGENT_CMD) or what to set (a missing
 *     binary, no LLM configured);
 *   - the llm harness: provider, base URL (credentials redacted), model and
 *     key variable with their sources, whether the model is priced (the
 *     table, LIL_/LOOPY_ price overrides, none: a warning only when a step
 *     uses llm); the key and the URL's password in no byte of stdout,
 *     stderr or the --json document;
 *   - --json (with "agents"); an invalid spec (1) and usage errors (64).
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

/* Every setting of the harnesses unset: no LLM, no CLI named, default
 * limits (a CLI on this machine's PATH may still be found). */
static void clear_limits(void)
{
    static const char *const names[] = {
        "AGENT_TIMEOUT_MS", "AGENT_MAX_BUFFER", "AGENT_CMD",  "LLM_API_KEY",
        "LLM_BASE_URL",     "LLM_MODEL",        "LLM_STREAM", "LLM_PRICE_IN",
        "LLM_PRICE_OUT",    "CLAUDE_CODE_BIN",  "CODEX_BIN",  "OPENCODE_BIN",
        "ANTIGRAVITY_BIN",  "CURSOR_AGENT_BIN", "PI_BIN",     "LLM_HEADERS",
        "AGENT_MAX_TOKENS"};
    static const char *const keys[] = {"OPENAI_API_KEY",     "ANTHROPIC_API_KEY",
                                       "GEMINI_API_KEY",     "GROQ_API_KEY",
                                       "OPENROUTER_API_KEY", "AI_GATEWAY_API_KEY"};
    char name[64];

    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        snprintf(name, sizeof(name), "LIL_%s", names[i]);
        unsetenv(name);
        snprintf(name, sizeof(name), "LOOPY_%s", names[i]);
        unsetenv(name);
    }
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
        unsetenv(keys[i]);
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
                    "\u2139 harness internal: ready\n"
                    "\u2139 harness llm: not configured here: ");
    T_CONTAINS(out, "\n\u2713 max_iterations: 7\n"
                    "\u2713 agent limits: cliTimeout=600000ms, llmTimeout=120000ms, "
                    "cliMaxBuffer=16777216 bytes\n"
                    "\u2139 limits in force: llm timeout 120000 ms (default), CLI "
                    "timeout 600000 ms (default), max buffer 16777216 bytes (default), "
                    "max tokens per call 2000 (default)\n"
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
    setenv("LIL_AGENT_MAX_BUFFER", "  ", 1);   /* set and blank: the default, as the
                                                  harnesses read it */
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out,
               "cliTimeout=7000ms, llmTimeout=7000ms, cliMaxBuffer=16777216 bytes");
    T_CONTAINS(out, "max buffer 16777216 bytes (default)");
    unsetenv("LIL_AGENT_MAX_BUFFER");
    setenv("LIL_AGENT_TIMEOUT_MS", "12abc", 1);
    setenv("LOOPY_AGENT_MAX_BUFFER", "0", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 1);
    T_CONTAINS(out,
               "\u2717 invalid agent limits: LIL_AGENT_TIMEOUT_MS must be a positive "
               "integer; got '12abc'\n");
    T_CONTAINS(out, "\u2717 invalid agent limits: LOOPY_AGENT_MAX_BUFFER must be a "
                    "positive integer; got '0'\n");
    T_CHECK(strstr(out, "\u2713 agent limits") == NULL);
    T_CONTAINS(out,
               "\u2139 limits in force: llm timeout invalid (LIL_AGENT_TIMEOUT_MS), "
               "CLI timeout invalid (LIL_AGENT_TIMEOUT_MS), max buffer invalid "
               "(LOOPY_AGENT_MAX_BUFFER), max tokens per call 2000 (default)\n");
    clear_limits();
    setenv("LOOPY_AGENT_TIMEOUT_MS", "9000", 1);
    setenv("LIL_AGENT_MAX_BUFFER", "1024", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out,
               "\u2139 limits in force: llm timeout 9000 ms (LOOPY_AGENT_TIMEOUT_MS), "
               "CLI timeout 9000 ms (LOOPY_AGENT_TIMEOUT_MS), max buffer 1024 bytes "
               "(LIL_AGENT_MAX_BUFFER), max tokens per call 2000 (default)\n");
    setenv("LOOPY_AGENT_MAX_TOKENS", "300", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "max tokens per call 300 (LOOPY_AGENT_MAX_TOKENS)\n");
    setenv("LIL_AGENT_MAX_TOKENS", "-5", 1); /* LIL_ wins, and it is wrong */
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 1);
    T_CONTAINS(out, "\u2717 invalid agent limits: LIL_AGENT_MAX_TOKENS must be a "
                    "positive integer; got '-5'\n");
    T_CONTAINS(out, "max tokens per call invalid (LIL_AGENT_MAX_TOKENS)\n");
    clear_limits();
}

/* ---- the harnesses ------------------------------------------------------------ */

/* An executable script at name in the test's directory; its path. */
static const char *fake_cli(const char *name)
{
    static char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s", t_path(name));
    f = fopen(path, "w");
    if (f) {
        fputs("#!/bin/sh\necho '{}'\n", f);
        fclose(f);
    }
    chmod(path, 0755);
    return path;
}

T_TEST(harness_table)
{
    const char *spec = PLAIN;

    clear_limits();
    setenv("LIL_CLAUDE_CODE_BIN", fake_cli("fake-claude"), 1);
    setenv("LOOPY_CODEX_BIN", "/nonexistent/codex", 1);
    setenv("LIL_AGENT_CMD", "echo hi", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out,
               "\u2139 harness internal: ready\n"
               "\u2139 harness llm: not configured here: agent harness 'llm' needs "
               "an LLM configured - set LIL_LLM_API_KEY or LOOPY_LLM_API_KEY");
    T_CONTAINS(out, "\u2139 harness claude-code: ready\n"
                    "\u2139 harness codex: not configured here: agent harness 'codex' "
                    "cannot run '/nonexistent/codex'");
    T_CONTAINS(out, "\u2139 harness cli: ready\n");
    T_CHECK(strstr(out, "llm model") == NULL); /* no price line without an LLM */
    clear_limits();
}

#define KEY_SECRET "sk-doctor-key-7f6e5d4c3b2a"
#define URL_SECRET "url-password-1a2b3c"

/* Neither secret anywhere in what doctor wrote. */
static void no_secret(void)
{
    T_CHECK(strstr(out, KEY_SECRET) == NULL);
    T_CHECK(strstr(err, KEY_SECRET) == NULL);
    T_CHECK(strstr(out, URL_SECRET) == NULL);
    T_CHECK(strstr(err, URL_SECRET) == NULL);
}

T_TEST(llm_custom_server)
{
    const char *spec =
        spec_with("caps: { max_iterations: 7, budget: { usd: 1 } }\n", "llm");
    json_t *doc, *llm;

    clear_limits();
    setenv("LIL_LLM_BASE_URL",
           "http://me:" URL_SECRET "@127.0.0.1:9/" KEY_SECRET "/v1?api_key=x&n=1", 1);
    setenv("LIL_LLM_API_KEY", KEY_SECRET, 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "\u2713 agent step 'think': harness 'llm' can run here\n");
    T_CONTAINS(out,
               "\u2139 harness llm: ready: provider custom, base URL "
               "http://[redacted]@127.0.0.1:9/[redacted]/v1?api_key=[redacted]&n=1 "
               "(LIL_LLM_BASE_URL), model gpt-4o-mini (default), key set "
               "(LIL_LLM_API_KEY), stream off\n"
               "\u2713 llm model 'gpt-4o-mini' is priced per million tokens: in "
               "$0.15 (table), out $0.6 (table)\n");
    no_secret();
    T_EQ_I64(c_lil(out, err, "--json --dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    no_secret();
    doc = c_json(out);
    T_REQUIRE(doc);
    llm = json_object_get(json_object_get(doc, "agents"), "llm");
    T_CHECK(json_is_true(json_object_get(llm, "key_set")));
    T_EQ_STR(json_string_value(json_object_get(llm, "key_from")), "LIL_LLM_API_KEY");
    T_EQ_STR(json_string_value(json_object_get(llm, "model_from")), "default");
    T_CHECK(json_is_true(json_object_get(llm, "priced")));
    T_CHECK(json_real_value(json_object_get(llm, "price_in")) == 0.15);
    T_EQ_STR(json_string_value(json_object_get(llm, "price_out_from")), "table");
    json_decref(doc);
    unsetenv("LIL_LLM_API_KEY"); /* a keyless local server */
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "(default), no key (a keyless server), stream off\n");
    clear_limits();
}

T_TEST(llm_provider_key_and_prices)
{
    const char *spec = spec_with("caps: { max_iterations: 7 }\n", "llm");

    clear_limits();
    setenv("ANTHROPIC_API_KEY", KEY_SECRET, 1);
    setenv("LOOPY_LLM_MODEL", "my-local-model", 1);
    setenv("LIL_LLM_STREAM", "on", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out,
               "\u2139 harness llm: ready: provider anthropic, base URL "
               "https://api.anthropic.com/v1 (provider), model my-local-model "
               "(LOOPY_LLM_MODEL), key set (ANTHROPIC_API_KEY), stream on\n"
               "\u26a0 llm model 'my-local-model' has no price (in none, out none): "
               "its calls are unpriced unless the provider reports their cost - "
               "set LIL_LLM_PRICE_IN and LIL_LLM_PRICE_OUT");
    no_secret();
    setenv("LIL_LLM_PRICE_IN", "1.5", 1);
    setenv("LOOPY_LLM_PRICE_OUT", "2", 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "\u2713 llm model 'my-local-model' is priced per million tokens: "
                    "in $1.5 (LIL_LLM_PRICE_IN), out $2 (LOOPY_LLM_PRICE_OUT)\n");
    unsetenv("LIL_LLM_PRICE_IN"); /* half a price is none */
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), spec), 0);
    T_CONTAINS(out, "has no price (in none, out $2 (LOOPY_LLM_PRICE_OUT))");
    /* a spec without an llm step: the missing price is a note, not a warning */
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", t_tmpdir(), PLAIN), 0);
    T_CONTAINS(out, "\u2139 llm model 'my-local-model' has no price");
    no_secret();
    clear_limits();
}

T_TEST(json_document)
{
    const char *spec = PLAIN;
    json_t *doc, *checks, *agents;
    bool failed_limit = false;

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
    for (size_t i = 0; i < json_array_size(checks); i++) {
        json_t *c = json_array_get(checks, i);
        if (strcmp(json_string_value(json_object_get(c, "check")), "agent-limits") != 0)
            continue;
        T_EQ_STR(json_string_value(json_object_get(c, "level")), "fail");
        T_CONTAINS(json_string_value(json_object_get(c, "message")),
                   "LIL_AGENT_TIMEOUT_MS must be a positive integer; got '-1'");
        failed_limit = true;
    }
    T_CHECK(failed_limit);
    agents = json_object_get(doc, "agents");
    T_EQ_I64((int64_t)json_array_size(json_object_get(agents, "harnesses")), 9);
    T_CHECK(
        json_is_false(json_object_get(json_object_get(agents, "llm"), "configured")));
    T_CHECK(json_is_null(json_object_get(
        json_object_get(json_object_get(agents, "limits"), "llm_timeout_ms"),
        "value")));
    T_EQ_I64(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(agents, "limits"), "max_tokens"), "value")),
        2000);
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
