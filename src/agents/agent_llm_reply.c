/*
 * agent_llm_reply.c -- reading the reply of the `llm` harness: a chat
 * completion or a stream of server-sent events, the result object and the
 * usage (agent_llm_int.h has the rules; docs/loops.md, "Effects").
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "agents/agent_llm_int.h"

#define BUF_UNCAPPED (SIZE_MAX / 4)

void lil__llm_reply_init(struct llm_reply *r, const struct lil_env *env, bool stream,
                         size_t max_bytes)
{
    memset(r, 0, sizeof(*r));
    r->env = env;
    r->stream = stream;
    r->max_bytes = max_bytes;
    lil__buf_init(&r->raw, env, BUF_UNCAPPED);
    lil__buf_init(&r->line, env, BUF_UNCAPPED);
    lil__buf_init(&r->text, env, BUF_UNCAPPED);
}

void lil__llm_reply_free(struct llm_reply *r)
{
    struct lil_json_scope sc;

    lil__buf_free(&r->raw);
    lil__buf_free(&r->line);
    lil__buf_free(&r->text);
    lil__json_begin(&sc, r->env);
    json_decref(r->usage);
    (void)lil__json_end(&sc);
    r->usage = NULL;
}

/* ---- server-sent events ----------------------------------------------------- */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* One parsed event: append its content delta, keep its usage object. */
static lil_status take_event(struct llm_reply *r, json_t *ev)
{
    json_t *choice = json_array_get(json_object_get(ev, "choices"), 0);
    json_t *delta = json_object_get(json_object_get(choice, "delta"), "content");
    json_t *usage = json_object_get(ev, "usage");
    lil_status rc = LIL_OK;

    if (json_is_string(delta))
        rc =
            lil__buf_add(&r->text, json_string_value(delta), json_string_length(delta));
    if (json_is_object(usage)) {
        json_decref(r->usage);
        r->usage = json_incref(usage);
    }
    return rc;
}

/* The stream's running tokens: the provider's total when its usage says
 * one, else the prompt's and the answer's so far at about 4 bytes a token
 * (lil__agent_estimate's rule); told when they changed. */
static void tell_tokens(struct llm_reply *r)
{
    json_t *total = json_object_get(r->usage, "total_tokens");
    int64_t n = (int64_t)((r->prompt_bytes + 3) / 4 + (r->text.len + 3) / 4);

    if (!r->on_tokens)
        return;
    if (json_is_integer(total) && json_integer_value(total) > 0)
        n = (int64_t)json_integer_value(total);
    if (n != r->told) {
        r->told = n;
        r->on_tokens(r->tokens_ud, n);
    }
}

/* One line of the stream (without its newline): a `data:` line is an
 * event (JSON) or [DONE]; a line that does not parse is skipped, as are
 * comments and other fields. */
static lil_status take_line(struct llm_reply *r, const char *s, size_t len)
{
    struct lil_json_scope sc;
    json_t *ev = NULL;
    lil_status rc;

    if (len < 5 || memcmp(s, "data:", 5) != 0)
        return LIL_OK;
    if (!r->saw_data)
        lil__buf_free(&r->raw); /* a stream after all: the bytes are not kept */
    r->saw_data = true;
    s += 5, len -= 5;
    while (len > 0 && is_blank(*s))
        s++, len--;
    while (len > 0 && is_blank(s[len - 1]))
        len--;
    if (len == 6 && memcmp(s, "[DONE]", 6) == 0)
        return LIL_OK;
    rc = lil__json_parse(r->env, &r->err, LIL_E_INVAL, s, len, 0, NULL, &ev);
    if (rc != LIL_OK)
        return rc == LIL_E_NOMEM ? rc : LIL_OK;
    lil__json_begin(&sc, r->env);
    rc = take_event(r, ev);
    json_decref(ev);
    if (lil__json_end(&sc) != LIL_OK)
        return LIL_E_NOMEM;
    if (rc == LIL_OK)
        tell_tokens(r); /* outside the scope: the host's code may run */
    return rc;
}

