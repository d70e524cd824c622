/*
 * agent_llm.c -- the `llm` harness: one OpenAI-compatible chat completion
 * over libcurl (curl_dl.h), streamed or not (agent.h; docs/loops.md, "Effects").
 *
 * Configuration, read from the call's environment (each LOOPY_<X> with its
 * LIL_<X> twin, lil__agent_setting):
 *   - LLM_API_KEY or LLM_BASE_URL not empty: that server (base URL default
 *     https://api.openai.com/v1, trailing '/' dropped), that key (none:
 *     a keyless local server), LLM_MODEL or gpt-4o-mini, no default
 *     headers;
 *   - else the first provider key set and not empty, in the order of the
 *     providers table below, with its base URL, default model (LLM_MODEL
 *     overrides it) and default headers;
 *   - else LIL_E_INVAL saying what to set.
 *   LLM_HEADERS (a JSON object; text that is not one is ignored) overlays
 *   the default headers, names compared without case; null values are
 *   dropped, other values that are not strings sent as their JSON text; a
 *   name that is not an HTTP token or a value with CR or LF is dropped.
 *   LLM_STREAM (1, true, yes, on; any case) asks for a stream.
 *   AGENT_TIMEOUT_MS (default 120000) covers the whole transfer;
 *   AGENT_MAX_BUFFER (default 16 MiB) caps the bytes of the reply;
 *   AGENT_MAX_TOKENS (default 2000) is sent as max_tokens (or
 *   max_completion_tokens), the most the model may write.
 *
 * Secrets: the key goes only into the Authorization header of the
 * request.  Messages never show it: an error body a server echoes is
 * shown with every occurrence of the key replaced by "[redacted]", and no
 * message names the headers.  The result holds only what the model wrote.
 *
 * Redirects are not followed (the Authorization header would go along):
 * a 3xx is a failed request.  libcurl reads the usual proxy variables.
 * The easy handle of a call comes from the pool of agent_llm_pool.c, so
 * that a loop's next call reuses the connection of the last one.
 *
 * lil__agent_llm_describe (agent_info.h) tells what the harness would use
 * -- server, model, key variable, prices, each with its source -- without
 * the key, for `lil doctor`.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/agent.h"
#include "agents/agent_info.h"
#include "agents/agent_llm_int.h"
#include "base/alloc.h"
#include "base/settings/settings.h"
#include "effects/curl_dl.h"
#include "effects/curl_opts.h"
#include "effects/effect_http.h"
#include "effects/redact.h"

#define BUF_UNCAPPED  (SIZE_MAX / 4)
#define ERR_BODY_KEEP 2048 /* bytes of an error body kept for its message */
#define ERR_BODY_SHOW 300  /* characters of it shown */

static const char *const openrouter_headers[] = {
    "HTTP-Referer", "https://github.com/MaTriXy/monkey-d-loopy", "X-Title",
    "Monkey D Loopy", NULL};

static const struct provider {
    const char *key_var, *base, *model;
    const char *const *headers; /* name, value, ..., NULL; or NULL */
} providers[] = {
    {"OPENAI_API_KEY", "https://api.openai.com/v1", "gpt-4o-mini", NULL},
    {"ANTHROPIC_API_KEY", "https://api.anthropic.com/v1", "claude-sonnet-4-6", NULL},
    {"GEMINI_API_KEY", "https://generativelanguage.googleapis.com/v1beta/openai",
     "gemini-2.0-flash", NULL},
    {"GROQ_API_KEY", "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", NULL},
    {"OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini",
     openrouter_headers},
    {"AI_GATEWAY_API_KEY", "https://ai-gateway.vercel.sh/v1", "openai/gpt-4o-mini",
     NULL},
};

#define NPROVIDERS (sizeof(providers) / sizeof(providers[0]))

