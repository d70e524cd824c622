/*
 * agent_info.h -- what the agent harnesses can tell about their settings
 * without running anything, for lil_agent_settings (agent_settings.c) and
 * `lil doctor`: the harness table's names, the limits as the harnesses
 * read them, the prices in force and where they came from, the llm
 * harness's resolved server.  agent.h is the harnesses' interface; these
 * are the facts beside it.
 *
 * Secrets: nothing here returns a key.  The llm description says whether
 * one is set and which variable holds it; its base URL has credentials,
 * secret parameters and the key "[redacted]".
 *
 * Threads: every call reads its envp (NULL: this process's environment)
 * and keeps nothing.
 */
#ifndef LIL_LOOP_AGENT_INFO_H
#define LIL_LOOP_AGENT_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "json/json.h"

struct lil_env;

/* The name of harness i of the table of agent.h (0, 1, ...); NULL past its
 * end (agent.c). */
const char *lil__agent_name(size_t i);

/* A limit as the llm harness reads it (agent_llm.c; the CLI harnesses
 * read theirs the same way): setting x (LIL_ when set and not empty, else
 * LOOPY_; blanks around the value ignored) a positive integer of at most
 * 2^53 - 1, or def when it is unset or blank.  var (cap bytes) gets the
 * name of the variable read (the LOOPY_ one when neither is set).
 * LIL_E_INVAL naming it and its value. */
lil_status lil__agent_limit(struct lil_err *err, const char *const *envp, const char *x,
                            int64_t def, int64_t *out, char *var, size_t cap);

/* The prices in force for model (USD per million tokens), and where each
 * came from: "table", or the override's variable ("LIL_LLM_PRICE_IN",
 * "LOOPY_LLM_PRICE_OUT", ...); "" and a negative price when that side has
 * none.  priced: both sides have one (what lil__agent_price_usd needs).
 * (agent_price.c) */
struct lil_agent_prices {
    bool priced;
    double in, out;
    char in_from[32], out_from[32];
};

void lil__agent_prices(const char *const *envp, const char *model,
                       struct lil_agent_prices *out);

/* What the llm harness would use with envp, as a new JSON object (made
 * with env's allocator: release it inside a json scope of env):
 * {"configured", "provider" ("custom" for LLM_API_KEY / LLM_BASE_URL, else
 * the provider of the key found: "openai", "anthropic", ...), "key_set",
 * "key_from" (the variable; never the key), "base_url" (redacted),
 * "base_url_from", "model", "model_from" ("default", "provider" or the
 * variable), "stream", "priced", "price_in", "price_out" (USD per million
 * tokens, or null), "price_in_from", "price_out_from"}; only "configured"
 * (false) and "message" (what to set) when nothing is configured.
 * LIL_E_NOMEM.  (agent_llm.c) */
lil_status lil__agent_llm_describe(const struct lil_env *env, struct lil_err *err,
                                   const char *const *envp, json_t **out);

#endif
