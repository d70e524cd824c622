/*
 * test_agent_cli.c -- the coding-agent CLI harnesses and `cli`
 * (src/agents/agent_cli.c; docs/loops.md, "Agent harnesses"), against fake CLIs.
 *
 * The fake is one shell script written by the test: it records its name
 * ($0's last part) and every argument it received, its working directory
 * and FAKE_SECRET (to show which environment it got), then answers with
 * the file `reply`, FAKE_ERR on stderr, after FAKE_SLEEP seconds, with
 * FAKE_EXIT as its exit status, or FAKE_BIG bytes of zeros.  Settings come
 * from the call's envp, so each test names its own.
 *
 * Checked: the exact argv of every harness (claude-code with and without
 * --allowedTools; the prompt after "--", also one that looks like a flag;
 * `cli` refusing such a prompt unless its command ends in "--"), the
 * scrubbed environment a CLI gets (its own provider's key, never lil's
 * secrets nor another harness's key, a name allowed by the caller), the default binary
 * names found on PATH, LIL_<NAME>_BIN over LOOPY_<NAME>_BIN (blank LIL_ ignored, values
 * trimmed), the environment and working directory the CLI gets, a binary that is not
 * there (ready: LIL_E_INVAL naming the variable; call: LIL_E_CHILD with
 * the reference's message), a failing CLI, the timeout and buffer limits and
 * their bad values, `cli` with and without LIL_/LOOPY_AGENT_CMD, and the
 * unwrapping and usage vectors of the reference: generic text,
 * claude-code's envelope, pi's NDJSON stream, `cli`, the limits and
 * failures, with estimated
 * usage for the CLIs that report none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/agent.h"
#include "base/buf.h"
#include "t.h"

static struct lil_err E;

static lil_env *env(void)
{
    static lil_env *e;

    if (!e && lil_env_new(&e) != LIL_OK)
        abort();
    return e;
}

static const char FAKE[] =
    "#!/bin/sh\n"
    "d=$(dirname \"$0\")\n"
    "{ printf '%s' \"${0##*/}\"; for a in \"$@\"; do printf '[%s]' \"$a\"; done; }"
    " > \"$d/argv\"\n"
    "printf '%s' \"$(pwd)\" > \"$d/cwd\"\n"
    "printf '%s' \"$FAKE_SECRET\" > \"$d/secret\"\n"
    "env > \"$d/env\"\n"
    "[ -n \"$FAKE_SLEEP\" ] && sleep \"$FAKE_SLEEP\"\n"
    "[ -n \"$FAKE_ERR\" ] && echo \"$FAKE_ERR\" >&2\n"
    "[ -n \"$FAKE_BIG\" ] && head -c \"$FAKE_BIG\" /dev/zero\n"
    "[ -f \"$d/reply\" ] && cat \"$d/reply\"\n"
    "exit \"${FAKE_EXIT:-0}\"\n";

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    T_REQUIRE(f != NULL);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static char *read_file(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    size_t n = 0;

    buf[0] = '\0';
    if (f) {
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

/* The fake at <tmpdir>/name; its path (static). */
static const char *fake(const char *name)
{
    static char path[4096];

    snprintf(path, sizeof(path), "%s", t_path(name));
    write_file(path, FAKE, 0755);
    return path;
}

static void reply(const char *text)
{
    write_file(t_path("reply"), text, 0644);
}

/* envp of up to 15 entries, "PATH=/usr/bin:/bin" added. */
struct envp {
    char *v[16];
    char store[16][8400];
    size_t n;
};

static void env_add(struct envp *e, const char *name, const char *value)
{
    snprintf(e->store[e->n], sizeof(e->store[0]), "%s=%s", name, value);
    e->v[e->n] = e->store[e->n];
    e->n++;
    e->v[e->n] = NULL;
}

static void env_init(struct envp *e)
{
    memset(e, 0, sizeof(*e));
    env_add(e, "PATH", "/usr/bin:/bin");
}

/* What the fake's child environment may hold besides the harness's own:
 * the fake's knobs always (not FAKE_SECRET), plus one list a test sets
 * (--env-allow). */
static const char *test_allow[2] = {"FAKE_EXIT,FAKE_SLEEP,FAKE_ERR,FAKE_BIG", NULL};

/* One call; the canonical text of the result (static) or "ERR". */
static const char *call_with(const char *harness, const char *prompt,
                             const struct envp *e, const char *const *tools,
                             size_t ntools, struct lil_agent_usage *u, lil_status *rc)
{
    static char text[8192];
    struct lil_agent_call c = {0};
    struct lil_buf b;
    json_t *res = NULL;
    int pgid = -1;

    c.harness = harness;
    c.prompt = prompt;
    c.tools = tools;
    c.ntools = ntools;
    c.envp = (const char *const *)e->v;
    c.env_allow = test_allow;
    c.n_env_allow = 2;
    c.cwd = t_tmpdir();
    c.running_pgid = &pgid;
    memset(&E, 0, sizeof(E));
    *rc = lil__agent_cli_call(env(), &E, &c, &res, u);
    T_CHECK(pgid <= 0); /* never left set after the call */
    snprintf(text, sizeof(text), "ERR");
    if (*rc == LIL_OK && res) {
        lil__buf_init(&b, env(), SIZE_MAX);
        T_OK(lil__json_canon(env(), &E, res, &b));
        snprintf(text, sizeof(text), "%s", (const char *)b.data);
        lil__buf_free(&b);
    } else {
        T_CHECK(*rc != LIL_OK && res == NULL);
    }
    json_decref(res);
    return text;
}

/* The canonical text of JSON text (static). */
static const char *canonical(const char *text)
{
    static char out[8192];
    struct lil_buf b;

    lil__buf_init(&b, env(), SIZE_MAX);
    T_OK(lil__json_canon_text(env(), &E, text, strlen(text), &b));
    snprintf(out, sizeof(out), "%s", b.data ? (const char *)b.data : "");
    lil__buf_free(&b);
    return out;
}

static const char *call(const char *harness, const char *prompt, const struct envp *e,
                        struct lil_agent_usage *u, lil_status *rc)
{
    return call_with(harness, prompt, e, NULL, 0, u, rc);
}

static lil_status ready(const char *harness, const struct envp *e)
{
    struct lil_agent_call c = {0};

    c.harness = harness;
    c.prompt = "p";
    c.envp = (const char *const *)e->v;
    c.cwd = t_tmpdir();
    memset(&E, 0, sizeof(E));
    return lil__agent_cli_ready(env(), &E, &c);
}

/* A codex fake selected by LIL_CODEX_BIN. */
static void codex_env(struct envp *e)
{
    env_init(e);
    env_add(e, "LIL_CODEX_BIN", fake("fake"));
}

/* ---- argv and binaries ---------------------------------------------------------- */

static const struct {
    const char *harness, *var, *argv;
} argv_cases[] = {
    {"claude-code", "LIL_CLAUDE_CODE_BIN",
     "fake[-p][--output-format][json][--][do it]"},
    {"codex", "LIL_CODEX_BIN", "fake[exec][--skip-git-repo-check][--][do it]"},
    {"opencode", "LOOPY_OPENCODE_BIN", "fake[run][--][do it]"},
    {"antigravity", "LIL_ANTIGRAVITY_BIN", "fake[--yes][-p][--][do it]"},
    {"cursor-agent", "LOOPY_CURSOR_AGENT_BIN", "fake[-p][--force][--][do it]"},
    {"pi", "LIL_PI_BIN", "fake[-p][--mode][json][--no-session][--][do it]"},
};

T_TEST(argv_of_every_harness)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    const char *pi_reply =
        "{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\","
        "\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n";

    for (size_t i = 0; i < sizeof(argv_cases) / sizeof(argv_cases[0]); i++) {
        env_init(&e);
        env_add(&e, argv_cases[i].var, fake("fake"));
        env_add(&e, "FAKE_SECRET", "s3");
        reply(strcmp(argv_cases[i].harness, "pi") == 0 ? pi_reply : "{}");
        T_EQ_I64(ready(argv_cases[i].harness, &e), LIL_OK);
        call(argv_cases[i].harness, "do it", &e, &u, &rc);
        T_EQ_I64(rc, LIL_OK);
        T_EQ_STR(read_file(t_path("argv")), argv_cases[i].argv);
        T_EQ_STR(read_file(t_path("secret")), ""); /* scrubbed: not allowed */
        T_EQ_STR(read_file(t_path("cwd")), t_tmpdir());
    }
}

T_TEST(claude_code_allowed_tools)
{
    static const char *const tools[] = {"Read", "Bash(git:*)"};
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    env_init(&e);
    env_add(&e, "LOOPY_CLAUDE_CODE_BIN", fake("claude-fake"));
    reply("{\"result\":\"{}\"}");
    call_with("claude-code", "go", &e, tools, 2, &u, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(
        read_file(t_path("argv")),
        "claude-fake[-p][--output-format][json][--allowedTools][Read,Bash(git:*)][--][go]");
}

T_TEST(default_binary_names_on_path)
{
    static const char *const names[][2] = {
        {"claude-code", "claude"},        {"codex", "codex"},
        {"opencode", "opencode"},         {"antigravity", "agy"},
        {"cursor-agent", "cursor-agent"},
    };
    char path[8192], *old = getenv("PATH");
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    snprintf(path, sizeof(path), "%s:%s", t_tmpdir(), old ? old : "/usr/bin:/bin");
    env_init(&e);
    T_EQ_I64(ready("codex", &e), LIL_E_INVAL); /* no codex on this PATH */
    T_CONTAINS(E.msg, "LIL_CODEX_BIN or LOOPY_CODEX_BIN");
    setenv("PATH", path, 1);
    reply("{}");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        fake(names[i][1]);
        T_EQ_I64(ready(names[i][0], &e), LIL_OK);
        call(names[i][0], "x", &e, &u, &rc);
        T_EQ_I64(rc, LIL_OK);
        T_CHECK(strncmp(read_file(t_path("argv")), names[i][1], strlen(names[i][1])) ==
                0);
    }
    setenv("PATH", old ? old : "/usr/bin:/bin", 1);
}

T_TEST(lil_bin_over_loopy_bin)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    char padded[4200];

    fake("lil-one");
    fake("loopy-one");
    reply("{}");
    env_init(&e);
    env_add(&e, "LIL_CODEX_BIN", t_path("lil-one"));
    env_add(&e, "LOOPY_CODEX_BIN", t_path("loopy-one"));
    call("codex", "x", &e, &u, &rc);
    T_CONTAINS(read_file(t_path("argv")), "lil-one[");
    env_init(&e);
    env_add(&e, "LIL_CODEX_BIN", "");
    snprintf(padded, sizeof(padded), "  %s \n", t_path("loopy-one"));
    env_add(&e, "LOOPY_CODEX_BIN", padded); /* trimmed */
    T_EQ_I64(ready("codex", &e), LIL_OK);
    call("codex", "x", &e, &u, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_CONTAINS(read_file(t_path("argv")), "loopy-one[");
}

T_TEST(missing_binary)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    env_init(&e);
    env_add(&e, "LOOPY_PI_BIN", "/nonexistent/pi");
    T_EQ_I64(ready("pi", &e), LIL_E_INVAL);
    T_EQ_STR(E.msg,
             "agent harness 'pi' cannot run '/nonexistent/pi': no such program on "
             "PATH (LIL_PI_BIN or LOOPY_PI_BIN sets the CLI's path)");
    call("pi", "x", &e, &u, &rc); /* the reference's message when it runs anyway */
    T_EQ_I64(rc, LIL_E_CHILD);
    T_CONTAINS(E.msg,
               "agent harness 'pi' failed while running '/nonexistent/pi' (is the "
               "CLI installed and authenticated?): ");
    T_CONTAINS(E.msg, "No such file or directory");
    write_file(t_path("notexec"), "#!/bin/sh\n", 0644);
    env_init(&e);
    env_add(&e, "LIL_CODEX_BIN", t_path("notexec"));
    T_EQ_I64(ready("codex", &e), LIL_E_INVAL);
}