struct llm_config {
    const char *base; /* borrowed (envp or static) */
    size_t base_len;  /* without trailing '/' */
    const char *key;  /* "" when there is none; borrowed */
    const char *model;
    /* the provider of the key found; NULL: LLM_API_KEY / LLM_BASE_URL */
    const struct provider *provider;
    const char *const *headers; /* the provider's defaults, or NULL */
    const char *extra_headers;  /* LLM_HEADERS, or NULL */
    bool stream;
    int64_t timeout_ms;
    char timeout_var[32]; /* the variable in force, for messages */
    size_t max_bytes;
    char max_var[32];
    int64_t max_tokens;
};

/* ---- configuration ---------------------------------------------------------- */

static bool filled(const char *s)
{
    return s && *s;
}

/* A limit: LIL_/LOOPY_<x> (blanks around it ignored) a positive integer
 * of at most 2^53 - 1, or def when it is unset or blank. */
static lil_status limit(struct lil_err *err, const char *const *envp, const char *x,
                        int64_t def, int64_t *out, char *var, size_t cap)
{
    const char *which = NULL, *v = lil__agent_setting(envp, x, &which), *s = v;
    size_t n = v ? strlen(v) : 0;
    int64_t num = 0;
    size_t i = 0;

    snprintf(var, cap, "%s%s", which ? which : "LOOPY_", x);
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    *out = def;
    if (n == 0)
        return LIL_OK;
    for (; i < n && i < 16 && isdigit((unsigned char)s[i]); i++)
        num = num * 10 + (s[i] - '0');
    if (i < n || num <= 0 || num > ((int64_t)1 << 53) - 1)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "%s must be a positive integer; got '%.60s'", var, v);
    *out = num;
    return LIL_OK;
}

static bool stream_on(const char *v)
{
    static const char *const on[] = {"1", "true", "yes", "on"};

    for (size_t i = 0; v && i < sizeof(on) / sizeof(on[0]); i++)
        if (strcasecmp(v, on[i]) == 0)
            return true;
    return false;
}

/* Server, key and model (docs/loops.md, "Effects"; resolveLlm). */
static lil_status resolve_server(struct lil_err *err, const char *const *envp,
                                 struct llm_config *cfg)
{
    const char *key = lil__agent_setting(envp, "LLM_API_KEY", NULL);
    const char *base = lil__agent_setting(envp, "LLM_BASE_URL", NULL);
    const char *model = lil__agent_setting(envp, "LLM_MODEL", NULL);

    if (filled(key) || filled(base)) {
        cfg->base = filled(base) ? base : "https://api.openai.com/v1";
        cfg->key = key ? key : "";
        cfg->model = filled(model) ? model : "gpt-4o-mini";
        return LIL_OK;
    }
    for (size_t i = 0; i < NPROVIDERS; i++) {
        const char *k = lil__env_lookup(envp, providers[i].key_var);

        if (!filled(k))
            continue;
        cfg->provider = &providers[i];
        cfg->base = providers[i].base;
        cfg->key = k;
        cfg->model = filled(model) ? model : providers[i].model;
        cfg->headers = providers[i].headers;
        return LIL_OK;
    }
    return lil__seterr(err, LIL_E_INVAL, 0,
                       "agent harness 'llm' needs an LLM configured - set "
                       "LIL_LLM_API_KEY or LOOPY_LLM_API_KEY (+ _BASE_URL, _MODEL) or "
                       "any provider key (OPENAI_API_KEY / ANTHROPIC_API_KEY / "
                       "GEMINI_API_KEY / GROQ_API_KEY / OPENROUTER_API_KEY / "
                       "AI_GATEWAY_API_KEY)");
}

static lil_status configure(struct lil_err *err, const char *const *envp,
                            struct llm_config *cfg)
{
    int64_t max = 0;
    lil_status rc;

