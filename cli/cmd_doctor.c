/*
 * cmd_doctor.c -- `lil doctor SPEC [--json]`: can this loop run here?
 * (the reference's doctor, in lil's words; docs/loops.md, "Doctor").
 *
 * Prints "doctor — loop '<id>'" and then one line per check, in order:
 *   ✓/✗ the store directory is writable: a probe file created (O_EXCL) and
 *       removed in it; a store that does not exist yet is fine when its
 *       parent is writable (`lil run` creates it);
 *   ✓/⚠ a token, usd or wallclock budget is set;
 *   ⚠   each agent call the token budget can never admit (the spec's
 *       `call-over-budget` warnings, at file:line:column);
 *   ℹ   with a usd budget: which harnesses report their cost, which are
 *       priced from the table, which are estimated;
 *   ✓/✗ each agent step's harness (and on_exit's) can run here
 *       (lil_agent_harness_check: configured, its CLI found, its limits
 *       valid), else what to set;
 *   ℹ   every harness: ready here, or not configured and what to set
 *       (lil_agent_settings); for a configured llm harness its provider,
 *       base URL (redacted), model and key variable, each with where it
 *       came from -- never the key -- and
 *   ✓/⚠ whether its model is priced (the prices in force per million
 *       tokens and their source), ⚠ only when an agent step uses llm
 *       (ℹ otherwise);
 *   ✓   max_iterations;
 *   ✓/✗ the agent limits from LIL_AGENT_TIMEOUT_MS / LOOPY_AGENT_TIMEOUT_MS
 *       and LIL_AGENT_MAX_BUFFER / LOOPY_AGENT_MAX_BUFFER as the harnesses
 *       read them (lil_agent_settings: the LIL_ name wins when it is set
 *       and not empty; blank means the default; anything but a positive
 *       integer is an error naming the variable and its value);
 *   ℹ   the limits in force with where each came from, max tokens per llm
 *       call included;
 *   ℹ   the termination signal and lil's version.
 * Exit status: 0 when no check failed (✗), 1 when one did or the spec is
 * invalid (its diagnostics on stderr), 64 on a usage error.  --json: one
 * document {"loop", "spec", "store", "ok", "checks": [{"check", "level":
 * "ok"|"warning"|"info"|"fail", "message"}], "agents", "version"}; "agents"
 * is lil_agent_settings's document.
 *
 * Doctor reads the spec and the environment and writes only its probe: it
 * never opens a journal and takes no lock.  cli_doctor_json (spec_cli.h)
 * makes the same checks for `lil mcp`'s doctor tool.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "spec_cli.h"

enum level { LVL_OK, LVL_WARN, LVL_INFO, LVL_FAIL };

struct doctor {
    const struct cli_ctx *ctx;
    json_t *checks; /* --json */
    bool failed;
    bool uses_llm;  /* an agent step (or on_exit) of the spec uses llm */
    json_t *agents; /* lil_agent_settings's document, or NULL */
};

/* ---- output
 * ---------------------------------------------------------------------------- */

static void say(struct doctor *d, enum level lvl, const char *check, const char *fmt,
                ...) __attribute__((format(printf, 4, 5)));

static void say(struct doctor *d, enum level lvl, const char *check, const char *fmt,
                ...)
{
    static const char *const marks[] = {"\u2713", "\u26a0", "\u2139", "\u2717"};
    static const char *const names[] = {"ok", "warning", "info", "fail"};
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    d->failed = d->failed || lvl == LVL_FAIL;
    if (d->checks) {
        json_t *c = json_pack("{s:s, s:s}", "check", check, "level", names[lvl]);

        cli_json_set(c, "message", cli_json_str(msg, strlen(msg)));
        if (!c || json_array_append_new(d->checks, c) != 0)
            d->failed = true;
        return;
    }
    printf("%s ", marks[lvl]);
    cli_put_text(stdout, msg);
    putchar('\n');
}

/* ---- the store
 * ------------------------------------------------------------------------- */

static void parent_of(const char *dir, char *out, size_t cap)
{
    const char *slash;
    size_t n = strlen(dir);

    while (n > 1 && dir[n - 1] == '/')
        n--;
    slash = n ? memrchr(dir, '/', n) : NULL;
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == dir)
        snprintf(out, cap, "/");
    else
        snprintf(out, cap, "%.*s", (int)(slash - dir), dir);
}