T_TEST(failing_cli)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    char want[8192];

    codex_env(&e);
    env_add(&e, "FAKE_EXIT", "3");
    env_add(&e, "FAKE_ERR", "not logged in");
    call("codex", "x", &e, &u, &rc);
    T_EQ_I64(rc, LIL_E_CHILD);
    snprintf(
        want, sizeof(want),
        "agent harness 'codex' failed while running '%s' (is the CLI installed and "
        "authenticated?): exit code 3: not logged in",
        t_path("fake"));
    T_EQ_STR(E.msg, want);
}

/* ---- limits --------------------------------------------------------------------- */

T_TEST(bad_limits)
{
    static const struct {
        const char *var, *value, *msg;
    } cases[] = {
        {"LIL_AGENT_TIMEOUT_MS", "abc",
         "LIL_AGENT_TIMEOUT_MS must be a positive integer; "
         "got 'abc'"},
        {"LOOPY_AGENT_TIMEOUT_MS", "0",
         "LOOPY_AGENT_TIMEOUT_MS must be a positive "
         "integer; got '0'"},
        {"LIL_AGENT_MAX_BUFFER", "-5",
         "LIL_AGENT_MAX_BUFFER must be a positive integer; "
         "got '-5'"},
        {"LOOPY_AGENT_MAX_BUFFER", "1.5",
         "LOOPY_AGENT_MAX_BUFFER must be a positive "
         "integer; got '1.5'"},
        {"LIL_AGENT_MAX_BUFFER", "9007199254740992",
         "LIL_AGENT_MAX_BUFFER must be a "
         "positive integer; got "
         "'9007199254740992'"},
    };
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    reply("{}");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        codex_env(&e);
        env_add(&e, cases[i].var, cases[i].value);
        T_EQ_I64(ready("codex", &e), LIL_E_INVAL);
        T_EQ_STR(E.msg, cases[i].msg);
        call("codex", "x", &e, &u, &rc);
        T_EQ_I64(rc, LIL_E_INVAL);
        T_EQ_STR(E.msg, cases[i].msg);
    }
    codex_env(&e); /* blank: the default; LIL_ empty: LOOPY_ read */
    env_add(&e, "LIL_AGENT_TIMEOUT_MS", "");
    env_add(&e, "LOOPY_AGENT_TIMEOUT_MS", "  ");
    env_add(&e, "LIL_AGENT_MAX_BUFFER", " 4096 ");
    T_EQ_I64(ready("codex", &e), LIL_OK);
    call("codex", "x", &e, &u, &rc);
    T_EQ_I64(rc, LIL_OK);
}

