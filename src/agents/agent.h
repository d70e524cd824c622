/*
 * agent.h -- the agent harnesses of the loop runner (docs/loops.md,
 * "Agent harnesses" and "Effects"): one call of a harness with a rendered
 * prompt gives a result object and the call's usage.
 *
 *   internal      nothing runs; the result is {} (agent.c)
 *   llm           one OpenAI-compatible chat completion over libcurl,
 *                 streamed or not (agent_llm.c), priced with the price
 *                 table (agent_price.c)
 *   claude-code, codex, opencode, antigravity, cursor-agent, pi
 *                 the coding-agent CLIs, run without a shell, the prompt
 *                 after "--", in a scrubbed environment: the base of
 *                 effect_env.h, their own provider's variables and what
 *                 the caller allows, never lil's secrets (agent_cli.c)
 *   cli           $LIL_AGENT_CMD / $LOOPY_AGENT_CMD split on blanks, the
 *                 prompt appended as the last argument (agent_cli.c)
 *
 * Settings come from the call's environment (struct lil_agent_call.envp),
 * never from the process's directly: every LOOPY_<X> variable of the
 * reference runtime is read, and its twin LIL_<X> takes precedence when set and not
 * empty (lil__agent_setting).  A harness that is not configured fails with
 * LIL_E_INVAL and a message saying what to set; limits (time, output size)
 * that do not parse fail with a message naming the variable and its value.
 *
 * Usage (struct lil_agent_usage) comes from what the provider or the CLI
 * reported about the call -- never from text the model wrote: a `usage`
 * key in the model's own JSON is dropped from the result.  A harness that
 * reports nothing gets an estimate (lil__agent_estimate: about 4 bytes a
 * token of prompt and output), marked estimated, so a token cap is never
 * inert.  USD: the provider's reported cost when it gives one, else the
 * price table (lil__agent_price_usd), else none (has_usd false).
 * A usage that is missing or is no usage (lil__agent_usage_check: a
 * negative, fractional or absurd count -- over LIL_AGENT_CALL_TOKENS_MAX
 * --, no tokens for a call that answered, a cost that is not a number in
 * [0, LIL_AGENT_CALL_USD_MAX]) says so in `unreported`, and its tokens are
 * the estimate: the runner counts such a call at its reservation (the
 * worst case) when a budget made one.
 *
 * The result (the reference's AgentResult, what `save` reads): the reply
 * object with the reported usage set as its `usage` key, last
 * (lil__agent_result_usage): {"tokens": N, "usd": X}, each part only when
 * it was reported -- tokens as the provider or CLI counted them, usd its
 * cost or the price of those tokens -- so an unpriced model gives
 * {"tokens": N} and a harness that reported nothing gives no `usage` key
 * at all (estimates meter the run; they are not the call's usage).  A
 * result that is not an object (claude-code may give an array) is left as
 * it is.
 *
 * The worst case of a call (lil__agent_worst_case), known before it runs,
 * is what a token or usd budget reserves for it (docs/loops.md,
 * "Budgets"):
 *   tokens = prompt + limit, where limit is AGENT_MAX_TOKENS (default
 *            LIL_AGENT_MAX_TOKENS; the llm harness sends it as max_tokens
 *            or max_completion_tokens) and prompt bounds the tokens of what
 *            is sent: its bytes (the providers' tokenizers, byte-level
 *            BPE or with byte fallback, make at most one token a byte of
 *            text; 4 bytes a token, lil__agent_estimate's guess, is only
 *            typical), for llm the system message's too plus
 *            LIL_AGENT_FRAME_TOKENS of chat framing;
 *   usd    = prompt at the model's input price + limit at its output price
 *            (lil__agent_price_usd), when the model is priced: llm's model
 *            as configured; a CLI's model is not known before it answers,
 *            so it is priced only when both LLM_PRICE_IN and _OUT are set.
 * A CLI cannot be told a token limit: for the CLI harnesses the limit is
 * the reservation only, and their own context (system prompts, tools,
 * files read) is not in the prompt -- a call may report more than its
 * worst case.  internal costs nothing (tokens 0, usd 0, priced).
 *
 * Errors: LIL_E_CHILD (a CLI that failed, timed out or wrote too much, with
 * the reference's messages), LIL_E_HTTP (the llm request failed or timed
 * out), LIL_E_INVAL (not configured, bad limits, unknown harness),
 * LIL_E_NOMEM.  The runner retries LIL_E_CHILD and LIL_E_HTTP (retry.h).
 *
 * Threads: calls are independent; nothing is kept between them but the
 * llm harness's idle libcurl handles and their connections
 * (agent_llm_pool.c), which any thread may reuse.
 */
