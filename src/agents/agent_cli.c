/*
 * agent_cli.c -- the coding-agent CLI harnesses and `cli` (agent.h;
 * docs/loops.md, "Agent harnesses").
 *
 * A call: find the harness's line in the table below, read the limits of
 * the call (LIL_/LOOPY_AGENT_TIMEOUT_MS and _MAX_BUFFER: blank is the
 * default, otherwise a positive decimal integer of at most 2^53 - 1), make
 * the argv (the binary from LIL_/LOOPY_<NAME>_BIN, trimmed, or the default
 * name; for `cli` the words of LIL_/LOOPY_AGENT_CMD with the prompt as the
 * last argument; the named CLIs get it after "--"), run it without a shell
 * through os/proc.h in a session and process group of its own (published in
 * call->running_pgid while it runs, killed with whatever it left behind
 * when it ends), stdin /dev/null, cwd call->cwd, an environment scrubbed
 * from call->envp (NULL: this process's; child_env below), then read its
 * stdout:
 *
 *   text          codex, opencode, antigravity, cursor-agent, cli: trimmed,
 *                 one fence stripped; a JSON object is the result (without
 *                 `usage`), anything else gives {result: trimmed stdout}
 *   claude-code   the JSON envelope of `--output-format json`: its `result`
 *                 (a JSON text or a value) is the result; usage from the
 *                 envelope's `usage` and `total_cost_usd` / `cost_usd`
 *   pi            the NDJSON events of `--mode json`: the last assistant
 *                 `message_end` gives the text (unwrapped as text); usage is
 *                 the sum over every assistant `message_end`
 *
 * Usage comes from the CLI's own report only; a CLI that reports no tokens
 * gets lil__agent_estimate (prompt and stdout bytes), marked estimated.
 *
 * Errors: LIL_E_INVAL (limits that do not parse, `cli` without a command,
 * a binary that is not on PATH -- lil__agent_cli_ready; limits and command
 * again at the call), LIL_E_CHILD (the CLI could not start, failed, timed
 * out, wrote more than the buffer, or answered in a form its harness
 * rejects: the reference's messages), LIL_E_NOMEM.  A child never outlives
 * the call.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agent.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/env.h"
#include "base/settings/settings.h"
#include "effects/effect_env.h"
#include "effects/effect_shell.h"
#include "effects/text.h"
#include "lang/value.h"
#include "os/os.h"
#include "os/proc.h"

#define MAX_TIMEOUT_MS  1000000000000LL    /* keeps the deadline in range */
#define SAFE_INTEGER    9007199254740991LL /* 2^53 - 1 */
#define MAX_FIXED_ARGS  8
#define STDERR_IN_ERROR 120 /* bytes of the CLI's stderr in a failure message */

enum unwrap { UNWRAP_TEXT, UNWRAP_CLAUDE, UNWRAP_PI };

/* What every CLI child gets besides the base of effect_env.h: where its
 * configuration lives, and how it reaches its provider. */
static const char CLI_ENV[] =
    "XDG_CONFIG_HOME,XDG_DATA_HOME,XDG_CACHE_HOME,XDG_STATE_HOME,XDG_RUNTIME_DIR,"
    "HTTP_PROXY,HTTPS_PROXY,NO_PROXY,ALL_PROXY,http_proxy,https_proxy,no_proxy,"
    "all_proxy,SSL_CERT_FILE,SSL_CERT_DIR,NODE_EXTRA_CA_CERTS";

/* The provider keys of the CLIs that talk to many providers. */
#define PROVIDER_KEYS                                               \
    "OPENAI_API_KEY,ANTHROPIC_API_KEY,GEMINI_API_KEY,GROQ_API_KEY," \
    "OPENROUTER_API_KEY,AI_GATEWAY_API_KEY"

/*
 * The argv of a harness is the binary, its fixed args, claude-code's
 * --allowedTools, then "--" and the prompt: after "--" a prompt that
 * starts with '-' ("--dangerously-...") is an argument, never a flag.
 * `cli` appends the prompt to LIL_AGENT_CMD as it is (its program may not
 * know "--"): a prompt that starts with '-' is refused there unless the
 * command's last word is "--" (cli_prompt_ok).
 */