T_TEST(timeout_kills_the_cli)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    struct timespec a, b;
    char want[8192];

    codex_env(&e);
    env_add(&e, "LIL_AGENT_TIMEOUT_MS", "300");
    env_add(&e, "FAKE_SLEEP", "20");
    clock_gettime(CLOCK_MONOTONIC, &a);
    call("codex", "x", &e, &u, &rc);
    clock_gettime(CLOCK_MONOTONIC, &b);
    T_EQ_I64(rc, LIL_E_CHILD);
    snprintf(
        want, sizeof(want),
        "agent step exceeded LIL_AGENT_TIMEOUT_MS (300ms) in harness 'codex' while "
        "running '%s'",
        t_path("fake"));
    T_EQ_STR(E.msg, want);
    T_CHECK(b.tv_sec - a.tv_sec < 10); /* the sleeping grandchild did not hold it */
}

T_TEST(output_over_the_buffer)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    char want[8192];

    codex_env(&e);
    env_add(&e, "LOOPY_AGENT_MAX_BUFFER", "100");
    env_add(&e, "FAKE_BIG", "101");
    call("codex", "x", &e, &u, &rc);
    T_EQ_I64(rc, LIL_E_CHILD);
    snprintf(
        want, sizeof(want),
        "agent step exceeded LOOPY_AGENT_MAX_BUFFER (100 bytes) in harness 'codex' "
        "while running '%s'",
        t_path("fake"));
    T_EQ_STR(E.msg, want);
    codex_env(&e); /* exactly the buffer is fine */
    env_add(&e, "LOOPY_AGENT_MAX_BUFFER", "100");
    env_add(&e, "FAKE_BIG", "100");
    call("codex", "x", &e, &u, &rc);
    T_EQ_I64(rc, LIL_OK);
}

