/*
 * settings.c -- the table of every environment variable the library
 * reads, the lookups and the checks (settings.h has the rules).  The only
 * getenv of src/ is in lil__env_lookup.
 */
#include "base/settings/settings.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/settings/sync_mode.h"

#define SAFE_INTEGER 9007199254740991LL /* 2^53 - 1 */

/* clang-format off */
static const struct lil_setting_def table[] = {
    /* stores and runs */
    {"LIL_DIR", NULL, ".lil", LIL_SETK_TEXT, "a directory or a postgresql:// URI",
     "the store opened when none is given (lil_store_open, lil_store_location, "
     "the CLI without --dir, Python)"},
    {"LIL_SYNC", NULL, "full", LIL_SETK_SYNC, "full, normal or off",
     "the sync mode of runs opened with LIL_SYNC_DEFAULT; another value fails "
     "those opens"},
    {"LIL_JOURNAL_KEY", NULL, NULL, LIL_SETK_SECRET, "any bytes",
     "the journal key (HMAC-SHA-256 chain) of the stores opened; never passed "
     "to children"},
    {"LIL_SHARED_STORE", NULL, NULL, LIL_SETK_TEXT, "1, true, yes or on",
     "accept a store directory another user owns or may write in "
     "(--shared-store, LIL_STORE_SHARED)"},
    {"LIL_STORE_KEY", NULL, "auto", LIL_SETK_TEXT, "auto or off",
     "auto: a new file store makes a journal key of its own (journal.key); "
     "off: it does not"},
    {"LIL_PG_LEASE_MS", NULL, "30000", LIL_SETK_LEASE, "milliseconds, at least 100",
     "the lease of a run held in the PostgreSQL store; another value means "
     "the default"},
    /* loops */
    {"LIL_EFFECT_ENV", NULL, NULL, LIL_SETK_TEXT, "comma-separated names",
     "more variables passed to shell effects and agents (besides --env-allow)"},
    {"LIL_SPEC_MAX_BYTES", NULL, NULL, LIL_SETK_BYTES, "a positive number of bytes",
     "the largest spec the CLI reads (default: the library's limit)"},
    {"LIL_MCP_TOKEN", NULL, NULL, LIL_SETK_TEXT, "any text",
     "the bearer token of `lil mcp --http` (default: random, printed at start)"},
    {"LIL_COMPACT_ITERATIONS", NULL, "10000", LIL_SETK_POSINT, "a positive integer",
     "a loop run goes on in a new journal segment after this many iterations"},
    {"LIL_COMPACT_BYTES", NULL, "67108864", LIL_SETK_BYTES, "a positive number of bytes",
     "or once its live journal segment is this large"},
    /* agent harnesses */
    {"LIL_AGENT_TIMEOUT_MS", "LOOPY_AGENT_TIMEOUT_MS", "600000", LIL_SETK_POSINT,
     "a positive integer", "time limit of an agent call (the llm harness: "
     "default 120000)"},
    {"LIL_AGENT_MAX_BUFFER", "LOOPY_AGENT_MAX_BUFFER", "16777216", LIL_SETK_POSINT,
     "a positive integer", "most bytes of an agent's output or reply"},
    {"LIL_AGENT_MAX_TOKENS", "LOOPY_AGENT_MAX_TOKENS", "2000", LIL_SETK_POSINT,
     "a positive integer", "most tokens a model may write in one llm call"},
    {"LIL_AGENT_CMD", "LOOPY_AGENT_CMD", NULL, LIL_SETK_TEXT, "a command",
     "the program of the cli harness"},
    {"LIL_CLAUDE_CODE_BIN", "LOOPY_CLAUDE_CODE_BIN", "claude", LIL_SETK_TEXT,
     "a program", "the claude-code harness's binary"},
    {"LIL_CODEX_BIN", "LOOPY_CODEX_BIN", "codex", LIL_SETK_TEXT, "a program",
     "the codex harness's binary"},
    {"LIL_OPENCODE_BIN", "LOOPY_OPENCODE_BIN", "opencode", LIL_SETK_TEXT,
     "a program", "the opencode harness's binary"},
    {"LIL_ANTIGRAVITY_BIN", "LOOPY_ANTIGRAVITY_BIN", "agy", LIL_SETK_TEXT,
     "a program", "the antigravity harness's binary"},
    {"LIL_CURSOR_AGENT_BIN", "LOOPY_CURSOR_AGENT_BIN", "cursor-agent", LIL_SETK_TEXT,
     "a program", "the cursor-agent harness's binary"},
    {"LIL_PI_BIN", "LOOPY_PI_BIN", "pi", LIL_SETK_TEXT, "a program",
     "the pi harness's binary"},
    {"LIL_LLM_API_KEY", "LOOPY_LLM_API_KEY", NULL, LIL_SETK_SECRET, "a key",
     "the llm harness's key (else a provider's key: OPENAI_API_KEY, ...)"},
    {"LIL_LLM_BASE_URL", "LOOPY_LLM_BASE_URL", NULL, LIL_SETK_TEXT, "a URL",
     "the llm harness's server (OpenAI-compatible)"},
    {"LIL_LLM_MODEL", "LOOPY_LLM_MODEL", NULL, LIL_SETK_TEXT, "a model name",
     "the llm harness's model (default: the provider's)"},
    {"LIL_LLM_HEADERS", "LOOPY_LLM_HEADERS", NULL, LIL_SETK_TEXT, "a JSON object",
     "headers added to the llm harness's requests"},
    {"LIL_LLM_STREAM", "LOOPY_LLM_STREAM", NULL, LIL_SETK_TEXT,
     "1, true, yes or on", "the llm harness asks for a stream"},
    {"LIL_LLM_PRICE_IN", "LOOPY_LLM_PRICE_IN", NULL, LIL_SETK_NUMBER,
     "USD per million tokens", "the price of input tokens (else the table's)"},
    {"LIL_LLM_PRICE_OUT", "LOOPY_LLM_PRICE_OUT", NULL, LIL_SETK_NUMBER,
     "USD per million tokens", "the price of output tokens (else the table's)"},
    /* the host's */
    {"USER", NULL, NULL, LIL_SETK_HOST, "a name",
     "the actor recorded when none is given"},
    {"TMPDIR", NULL, "/tmp", LIL_SETK_HOST, "an absolute directory",
     "where lil_spec_verify makes its temporary store"},
    {"PATH", NULL, "/bin:/usr/bin", LIL_SETK_HOST, "directories",
     "where agent harness binaries and lil watch's command are looked up"},
    {"VIRTUAL_ENV", NULL, NULL, LIL_SETK_HOST, "a directory",
     "the virtualenv whose python3 runs lil watch's SCRIPT.py"},
};
/* clang-format on */