static const struct cli {
    const char *name;
    const char *bin_setting; /* without prefix; NULL: `cli` */
    const char *bin;         /* default binary */
    enum unwrap unwrap;
    const char *args[MAX_FIXED_ARGS]; /* after the binary, NULL-terminated */
    const char *env; /* what the child gets besides CLI_ENV and the base */
} clis[] = {
    {"claude-code",
     "CLAUDE_CODE_BIN",
     "claude",
     UNWRAP_CLAUDE,
     {"-p", "--output-format", "json", NULL},
     "ANTHROPIC_*,CLAUDE_*"},
    {"codex",
     "CODEX_BIN",
     "codex",
     UNWRAP_TEXT,
     {"exec", "--skip-git-repo-check", NULL},
     "OPENAI_*,CODEX_*"},
    {"opencode",
     "OPENCODE_BIN",
     "opencode",
     UNWRAP_TEXT,
     {"run", NULL},
     "OPENCODE_*," PROVIDER_KEYS},
    {"antigravity",
     "ANTIGRAVITY_BIN",
     "agy",
     UNWRAP_TEXT,
     {"--yes", "-p", NULL},
     "GEMINI_*,GOOGLE_*,ANTIGRAVITY_*"},
    {"cursor-agent",
     "CURSOR_AGENT_BIN",
     "cursor-agent",
     UNWRAP_TEXT,
     {"-p", "--force", NULL},
     "CURSOR_*"},
    {"pi",
     "PI_BIN",
     "pi",
     UNWRAP_PI,
     {"-p", "--mode", "json", "--no-session", NULL},
     "PI_*," PROVIDER_KEYS},
    {"cli", NULL, NULL, UNWRAP_TEXT, {NULL}, ""},
};

#define NCLI (sizeof(clis) / sizeof(clis[0]))

/* The limits of one call, with the names of the variables they came from. */
struct limits {
    int64_t timeout_ms;
    int64_t max_buffer;
    char timeout_var[40], buffer_var[40];
};

/* What runs: argv and the pieces it points into. */
struct command {
    const struct cli *cli;
    char *words;       /* owned: the trimmed binary, or AGENT_CMD split in place */
    char *tools;       /* owned: "a,b" for claude-code's --allowedTools */
    const char **argv; /* owned array; NULL-terminated */
};

/* What the child did. */
struct outcome {
    struct lil_proc_status st;
    struct lil_proc_output out, err;
    bool timed_out, over_buffer;
};

static const struct cli *find_cli(const char *name)
{
    for (size_t i = 0; name && i < NCLI; i++)
        if (strcmp(clis[i].name, name) == 0)
            return &clis[i];
    return NULL;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* ---- limits --------------------------------------------------------------------- */

/* Setting x of envp into *out (def when unset or blank), the name of the
 * variable read (or the LOOPY_ one when none) into var. */
static lil_status read_limit(const char *const *envp, struct lil_err *err,
                             const char *x, int64_t def, int64_t *out, char var[40])
{
    const char *which = "LOOPY_";
    const char *raw = lil__agent_setting(envp, x, &which);
    const char *s = raw;
    int64_t v = 0;

    snprintf(var, 40, "%s%s", which, x);
    *out = def;
    while (s && is_blank(*s))
        s++;
    if (!s || !*s)
        return LIL_OK;
    for (; *s >= '0' && *s <= '9' && v <= SAFE_INTEGER; s++)
        v = v * 10 + (*s - '0');
    while (is_blank(*s))
        s++;
    if (*s || v <= 0 || v > SAFE_INTEGER)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s must be a positive integer; got '%s'", var, raw);
    *out = v;
    return LIL_OK;
}

static lil_status read_limits(const char *const *envp, struct lil_err *err,
                              struct limits *lim)
{
    lil_status rc = read_limit(envp, err, "AGENT_TIMEOUT_MS", LIL_AGENT_TIMEOUT_MS,
                               &lim->timeout_ms, lim->timeout_var);

    if (rc == LIL_OK)
        rc = read_limit(envp, err, "AGENT_MAX_BUFFER", LIL_AGENT_MAX_BUFFER,
                        &lim->max_buffer, lim->buffer_var);
    return rc;
}

/* ---- the command ---------------------------------------------------------------- */

static void command_free(const struct lil_env *env, struct command *cmd)
{
    lil__free(env, cmd->words);
    lil__free(env, cmd->tools);
    lil__free(env, (void *)cmd->argv);
    memset(cmd, 0, sizeof(*cmd));
}

/* A copy of s without its surrounding blanks; NULL when out of memory. */
static char *trimmed_copy(const struct lil_env *env, const char *s)
{
    size_t n;

    while (is_blank(*s))
        s++;
    n = strlen(s);
    while (n && is_blank(s[n - 1]))
        n--;
    return lil__strndup(env, s, n);
}

/* Split words in place on blanks; the words go to argv from *n on. */
static void split_words(char *words, const char **argv, size_t *n)
{
    char *s = words;

    while (*s) {
        while (is_blank(*s))
            *s++ = '\0';
        if (*s)
            argv[(*n)++] = s;
        while (*s && !is_blank(*s))
            s++;
    }
}

static lil_status cli_needs_cmd(struct lil_err *err)
{
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "agent harness 'cli' needs LIL_AGENT_CMD or LOOPY_AGENT_CMD set "
                       "(e.g. 'codex exec', 'opencode run', 'agy -p' (antigravity), "
                       "'aider --message') \xe2\x80\x94 the prompt is appended as the "
                       "final argument.");
}