/* ---- cli ------------------------------------------------------------------------ */

T_TEST(cli_needs_agent_cmd)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    const char *msg =
        "agent harness 'cli' needs LIL_AGENT_CMD or LOOPY_AGENT_CMD set "
        "(e.g. 'codex exec', 'opencode run', 'agy -p' (antigravity), 'aider "
        "--message') \xe2\x80\x94 the prompt is appended as the final "
        "argument.";

    env_init(&e);
    T_EQ_I64(ready("cli", &e), LIL_E_INVAL);
    T_EQ_STR(E.msg, msg);
    env_add(&e, "LOOPY_AGENT_CMD", "   ");
    call("cli", "x", &e, &u, &rc);
    T_EQ_I64(rc, LIL_E_INVAL);
    T_EQ_STR(E.msg, msg);
    env_init(&e);
    env_add(&e, "LIL_AGENT_CMD", "no-such-agent-cli --go");
    T_EQ_I64(ready("cli", &e), LIL_E_INVAL);
    T_CONTAINS(E.msg, "LIL_AGENT_CMD or LOOPY_AGENT_CMD sets the command");
}

T_TEST(cli_runs_agent_cmd)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    char cmd[4200];

    env_init(&e); /* `cli` with the LOOPY_ name */
    env_add(&e, "LOOPY_AGENT_CMD", "echo ran");
    T_EQ_I64(ready("cli", &e), LIL_OK);
    T_EQ_STR(call("cli", "hello-loop", &e, &u, &rc), "{\"result\":\"ran hello-loop\"}");
    T_EQ_I64(rc, LIL_OK);
    T_CHECK(u.estimated && u.has_tokens);
    fake("agentcmd");
    reply("{\"v\":1}");
    snprintf(cmd, sizeof(cmd), " \t%s  --message\tfast  ", t_path("agentcmd"));
    env_add(&e, "LIL_AGENT_CMD", cmd); /* over LOOPY_; split on blanks */
    T_EQ_STR(call("cli", "a b", &e, &u, &rc), "{\"v\":1}");
    T_EQ_STR(read_file(t_path("argv")), "agentcmd[--message][fast][a b]");
}