/* Cut data into lines, the first one continuing r->line. */
static lil_status feed_stream(struct llm_reply *r, const char *data, size_t len)
{
    lil_status rc = LIL_OK;

    if (!r->saw_data)
        rc = lil__buf_add(&r->raw, data, len);
    while (rc == LIL_OK && len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;

        if (!nl)
            return lil__buf_add(&r->line, data, n);
        if (r->line.len == 0) {
            rc = take_line(r, data, n);
        } else {
            rc = lil__buf_add(&r->line, data, n);
            if (rc == LIL_OK)
                rc = take_line(r, (const char *)r->line.data, r->line.len);
            lil__buf_reset(&r->line);
        }
        data += n + 1;
        len -= n + 1;
    }
    return rc;
}

lil_status lil__llm_reply_feed(struct llm_reply *r, const char *data, size_t len)
{
    lil_status rc;

    if (len > r->max_bytes - r->total)
        return lil__seterr(&r->err, LIL_E_TOOBIG, 0, "reply over %zu bytes",
                           r->max_bytes);
    r->total += len;
    rc = r->stream ? feed_stream(r, data, len) : lil__buf_add(&r->raw, data, len);
    if (rc == LIL_E_NOMEM)
        return lil__seterr(&r->err, rc, 0, "out of memory reading the LLM reply");
    return rc;
}

/* ---- the end of the reply --------------------------------------------------- */

/* The answer of a completion: choices[0].message.content, a string as it
 * is, missing or null as "", any other value as its JSON text. */
static lil_status completion_text(struct llm_reply *r, struct lil_err *err,
                                  json_t *completion)
{
    json_t *choice = json_array_get(json_object_get(completion, "choices"), 0);
    json_t *content = json_object_get(json_object_get(choice, "message"), "content");

    lil__buf_reset(&r->text);
    if (!content || json_is_null(content))
        return LIL_OK;
    if (json_is_string(content))
        return lil__buf_add(&r->text, json_string_value(content),
                            json_string_length(content)) == LIL_OK
                   ? LIL_OK
                   : lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return lil__json_dump(r->env, err, content, JSON_COMPACT | JSON_ENCODE_ANY,
                          &r->text);
}

static lil_status finish_completion(struct llm_reply *r, struct lil_err *err,
                                    json_t **usage)
{
    struct lil_json_scope sc;
    json_t *completion = NULL;
    lil_status rc = lil__json_parse(r->env, err, LIL_E_HTTP, (const char *)r->raw.data,
                                    r->raw.len, 0, NULL, &completion);

    if (rc == LIL_E_HTTP)
        return lil__seterr(err, rc, 0, "LLM reply is not a JSON completion: %.120s",
                           r->raw.data ? (const char *)r->raw.data : "");
    if (rc != LIL_OK)
        return rc;
    rc = completion_text(r, err, completion);
    lil__json_begin(&sc, r->env);
    if (rc == LIL_OK && json_is_object(json_object_get(completion, "usage")))
        *usage = json_incref(json_object_get(completion, "usage"));
    json_decref(completion);
    (void)lil__json_end(&sc);
    return rc;
}

lil_status lil__llm_reply_finish(struct llm_reply *r, struct lil_err *err,
                                 const char **text, size_t *len, json_t **usage)
{
    lil_status rc = LIL_OK;

    *usage = NULL;
    if (r->stream && r->line.len > 0) { /* a last line without its newline */
        rc = take_line(r, (const char *)r->line.data, r->line.len);
        lil__buf_reset(&r->line);
        if (rc != LIL_OK)
            return lil__seterr(err, rc, 0, "out of memory reading the LLM reply");
    }
    if (r->stream && r->saw_data) {
        *usage = r->usage;
        r->usage = NULL;
    } else {
        rc = finish_completion(r, err, usage);
    }
    *text = r->text.data ? (const char *)r->text.data : "";
    *len = r->text.len;
    return rc;
}

/* ---- the result and the usage ----------------------------------------------- */