/* cmd->words: the binary (or `cli`'s command line), trimmed. */
static lil_status command_words(const struct lil_env *env, struct lil_err *err,
                                const struct lil_agent_call *call, struct command *cmd)
{
    const char *cli = cmd->cli->bin_setting ? cmd->cli->bin_setting : "AGENT_CMD";
    const char *v = lil__agent_setting(call->envp, cli, NULL);

    cmd->words = trimmed_copy(env, v ? v : "");
    if (!cmd->words)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (cmd->words[0])
        return LIL_OK;
    if (!cmd->cli->bin_setting)
        return cli_needs_cmd(err);
    lil__free(env, cmd->words);
    cmd->words = lil__strdup(env, cmd->cli->bin);
    return cmd->words ? LIL_OK : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

/* "a,b": claude-code's --allowedTools. */
static char *join_tools(const struct lil_env *env, const struct lil_agent_call *call)
{
    size_t len = 1, at = 0, n;
    char *s;

    for (size_t i = 0; i < call->ntools; i++)
        len += (call->tools[i] ? strlen(call->tools[i]) : 0) + 1;
    s = lil__calloc(env, len, 1);
    for (size_t i = 0; s && i < call->ntools; i++) {
        if (i)
            s[at++] = ',';
        n = call->tools[i] ? strlen(call->tools[i]) : 0;
        memcpy(s + at, call->tools[i] ? call->tools[i] : "", n);
        at += n;
    }
    return s;
}

/* The program cmd runs ("" before it is made). */
static const char *bin_of(const struct command *cmd)
{
    return cmd->argv && cmd->argv[0] ? cmd->argv[0] : "";
}

static void fixed_args(const struct command *cmd, const struct lil_agent_call *call,
                       size_t *n)
{
    for (size_t i = 0; cmd->cli->args[i]; i++)
        cmd->argv[(*n)++] = cmd->cli->args[i];
    if (cmd->tools) {
        cmd->argv[(*n)++] = "--allowedTools";
        cmd->argv[(*n)++] = cmd->tools;
    }
    if (cmd->cli->bin_setting) /* a named CLI: the prompt is no flag */
        cmd->argv[(*n)++] = "--";
    cmd->argv[(*n)++] = call->prompt;
}

/* `cli`: a prompt that starts with '-' would be a flag of the command,
 * unless the command ends in "--". */
static lil_status cli_prompt_ok(struct lil_err *err, const struct command *cmd,
                                const struct lil_agent_call *call, size_t n)
{
    if (cmd->cli->bin_setting || !call->prompt || call->prompt[0] != '-')
        return LIL_OK;
    if (n > 0 && strcmp(cmd->argv[n - 1], "--") == 0)
        return LIL_OK;
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "agent harness 'cli': the prompt starts with '-' and would be "
                       "read as a flag of '%s'; end LIL_AGENT_CMD with '--' if the "
                       "program takes it as an argument after '--'",
                       bin_of(cmd));
}

/* The argv of call's harness (cli) into cmd.  LIL_E_INVAL for `cli` without
 * a command. */
static lil_status command_make(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call, const struct cli *cli,
                               struct command *cmd)
{
    size_t n = 0;
    lil_status rc;