/* ---- what a CLI child gets ------------------------------------------------------- */

/* Whether the fake's environment dump has the line NAME=value. */
static bool env_has(const char *name, const char *value)
{
    char line[512];

    snprintf(line, sizeof(line), "%s=%s\n", name, value);
    return strstr(read_file(t_path("env")), line) != NULL;
}

/* lil's own secrets and the other harnesses' keys never reach a CLI; its
 * own provider's variables do, and a name the caller allows. */
T_TEST(cli_child_environment)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    env_init(&e);
    env_add(&e, "LIL_CLAUDE_CODE_BIN", fake("claude"));
    env_add(&e, "LIL_CODEX_BIN", fake("codex"));
    env_add(&e, "LIL_JOURNAL_KEY", "journal-key");
    env_add(&e, "LIL_DIR", "postgresql://lil:pw@db/lil");
    env_add(&e, "LIL_LLM_API_KEY", "llm-key");
    env_add(&e, "ANTHROPIC_API_KEY", "anthropic-key");
    env_add(&e, "OPENAI_API_KEY", "openai-key");
    env_add(&e, "FAKE_SECRET", "s3");
    env_add(&e, "HOME", "/home/u");
    reply("{\"result\":\"{}\"}");
    call("claude-code", "go", &e, &u, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_CHECK(env_has("ANTHROPIC_API_KEY", "anthropic-key"));
    T_CHECK(env_has("HOME", "/home/u"));
    T_CHECK(!env_has("OPENAI_API_KEY", "openai-key"));
    T_CHECK(!env_has("LIL_JOURNAL_KEY", "journal-key"));
    T_CHECK(!env_has("LIL_DIR", "postgresql://lil:pw@db/lil"));
    T_CHECK(!env_has("LIL_LLM_API_KEY", "llm-key"));
    T_EQ_STR(read_file(t_path("secret")), "");
    reply("{}");
    call("codex", "go", &e, &u, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_CHECK(env_has("OPENAI_API_KEY", "openai-key"));
    T_CHECK(!env_has("ANTHROPIC_API_KEY", "anthropic-key"));
    /* --env-allow: the named variable, never a secret through a pattern */
    test_allow[1] = "FAKE_SECRET,LIL_*";
    call("codex", "go", &e, &u, &rc);
    test_allow[1] = NULL;
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(read_file(t_path("secret")), "s3");
    T_CHECK(!env_has("LIL_JOURNAL_KEY", "journal-key"));
    T_CHECK(!env_has("LIL_DIR", "postgresql://lil:pw@db/lil"));
}

/* A prompt that looks like a flag is an argument after "--" for the named
 * CLIs; `cli` refuses it unless its command ends in "--". */
T_TEST(prompt_that_looks_like_a_flag)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;
    char cmd[4200];
    struct lil_agent_call c = {0};

    env_init(&e);
    env_add(&e, "LIL_CLAUDE_CODE_BIN", fake("claude"));
    reply("{\"result\":\"{}\"}");
    call("claude-code", "--dangerously-skip-permissions", &e, &u, &rc);
    T_EQ_I64(rc, LIL_OK);
    T_EQ_STR(read_file(t_path("argv")),
             "claude[-p][--output-format][json][--][--dangerously-skip-permissions]");
    fake("agentcmd");
    reply("{\"v\":1}");
    env_add(&e, "LIL_AGENT_CMD", t_path("agentcmd"));
    c.harness = "cli";
    c.prompt = "--dangerously-skip-permissions";
    c.envp = (const char *const *)e.v;
    memset(&E, 0, sizeof(E));
    T_EQ_I64(lil__agent_cli_ready(env(), &E, &c), LIL_E_INVAL);
    T_CONTAINS(E.msg, "starts with '-'");
    remove(t_path("argv"));
    T_EQ_STR(call("cli", "--dangerously-skip-permissions", &e, &u, &rc), "ERR");
    T_EQ_I64(rc, LIL_E_INVAL);
    T_EQ_STR(read_file(t_path("argv")), ""); /* never started */
    snprintf(cmd, sizeof(cmd), "%s --", t_path("agentcmd"));
    e.n--; /* LIL_AGENT_CMD again, ending in "--" */
    env_add(&e, "LIL_AGENT_CMD", cmd);
    T_EQ_STR(call("cli", "--dangerously-skip-permissions", &e, &u, &rc), "{\"v\":1}");
    T_EQ_STR(read_file(t_path("argv")), "agentcmd[--][--dangerously-skip-permissions]");
}

