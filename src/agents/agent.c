/*
 * agent.c -- the harness table, settings with their LIL_ twins, the token
 * limit and the worst case of a call, estimated usage and fence stripping
 * (agent.h).
 */
#include "agents/agent.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent_info.h"
#include "base/settings/settings.h"
#include "os/os.h"

enum family { FAM_INTERNAL, FAM_LLM, FAM_CLI };

static const struct {
    const char *name;
    enum family fam;
} harnesses[] = {
    {"internal", FAM_INTERNAL}, {"llm", FAM_LLM},      {"claude-code", FAM_CLI},
    {"codex", FAM_CLI},         {"opencode", FAM_CLI}, {"antigravity", FAM_CLI},
    {"cursor-agent", FAM_CLI},  {"pi", FAM_CLI},       {"cli", FAM_CLI},
};

#define NHARNESS (sizeof(harnesses) / sizeof(harnesses[0]))

bool lil__agent_known(const char *name)
{
    for (size_t i = 0; name && i < NHARNESS; i++)
        if (strcmp(name, harnesses[i].name) == 0)
            return true;
    return false;
}

const char *lil__agent_name(size_t i)
{
    return i < NHARNESS ? harnesses[i].name : NULL;
}

const char *lil__agent_setting(const char *const *envp, const char *x,
                               const char **which)
{
    return lil__setting_twin(envp, x, which);
}

#define SAFE_INTEGER 9007199254740991LL /* 2^53 - 1 */

lil_status lil__agent_max_tokens(const char *const *envp, struct lil_err *err,
                                 int64_t *out, char *var, size_t cap)
{
    const char *which = NULL,
               *raw = lil__agent_setting(envp, "AGENT_MAX_TOKENS", &which);
    const char *s = raw;
    char name[40];
    int64_t v = 0;

    snprintf(name, sizeof(name), "%sAGENT_MAX_TOKENS", which ? which : "LIL_");
    if (var && cap)
        snprintf(var, cap, "%s", name);
    *out = LIL_AGENT_MAX_TOKENS;
    while (s && isspace((unsigned char)*s))
        s++;
    if (!s || !*s)
        return LIL_OK;
    for (; isdigit((unsigned char)*s) && v <= SAFE_INTEGER; s++)
        v = v * 10 + (*s - '0');
    while (isspace((unsigned char)*s))
        s++;
    if (*s || v <= 0 || v > SAFE_INTEGER)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s must be a positive integer; got '%.60s'", name, raw);
    *out = v;
    return LIL_OK;
}

/* Prices per 1M tokens of model (NULL: none known, overrides only). */
static void price_of(const char *const *envp, const char *model,
                     struct lil_agent_worst *w)
{
    const char *m = model ? model : "";

    w->priced = lil__agent_price_usd(envp, m, 1000000, 0, &w->price_in) &&
                lil__agent_price_usd(envp, m, 0, 1000000, &w->price_out);
    if (w->priced)
        w->priced = lil__agent_price_usd(envp, m, w->prompt, w->limit, &w->usd);
    snprintf(w->model, sizeof(w->model), "%s", m);
}

static int64_t bytes_as_tokens(size_t n)
{
    return n > (size_t)SAFE_INTEGER ? SAFE_INTEGER : (int64_t)n;
}

lil_status lil__agent_worst_case(const struct lil_agent_call *call, struct lil_err *err,
                                 struct lil_agent_worst *out)
{
    const char *model = NULL;
    size_t bytes = call->prompt ? strlen(call->prompt) : 0;
    lil_status rc;

    memset(out, 0, sizeof(*out));
    if (!lil__agent_known(call->harness))
        return lil__seterr(err, LIL_E_INVAL, 0, "unknown agent harness '%s'",
                           call->harness);
    rc = lil__agent_max_tokens(call->envp, err, &out->limit, out->limit_var,
                               sizeof(out->limit_var));
    if (rc != LIL_OK)
        return rc;
    if (strcmp(call->harness, "internal") == 0) {
        memset(out, 0, sizeof(*out));
        out->priced = true; /* nothing runs, nothing is spent */
        return LIL_OK;
    }
    if (strcmp(call->harness, "llm") == 0) {
        rc = lil__agent_llm_sizing(err, call, &model, &bytes);
        if (rc != LIL_OK)
            return rc;
        out->prompt = LIL_AGENT_FRAME_TOKENS;
    }
    out->prompt += bytes_as_tokens(bytes);
    out->tokens = out->prompt + out->limit;
    price_of(call->envp, model, out);
    return LIL_OK;
}

void lil__agent_estimate(const char *const *envp, const char *model,
                         size_t prompt_bytes, size_t output_bytes,
                         struct lil_agent_usage *usage)
{
    double usd;