    memset(cmd, 0, sizeof(*cmd));
    cmd->cli = cli;
    rc = command_words(env, err, call, cmd);
    if (rc != LIL_OK)
        return rc;
    if (cli->unwrap == UNWRAP_CLAUDE && call->ntools) {
        cmd->tools = join_tools(env, call);
        if (!cmd->tools)
            return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    /* words: at most one a two bytes; args; --allowedTools a,b; --; prompt; NULL */
    cmd->argv = lil__calloc(env, strlen(cmd->words) / 2 + MAX_FIXED_ARGS + 6,
                            sizeof(*cmd->argv));
    if (!cmd->argv)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (cli->bin_setting)
        cmd->argv[n++] = cmd->words;
    else
        split_words(cmd->words, cmd->argv, &n);
    rc = cli_prompt_ok(err, cmd, call, n);
    if (rc == LIL_OK)
        fixed_args(cmd, call, &n);
    return rc;
}

/* ---- is the binary there? ------------------------------------------------------- */

static bool executable_file(const struct lil_env *env, const char *path)
{
    struct stat st;
    bool ok;
    int fd = env->os->open(path, O_PATH | O_CLOEXEC, 0);

    if (fd < 0)
        return false;
    ok = env->os->fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
    lil__os_close(env, fd);
    return ok;
}

/* Is dir/bin (dir of dlen bytes; relative ones from cwd) executable? */
static lil_status found_in(const struct lil_env *env, const char *cwd, const char *dir,
                           size_t dlen, const char *bin, bool *found)
{
    struct lil_buf b;
    lil_status rc = LIL_OK;

    lil__buf_init(&b, env, SIZE_MAX);
    if (cwd && (dlen == 0 || dir[0] != '/'))
        rc = lil__buf_printf(&b, "%s/", cwd);
    if (rc == LIL_OK)
        rc = lil__buf_printf(&b, "%.*s%s%s", (int)dlen, dlen ? dir : ".",
                             dlen || !cwd ? "/" : "", bin);
    if (rc == LIL_OK)
        *found = executable_file(env, (const char *)b.data);
    lil__buf_free(&b);
    return rc;
}

/* As posix_spawnp looks bin up: this process's PATH ("/bin:/usr/bin" when
 * unset), a name with a slash as it is; both from the child's cwd. */
static lil_status on_path(const struct lil_env *env, const char *cwd, const char *bin,
                          bool *found)
{
    const char *path = lil__setting_raw("PATH");
    const char *dir, *colon;
    lil_status rc = LIL_OK;

    *found = false;
    if (bin[0] == '/') {
        *found = executable_file(env, bin);
        return LIL_OK;
    }
    if (strchr(bin, '/'))
        return found_in(env, cwd, ".", 1, bin, found);
    for (dir = path ? path : "/bin:/usr/bin"; rc == LIL_OK && !*found;
         dir = colon + 1) {
        colon = strchr(dir, ':');
        rc = found_in(env, cwd, dir, colon ? (size_t)(colon - dir) : strlen(dir), bin,
                      found);
        if (!colon)
            break;
    }
    return rc;
}

static lil_status check_binary(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call,
                               const struct command *cmd)
{
    const char *bin = bin_of(cmd);
    bool found;

    if (on_path(env, call->cwd, bin, &found) != LIL_OK)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (found)
        return LIL_OK;
    if (!cmd->cli->bin_setting)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "agent harness 'cli' cannot run '%s': no such program on "
                           "PATH (LIL_AGENT_CMD or LOOPY_AGENT_CMD sets the command)",
                           bin);
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "agent harness '%s' cannot run '%s': no such program on PATH "
                       "(LIL_%s or LOOPY_%s sets the CLI's path)",
                       cmd->cli->name, bin, cmd->cli->bin_setting,
                       cmd->cli->bin_setting);
}

lil_status lil__agent_cli_ready(const struct lil_env *env, struct lil_err *err,
                                const struct lil_agent_call *call)
{
    const struct cli *cli = find_cli(call->harness);
    struct limits lim;
    struct command cmd = {0};
    int64_t max_tokens;
    lil_status rc;

    if (!cli)
        return lil__seterr(err, LIL_E_INVAL, 0, "unknown agent harness '%s'",
                           call->harness);
    rc = read_limits(call->envp, err, &lim);
    if (rc == LIL_OK) /* the reservation's limit only (agent.h) */
        rc = lil__agent_max_tokens(call->envp, err, &max_tokens, NULL, 0);
    if (rc == LIL_OK)
        rc = command_make(env, err, call, cli, &cmd);
    if (rc == LIL_OK)
        rc = check_binary(env, err, call, &cmd);
    command_free(env, &cmd);
    return rc;
}

/* ---- running -------------------------------------------------------------------- */

/* Run the CLI to its end (os/proc.h): the group killed (SIGKILL) when the
 * time runs out or an output passes the buffer. */
/* The child's environment (effect_env.h): the base, CLI_ENV, the harness's
 * own provider variables and what the caller allows (--env-allow,
 * LIL_EFFECT_ENV); never lil's own secrets.  From call->envp (NULL: this
 * process's). */
static lil_status child_env(const struct lil_env *env, struct lil_err *err,
                            const struct lil_agent_call *call,
                            const struct command *cmd, const char ***out)
{
    const char *allow[2 + LIL_AGENT_ENV_ALLOW_MAX];
    size_t n = 0;

    allow[n++] = CLI_ENV;
    allow[n++] = cmd->cli->env;
    for (size_t i = 0; i < call->n_env_allow && i < LIL_AGENT_ENV_ALLOW_MAX; i++)
        allow[n++] = call->env_allow[i];
    return lil__effect_env_build(env, err, call->envp, allow, n, out);
}