/* ---- generic text --------------------------------------------------------------- */

T_TEST(generic_text_unwrapping)
{
    static const struct {
        const char *out, *want;
    } cases[] = {
        {"{\"a\":1,\"usage\":{\"tokens\":999}}", "{\"a\":1}"},
        {"  ```json\n{\"x\":2}\n```\n", "{\"x\":2}"},
        {"```\n{\"y\":[1]}\n```", "{\"y\":[1]}"},
        {"plain text  \n", "{\"result\":\"plain text\"}"},
        {"[1,2]", "{\"result\":\"[1,2]\"}"},
        {"null", "{\"result\":\"null\"}"},
        {"```\nhello\n```", "{\"result\":\"```\\nhello\\n```\"}"},
        {"", "{\"result\":\"\"}"},
        {"bad \xff byte", "{\"result\":\"bad \xef\xbf\xbd byte\"}"},
    };
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    codex_env(&e);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        reply(cases[i].out);
        T_EQ_STR(call("codex", "p", &e, &u, &rc), cases[i].want);
        T_EQ_I64(rc, LIL_OK);
    }
}

T_TEST(estimated_usage_for_codex)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    codex_env(&e);
    reply("{\"answer\":42,\"usage\":{\"tokens\":1}}"); /* 34 bytes: 9 tokens */
    T_EQ_STR(call("codex", "12345678", &e, &u, &rc), "{\"answer\":42}");
    T_CHECK(u.has_tokens && u.estimated);
    T_EQ_I64(u.tokens_in, 2);
    T_EQ_I64(u.tokens_out, 9);
    T_EQ_I64(u.tokens, 11);
    T_CHECK(!u.has_usd); /* no model named: nothing to price */
}