    memset(cfg, 0, sizeof(*cfg));
    rc = resolve_server(err, envp, cfg);
    if (rc != LIL_OK)
        return rc;
    if (strpbrk(cfg->key, "\r\n"))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "the LLM API key contains a line break");
    cfg->base_len = strlen(cfg->base);
    while (cfg->base_len > 0 && cfg->base[cfg->base_len - 1] == '/')
        cfg->base_len--;
    cfg->extra_headers = lil__agent_setting(envp, "LLM_HEADERS", NULL);
    cfg->stream = stream_on(lil__agent_setting(envp, "LLM_STREAM", NULL));
    rc = limit(err, envp, "AGENT_TIMEOUT_MS", LIL_AGENT_LLM_TIMEOUT_MS,
               &cfg->timeout_ms, cfg->timeout_var, sizeof(cfg->timeout_var));
    if (rc == LIL_OK)
        rc = limit(err, envp, "AGENT_MAX_BUFFER", LIL_AGENT_MAX_BUFFER, &max,
                   cfg->max_var, sizeof(cfg->max_var));
    cfg->max_bytes = (size_t)max;
    if (rc == LIL_OK)
        rc = lil__agent_max_tokens(envp, err, &cfg->max_tokens, NULL, 0);
    return rc;
}

lil_status lil__agent_llm_ready(const struct lil_env *env, struct lil_err *err,
                                const struct lil_agent_call *call)
{
    struct llm_config cfg;

    (void)env;
    return configure(err, call->envp, &cfg);
}

lil_status lil__agent_llm_sizing(struct lil_err *err, const struct lil_agent_call *call,
                                 const char **model, size_t *text_bytes)
{
    struct llm_config cfg;
    lil_status rc = configure(err, call->envp, &cfg);

    *model = rc == LIL_OK ? cfg.model : NULL;
    *text_bytes =
        (call->prompt ? strlen(call->prompt) : 0) + sizeof(LIL_LLM_SYSTEM) - 1;
    return rc;
}

/* ---- the request ------------------------------------------------------------ */

static lil_status pack(const struct lil_env *env, struct lil_err *err, json_t **out,
                       const char *fmt, ...)
{
    va_list ap;
    lil_status rc;

    va_start(ap, fmt);
    rc = lil__json_vpack(env, err, fmt, ap, out);
    va_end(ap);
    return rc;
}

/* Is the normalized model a reasoning one (^(o\d|gpt-5))? */
static bool reasoning_model(const char *model)
{
    char norm[128];

    lil__agent_model_norm(model, norm, sizeof(norm));
    return (norm[0] == 'o' && isdigit((unsigned char)norm[1])) ||
           strncmp(norm, "gpt-5", 5) == 0;
}

static lil_status request_body(const struct lil_env *env, struct lil_err *err,
                               const struct llm_config *cfg, const char *prompt,
                               struct lil_buf *out)
{
    json_t *body = NULL;
    lil_status rc = pack(env, err, &body, "{s:s, s:[{s:s, s:s}, {s:s, s:s}]}", "model",
                         cfg->model, "messages", "role", "system", "content",
                         LIL_LLM_SYSTEM, "role", "user", "content", prompt);
    struct lil_json_scope sc;

    if (rc != LIL_OK)
        return rc;
    lil__json_begin(&sc, env);
    if (reasoning_model(cfg->model)) {
        json_object_set_new(body, "max_completion_tokens",
                            json_integer((json_int_t)cfg->max_tokens));
    } else {
        json_object_set_new(body, "max_tokens",
                            json_integer((json_int_t)cfg->max_tokens));
        json_object_set_new(body, "temperature", json_integer(0));
    }
    if (cfg->stream) {
        json_object_set_new(body, "stream", json_true());
        json_object_set_new(body, "stream_options",
                            json_pack("{s:b}", "include_usage", 1));
    }
    rc = lil__json_end(&sc);
    if (rc == LIL_OK)
        rc = lil__json_dump(env, err, body, JSON_COMPACT, out);
    else
        lil__seterr(err, rc, 0, "out of memory");
    lil__json_begin(&sc, env);
    json_decref(body);
    (void)lil__json_end(&sc);
    return rc;
}

static void drop_header(json_t *headers, const char *name)
{
    void *it = json_object_iter(headers);

    while (it) {
        void *next = json_object_iter_next(headers, it);

        if (strcasecmp(json_object_iter_key(it), name) == 0)
            json_object_del(headers, json_object_iter_key(it));
        it = next;
    }
}

/* The value of an LLM_HEADERS member as it is sent: a string as it is,
 * anything else as its JSON text (NULL: out of memory). */