static lil_status run_cli(const struct lil_env *env, struct lil_err *err,
                          const struct lil_agent_call *call, const struct command *cmd,
                          const struct limits *lim, struct outcome *oc)
{
    struct lil_proc_opts po = {0};
    struct lil_proc_result res;
    const char **envp = NULL;
    lil_status rc = child_env(env, err, call, cmd, &envp);

    if (rc != LIL_OK)
        return rc;
    po.argv = cmd->argv;
    po.envp = envp;
    po.cwd = call->cwd;
    po.in = LIL_PROC_NULL;
    po.out = po.err = LIL_PROC_PIPE;
    po.out_cap = po.err_cap = (size_t)lim->max_buffer;
    po.group = LIL_PROC_NEW_SESSION; /* its own group; no terminal to stop on */
    po.stop_at_cap = true;
    po.running_pgid = call->running_pgid;
    po.end_group = true; /* what it leaves running ends with the call */
    rc = lil__proc_run(
        env, err, &po,
        lim->timeout_ms < MAX_TIMEOUT_MS ? lim->timeout_ms : MAX_TIMEOUT_MS, 0, &res);
    lil__effect_env_free(env, envp);
    if (rc != LIL_OK)
        return rc;
    oc->st = res.status;
    oc->out = res.out;
    oc->err = res.err;
    oc->timed_out = res.status.timed_out;
    oc->over_buffer = res.over_cap || res.out.truncated || res.err.truncated;
    return LIL_OK;
}

/* ---- failures ------------------------------------------------------------------- */

static lil_status harness_failed(struct lil_err *err, const struct command *cmd,
                                 const char *message)
{
    return lil__seterr(err, LIL_E_CHILD, 0,
                       "agent harness '%s' failed while running '%s' (is the CLI "
                       "installed and authenticated?): %s",
                       cmd->cli->name, bin_of(cmd), message);
}

/* "exit code N: <first line of stderr>" or "killed by SIGX". */
static void exit_message(const struct outcome *oc, char *msg, size_t cap)
{
    const char *e = oc->err.data ? oc->err.data : "";
    size_t n;
    char sig[16];

    while (is_blank(*e))
        e++;
    n = strcspn(e, "\r\n");
    if (n > STDERR_IN_ERROR)
        n = STDERR_IN_ERROR;
    if (oc->st.signal) {
        lil__shell_signal_name(oc->st.signal, sig);
        snprintf(msg, cap, "killed by %s", sig);
    } else if (n) {
        snprintf(msg, cap, "exit code %d: %.*s", oc->st.code, (int)n, e);
    } else {
        snprintf(msg, cap, "exit code %d", oc->st.code);
    }
}

/* LIL_OK when the CLI exited 0 within its limits, else the reference's error. */
static lil_status check_outcome(struct lil_err *err, const struct command *cmd,
                                const struct limits *lim, const struct outcome *oc)
{
    char msg[200];

    if (oc->over_buffer)
        return lil__seterr(err, LIL_E_CHILD, 0,
                           "agent step exceeded %s (%lld bytes) in harness '%s' while "
                           "running '%s'",
                           lim->buffer_var, (long long)lim->max_buffer, cmd->cli->name,
                           bin_of(cmd));
    if (oc->timed_out)
        return lil__seterr(err, LIL_E_CHILD, 0,
                           "agent step exceeded %s (%lldms) in harness '%s' while "
                           "running '%s'",
                           lim->timeout_var, (long long)lim->timeout_ms, cmd->cli->name,
                           bin_of(cmd));
    if (oc->st.code == 0 && !oc->st.signal)
        return LIL_OK;
    exit_message(oc, msg, sizeof(msg));
    return harness_failed(err, cmd, msg);
}

/* ---- output --------------------------------------------------------------------- */

/* JSON.parse of text: *out the value, or NULL when it is not JSON. */
static lil_status parse_json(const struct lil_env *env, struct lil_err *err,
                             const char *text, size_t len, json_t **out)
{
    struct lil_err e = {0};
    lil_status rc;

    *out = NULL;
    if (len == 0)
        return LIL_OK;
    rc = lil__json_parse(env, &e, LIL_E_INVAL, text, len,
                         JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL, out);
    if (rc == LIL_E_NOMEM)
        return lil__seterr(err, rc, 0, "out of memory");
    return LIL_OK;
}