/* ---- claude-code ---------------------------------------------------------------- */

T_TEST(claude_code_envelope)
{
    static const struct {
        const char *out, *want;
    } cases[] = {
        {"{\"type\":\"result\",\"result\":\"{\\\"done\\\":true,\\\"score\\\":0.9}\","
         "\"usage\":{\"input_tokens\":10,\"output_tokens\":5},\"total_cost_usd\":0.01}",
         "{\"done\":true,\"score\":0.9}"},
        {"{\"result\":{\"k\":\"v\",\"usage\":{\"tokens\":1}}}", "{\"k\":\"v\"}"},
        {"{\"result\":\"just words\"}", "{\"result\":\"just words\"}"},
        {"{\"result\":\"[1,2]\"}", "[1,2]"},
        {"{\"result\":\"null\"}", "{\"result\":\"null\"}"},
        {"{\"result\":7}", "{\"result\":7}"},
        {"{\"x\":1,\"usage\":{\"input_tokens\":2}}", "{\"x\":1}"},
        {" not json \n", "{\"result\":\"not json\"}"},
        {"[3]", "{\"result\":[3]}"},
    };
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    env_init(&e);
    env_add(&e, "LIL_CLAUDE_CODE_BIN", fake("fake"));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        reply(cases[i].out);
        T_EQ_STR(call("claude-code", "p", &e, &u, &rc), canonical(cases[i].want));
        T_EQ_I64(rc, LIL_OK);
    }
}

T_TEST(claude_code_usage)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    env_init(&e);
    env_add(&e, "LIL_CLAUDE_CODE_BIN", fake("fake"));
    reply("{\"type\":\"result\",\"result\":\"{\\\"done\\\":true}\",\"usage\":{"
          "\"input_tokens\":10,\"output_tokens\":5},\"total_cost_usd\":0.01,"
          "\"modelUsage\":{\"claude-sonnet-4-5\":{}}}");
    call("claude-code", "p", &e, &u, &rc);
    T_CHECK(u.has_tokens && !u.estimated && u.has_usd);
    T_EQ_I64(u.tokens, 15);
    T_EQ_I64(u.tokens_in, 10);
    T_CHECK(fabs(u.usd - 0.01) < 1e-12);
    T_EQ_STR(u.model, "claude-sonnet-4-5");
    reply("{\"result\":\"{}\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2},"
          "\"cost_usd\":0.5}"); /* the older name */
    call("claude-code", "p", &e, &u, &rc);
    T_EQ_I64(u.tokens, 3);
    T_CHECK(u.has_usd && fabs(u.usd - 0.5) < 1e-12);
    reply(
        "{\"result\":\"{}\",\"total_cost_usd\":0.2}"); /* cost only: tokens estimated */
    call("claude-code", "p", &e, &u, &rc);
    T_CHECK(u.has_tokens && u.estimated && u.has_usd && fabs(u.usd - 0.2) < 1e-12);
    reply("{\"result\":\"{}\"}"); /* nothing reported */
    call("claude-code", "p", &e, &u, &rc);
    T_CHECK(u.has_tokens && u.estimated && !u.has_usd);
}