static json_t *header_value(json_t *v)
{
    char *text;
    json_t *s;

    if (json_is_string(v))
        return json_incref(v);
    text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    s = text ? json_string(text) : NULL;
    lil__json_free(text);
    return s;
}

/* LLM_HEADERS over the defaults in headers. */
static void overlay(json_t *headers, json_t *extra)
{
    const char *name;
    json_t *v;

    json_object_foreach(extra, name, v)
    {
        drop_header(headers, name);
        if (!json_is_null(v))
            json_object_set_new(headers, name, header_value(v));
    }
}

/* The headers of the request but content-type and authorization (which
 * the caller adds), as a JSON object. */
static lil_status header_object(const struct lil_env *env, const struct llm_config *cfg,
                                json_t **out)
{
    struct lil_json_scope sc;
    json_t *extra = NULL, *h;
    struct lil_err scratch;

    if (cfg->extra_headers &&
        lil__json_parse(env, &scratch, LIL_E_INVAL, cfg->extra_headers,
                        strlen(cfg->extra_headers), 0, NULL, &extra) == LIL_E_NOMEM)
        return LIL_E_NOMEM;
    lil__json_begin(&sc, env);
    h = json_object();
    for (size_t i = 0; h && cfg->headers && cfg->headers[i]; i += 2)
        json_object_set_new(h, cfg->headers[i], json_string(cfg->headers[i + 1]));
    if (json_is_object(extra))
        overlay(h, extra);
    drop_header(h, "content-type");
    if (*cfg->key)
        drop_header(h, "authorization");
    json_decref(extra);
    if (lil__json_end(&sc) != LIL_OK || !h) {
        lil__json_begin(&sc, env);
        json_decref(h);
        (void)lil__json_end(&sc);
        return LIL_E_NOMEM;
    }
    *out = h;
    return LIL_OK;
}

static bool sendable(const char *name, const char *value)
{
    if (!*name || !value || strpbrk(value, "\r\n"))
        return false;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p))
            return false;
    return true;
}

static lil_status add_line(const struct lil_curl *c, struct curl_slist **list,
                           struct lil_buf *line, const char *fmt, ...) LIL_PRINTF(4, 5);

static lil_status add_line(const struct lil_curl *c, struct curl_slist **list,
                           struct lil_buf *line, const char *fmt, ...)
{
    struct curl_slist *grown;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    lil__buf_reset(line);
    if (n < 0 || lil__buf_reserve(line, (size_t)n + 1) != LIL_OK)
        return LIL_E_NOMEM;
    va_start(ap, fmt);
    vsnprintf((char *)line->data, (size_t)n + 1, fmt, ap);
    va_end(ap);
    grown = c->slist_append(*list, (const char *)line->data);
    memset(line->data, 0, (size_t)n); /* it may hold the key */
    if (!grown)
        return LIL_E_NOMEM;
    *list = grown;
    return LIL_OK;
}

static lil_status header_list(const struct lil_env *env, const struct lil_curl *c,
                              const struct llm_config *cfg, struct curl_slist **out)
{
    json_t *h = NULL, *v;
    const char *name;
    struct lil_buf line;
    lil_status rc = header_object(env, cfg, &h);
    struct lil_json_scope sc;

    *out = NULL;
    lil__buf_init(&line, env, BUF_UNCAPPED);
    json_object_foreach(h, name,
                        v) if (rc == LIL_OK && sendable(name, json_string_value(v)))
        rc = add_line(c, out, &line, "%s: %s", name, json_string_value(v));
    if (rc == LIL_OK)
        rc = add_line(c, out, &line, "%s", "Content-Type: application/json");
    if (rc == LIL_OK && *cfg->key)
        rc = add_line(c, out, &line, "Authorization: Bearer %s", cfg->key);
    if (rc == LIL_OK)
        rc = add_line(c, out, &line, "%s", "Expect:");
    lil__buf_free(&line);
    lil__json_begin(&sc, env);
    json_decref(h);
    (void)lil__json_end(&sc);
    return rc;
}

/* ---- the transfer ----------------------------------------------------------- */