/* {result: text} */
static json_t *wrap_text(const char *text, size_t len)
{
    json_t *o = json_object();

    if (o && json_object_set_new(o, "result", json_stringn_nocheck(text, len)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static lil_status nomem_unless(const json_t *v, struct lil_err *err)
{
    return v ? LIL_OK : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
}

/* Generic text: the JSON object inside the trimmed, unfenced text (minus
 * its `usage`), else {result: trimmed text}. */
static lil_status unwrap_text(const struct lil_env *env, struct lil_err *err,
                              const char *text, size_t len, json_t **out)
{
    size_t start = 0, end = len, a, z;
    json_t *v = NULL;
    lil_status rc;

    lil__js_trim(text, &start, &end);
    lil__agent_unfence(text + start, end - start, &a, &z);
    rc = parse_json(env, err, text + start + a, z - a, &v);
    if (rc != LIL_OK)
        return rc;
    if (json_is_object(v)) {
        json_object_del(v, "usage");
        *out = v;
        return LIL_OK;
    }
    json_decref(v);
    *out = wrap_text(text + start, end - start);
    return nomem_unless(*out, err);
}

/* A finite number >= 0 of o[key] into *v. */
static bool get_count(const json_t *o, const char *key, double *v)
{
    const json_t *n = json_object_get(o, key);

    if (!json_is_number(n))
        return false;
    *v = json_number_value(n);
    return isfinite(*v) && *v >= 0;
}

static void set_model(struct lil_agent_usage *u, const json_t *name)
{
    if (json_is_string(name))
        snprintf(u->model, sizeof(u->model), "%s", json_string_value(name));
}

/* ---- claude-code ---------------------------------------------------------------- */

/* The envelope's usage, cost and model. */
static void claude_usage(const json_t *envelope, struct lil_agent_usage *u)
{
    const json_t *usage = json_object_get(envelope, "usage");
    json_t *models = json_object_get(envelope, "modelUsage");
    double in = 0, out = 0, usd;

    if (json_is_object(usage)) {
        (void)get_count(usage, "input_tokens", &in);
        (void)get_count(usage, "output_tokens", &out);
        u->tokens_in = (int64_t)in;
        u->tokens_out = (int64_t)out;
        u->tokens = u->tokens_in + u->tokens_out;
        u->has_tokens = true;
    }
    if (json_is_number(json_object_get(envelope, "total_cost_usd")))
        u->has_usd = get_count(envelope, "total_cost_usd", &usd);
    else
        u->has_usd = get_count(envelope, "cost_usd", &usd);
    if (u->has_usd)
        u->usd = usd;
    set_model(u, json_object_get(envelope, "model"));
    if (!u->model[0] && json_is_object(models) && json_object_size(models) > 0)
        snprintf(u->model, sizeof(u->model), "%s",
                 json_object_iter_key(json_object_iter(models)));
}

/* The result of raw: a JSON text holding an object or array, an object,
 * else {result: raw}. */
static lil_status claude_result(const struct lil_env *env, struct lil_err *err,
                                json_t *raw, json_t **out)
{
    json_t *v = NULL;
    lil_status rc;

    if (json_is_string(raw)) {
        rc = parse_json(env, err, json_string_value(raw), json_string_length(raw), &v);
        if (rc != LIL_OK)
            return rc;
        if (json_is_object(v) || json_is_array(v)) {
            *out = v;
            return LIL_OK;
        }
        json_decref(v);
    } else if (json_is_object(raw)) {
        *out = json_incref(raw);
        return LIL_OK;
    }
    *out = json_object();
    if (*out && json_object_set(*out, "result", raw) != 0) {
        json_decref(*out);
        *out = NULL;
    }
    return nomem_unless(*out, err);
}

static lil_status unwrap_claude(const struct lil_env *env, struct lil_err *err,
                                const char *text, size_t len, json_t **out,
                                struct lil_agent_usage *u)
{
    size_t start = 0, end = len;
    json_t *envelope = NULL, *raw;
    lil_status rc;

    lil__js_trim(text, &start, &end);
    rc = parse_json(env, err, text + start, end - start, &envelope);
    if (rc != LIL_OK)
        return rc;
    if (!envelope) {
        *out = wrap_text(text + start, end - start);
        return nomem_unless(*out, err);
    }
    raw = json_object_get(envelope, "result");
    rc = claude_result(env, err, raw && json_is_object(envelope) ? raw : envelope, out);
    if (rc == LIL_OK) {
        json_object_del(*out, "usage"); /* never what the model wrote */
        if (json_is_object(envelope))
            claude_usage(envelope, u);
    }
    json_decref(envelope);
    return rc;
}

/* ---- pi ------------------------------------------------------------------------- */

/* Sums over the assistant message_end events, and the last of them. */
struct pi_stream {
    json_t *last; /* the final assistant message (a reference) */
    double tokens, tokens_in, tokens_out, usd;
    bool has_tokens, has_usd;
};

static void pi_add_usage(struct pi_stream *ps, const json_t *usage)
{
    static const char *const parts[] = {"input", "output", "cacheRead", "cacheWrite"};
    const json_t *cost = json_object_get(usage, "cost");
    double v, sum = 0;
    bool any = false;

    for (size_t i = 0; i < 4; i++) {
        if (get_count(usage, parts[i], &v)) {
            sum += v;
            any = true;
            *(i == 1 ? &ps->tokens_out : &ps->tokens_in) += v;
        }
    }
    if (get_count(usage, "totalTokens", &v)) {
        sum = v;
        any = true;
    }
    ps->tokens += sum;
    ps->has_tokens = ps->has_tokens || any;
    if (json_is_object(cost) && get_count(cost, "total", &v)) {
        ps->usd += v;
        ps->has_usd = true;
    }
}

/* Is o[key] the string want? */
static bool key_is(const json_t *o, const char *key, const char *want)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s && strcmp(s, want) == 0;
}

static void pi_event(struct pi_stream *ps, const json_t *ev)
{
    json_t *msg = json_object_get(ev, "message");
    const json_t *usage;

    if (!key_is(ev, "type", "message_end") || !key_is(msg, "role", "assistant"))
        return;
    usage = json_object_get(msg, "usage");
    if (json_is_object(usage))
        pi_add_usage(ps, usage);
    json_decref(ps->last);
    ps->last = json_incref(msg);
}

/* Every non-blank line of text parsed as an event. */
static lil_status pi_read(const struct lil_env *env, struct lil_err *err,
                          const char *text, size_t len, struct pi_stream *ps)
{
    size_t line = 0, at = 0, eol, start, end;
    json_t *ev;
    lil_status rc;

    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);

        eol = nl ? (size_t)(nl - text) : len;
        line++;
        start = at;
        end = eol;
        lil__js_trim(text, &start, &end);
        at = eol + 1;
        if (start == end)
            continue;
        rc = parse_json(env, err, text + start, end - start, &ev);
        if (rc != LIL_OK)
            return rc;
        if (!ev)
            return lil__seterr(err, LIL_E_CHILD, 0,
                               "pi JSON stream line %zu is not valid JSON", line);
        pi_event(ps, ev);
        json_decref(ev);
    }
    return LIL_OK;
}