static void store_missing(struct doctor *d, const char *dir)
{
    char parent[4096];

    parent_of(dir, parent, sizeof(parent));
    if (access(parent, W_OK | X_OK) == 0)
        say(d, LVL_OK, "store",
            "store dir %s does not exist yet; its parent %s is writable (`lil run` "
            "creates it)",
            dir, parent);
    else
        say(d, LVL_FAIL, "store",
            "store dir %s does not exist and its parent %s is NOT writable: %s", dir,
            parent, strerror(errno));
}

/* Create and remove a probe file in dir. */
static void store_probe(struct doctor *d, const char *dir)
{
    char probe[4200];
    int fd, e;

    snprintf(probe, sizeof(probe), "%s/.lil-doctor-%ld.probe", dir, (long)getpid());
    fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, "x", 1) != 1) {
        e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(probe);
        }
        say(d, LVL_FAIL, "store", "store dir NOT writable: %s: %s", probe, strerror(e));
        return;
    }
    close(fd);
    if (unlink(probe) != 0) {
        say(d, LVL_FAIL, "store", "store dir NOT writable: cannot remove %s: %s", probe,
            strerror(errno));
        return;
    }
    say(d, LVL_OK, "store", "store dir writable (%s)", dir);
}

/* A PostgreSQL store: the server answers and the schema is this lil's
 * (the location is not printed: it may hold a password). */
static void check_pg_store(struct doctor *d, const char *where)
{
    lil_schema_info info;

    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (lil_store_schema(NULL, where, LIL_SCHEMA_STATUS, &info) != LIL_OK)
        say(d, LVL_FAIL, "store", "PostgreSQL store NOT usable: %s", lil_errmsg());
    else if (info.version != info.latest)
        say(d, LVL_FAIL, "store", "PostgreSQL store NOT ready: %s", info.message);
    else
        say(d, LVL_OK, "store", "PostgreSQL store ready: %s", info.message);
}

static void check_store(struct doctor *d, const char *dir)
{
    struct stat st;

    if (cli_store_is_url(dir)) {
        check_pg_store(d, dir);
        return;
    }
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            store_missing(d, dir);
        else
            say(d, LVL_FAIL, "store", "store dir %s NOT usable: %s", dir,
                strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        say(d, LVL_FAIL, "store", "store dir %s is NOT a directory", dir);
    } else {
        store_probe(d, dir);
    }
}

/* ---- the spec's caps and harnesses
 * ------------------------------------------------------- */

static void check_budget(struct doctor *d, const json_t *caps)
{
    const json_t *budget = json_object_get(caps, "budget");
    const json_t *usd = json_object_get(budget, "usd");
    char text[512];
    size_t n;

    if (!json_is_object(budget) || json_object_size(budget) == 0) {
        say(d, LVL_WARN, "budget", "no token/$/wallclock budget");
        return;
    }
    n = json_dumpb(budget, text, sizeof(text) - 1, JSON_COMPACT);
    text[n < sizeof(text) ? n : 0] = '\0';
    say(d, LVL_OK, "budget", "budget set: %s", text);
    if (json_is_number(usd))
        say(d, LVL_INFO, "usd",
            "usd budget ($%g): claude-code and pi report their cost; the llm harness "
            "takes the provider's cost or prices its model from the table "
            "(LIL_LLM_PRICE_IN/_OUT for a model the table lacks); the other CLIs' usage "
            "is estimated from sizes, priced when their model is known",
            json_number_value(usd));
}

/* ✓ or ✗ for one harness use. */
static void check_one(struct doctor *d, const char *where, const char *h)
{
    d->uses_llm = d->uses_llm || strcmp(h, "llm") == 0;
    if (lil_agent_harness_check(h) == LIL_OK)
        say(d, LVL_OK, "harness", "%s: harness '%s' can run here", where, h);
    else
        say(d, LVL_FAIL, "harness", "%s: harness '%s' cannot run here: %s", where, h,
            lil_errmsg());
}

/* Every agent step of steps (reduce bodies too): can its harness run? */
static void check_harnesses(struct doctor *d, const json_t *steps, int depth)
{
    size_t i;
    json_t *s;

    json_array_foreach(steps, i, s)
    {
        const char *kind = json_string_value(json_object_get(s, "kind"));
        const char *h = json_string_value(json_object_get(s, "harness"));

        if (kind && strcmp(kind, "agent") == 0 && h) {
            char where[300];

            snprintf(where, sizeof(where), "agent step '%s'",
                     json_string_value(json_object_get(s, "id")));
            check_one(d, where, h);
        }
        if (depth < 64)
            check_harnesses(d, json_object_get(s, "body"), depth + 1);
    }
}