struct llm_transfer {
    const struct lil_curl *c;
    CURL *h;
    long status;             /* of the response, once its body starts */
    struct llm_reply reply;  /* a 2xx body */
    struct lil_buf err_body; /* the start of another body */
    size_t err_total;
    lil_status cb_rc;
    char errbuf[CURL_ERROR_SIZE];
};

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    struct llm_transfer *t = ud;
    size_t len = size * n;

    if (t->status == 0)
        t->c->easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &t->status);
    if (t->status >= 200 && t->status < 300) {
        t->cb_rc = lil__llm_reply_feed(&t->reply, data, len);
    } else {
        size_t keep =
            t->err_body.len < ERR_BODY_KEEP ? ERR_BODY_KEEP - t->err_body.len : 0;

        t->err_total += len;
        t->cb_rc = t->err_total > t->reply.max_bytes
                       ? LIL_E_TOOBIG
                       : lil__buf_add(&t->err_body, data, len < keep ? len : keep);
    }
    return t->cb_rc == LIL_OK ? len : 0; /* another count stops the transfer */
}

static CURLcode set_options(struct llm_transfer *t, const struct llm_config *cfg,
                            const char *url, struct curl_slist *headers,
                            const struct lil_buf *body)
{
    struct lil_curl_request r = {
        .url = url,
        .timeout_ms = (long)cfg->timeout_ms,
        .max_file = (curl_off_t)cfg->max_bytes,
        .on_body = on_body,
        .body_ud = t,
        .errbuf = t->errbuf,
        .headers = headers,
    };
    CURLcode cc = lil__curl_setup(t->c, t->h, &r);

    if (cc == CURLE_OK)
        cc = lil__curl_post_body(t->c, t->h, body->data, (curl_off_t)body->len);
    return cc;
}

/* ---- messages --------------------------------------------------------------- */

/* Longest first: a value inside a longer one is redacted with it. */
static int by_length_desc(const void *a, const void *b)
{
    size_t x = json_string_length(*(json_t *const *)a);
    size_t y = json_string_length(*(json_t *const *)b);

    return x == y ? 0 : x > y ? -1 : 1;
}

/* The secrets of cfg a server may echo back: the key, the credentials of
 * the base URL (userinfo, Basic credentials, secret query parameters) and
 * the values of the secret headers sent (LLM_HEADERS), into out. */
static lil_status config_secrets(const struct lil_env *env,
                                 const struct llm_config *cfg, json_t *out)
{
    char base[4096];
    json_t *h = NULL, *v;
    const char *name;
    lil_status rc = LIL_OK;

    if (*cfg->key && json_array_append_new(out, json_string(cfg->key)) != 0)
        return LIL_E_NOMEM;
    snprintf(base, sizeof(base), "%.*s", (int)cfg->base_len, cfg->base);
    rc = lil__http_url_secrets(env, base, out);
    if (rc == LIL_OK)
        rc = header_object(env, cfg, &h);
    json_object_foreach(h, name, v)
    {
        if (rc == LIL_OK && json_string_length(v) > 0 &&
            lil__http_secret_name(name, strlen(name), false) &&
            json_array_append(out, v) != 0)
            rc = LIL_E_NOMEM;
    }
    json_decref(h);
    return rc;
}

/* msg with each of the n values of v replaced, in turn (in place). */
static lil_status redact_each(const struct lil_env *env, char *msg, size_t cap,
                              json_t *const *v, size_t n)
{
    struct lil_buf b;
    lil_status rc = LIL_OK;

    lil__buf_init(&b, env, BUF_UNCAPPED);
    for (size_t i = 0; i < n && rc == LIL_OK; i++) {
        lil__buf_reset(&b);
        rc = lil__redact_value(NULL, json_string_value(v[i]), json_string_length(v[i]),
                               msg, strlen(msg), &b);
        if (rc == LIL_OK)
            snprintf(msg, cap, "%s", b.data ? (const char *)b.data : "");
    }
    lil__buf_free(&b);
    return rc;
}

/* Every occurrence of each secret of cfg in msg replaced by "[redacted]",
 * the longest first (in place, cut to cap); a message that cannot be
 * redacted is withheld. */