/* The text parts of the final message, concatenated, into b. */
static lil_status pi_text(const json_t *msg, struct lil_buf *b)
{
    const json_t *content = json_object_get(msg, "content"), *part;
    size_t i;

    json_array_foreach(content, i, part)
    {
        const json_t *t = json_object_get(part, "text");

        if (json_is_string(t) && key_is(part, "type", "text") &&
            lil__buf_add(b, json_string_value(t), json_string_length(t)) != LIL_OK)
            return LIL_E_NOMEM;
    }
    return LIL_OK;
}

/* The final message's failure, if it has one. */
static lil_status pi_check_final(struct lil_err *err, const json_t *msg)
{
    const char *reason = json_string_value(json_object_get(msg, "stopReason"));
    const char *why = json_string_value(json_object_get(msg, "errorMessage"));

    if (!msg)
        return lil__seterr(err, LIL_E_CHILD, 0,
                           "pi JSON stream did not contain an assistant message");
    if (reason && (strcmp(reason, "error") == 0 || strcmp(reason, "aborted") == 0))
        return lil__seterr(err, LIL_E_CHILD, 0, "pi assistant %s: %s", reason,
                           why && *why ? why : "unknown error");
    return LIL_OK;
}

static void pi_usage(const struct pi_stream *ps, struct lil_agent_usage *u)
{
    u->has_tokens = ps->has_tokens;
    u->tokens = (int64_t)ps->tokens;
    u->tokens_in = (int64_t)ps->tokens_in;
    u->tokens_out = (int64_t)ps->tokens_out;
    u->has_usd = ps->has_usd;
    u->usd = ps->usd;
    set_model(u, json_object_get(ps->last, "model"));
}

static lil_status unwrap_pi(const struct lil_env *env, struct lil_err *err,
                            const char *text, size_t len, json_t **out,
                            struct lil_agent_usage *u)
{
    struct pi_stream ps = {0};
    struct lil_buf b;
    size_t start = 0, end;
    lil_status rc = pi_read(env, err, text, len, &ps);

