/*
 * agent_price.c -- the price of an agent call (docs/loops.md, "Effects"):
 * USD per million tokens, input and output, by normalized model id, with
 * the LIL_/LOOPY_LLM_PRICE_IN and _OUT overrides (agent.h), and where the
 * prices in force came from (`lil doctor`, lil_agent_settings).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/agent_info.h"

static const struct {
    const char *model;
    double in, out; /* USD per 1M tokens */
} prices[] = {
    {"gpt-4o-mini", 0.15, 0.60},
    {"gpt-4o", 2.50, 10},
    {"gpt-4.1", 2, 8},
    {"gpt-4.1-mini", 0.40, 1.60},
    {"gpt-4.1-nano", 0.10, 0.40},
    {"o3-mini", 1.10, 4.40},
    {"o3", 2, 8},
    {"claude-opus-4", 15, 75},
    {"claude-sonnet-4", 3, 15},
    {"claude-sonnet-4-6", 3, 15},
    {"claude-haiku-4-5", 1, 5},
    {"claude-3-5-haiku", 0.80, 4},
    {"claude-3-5-sonnet", 3, 15},
    {"gemini-2.0-flash", 0.10, 0.40},
    {"gemini-2.5-flash", 0.30, 2.50},
    {"gemini-2.5-pro", 1.25, 10},
    {"llama-3.3-70b-versatile", 0.59, 0.79},
    {"llama-3.1-8b-instant", 0.05, 0.08},
};

#define NPRICES (sizeof(prices) / sizeof(prices[0]))

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* Length of s (n bytes) without a trailing -YYYYMMDD or -YYYY-MM-DD. */
static size_t without_date(const char *s, size_t n)
{
    if (n > 9 && s[n - 9] == '-' && digits(s + n - 8, 8))
        return n - 9;
    if (n > 11 && s[n - 11] == '-' && digits(s + n - 10, 4) && s[n - 6] == '-' &&
        digits(s + n - 5, 2) && s[n - 3] == '-' && digits(s + n - 2, 2))
        return n - 11;
    return n;
}

/* The last path segment of model, blanks around it dropped: [*a, *z). */
static void last_segment(const char *model, const char **a, const char **z)
{
    const char *s = model ? model : "", *e;

    while (*s && isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    *a = s;
    for (const char *p = s; p < e; p++)
        if (*p == '/')
            *a = p + 1;
    *z = e;
}

void lil__agent_model_norm(const char *model, char *out, size_t cap)
{
    const char *slash, *z;
    size_t n;

    last_segment(model, &slash, &z);
    n = without_date(slash, (size_t)(z - slash));
    if (cap == 0)
        return;
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)slash[i]);
    out[n] = '\0';
}

/* An override: a number, finite and >= 0, not blank; *which (may be NULL)
 * gets the prefix of the variable read. */
static bool override(const char *const *envp, const char *x, double *v,
                     const char **which)
{
    const char *s = lil__agent_setting(envp, x, which);
    char *end;
    double d;

    if (!s)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return false;
    d = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0' || !isfinite(d) || d < 0)
        return false;
    *v = d;
    return true;
}

/* One side's price: the override of x, else the table's (tab < 0: none). */
static void side(const char *const *envp, const char *x, double tab, double *price,
                 char *from, size_t cap)
{
    const char *which = NULL;

    *price = tab;
    snprintf(from, cap, "%s", tab >= 0 ? "table" : "");
    if (override(envp, x, price, &which))
        snprintf(from, cap, "%s%s", which ? which : "", x);
}

void lil__agent_prices(const char *const *envp, const char *model,
                       struct lil_agent_prices *out)
{
    char norm[128];
    double p_in = -1, p_out = -1; /* no price */

    memset(out, 0, sizeof(*out));
    lil__agent_model_norm(model, norm, sizeof(norm));
    for (size_t i = 0; i < NPRICES; i++)
        if (strcmp(norm, prices[i].model) == 0) {
            p_in = prices[i].in;
            p_out = prices[i].out;
        }
    side(envp, "LLM_PRICE_IN", p_in, &out->in, out->in_from, sizeof(out->in_from));
    side(envp, "LLM_PRICE_OUT", p_out, &out->out, out->out_from, sizeof(out->out_from));
    out->priced = out->in >= 0 && out->out >= 0;
}

bool lil__agent_price_usd(const char *const *envp, const char *model, int64_t in,
                          int64_t out, double *usd)
{
    struct lil_agent_prices p;

    lil__agent_prices(envp, model, &p);
    if (!p.priced)
        return false;
    *usd = ((double)in * p.in + (double)out * p.out) / 1e6;
    return true;
}