static void check_on_exit(struct doctor *d, const json_t *terminate)
{
    const json_t *act = json_object_get(terminate, "on_exit");
    const char *kind = json_string_value(json_object_get(act, "kind"));
    const char *h = json_string_value(json_object_get(act, "harness"));

    if (kind && strcmp(kind, "agent") == 0 && h)
        check_one(d, "terminate.on_exit", h);
}

/* ---- what the harnesses would use (lil_agent_settings)
 * -------------------------------------------- */

static const char *str_at(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : dflt;
}

/* The document of lil_agent_settings, kept in d->agents. */
static bool load_agents(struct doctor *d)
{
    lil_bytes b = {0};

    if (lil_agent_settings(&b) != LIL_OK) {
        say(d, LVL_FAIL, "harnesses", "agent settings: %s", lil_errmsg());
        return false;
    }
    d->agents = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!d->agents)
        say(d, LVL_FAIL, "harnesses", "agent settings: out of memory");
    return d->agents != NULL;
}

/* "provider custom, base URL U (LIL_LLM_BASE_URL), model M (default), key
 * set (LIL_LLM_API_KEY), stream off" */
static void report_llm(struct doctor *d, const json_t *llm)
{
    const char *key_from = str_at(llm, "key_from", NULL);
    char key[96];

    if (key_from)
        snprintf(key, sizeof(key), "key set (%s)", key_from);
    else
        snprintf(key, sizeof(key), "no key (a keyless server)");
    say(d, LVL_INFO, "harnesses",
        "harness llm: ready: provider %s, base URL %s (%s), model %s (%s), %s, "
        "stream %s",
        str_at(llm, "provider", "?"), str_at(llm, "base_url", "?"),
        str_at(llm, "base_url_from", "?"), str_at(llm, "model", "?"),
        str_at(llm, "model_from", "?"), key,
        json_is_true(json_object_get(llm, "stream")) ? "on" : "off");
}

/* One side of a price: "$0.15 (table)", or "none". */
static void price_side(const json_t *llm, const char *key, const char *from, char *buf,
                       size_t cap)
{
    const json_t *v = json_object_get(llm, key);

    if (json_is_number(v))
        snprintf(buf, cap, "$%g (%s)", json_number_value(v), str_at(llm, from, "?"));
    else
        snprintf(buf, cap, "none");
}

static void report_price(struct doctor *d, const json_t *llm)
{
    const char *model = str_at(llm, "model", "?");
    char in[96], out[96];

    price_side(llm, "price_in", "price_in_from", in, sizeof(in));
    price_side(llm, "price_out", "price_out_from", out, sizeof(out));
    if (json_is_true(json_object_get(llm, "priced")))
        say(d, d->uses_llm ? LVL_OK : LVL_INFO, "llm-price",
            "llm model '%s' is priced per million tokens: in %s, out %s", model, in,
            out);
    else
        say(d, d->uses_llm ? LVL_WARN : LVL_INFO, "llm-price",
            "llm model '%s' has no price (in %s, out %s): its calls are unpriced "
            "unless the provider reports their cost - set LIL_LLM_PRICE_IN and "
            "LIL_LLM_PRICE_OUT (USD per million tokens)",
            model, in, out);
}

/* One line per harness: ready, or what to set. */
static void report_harnesses(struct doctor *d)
{
    const json_t *llm = json_object_get(d->agents, "llm");
    size_t i;
    json_t *h;

    json_array_foreach(json_object_get(d->agents, "harnesses"), i, h)
    {
        const char *name = str_at(h, "name", "?");

        if (!json_is_true(json_object_get(h, "ready")))
            say(d, LVL_INFO, "harnesses", "harness %s: not configured here: %s", name,
                str_at(h, "message", "?"));
        else if (strcmp(name, "llm") == 0)
            report_llm(d, llm);
        else
            say(d, LVL_INFO, "harnesses", "harness %s: ready", name);
        if (strcmp(name, "llm") == 0 &&
            json_is_true(json_object_get(llm, "configured")))
            report_price(d, llm);
    }
}

/* "llm timeout 120000 ms (default)" for one limit; "" when it is invalid
 * (the ✗ line says so). */
static void limit_text(const json_t *limits, const char *key, const char *what,
                       const char *unit, char *buf, size_t cap)
{
    const json_t *l = json_object_get(limits, key);

    if (json_is_integer(json_object_get(l, "value")))
        snprintf(buf, cap, "%s %lld%s (%s)", what,
                 (long long)json_integer_value(json_object_get(l, "value")), unit,
                 str_at(l, "from", "?"));
    else
        snprintf(buf, cap, "%s invalid (%s)", what, str_at(l, "from", "?"));
}