#define NTABLE (sizeof(table) / sizeof(table[0]))

const struct lil_setting_def *lil__setting_at(size_t i)
{
    return i < NTABLE ? &table[i] : NULL;
}

const struct lil_setting_def *lil__setting_find(const char *name)
{
    for (size_t i = 0; name && i < NTABLE; i++)
        if (strcmp(name, table[i].name) == 0 ||
            (table[i].alias && strcmp(name, table[i].alias) == 0))
            return &table[i];
    return NULL;
}

const char *lil__env_lookup(const char *const *envp, const char *name)
{
    size_t n = strlen(name);

    if (!envp)
        return getenv(name); /* NOLINT(concurrency-mt-unsafe): read only */
    for (; *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

const char *lil__setting_twin(const char *const *envp, const char *x,
                              const char **which)
{
    static const char *const prefixes[] = {"LIL_", "LOOPY_"};
    char name[128];
    const char *v;

    for (size_t i = 0; i < 2; i++) {
        int n = snprintf(name, sizeof(name), "%s%s", prefixes[i], x);

        if (n < 0 || (size_t)n >= sizeof(name))
            break;
        v = lil__env_lookup(envp, name);
        if (v && (*v || i == 1)) {
            if (which)
                *which = prefixes[i];
            return v;
        }
    }
    return NULL;
}

/* The variable of row d and its name (the alias when that one is read). */
static const char *row_raw(const struct lil_setting_def *d, const char **from)
{
    const char *which = NULL, *v;

    if (!d->alias) {
        *from = d->name;
        return lil__env_lookup(NULL, d->name);
    }
    v = lil__setting_twin(NULL, d->name + strlen("LIL_"), &which);
    *from = which && strcmp(which, "LOOPY_") == 0 ? d->alias : d->name;
    return v;
}

const char *lil__setting_raw(const char *name)
{
    const struct lil_setting_def *d = lil__setting_find(name);
    const char *from;

    return d ? row_raw(d, &from) : NULL;
}

const char *lil__setting_store_where(const char *given)
{
    const char *where = given;

    if (!where)
        where = lil__setting_raw("LIL_DIR");
    if (!where || !*where)
        where = ".lil";
    return where;
}

void lil__setting_sync(int *mode, char *bad, size_t cap)
{
    const char *e = lil__setting_raw("LIL_SYNC");

    lil_sync sync = LIL_SYNC_FULL;

    if (cap)
        bad[0] = '\0';
    if (e && *e && !lil__sync_parse(e, &sync) && cap)
        snprintf(bad, cap, "%s", e);
    *mode = (int)sync;
}

static int64_t lease_of(const char *e)
{
    long long v = e && *e ? strtoll(e, NULL, 10) : 0;

    return v >= 100 ? (int64_t)v : LIL_SETTING_PG_LEASE_MS;
}

bool lil__setting_store_key_off(void)
{
    const char *v = lil__setting_raw("LIL_STORE_KEY");

    return v && strcmp(v, "off") == 0;
}

int64_t lil__setting_pg_lease_ms(void)
{
    return lease_of(lil__setting_raw("LIL_PG_LEASE_MS"));
}

/* ---- checks (lil__setting_value) --------------------------------------------- */

/* LIL_SPEC_MAX_BYTES: digits only, positive, below SIZE_MAX. */
static lil_status check_bytes(struct lil_err *err, const char *var, const char *v)
{
    unsigned long long n;
    char *end = NULL;

    errno = 0;
    n = strtoull(v, &end, 10);
    if (errno || *end || n == 0 || n >= SIZE_MAX || *v == '-' || *v == '+' || *v == ' ')
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s must be a positive number of bytes, not '%s'", var, v);
    return LIL_OK;
}

/* A positive integer of at most 2^53 - 1, blanks around it; the digits
 * (without the blanks) into buf. */
static lil_status check_posint(struct lil_err *err, const char *var, const char *v,
                               char *buf, size_t cap)
{
    const char *s = v;
    int64_t n = 0;

    while (isspace((unsigned char)*s))
        s++;
    for (; isdigit((unsigned char)*s) && n <= SAFE_INTEGER; s++)
        n = n * 10 + (*s - '0');
    while (isspace((unsigned char)*s))
        s++;
    if (*s || n <= 0 || n > SAFE_INTEGER)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s must be a positive integer; got '%.60s'", var, v);
    snprintf(buf, cap, "%" PRId64, n);
    return LIL_OK;
}

/* A finite number >= 0 (blanks around it), else not in force. */
static bool number_ok(const char *v)
{
    char *end;
    double d;

    while (isspace((unsigned char)*v))
        v++;
    if (!*v)
        return false;
    d = strtod(v, &end);
    while (isspace((unsigned char)*end))
        end++;
    return *end == '\0' && isfinite(d) && d >= 0;
}

static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

/* Row d's set value v (from variable var) checked; *value may change. */
static lil_status check_row(struct lil_err *err, const struct lil_setting_def *d,
                            const char *var, const char **value, char *buf, size_t cap)
{
    const char *v = *value;

    switch (d->kind) {
    case LIL_SETK_SYNC:
        if (!lil__sync_parse(v, &(lil_sync){LIL_SYNC_FULL}))
            return lil__seterr(err, LIL_E_INVAL, 0,
                               "LIL_SYNC=%s: expected full, normal or off", v);
        return LIL_OK;
    case LIL_SETK_LEASE:
        snprintf(buf, cap, "%" PRId64, lease_of(v));
        *value = buf;
        return LIL_OK;
    case LIL_SETK_BYTES:
        return check_bytes(err, var, v);
    case LIL_SETK_POSINT:
        if (blank(v))
            return LIL_OK; /* the default (the caller) */
        if (check_posint(err, var, v, buf, cap) != LIL_OK)
            return err->code;
        *value = buf;
        return LIL_OK;
    case LIL_SETK_NUMBER:
        if (!number_ok(v))
            *value = NULL;
        return LIL_OK;
    case LIL_SETK_SECRET:
        return lil__seterr(err, LIL_E_INVAL, 0, "%s is secret: its value is not given",
                           d->name);
    default:
        return LIL_OK;
    }
}

lil_status lil__setting_value(struct lil_err *err, const char *name, const char **value,
                              const char **from, char *buf, size_t cap)
{
    const struct lil_setting_def *d = lil__setting_find(name);
    const char *var = NULL, *v;
    lil_status rc;

    *value = NULL;
    *from = NULL;
    if (!d)
        return lil__seterr(err, LIL_E_NOTFOUND, 0, "no setting named '%.100s'",
                           name ? name : "(null)");
    if (d->kind == LIL_SETK_SECRET)
        return check_row(err, d, d->name, value, buf, cap);
    v = row_raw(d, &var);
    if (v && (*v || d->kind == LIL_SETK_HOST)) {
        *value = v;
        rc = check_row(err, d, var, value, buf, cap);
        if (rc != LIL_OK) {
            *value = NULL;
            return rc;
        }
        if (*value && !(d->kind == LIL_SETK_POSINT && blank(*value))) {
            *from = var;
            return LIL_OK;
        }
    }
    *value = d->dflt;
    return LIL_OK;
}
