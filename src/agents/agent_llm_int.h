/*
 * agent_llm_int.h -- what the two files of the `llm` harness share and
 * nothing else uses (agent.h is the interface): the configuration of a
 * call (agent_llm.c) and the reading of its reply (agent_llm_reply.c).
 *
 * The reply is read as it arrives (libcurl's write callback feeds it):
 *   - a reply that is not a stream is kept whole (it is one JSON text, at
 *     most max_bytes);
 *   - a stream (server-sent events) is cut into lines as bytes come; each
 *     `data:` line is parsed on its own and only its content delta is
 *     kept, with the last `usage` object seen: the reply itself is never
 *     held whole.  Until the first `data:` line the bytes are also kept,
 *     so that a server that answers a stream request with a plain
 *     completion is read as one (docs/loops.md, "Effects");
 *   - every byte counts against max_bytes: past it the feed fails with
 *     LIL_E_TOOBIG and the transfer stops.
 *
 * Memory: buffers from the env (base/buf.h); JSON values inside json
 * scopes of that env.  A reply is one call's, on one thread.
 */
#ifndef LIL_LOOP_AGENT_LLM_INT_H
#define LIL_LOOP_AGENT_LLM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/agent.h"
#include "base/buf.h"
#include "base/err.h"
#include "effects/curl_dl.h"
#include "json/json.h"

struct lil_env;

/* The system message of every request (the reference runtime's). */
#define LIL_LLM_SYSTEM                                                             \
    "You are executing one step of an agent loop. If the step needs a structured " \
    "result, reply with a single JSON object; otherwise reply with plain text."

struct llm_reply {
    const struct lil_env *env;
    bool stream;         /* the request asked for a stream */
    bool saw_data;       /* a `data:` line came */
    size_t total;        /* bytes fed */
    size_t max_bytes;    /* most bytes a reply may have */
    struct lil_buf raw;  /* the body (a stream: only until its first data: line) */
    struct lil_buf line; /* a stream: the line being read */
    struct lil_buf text; /* a stream: the content deltas, in order */
    json_t *usage;       /* a stream: the last usage object, owned */
    struct lil_err err;  /* what a failed feed says */
    /* a stream: told the running tokens (agent.h, on_tokens), or NULL */
    void (*on_tokens)(void *ud, int64_t tokens);
    void *tokens_ud;
    size_t prompt_bytes; /* what was sent, for the estimate */
    int64_t told;        /* the tokens last told (0: none yet) */
};

void lil__llm_reply_init(struct llm_reply *r, const struct lil_env *env, bool stream,
                         size_t max_bytes);
void lil__llm_reply_free(struct llm_reply *r);

/* Feed len bytes of the body.  LIL_OK, LIL_E_TOOBIG past max_bytes (the
 * message says so, in r->err), LIL_E_NOMEM. */
lil_status lil__llm_reply_feed(struct llm_reply *r, const char *data, size_t len);

/* The reply ended: the text of the answer (*text, *len, valid until r is
 * freed) and its usage object (*usage: a new reference, or NULL when the
 * provider reported none).  LIL_E_HTTP for a completion that is not JSON,
 * LIL_E_NOMEM. */
lil_status lil__llm_reply_finish(struct llm_reply *r, struct lil_err *err,
                                 const char **text, size_t *len, json_t **usage);

/* The result of an answer (docs/loops.md, "Effects"): its JSON object (fence
 * stripped, `usage` dropped), else {"result": text}.  A new object. */
lil_status lil__llm_result(const struct lil_env *env, struct lil_err *err,
                           const char *text, size_t len, json_t **result);

/* Fill *out from the provider's usage object (NULL: an estimate from
 * prompt_bytes and text_bytes), priced for model. */
void lil__llm_usage(const char *const *envp, const char *model, json_t *usage,
                    size_t prompt_bytes, size_t text_bytes,
                    struct lil_agent_usage *out);

/* An easy handle for one transfer, without options: a kept one (its live
 * connections kept) or a new one; NULL when out of memory. */
CURL *lil__llm_handle_take(const struct lil_curl *c);

/* Give h back after its transfer (NULL: nothing): kept for the next call
 * when a slot is free, else cleaned up. */
void lil__llm_handle_give(const struct lil_curl *c, CURL *h);

#endif