static void scrub(const struct lil_env *env, char *msg, size_t cap,
                  const struct llm_config *cfg)
{
    struct lil_json_scope sc;
    json_t *secrets, **v = NULL;
    size_t n = 0;
    lil_status rc;

    lil__json_begin(&sc, env);
    secrets = json_array();
    rc = secrets ? config_secrets(env, cfg, secrets) : LIL_E_NOMEM;
    if (rc == LIL_OK && (n = json_array_size(secrets)) > 0) {
        v = lil__calloc(env, n, sizeof(json_t *));
        rc = v ? LIL_OK : LIL_E_NOMEM;
    }
    for (size_t i = 0; v && i < n; i++)
        v[i] = json_array_get(secrets, i);
    if (v && rc == LIL_OK) {
        qsort(v, n, sizeof(json_t *), by_length_desc);
        rc = redact_each(env, msg, cap, v, n);
    }
    lil__free(env, v);
    json_decref(secrets);
    if (lil__json_end(&sc) != LIL_OK || rc != LIL_OK)
        snprintf(msg, cap,
                 "the llm request failed (out of memory redacting its message)");
}

/* Bytes of the first `chars` UTF-8 characters of s (len bytes). */
static size_t first_chars(const char *s, size_t len, size_t chars)
{
    size_t i = 0;

    for (; i < len && chars > 0; chars--) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

static lil_status transfer_status(struct llm_transfer *t, struct lil_err *err,
                                  const struct llm_config *cfg, CURLcode cc)
{
    const char *body = t->err_body.data ? (const char *)t->err_body.data : "";

    if (t->cb_rc == LIL_E_NOMEM || cc == CURLE_OUT_OF_MEMORY)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory reading the LLM reply");
    if (t->cb_rc == LIL_E_TOOBIG || cc == CURLE_FILESIZE_EXCEEDED)
        return lil__seterr(err, LIL_E_TOOBIG, 0,
                           "agent step exceeded %s (%zu bytes) in harness 'llm'",
                           cfg->max_var, cfg->max_bytes);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return lil__seterr(err, LIL_E_HTTP, 0,
                           "agent step exceeded %s (%lldms) in harness 'llm'",
                           cfg->timeout_var, (long long)cfg->timeout_ms);
    if (cc != CURLE_OK)
        return lil__seterr(err, LIL_E_HTTP, 0, "LLM request failed: %s%s%s",
                           t->c->easy_strerror(cc), t->errbuf[0] ? ": " : "",
                           t->errbuf);
    t->c->easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &t->status);
    if (t->status < 200 || t->status > 299)
        return lil__seterr(
            err, LIL_E_HTTP, 0, "LLM request failed (%ld): %.*s", t->status,
            (int)first_chars(body, t->err_body.len, ERR_BODY_SHOW), body);
    return LIL_OK;
}

/* POST the request; the reply is in t->reply. */
static lil_status perform(const struct lil_env *env, struct lil_err *err,
                          const struct llm_config *cfg, struct llm_transfer *t,
                          const struct lil_buf *body)
{
    struct curl_slist *headers = NULL;
    struct lil_buf url;
    lil_status rc = lil__curl_dl_load(err, &t->c);
    CURLcode cc;

    if (rc != LIL_OK)
        return rc;
    lil__buf_init(&url, env, BUF_UNCAPPED);
    rc = lil__buf_printf(&url, "%.*s/chat/completions", (int)cfg->base_len, cfg->base);
    if (rc == LIL_OK)
        rc = header_list(env, t->c, cfg, &headers);
    t->h = rc == LIL_OK ? lil__llm_handle_take(t->c) : NULL;
    if (t->h) {
        cc = set_options(t, cfg, (const char *)url.data, headers, body);
        if (cc == CURLE_OK)
            cc = t->c->easy_perform(t->h);
        rc = transfer_status(t, err, cfg, cc);
    } else {
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory starting the LLM request");
    }
    lil__llm_handle_give(t->c, t->h);
    t->h = NULL;
    t->c->slist_free_all(headers);
    lil__buf_free(&url);
    return rc;
}