#ifndef LIL_LOOP_AGENT_H
#define LIL_LOOP_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "json/json.h"

struct lil_env;

#define LIL_AGENT_TIMEOUT_MS     600000   /* CLI harnesses (LOOPY_AGENT_TIMEOUT_MS) */
#define LIL_AGENT_LLM_TIMEOUT_MS 120000   /* llm (the same variable) */
#define LIL_AGENT_MAX_BUFFER     16777216 /* CLI output (LOOPY_AGENT_MAX_BUFFER) */
/* AGENT_MAX_TOKENS: llm max_tokens, the token limit of a call's worst case */
#define LIL_AGENT_MAX_TOKENS 2000
/* chat framing of llm's two messages and the reply (OpenAI counts 3 a
 * message, 3 for the reply) */
#define LIL_AGENT_FRAME_TOKENS 16

#define LIL_AGENT_ENV_ALLOW_MAX 4

struct lil_agent_call {
    const char *harness;      /* a name of lil__agent_known */
    const char *prompt;       /* rendered, UTF-8 */
    const char *const *tools; /* allowed tools; may be NULL with ntools 0 */
    size_t ntools;
    const char *const *envp; /* "NAME=value", NULL-terminated: where settings
                                are read, and what a CLI child's environment
                                is scrubbed from; NULL: this process's */
    /* lists of names a CLI child may get besides the base and its harness's
       own (effect_env.h: --env-allow, LIL_EFFECT_ENV); NULL entries skipped */
    const char *const *env_allow;
    size_t n_env_allow; /* at most LIL_AGENT_ENV_ALLOW_MAX are read */
    const char *cwd;    /* CLI harnesses' working directory; NULL: lil's */
    int *running_pgid;  /* NULL, or set (atomically) to a CLI child's
                           process group while it runs (effect_shell.h) */
    /* NULL, or told a streamed call's running tokens as its reply comes
       (llm with LLM_STREAM): the prompt's and the answer's so far at about
       4 bytes a token, the provider's total once its usage arrives; each
       time they change, on the calling thread, inside lil__agent_call.
       The other harnesses know a call's tokens only at its end. */
    void (*on_tokens)(void *ud, int64_t tokens);
    void *tokens_ud;
};

struct lil_agent_usage {
    bool has_tokens;
    int64_t tokens;                /* input + output */
    int64_t tokens_in, tokens_out; /* when known, else 0 */
    bool has_usd;
    double usd;
    bool estimated;     /* tokens estimated (no usage was reported) */
    bool usd_estimated; /* usd the price of estimated tokens */
    char model[128];    /* the model that answered, when known, else "" */
    /* why the call's usage is not the provider's word ("" when it is):
     * none reported, or what was reported is not a usage (a negative or
     * absurd count, zero tokens for a call that answered, a cost that is
     * not a number >= 0); tokens and usd are then an estimate */
    char unreported[96];
};

/* The most tokens and usd one call can report and be believed: more is
 * not a usage (lil__agent_usage_check). */
#define LIL_AGENT_CALL_TOKENS_MAX INT64_C(1000000000)
#define LIL_AGENT_CALL_USD_MAX    1e6

/* The most one call may cost, known before it runs (above). */
struct lil_agent_worst {
    int64_t limit;   /* AGENT_MAX_TOKENS */
    int64_t prompt;  /* bound of the prompt's tokens */
    int64_t tokens;  /* prompt + limit (0 for internal) */
    bool priced;     /* usd, price_in and price_out are known */
    double usd;      /* prompt x price_in + limit x price_out */
    double price_in; /* USD per 1M tokens */
    double price_out;
    char model[128];    /* the model priced, "" when none is known */
    char limit_var[40]; /* the variable the limit came from (or the
                           LIL_ one when unset) */
};

/* Is name a harness of the table above? */
bool lil__agent_known(const char *name);

/* Can call run?  LIL_OK, or LIL_E_INVAL with what to set (no LLM
 * configured, no LIL_AGENT_CMD, bad limits) -- asked before the call's
 * intent is journaled, so that a loop that cannot call its harness fails
 * without an effect left in doubt. */
lil_status lil__agent_ready(const struct lil_env *env, struct lil_err *err,
                            const struct lil_agent_call *call);

/* lil_agent_harness_check (lil.h): lil__agent_ready for harness (NULL:
 * "") with an empty prompt, in this process's environment. */
lil_status lil__agent_harness_check(struct lil_err *err, const char *harness);