/* ---- pi ------------------------------------------------------------------------- */

#define PI_MSG(usage, text)                                                              \
    "{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"model\":\"gpt-x\"," \
    "\"usage\":" usage ",\"content\":[{\"type\":\"thinking\",\"thinking\":\"hm\"},"      \
    "{\"type\":\"text\",\"text\":" text "}]}}\n"

T_TEST(pi_stream)
{
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    env_init(&e);
    env_add(&e, "LIL_PI_BIN", fake("fake"));
    reply("{\"type\":\"agent_start\"}\n\n"
          "{\"type\":\"message_end\",\"message\":{\"role\":\"user\",\"usage\":{"
          "\"totalTokens\":1000}}}\n" PI_MSG(
              "{\"totalTokens\":30,\"cost\":{\"total\":0.03}}", "\"first\"")
              PI_MSG("{\"input\":60,\"output\":10,\"cost\":{\"total\":0.07}}",
                     "\"```json\\n{\\\"ok\\\":true}\\n```\""));
    T_EQ_STR(call("pi", "p", &e, &u, &rc), "{\"ok\":true}");
    T_EQ_I64(rc, LIL_OK);
    T_CHECK(u.has_tokens && !u.estimated && u.has_usd);
    T_EQ_I64(u.tokens, 100);
    T_CHECK(fabs(u.usd - 0.1) < 1e-12);
    T_EQ_STR(u.model, "gpt-x");
    reply(PI_MSG("{}", "\"plain answer\""));
    T_EQ_STR(call("pi", "p", &e, &u, &rc), "{\"result\":\"plain answer\"}");
    T_CHECK(u.has_tokens && u.estimated && !u.has_usd); /* it reported nothing */
}

T_TEST(pi_stream_errors)
{
    static const struct {
        const char *out, *msg;
    } cases[] = {
        {"{\"type\":\"agent_start\"}\n{oops\n",
         "pi JSON stream line 2 is not valid JSON"},
        {"{\"type\":\"agent_start\"}\n", "pi JSON stream did not contain an assistant "
                                         "message"},
        {"", "pi JSON stream did not contain an assistant message"},
        {"{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"stopReason\":"
         "\"error\",\"errorMessage\":\"boom\",\"content\":[]}}\n",
         "pi assistant error: boom"},
        {"{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"stopReason\":"
         "\"aborted\",\"content\":[]}}\n",
         "pi assistant aborted: unknown error"},
        {PI_MSG("{}", "\"  \""), "pi final assistant message did not contain text"},
    };
    struct envp e;
    struct lil_agent_usage u;
    lil_status rc;

    env_init(&e);
    env_add(&e, "LIL_PI_BIN", fake("fake"));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        reply(cases[i].out);
        call("pi", "p", &e, &u, &rc);
        T_EQ_I64(rc, LIL_E_CHILD);
        T_EQ_STR(E.msg, cases[i].msg);
    }
}

T_TEST(unknown_harness)
{
    struct envp e;

    env_init(&e);
    T_EQ_I64(ready("llm-ish", &e), LIL_E_INVAL);
}

T_MAIN()
