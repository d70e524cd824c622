/*
 * agent_price.c -- the price of an agent call (loopspec-contract.md 6.6):
 * USD per million tokens, input and output, by normalized model id, with
 * the LIL_/LOOPY_LLM_PRICE_IN and _OUT overrides (agent.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop/agent.h"

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

/* An override: a number, finite and >= 0, not blank. */
static bool override(const char *const *envp, const char *x, double *v)
{
    const char *s = lil__agent_setting(envp, x, NULL);
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

bool lil__agent_price_usd(const char *const *envp, const char *model, int64_t in,
                          int64_t out, double *usd)
{
    char norm[128];
    double p_in = -1, p_out = -1; /* no price */

    lil__agent_model_norm(model, norm, sizeof(norm));
    for (size_t i = 0; i < NPRICES; i++)
        if (strcmp(norm, prices[i].model) == 0) {
            p_in = prices[i].in;
            p_out = prices[i].out;
        }
    (void) override(envp, "LLM_PRICE_IN", &p_in);
    (void) override(envp, "LLM_PRICE_OUT", &p_out);
    if (p_in < 0 || p_out < 0)
        return false;
    *usd = ((double)in * p_in + (double)out * p_out) / 1e6;
    return true;
}