/* lil_agent_settings (lil.h, agent_settings.c): the settings document as
 * compact JSON in *out (not NULL; a block for lil_free). */
lil_status lil__agent_settings(struct lil_err *err, lil_bytes *out);

/* Run one call.  *result is a new JSON value (an object, or what a CLI's
 * envelope held: claude-code may give an array) with the reported usage
 * in it (lil__agent_result_usage: none when lil__agent_usage_check found
 * it is not a usage to believe); *usage is filled. */
/* Say in u->unreported why u is not a usage to believe, when it is not
 * (above); u's counts are left as they are. */
void lil__agent_usage_check(struct lil_agent_usage *u);

lil_status lil__agent_call(const struct lil_env *env, struct lil_err *err,
                           const struct lil_agent_call *call, json_t **result,
                           struct lil_agent_usage *usage);

/* The reported part of u (above) set as result's `usage` key, last, in
 * place of any there; nothing for a result that is not an object, and no
 * key when nothing was reported.  LIL_E_NOMEM (no `usage` key left). */
lil_status lil__agent_result_usage(struct lil_err *err, json_t *result,
                                   const struct lil_agent_usage *u);

/* The value of setting X in envp: LIL_<X> if set and not empty, else
 * LOOPY_<X> if set, else NULL; *which (may be NULL) gets the prefix of the
 * name read ("LIL_" or "LOOPY_"), for messages.  x is without prefix
 * ("AGENT_TIMEOUT_MS").  Borrowed from envp (or environ). */
const char *lil__agent_setting(const char *const *envp, const char *x,
                               const char **which);

/* AGENT_MAX_TOKENS of envp into *out: LIL_AGENT_MAX_TOKENS when unset or
 * blank, else a positive integer of at most 2^53 - 1 (blanks around it
 * ignored); anything else is LIL_E_INVAL naming the variable and its
 * value.  var (may be NULL; cap bytes) gets the name of the variable read,
 * "LIL_AGENT_MAX_TOKENS" when none is set. */
lil_status lil__agent_max_tokens(const char *const *envp, struct lil_err *err,
                                 int64_t *out, char *var, size_t cap);

/* The worst case of call (above) into *out.  LIL_E_INVAL for an unknown
 * harness, a bad AGENT_MAX_TOKENS, or an llm that is not configured. */
lil_status lil__agent_worst_case(const struct lil_agent_call *call, struct lil_err *err,
                                 struct lil_agent_worst *out);

/* Usage estimated from sizes: ceil(bytes / 4) tokens for the prompt (in) and
 * for the output (out), marked estimated; usd from the price table when the
 * model is priced (model may be NULL). */
void lil__agent_estimate(const char *const *envp, const char *model,
                         size_t prompt_bytes, size_t output_bytes,
                         struct lil_agent_usage *usage);

/* ---- the harnesses (agent_cli.c, agent_llm.c) ----------------------------- */

lil_status lil__agent_cli_ready(const struct lil_env *env, struct lil_err *err,
                                const struct lil_agent_call *call);
lil_status lil__agent_llm_ready(const struct lil_env *env, struct lil_err *err,
                                const struct lil_agent_call *call);
lil_status lil__agent_cli_call(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call, json_t **result,
                               struct lil_agent_usage *usage);
/* The llm harness's model as configured (borrowed from envp or static)
 * and the bytes it sends of text (system message and prompt). */
lil_status lil__agent_llm_sizing(struct lil_err *err, const struct lil_agent_call *call,
                                 const char **model, size_t *text_bytes);
lil_status lil__agent_llm_call(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call, json_t **result,
                               struct lil_agent_usage *usage);

/* ---- prices (agent_price.c; docs/loops.md, "Effects") ---------------------- */

/* The model id as the table keys it: trimmed, lower case, after the last
 * '/', a trailing -YYYYMMDD or -YYYY-MM-DD dropped.  Into out (cap bytes). */
void lil__agent_model_norm(const char *model, char *out, size_t cap);

/* USD of a call: (in x price_in + out x price_out) / 1e6, each price the
 * LIL_/LOOPY_LLM_PRICE_IN/OUT override when it is a finite number >= 0,
 * else the table's; false when either side has no price. */
bool lil__agent_price_usd(const char *const *envp, const char *model, int64_t in,
                          int64_t out, double *usd);

/* Strip one surrounding ``` fence (``` or ```json / yml / yaml, any case)
 * of text (len bytes): *start and *end delimit what is inside, or the
 * trimmed text when there is no fence. */
void lil__agent_unfence(const char *text, size_t len, size_t *start, size_t *end);

#endif