static void report_limits(struct doctor *d)
{
    const json_t *limits = json_object_get(d->agents, "limits");
    char llm[96], cli[96], buf[96], tokens[96];

    limit_text(limits, "llm_timeout_ms", "llm timeout", " ms", llm, sizeof(llm));
    limit_text(limits, "cli_timeout_ms", "CLI timeout", " ms", cli, sizeof(cli));
    limit_text(limits, "max_buffer", "max buffer", " bytes", buf, sizeof(buf));
    limit_text(limits, "max_tokens", "max tokens per call", "", tokens, sizeof(tokens));
    say(d, LVL_INFO, "limits", "limits in force: %s, %s, %s, %s", llm, cli, buf,
        tokens);
}

/* ---- agent limits
 * ------------------------------------------------------------------------- */

static long long limit_value(const json_t *limits, const char *key)
{
    return (long long)json_integer_value(
        json_object_get(json_object_get(limits, key), "value"));
}

/* The limits as the harnesses read them (lil_agent_settings): ✓ with
 * their values, or ✗ for each that does not parse (one timeout variable
 * sets both timeouts: its error once). */
static void check_agent_limits(struct doctor *d)
{
    static const char *const keys[] = {"cli_timeout_ms", "max_buffer", "max_tokens"};
    const json_t *limits = json_object_get(d->agents, "limits");
    bool ok = true;

    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        const char *error = str_at(json_object_get(limits, keys[i]), "error", NULL);

        if (error) {
            say(d, LVL_FAIL, "agent-limits", "invalid agent limits: %s", error);
            ok = false;
        }
    }
    if (ok)
        say(d, LVL_OK, "agent-limits",
            "agent limits: cliTimeout=%lldms, llmTimeout=%lldms, cliMaxBuffer=%lld bytes",
            limit_value(limits, "cli_timeout_ms"),
            limit_value(limits, "llm_timeout_ms"), limit_value(limits, "max_buffer"));
}

/* ---- the verb
 * -------------------------------------------------------------------------------- */

/* ⚠ every agent call the token budget can never admit: the spec's
 * `call-over-budget` warnings, at their file:line:column. */
static void check_call_budget(struct doctor *d, const lil_spec *spec, const char *file)
{
    size_t n = lil_spec_diag_count(spec);

    for (size_t i = 0; i < n; i++) {
        const lil_diag *g = lil_spec_diag(spec, i);

        if (g && strcmp(g->code, "call-over-budget") == 0)
            say(d, LVL_WARN, "call-over-budget", "%s:%u:%u: %s [call-over-budget]",
                g->file && *g->file ? g->file : file, g->line, g->column, g->message);
    }
}

static void run_checks(struct doctor *d, const lil_spec *spec, const char *file,
                       const json_t *norm, const char *dir)
{
    const json_t *caps = json_object_get(norm, "caps");
    const json_t *terminate = json_object_get(norm, "terminate");
    const char *signal = json_string_value(json_object_get(terminate, "signal"));

    check_store(d, dir);
    check_budget(d, caps);
    check_call_budget(d, spec, file);
    check_harnesses(d, json_object_get(norm, "body"), 0);
    check_on_exit(d, terminate);
    if (load_agents(d))
        report_harnesses(d);
    say(d, LVL_OK, "max-iterations", "max_iterations: %lld%s",
        (long long)json_integer_value(json_object_get(caps, "max_iterations")),
        json_is_true(json_object_get(norm, "caps_injected"))
            ? " (injected for the pattern)"
            : "");
    if (d->agents) {
        check_agent_limits(d);
        report_limits(d);
    }
    say(d, LVL_INFO, "signal", "termination signal: %s", signal ? signal : "(unset)");
    say(d, LVL_INFO, "version", "lil: %s", lil_version());
}