/* ---- the call --------------------------------------------------------------- */

static lil_status answer(const struct lil_env *env, struct lil_err *err,
                         const struct lil_agent_call *call,
                         const struct llm_config *cfg, struct llm_transfer *t,
                         json_t **result, struct lil_agent_usage *usage)
{
    struct lil_json_scope sc;
    json_t *reported = NULL;
    const char *text;
    size_t len;
    lil_status rc = lil__llm_reply_finish(&t->reply, err, &text, &len, &reported);

    if (rc == LIL_OK)
        rc = lil__llm_result(env, err, text, len, result);
    if (rc == LIL_OK)
        lil__llm_usage(call->envp, cfg->model, reported,
                       (call->prompt ? strlen(call->prompt) : 0) +
                           sizeof(LIL_LLM_SYSTEM) - 1,
                       len, usage);
    lil__json_begin(&sc, env);
    json_decref(reported);
    (void)lil__json_end(&sc);
    return rc;
}

lil_status lil__agent_llm_call(const struct lil_env *env, struct lil_err *err,
                               const struct lil_agent_call *call, json_t **result,
                               struct lil_agent_usage *usage)
{
    struct llm_config cfg;
    struct llm_transfer t;
    struct lil_buf body;
    lil_status rc;

    *result = NULL;
    memset(usage, 0, sizeof(*usage));
    rc = configure(err, call->envp, &cfg);
    if (rc != LIL_OK)
        return rc;
    memset(&t, 0, sizeof(t));
    lil__llm_reply_init(&t.reply, env, cfg.stream, cfg.max_bytes);
    t.reply.on_tokens = call->on_tokens;
    t.reply.tokens_ud = call->tokens_ud;
    t.reply.prompt_bytes =
        (call->prompt ? strlen(call->prompt) : 0) + sizeof(LIL_LLM_SYSTEM) - 1;
    lil__buf_init(&t.err_body, env, BUF_UNCAPPED);
    lil__buf_init(&body, env, BUF_UNCAPPED);
    rc = request_body(env, err, &cfg, call->prompt ? call->prompt : "", &body);
    if (rc == LIL_OK)
        rc = perform(env, err, &cfg, &t, &body);
    if (rc == LIL_OK)
        rc = answer(env, err, call, &cfg, &t, result, usage);
    lil__llm_reply_free(&t.reply);
    lil__buf_free(&t.err_body);
    lil__buf_free(&body);
    if (rc != LIL_OK)
        scrub(env, err->msg, sizeof(err->msg), &cfg);
    return rc;
}

/* ---- the configuration described (lil doctor) ------------------------------ */

lil_status lil__agent_limit(struct lil_err *err, const char *const *envp, const char *x,
                            int64_t def, int64_t *out, char *var, size_t cap)
{
    return limit(err, envp, x, def, out, var, cap);
}

/* "openai" for OPENAI_API_KEY, "ai_gateway" for AI_GATEWAY_API_KEY. */
static void provider_name(const struct provider *p, char *out, size_t cap)
{
    size_t n = strlen(p->key_var) - strlen("_API_KEY");

    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)p->key_var[i]);
    out[n] = '\0';
}

/* Where setting x came from: its variable when set and not empty, else
 * dflt. */
static const char *source(const char *const *envp, const char *x, const char *dflt,
                          char *buf, size_t cap)
{
    const char *which = NULL;

    if (!filled(lil__agent_setting(envp, x, &which)))
        return dflt;
    snprintf(buf, cap, "%s%s", which ? which : "", x);
    return buf;
}

/* The base URL as it may be shown: credentials, secret parameters and the
 * key "[redacted]" (into out, NUL-terminated). */
static lil_status shown_url(const struct lil_env *env, const struct llm_config *cfg,
                            struct lil_buf *out)
{
    struct lil_buf raw, redacted;
    lil_status rc;