    usage->tokens_in = (int64_t)((prompt_bytes + 3) / 4);
    usage->tokens_out = (int64_t)((output_bytes + 3) / 4);
    usage->tokens = usage->tokens_in + usage->tokens_out;
    usage->has_tokens = true;
    usage->estimated = true;
    if (!usage->unreported[0])
        snprintf(usage->unreported, sizeof(usage->unreported), "no usage reported");
    if (model &&
        lil__agent_price_usd(envp, model, usage->tokens_in, usage->tokens_out, &usd)) {
        usage->has_usd = true;
        usage->usd = usd;
        usage->usd_estimated = true;
    }
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* "```" then json/yml/yaml (any case) or nothing, then blanks: the length
 * of the opening, or 0. */
static size_t fence_open(const char *s, size_t n)
{
    static const char *const tags[] = {"json", "yaml", "yml"};
    size_t at = 3;

    if (n < 6 || memcmp(s, "```", 3) != 0)
        return 0;
    for (size_t i = 0; i < 3; i++) {
        size_t k = strlen(tags[i]);

        if (n - at >= k && strncasecmp(s + at, tags[i], k) == 0) {
            at += k;
            break;
        }
    }
    while (at < n && blank(s[at]) && s[at] != '\n')
        at++;
    if (at < n && s[at] == '\n')
        at++;
    return at;
}

void lil__agent_unfence(const char *text, size_t len, size_t *start, size_t *end)
{
    size_t a = 0, z = len, open;

    while (a < z && blank(text[a]))
        a++;
    while (z > a && blank(text[z - 1]))
        z--;
    *start = a;
    *end = z;
    open = fence_open(text + a, z - a);
    if (!open || z - a < open + 3 || memcmp(text + z - 3, "```", 3) != 0)
        return;
    *start = a + open;
    *end = z - 3;
    if (*end > *start && text[*end - 1] == '\n')
        (*end)--;
}

lil_status lil__agent_ready(const struct lil_env *env, struct lil_err *err,
                            const struct lil_agent_call *call)
{
    for (size_t i = 0; i < NHARNESS; i++) {
        if (strcmp(call->harness, harnesses[i].name) != 0)
            continue;
        if (harnesses[i].fam == FAM_INTERNAL)
            return LIL_OK;
        return harnesses[i].fam == FAM_LLM ? lil__agent_llm_ready(env, err, call)
                                           : lil__agent_cli_ready(env, err, call);
    }
    return lil__seterr(err, LIL_E_INVAL, 0, "unknown agent harness '%s'",
                       call->harness);
}

lil_status lil__agent_result_usage(struct lil_err *err, json_t *result,
                                   const struct lil_agent_usage *u)
{
    /* each part only as reported, and believable (lil__agent_usage_check):
     * a cost alone is a usage, tokens that are no count are not */
    bool tokens = !u->unreported[0] && u->has_tokens && !u->estimated;
    bool usd = u->has_usd && !u->usd_estimated && u->usd >= 0 &&
               u->usd <= LIL_AGENT_CALL_USD_MAX;
    json_t *o;
    bool bad;

    if (!json_is_object(result))
        return LIL_OK;
    json_object_del(result, "usage"); /* never what the model wrote; and last */
    if (!tokens && !usd)
        return LIL_OK;
    o = json_object();
    bad = !o || (tokens && json_object_set_new(o, "tokens", json_integer(u->tokens))) ||
          (usd && json_object_set_new(o, "usd", json_real(u->usd)));
    if (bad)
        json_decref(o);
    if (bad || json_object_set_new(result, "usage", o) != 0)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

void lil__agent_usage_check(struct lil_agent_usage *u)
{
    size_t cap = sizeof(u->unreported);

    if (u->unreported[0])
        return;
    if (u->estimated || !u->has_tokens)
        snprintf(u->unreported, cap, "no usage reported");
    else if (u->tokens <= 0)
        snprintf(u->unreported, cap, "0 tokens reported for a call that answered");
    else if (u->tokens > LIL_AGENT_CALL_TOKENS_MAX)
        snprintf(u->unreported, cap, "%lld tokens reported, more than one call uses",
                 (long long)u->tokens);
    else if (u->has_usd && !(u->usd >= 0 && u->usd <= LIL_AGENT_CALL_USD_MAX))
        snprintf(u->unreported, cap, "a cost of %g reported", u->usd);
}

/* The harness's call, its usage checked. */
static lil_status checked(lil_status rc, struct lil_agent_usage *usage)
{
    if (rc == LIL_OK)
        lil__agent_usage_check(usage);
    return rc;
}

static lil_status harness_call(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call, json_t **result,
                               struct lil_agent_usage *usage)
{
    for (size_t i = 0; i < NHARNESS; i++) {
        if (strcmp(call->harness, harnesses[i].name) != 0)
            continue;
        switch (harnesses[i].fam) {
        case FAM_INTERNAL:
            *result = json_object(); /* nothing runs, nothing is metered */
            return *result ? LIL_OK : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
        case FAM_LLM:
            return checked(lil__agent_llm_call(env, err, call, result, usage), usage);
        default:
            return checked(lil__agent_cli_call(env, err, call, result, usage), usage);
        }
    }
    return lil__seterr(err, LIL_E_INVAL, 0, "unknown agent harness '%s'",
                       call->harness);
}

lil_status lil__agent_call(const struct lil_env *env, struct lil_err *err,
                           const struct lil_agent_call *call, json_t **result,
                           struct lil_agent_usage *usage)
{
    struct lil_json_scope sc;
    lil_status rc;

    memset(usage, 0, sizeof(*usage));
    *result = NULL;
    rc = harness_call(env, err, call, result, usage);
    if (rc == LIL_OK) {
        lil__json_begin(&sc, env);
        rc = lil__agent_result_usage(err, *result, usage);
        if (lil__json_end(&sc) != LIL_OK && rc == LIL_OK)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    if (rc != LIL_OK) {
        json_decref(*result);
        *result = NULL;
    }
    return rc;
}

lil_status lil__agent_harness_check(struct lil_err *err, const char *harness)
{
    struct lil_env env;
    struct lil_agent_call call;

    memset(&call, 0, sizeof(call));
    call.harness = harness ? harness : "";
    call.prompt = "";
    lil__os_env_init(&env);
    lil__clearerr(err);
    return lil__agent_ready(&env, err, &call);
}