/* The spec at path, valid, as normalized JSON in *norm. */
static int load(const struct cli_ctx *ctx, const char *path, lil_spec **spec,
                json_t **norm)
{
    lil_bytes b = {0};
    char msg[1024];

    if (cli_spec_load(NULL, path, spec, msg, sizeof(msg)) != LIL_OK) {
        cli_err(ctx, "%s", msg);
        return CLI_EXIT_FAIL;
    }
    if (!lil_spec_ok(*spec)) {
        cli_diag_print(stderr, *spec, cli_spec_name(path));
        cli_err(ctx, "%s is not a valid loop spec", cli_spec_name(path));
        return CLI_EXIT_FAIL;
    }
    if (lil_spec_json(*spec, &b) == LIL_OK)
        *norm = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (!*norm) {
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* The --json document of the checks made (NULL when out of memory). */
static json_t *report_json(const struct doctor *d, const char *id, const char *path,
                           const char *dir)
{
    return json_pack("{s:s, s:s, s:s, s:b, s:O, s:O?, s:s}", "loop", id, "spec", path,
                     "store", dir, "ok", !d->failed, "checks", d->checks, "agents",
                     d->agents, "version", lil_version());
}

json_t *cli_doctor_json(const lil_spec *spec, const char *file, const char *store)
{
    struct doctor d = {NULL, json_array(), false, false, NULL};
    lil_bytes b = {0};
    json_t *norm = NULL, *doc = NULL;

    if (lil_spec_json(spec, &b) == LIL_OK)
        norm = json_loadb(b.data, b.len, 0, NULL);
    lil_free(b.data);
    if (d.checks && norm) {
        run_checks(&d, spec, file, norm, store);
        doc = report_json(&d, lil_spec_id(spec) ? lil_spec_id(spec) : "?", file, store);
    }
    json_decref(d.checks);
    json_decref(d.agents);
    json_decref(norm);
    return doc;
}

static int report(struct doctor *d, const char *id, const char *path, const char *dir)
{
    json_t *doc;

    if (!d->checks)
        return d->failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    doc = report_json(d, id, path, dir);
    if (cli_json_print(d->ctx, doc, false) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    return d->failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static int cmd_doctor(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"SPEC", NULL};
    const char *pos[1] = {NULL};
    const struct cli_args a = {NULL, names, pos};
    struct doctor d = {ctx, NULL, false, false, NULL};
    lil_spec *spec = NULL;
    json_t *norm = NULL;
    int ex = cli_parse(ctx, argc, argv, &a);
    const char *id;

    if (ex == CLI_EXIT_OK)
        ex = load(ctx, pos[0], &spec, &norm);
    if (ex == CLI_EXIT_OK && ctx->json && !(d.checks = json_array()))
        ex = cli_json_print(ctx, NULL, false);
    if (ex == CLI_EXIT_OK) {
        id = lil_spec_id(spec) ? lil_spec_id(spec) : "?";
        if (!ctx->json) {
            fputs("doctor \u2014 loop '", stdout);
            cli_put_text(stdout, id);
            fputs("'\n", stdout);
        }
        run_checks(&d, spec, cli_spec_name(pos[0]), norm, cli_store_dir(ctx));
        ex = report(&d, id, cli_spec_name(pos[0]), cli_store_dir(ctx));
    }
    json_decref(d.checks);
    json_decref(d.agents);
    json_decref(norm);
    lil_spec_free(spec);
    return ex == CLI_PARSE_HELP ? CLI_EXIT_OK : ex;
}

const struct cli_verb cli_verb_doctor = {
    "doctor", "check that a loop spec can run here (store, budget, harnesses, limits)",
    "Usage: lil doctor SPEC [--json]\n"
    "\n"
    "Check, in order: that the store directory is writable (a probe file is\n"
    "created and removed; a store that does not exist yet needs a writable\n"
    "parent), that a budget is set, what a usd budget measures, that every\n"
    "agent step's harness can run here (configured, its CLI found; else what\n"
    "to set), every harness (ready, or what to set; for llm its provider,\n"
    "base URL, model and key variable -- never the key -- and whether its\n"
    "model is priced, with the prices in force), max_iterations, the agent\n"
    "limits from LIL_AGENT_TIMEOUT_MS and LIL_AGENT_MAX_BUFFER (or\n"
    "LOOPY_AGENT_TIMEOUT_MS, LOOPY_AGENT_MAX_BUFFER; positive integers) and\n"
    "where each limit in force came from, the termination signal and lil's\n"
    "version.\n"
    "One line per check: \u2713 ok, \u26a0 warning, \u2139 note, \u2717 failed.  Doctor\n"
    "never opens a journal and takes no lock.\n"
    "\n"
    "Flags:\n"
    "  --dir DIR   the store to check (default $LIL_DIR, else .lil)\n"
    "  --json      {\"loop\", \"spec\", \"store\", \"ok\", \"checks\": [{\"check\",\n"
    "              \"level\", \"message\"}], \"agents\", \"version\"}\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 no check failed; 1 a check\n"
    "failed or the spec is invalid; 64 usage error.\n",
    cmd_doctor};