    lil__buf_init(&raw, env, BUF_UNCAPPED);
    lil__buf_init(&redacted, env, BUF_UNCAPPED);
    rc = lil__buf_add(&raw, cfg->base, cfg->base_len);
    if (rc == LIL_OK)
        rc = lil__http_redact_url(&redacted, raw.data ? (const char *)raw.data : "");
    if (rc == LIL_OK)
        rc = lil__redact_value(NULL, cfg->key, strlen(cfg->key),
                               (const char *)redacted.data, redacted.len, out);
    lil__buf_free(&raw);
    lil__buf_free(&redacted);
    return rc;
}

static void set_str(json_t *o, const char *key, const char *value)
{
    json_object_set_new(o, key, value ? json_string(value) : json_null());
}

/* The server part of the description. */
static void describe_server(json_t *o, const char *const *envp,
                            const struct llm_config *cfg, const char *url)
{
    char name[32], key_from[48], base_from[48], model_from[48];
    const char *dflt = cfg->provider ? "provider" : "default";

    if (cfg->provider)
        provider_name(cfg->provider, name, sizeof(name));
    else
        snprintf(name, sizeof(name), "custom");
    if (cfg->provider)
        snprintf(key_from, sizeof(key_from), "%s", cfg->provider->key_var);
    set_str(o, "provider", name);
    json_object_set_new(o, "key_set", json_boolean(*cfg->key != '\0'));
    set_str(o, "key_from",
            !*cfg->key ? NULL
            : cfg->provider
                ? key_from
                : source(envp, "LLM_API_KEY", NULL, key_from, sizeof(key_from)));
    set_str(o, "base_url", url);
    set_str(o, "base_url_from",
            cfg->provider ? "provider"
                          : source(envp, "LLM_BASE_URL", "default", base_from,
                                   sizeof(base_from)));
    set_str(o, "model", cfg->model);
    set_str(o, "model_from",
            source(envp, "LLM_MODEL", dflt, model_from, sizeof(model_from)));
    json_object_set_new(o, "stream", json_boolean(cfg->stream));
}

static void describe_prices(json_t *o, const char *const *envp, const char *model)
{
    struct lil_agent_prices p;

    lil__agent_prices(envp, model, &p);
    json_object_set_new(o, "priced", json_boolean(p.priced));
    json_object_set_new(o, "price_in", p.in >= 0 ? json_real(p.in) : json_null());
    json_object_set_new(o, "price_out", p.out >= 0 ? json_real(p.out) : json_null());
    set_str(o, "price_in_from", p.in_from[0] ? p.in_from : NULL);
    set_str(o, "price_out_from", p.out_from[0] ? p.out_from : NULL);
}

lil_status lil__agent_llm_describe(const struct lil_env *env, struct lil_err *err,
                                   const char *const *envp, json_t **out)
{
    struct llm_config cfg;
    struct lil_err why;
    struct lil_buf url;
    struct lil_json_scope sc;
    lil_status rc;
    json_t *o;

    memset(&cfg, 0, sizeof(cfg));
    lil__clearerr(&why);
    lil__buf_init(&url, env, BUF_UNCAPPED);
    rc = resolve_server(&why, envp, &cfg);
    if (rc == LIL_OK) {
        cfg.base_len = strlen(cfg.base);
        while (cfg.base_len > 0 && cfg.base[cfg.base_len - 1] == '/')
            cfg.base_len--;
        cfg.stream = stream_on(lil__agent_setting(envp, "LLM_STREAM", NULL));
        rc = shown_url(env, &cfg, &url);
    }
    lil__json_begin(&sc, env);
    o = json_object();
    json_object_set_new(o, "configured", json_boolean(cfg.base != NULL));
    if (cfg.base == NULL) {
        set_str(o, "message", why.msg);
    } else if (rc == LIL_OK) {
        describe_server(o, envp, &cfg, (const char *)url.data);
        describe_prices(o, envp, cfg.model);
    }
    if (lil__json_end(&sc) != LIL_OK || !o || (cfg.base && rc != LIL_OK)) {
        lil__json_begin(&sc, env);
        json_decref(o);
        (void)lil__json_end(&sc);
        lil__buf_free(&url);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    lil__buf_free(&url);
    *out = o;
    return LIL_OK;
}