lil_status lil__llm_result(const struct lil_env *env, struct lil_err *err,
                           const char *text, size_t len, json_t **result)
{
    struct lil_json_scope sc;
    size_t start, end;
    json_t *parsed = NULL;
    lil_status rc;

    *result = NULL;
    lil__agent_unfence(text, len, &start, &end);
    /* only an object is taken: other text is not parsed (a long answer in
     * words would cost a scan of all of it) */
    rc = end > start && text[start] == '{'
             ? lil__json_parse(env, err, LIL_E_INVAL, text + start, end - start, 0,
                               NULL, &parsed)
             : LIL_OK;
    if (rc == LIL_E_NOMEM)
        return rc;
    lil__json_begin(&sc, env);
    if (json_is_object(parsed)) {
        json_object_del(parsed, "usage"); /* the provider's usage counts, not this */
        *result = parsed;
    } else {
        json_decref(parsed);
        *result = json_pack("{s:s%}", "result", text, len);
    }
    if (lil__json_end(&sc) != LIL_OK || !*result) {
        json_decref(*result);
        *result = NULL;
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__clearerr(err);
    return LIL_OK;
}

/* A token count of the provider: an integer in [0, LIL_AGENT_CALL_TOKENS_MAX]
 * in *out, else why it is no count ("is ...", a static text). */
static const char *count_of(json_t *usage, const char *name, int64_t *out)
{
    json_t *v = json_object_get(usage, name);
    double d = json_is_number(v) ? json_number_value(v) : 0;

    *out = 0;
    if (!v)
        return "is missing";
    if (!json_is_number(v))
        return "is not a number";
    if (!(d >= 0))
        return "is negative";
    if (d > (double)LIL_AGENT_CALL_TOKENS_MAX)
        return "is more than one call uses";
    if (d != (double)(int64_t)d)
        return "is not a whole number";
    *out = (int64_t)d;
    return NULL;
}

/* Why usage is no usage of a call whose answer had text_bytes bytes (into
 * why), or false when it is one: its counts in *in and *out. */
static bool invalid_usage(json_t *usage, size_t text_bytes, int64_t *in, int64_t *out,
                          char *why, size_t cap)
{
    const char *bad = count_of(usage, "prompt_tokens", in);
    const char *name = "prompt_tokens";
    json_t *cost = json_object_get(usage, "cost");

    if (!bad) {
        bad = count_of(usage, "completion_tokens", out);
        name = "completion_tokens";
    }
    if (bad) {
        snprintf(why, cap, "%s %s", name, bad);
        return true;
    }
    if (*in == 0 || (*out == 0 && text_bytes > 0)) {
        snprintf(why, cap, "%s is 0 for a call that answered",
                 *in == 0 ? "prompt_tokens" : "completion_tokens");
        return true;
    }
    if (cost && !json_is_null(cost) &&
        !(json_is_number(cost) && json_number_value(cost) >= 0 &&
          json_number_value(cost) <= LIL_AGENT_CALL_USD_MAX)) {
        snprintf(why, cap, "cost is not a number in [0, %g]", LIL_AGENT_CALL_USD_MAX);
        return true;
    }
    return false;
}

void lil__llm_usage(const char *const *envp, const char *model, json_t *usage,
                    size_t prompt_bytes, size_t text_bytes, struct lil_agent_usage *out)
{
    json_t *cost = json_object_get(usage, "cost");
    double usd;

    memset(out, 0, sizeof(*out));
    if (usage && invalid_usage(usage, text_bytes, &out->tokens_in, &out->tokens_out,
                               out->unreported, sizeof(out->unreported)))
        usage = NULL; /* not believed: estimated, and said why */
    if (!usage) {
        lil__agent_estimate(envp, model, prompt_bytes, text_bytes, out);
    } else {
        out->tokens = out->tokens_in + out->tokens_out;
        out->has_tokens = true;
        if (json_is_number(cost)) {
            out->has_usd = true;
            out->usd = json_number_value(cost);
        } else if (lil__agent_price_usd(envp, model, out->tokens_in, out->tokens_out,
                                        &usd)) {
            out->has_usd = true;
            out->usd = usd;
        }
    }
    if (model) {
        strncpy(out->model, model, sizeof(out->model) - 1);
        out->model[sizeof(out->model) - 1] = '\0';
    }
}