    lil__buf_init(&b, env, SIZE_MAX);
    if (rc == LIL_OK)
        rc = pi_check_final(err, ps.last);
    if (rc == LIL_OK && pi_text(ps.last, &b) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    end = b.len;
    if (rc == LIL_OK && b.data)
        lil__js_trim((const char *)b.data, &start, &end);
    if (rc == LIL_OK && start == end)
        rc = lil__seterr(err, LIL_E_CHILD, 0,
                         "pi final assistant message did not contain text");
    if (rc == LIL_OK)
        rc = unwrap_text(env, err, (const char *)b.data, b.len, out);
    if (rc == LIL_OK)
        pi_usage(&ps, u);
    lil__buf_free(&b);
    json_decref(ps.last);
    return rc;
}

/* ---- the call ------------------------------------------------------------------- */

/* Priced or estimated usage for what the CLI did not report. */
static void finish_usage(const struct lil_agent_call *call, size_t output_bytes,
                         struct lil_agent_usage *u)
{
    bool had_usd = u->has_usd;
    double usd = u->usd;
    const char *model = u->model[0] ? u->model : NULL;

    if (!u->has_tokens) {
        lil__agent_estimate(call->envp, model, strlen(call->prompt), output_bytes, u);
        if (had_usd) { /* the CLI's own figure wins */
            u->has_usd = true;
            u->usd = usd;
            u->usd_estimated = false;
        }
    } else if (!u->has_usd && model) {
        u->has_usd = lil__agent_price_usd(call->envp, model, u->tokens_in,
                                          u->tokens_out, &u->usd);
    }
}

/* The result of the CLI's stdout as its harness reads it. */
static lil_status unwrap(const struct lil_env *env, struct lil_err *err,
                         const struct command *cmd, const struct outcome *oc,
                         json_t **out, struct lil_agent_usage *u)
{
    struct lil_buf b;
    const char *text;
    lil_status rc;

    lil__buf_init(&b, env, SIZE_MAX);
    rc = lil__text_from_utf8(&b, oc->out.data, oc->out.len);
    text = b.data ? (const char *)b.data : "";
    if (rc != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    else if (cmd->cli->unwrap == UNWRAP_CLAUDE)
        rc = unwrap_claude(env, err, text, b.len, out, u);
    else if (cmd->cli->unwrap == UNWRAP_PI)
        rc = unwrap_pi(env, err, text, b.len, out, u);
    else
        rc = unwrap_text(env, err, text, b.len, out);
    lil__buf_free(&b);
    return rc;
}

static lil_status call_cli(const struct lil_env *env, struct lil_err *err,
                           const struct lil_agent_call *call, const struct command *cmd,
                           const struct limits *lim, json_t **result,
                           struct lil_agent_usage *usage)
{
    struct outcome oc = {0};
    struct lil_err e = {0};
    lil_status rc = run_cli(env, &e, call, cmd, lim, &oc);

    if (rc == LIL_E_CHILD)
        rc = harness_failed(err, cmd, e.msg); /* could not start: "exec x: ..." */
    else if (rc != LIL_OK)
        lil__copyerr(err, &e);
    if (rc == LIL_OK)
        rc = check_outcome(err, cmd, lim, &oc);
    if (rc == LIL_OK)
        rc = unwrap(env, err, cmd, &oc, result, usage);
    if (rc == LIL_OK)
        finish_usage(call, oc.out.len, usage);
    lil__proc_output_free(env, &oc.out);
    lil__proc_output_free(env, &oc.err);
    return rc;
}

lil_status lil__agent_cli_call(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call, json_t **result,
                               struct lil_agent_usage *usage)
{
    const struct cli *cli = find_cli(call->harness);
    struct lil_json_scope sc;
    struct limits lim;
    struct command cmd = {0};
    lil_status rc, jrc;

    *result = NULL;
    memset(usage, 0, sizeof(*usage));
    if (!cli)
        return lil__seterr(err, LIL_E_INVAL, 0, "unknown agent harness '%s'",
                           call->harness);
    lil__json_begin(&sc, env);
    rc = read_limits(call->envp, err, &lim);
    if (rc == LIL_OK)
        rc = command_make(env, err, call, cli, &cmd);
    if (rc == LIL_OK)
        rc = call_cli(env, err, call, &cmd, &lim, result, usage);
    command_free(env, &cmd);
    jrc = lil__json_end(&sc);
    if (rc == LIL_OK && jrc != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc != LIL_OK) {
        json_decref(*result);
        *result = NULL;
    }
    return rc;
}
