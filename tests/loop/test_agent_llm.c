/*
 * test_agent_llm.c -- the `llm` harness (src/agents/agent_llm.c) against an
 * OpenAI-compatible server on 127.0.0.1 (tests/http/llm_server.py, which
 * checks every request as the reference sends it), and the price
 * table (agent_price.c):
 *   - the request: path, headers (Authorization with a key and without,
 *     LLM_HEADERS overlaid, content-type never doubled), the body
 *     (max_tokens + temperature, or max_completion_tokens for reasoning
 *     models), stream options;
 *   - the reply: plain text, fenced JSON (the model's `usage` dropped),
 *     non-object JSON, null content, a body that is not JSON, 4xx/5xx
 *     (the key never in the message), the timeout (naming the variable in
 *     force), the size cap, streams (pieces of a few bytes, CRLF, usage in
 *     the last chunk, a plain completion to a stream request, a connection
 *     dropped mid-stream);
 *   - usage: provider tokens, provider cost, the price table, an estimate
 *     when nothing is reported;
 *   - connections: kept between calls (the server sees the same client
 *     port), and never those of the parent in a fork()ed child;
 *   - configuration: what to set when nothing is, bad limits, the order of
 *     provider keys (seen through the CONNECT target of an https proxy);
 *   - prices: the reference's vectors, normalization, overrides;
 *   - the token limit (AGENT_MAX_TOKENS: default, twins, bad values) and
 *     the worst case of a call that budgets reserve: llm (system message
 *     and framing counted, priced by its model), a CLI (its prompt only,
 *     priced only by both overrides), internal (nothing).
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agents/agent.h"
#include "base/env.h"
#include "effects/effect_http.h"
#include "json/json.h"
#include "t.h"

#ifndef T_SERVER
#error "T_SERVER must name tests/http/llm_server.py"
#endif

/* ---- the server ------------------------------------------------------------ */

static pid_t server_pid;
static int server_stdin = -1;
static char server_url[64]; /* "http://127.0.0.1:PORT" */

static void stop_server(void)
{
    if (server_stdin >= 0)
        close(server_stdin);
    if (server_pid > 0)
        waitpid(server_pid, NULL, 0);
}

static const char *server(void)
{
    int in[2], out[2];
    char line[32] = {0};
    FILE *f;

    if (server_url[0])
        return server_url;
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        return "http://127.0.0.1:1";
    server_pid = fork();
    if (server_pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execlp("python3", "python3", T_SERVER, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    server_stdin = in[1];
    atexit(stop_server);
    f = fdopen(out[0], "r");
    if (!f || !fgets(line, sizeof(line), f) || atoi(line) <= 0)
        return "http://127.0.0.1:1";
    fclose(f);
    snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", atoi(line));
    return server_url;
}

/* ---- calls ------------------------------------------------------------------- */

static lil_env *test_env(void)
{
    static lil_env *env;

    if (!env && lil_env_new(&env) != LIL_OK)
        abort();
    return env;
}

#define KEY "sk-test-0123456789abcdef"

static struct lil_err err;
static struct lil_agent_usage usage;
static json_t *result;
static char envbuf[8][512];

/* envp for a scenario of the server: "LIL_LLM_BASE_URL=<server>/<path>/v1",
 * then the extra entries (NULL-terminated). */
static const char *const *envp_for(const char *path, const char *extra[])
{
    static const char *envp[12];
    size_t n = 0;

    snprintf(envbuf[0], sizeof(envbuf[0]), "LIL_LLM_BASE_URL=%s/%s/v1/", server(),
             path);
    envp[n++] = envbuf[0];
    for (size_t i = 0; extra && extra[i] && n < 11; i++)
        envp[n++] = extra[i];
    envp[n] = NULL;
    return envp;
}

static lil_status call_env(const char *const *envp, const char *prompt)
{
    struct lil_agent_call c = {0};

    c.harness = "llm";
    c.prompt = prompt;
    c.envp = envp;
    json_decref(result);
    result = NULL;
    lil__clearerr(&err);
    return lil__agent_call(test_env(), &err, &c, &result, &usage);
}

static lil_status call(const char *path, const char *extra[])
{
    return call_env(envp_for(path, extra), "say hello");
}

static const char *dump(json_t *v)
{
    static char text[65536];
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    snprintf(text, sizeof(text), "%s", s ? s : "(null)");
    lil__json_free(s);
    return text;
}

/* The request the server saw (the echo scenario's result). */
static json_t *echoed(void)
{
    static json_t *seen;
    const char *text = json_string_value(json_object_get(result, "result"));

    json_decref(seen);
    seen = NULL;
    if (json_is_object(result) && json_object_get(result, "auth"))
        seen = json_incref(result); /* it parsed as the result object */
    else if (text)
        seen = json_loads(text, 0, NULL);
    return seen;
}

/* ---- the request ----------------------------------------------------------- */

T_TEST(request_with_key)
{
    const char *extra[] = {"LIL_LLM_API_KEY=" KEY, "LOOPY_LLM_MODEL=gpt-4o-mini",
                           "LIL_LLM_HEADERS={\"X-One\":\"1\",\"x-num\":5,"
                           "\"Content-Type\":\"text/plain\",\"authorization\":\"no\","
                           "\"X-Null\":null,\"Bad Name\":\"v\"}",
                           NULL};
    json_t *seen, *h, *body;

    T_EQ_I64(call("echo", extra), LIL_OK);
    seen = echoed();
    T_REQUIRE(seen != NULL);
    h = json_object_get(seen, "headers");
    body = json_object_get(seen, "body");
    T_EQ_STR(json_string_value(json_object_get(seen, "auth")), "Bearer " KEY);
    T_EQ_STR(json_string_value(json_object_get(h, "content-type")), "application/json");
    T_EQ_STR(json_string_value(json_object_get(h, "x-one")), "1");
    T_EQ_STR(json_string_value(json_object_get(h, "x-num")), "5");
    T_CHECK(json_object_get(h, "x-null") == NULL);
    T_CHECK(json_object_get(h, "bad name") == NULL);
    T_EQ_STR(json_string_value(json_object_get(body, "model")), "gpt-4o-mini");
    T_EQ_I64(json_integer_value(json_object_get(body, "max_tokens")), 2000);
    T_EQ_STR(json_string_value(json_object_get(
                 json_array_get(json_object_get(body, "messages"), 1), "content")),
             "say hello");
    T_CHECK(json_object_get(body, "stream") == NULL);
    T_CHECK(usage.has_tokens && !usage.estimated);
    T_EQ_I64(usage.tokens, 5);
    T_EQ_STR(usage.model, "gpt-4o-mini");
    T_CHECK(strstr(dump(result), KEY) == NULL || json_object_get(result, "auth"));
}

T_TEST(request_keyless)
{
    const char *none[] = {NULL};
    const char *own[] = {"LIL_LLM_HEADERS={\"Authorization\":\"Basic abc\"}", NULL};
    json_t *seen;

    T_EQ_I64(call("echo", none), LIL_OK);
    seen = echoed();
    T_REQUIRE(seen != NULL);
    T_CHECK(json_is_null(json_object_get(seen, "auth")));
    T_EQ_I64(call("echo", own), LIL_OK); /* keyless: LLM_HEADERS' one goes */
    seen = echoed();
    T_REQUIRE(seen != NULL);
    T_EQ_STR(json_string_value(json_object_get(seen, "auth")), "Basic abc");
}

T_TEST(request_reasoning_models)
{
    static const char *const models[] = {"LIL_LLM_MODEL=o3-mini",
                                         "LIL_LLM_MODEL=openai/GPT-5-mini",
                                         "LIL_LLM_MODEL=o1-2024-12-17"};

    for (size_t i = 0; i < 3; i++) {
        const char *extra[] = {models[i], NULL};
        json_t *body;

        T_EQ_I64(call("echo", extra), LIL_OK);
        T_REQUIRE(echoed() != NULL);
        body = json_object_get(echoed(), "body");
        T_EQ_I64(json_integer_value(json_object_get(body, "max_completion_tokens")),
                 2000);
        T_CHECK(json_object_get(body, "max_tokens") == NULL);
    }
}

/* ---- the reply --------------------------------------------------------------- */

T_TEST(reply_text_and_json)
{
    const char *none[] = {NULL};
    const char *model[] = {"LOOPY_LLM_MODEL=gpt-4o-mini-2024-07-18", NULL};

    /* the reply, then the usage the provider reported (gpt-4o-mini's
       price: 3 + 2 tokens cost $1.65e-6) */
    T_EQ_I64(call("text", none), LIL_OK);
    T_EQ_STR(
        dump(result),
        "{\"result\":\"hello there\",\"usage\":{\"tokens\":5,\"usd\":1.6499999999999999e-6}}");
    T_EQ_I64(call("fenced", model), LIL_OK); /* the model's usage replaced */
    T_EQ_STR(dump(result),
             "{\"answer\":42,\"usage\":{\"tokens\":2000000,\"usd\":0.75}}");
    T_EQ_I64(usage.tokens, 2000000);
    T_EQ_I64(usage.tokens_in, 1000000);
    T_CHECK(usage.has_usd && fabs(usage.usd - 0.75) < 1e-9);
    T_EQ_I64(call("array", none), LIL_OK);
    T_EQ_STR(
        dump(result),
        "{\"result\":\"[1, 2]\",\"usage\":{\"tokens\":5,\"usd\":1.6499999999999999e-6}}");
    T_EQ_I64(call("nullcontent", none), LIL_OK);
    T_EQ_STR(
        dump(result),
        "{\"result\":\"\",\"usage\":{\"tokens\":5,\"usd\":1.6499999999999999e-6}}");
    T_EQ_I64(call("notjson", none), LIL_E_HTTP);
    T_CONTAINS(err.msg, "not a JSON completion");
}

T_TEST(usage_sources)
{
    const char *none[] = {NULL};
    const char *unpriced[] = {"LIL_LLM_MODEL=my-local-model", NULL};

    T_EQ_I64(call("cost", none), LIL_OK); /* the provider's cost wins */
    T_CHECK(usage.has_usd && fabs(usage.usd - 0.0123) < 1e-12);
    T_EQ_I64(usage.tokens, 15);
    T_EQ_STR(dump(result), "{\"ok\":true,\"usage\":{\"tokens\":15,\"usd\":0.0123}}");
    T_EQ_I64(call("text", unpriced), LIL_OK);
    T_CHECK(usage.has_tokens && !usage.has_usd);
    T_EQ_STR(usage.model, "my-local-model");
    T_EQ_STR(dump(result), "{\"result\":\"hello there\",\"usage\":{\"tokens\":5}}");
    T_EQ_I64(call("nousage", none), LIL_OK); /* nothing reported: estimated */
    T_CHECK(usage.estimated && usage.has_tokens);
    T_EQ_I64(usage.tokens_out, 5); /* 20 bytes */
    T_CHECK(usage.has_usd);        /* gpt-4o-mini is priced */
    T_CHECK(usage.usd_estimated);  /* the estimate's price: not in the result */
    T_EQ_STR(dump(result), "{\"result\":\"four score and seven\"}");
}

T_TEST(reply_errors)
{
    const char *keyed[] = {"LIL_LLM_API_KEY=" KEY, NULL};
    const char *slow[] = {"LIL_AGENT_TIMEOUT_MS=300", NULL};
    const char *slow_loopy[] = {"LOOPY_AGENT_TIMEOUT_MS=300", NULL};
    const char *small[] = {"LOOPY_AGENT_MAX_BUFFER=4096", NULL};

    T_EQ_I64(call("status/401", keyed), LIL_E_HTTP);
    T_CONTAINS(err.msg,
               "LLM request failed (401): provider says: bad key Bearer [redacted]");
    T_CHECK(strstr(err.msg, KEY) == NULL);
    T_EQ_I64(call("status/503", keyed), LIL_E_HTTP);
    T_CONTAINS(err.msg, "LLM request failed (503): ");
    T_EQ_I64(call("slow/3000", slow), LIL_E_HTTP);
    T_EQ_STR(err.msg,
             "agent step exceeded LIL_AGENT_TIMEOUT_MS (300ms) in harness 'llm'");
    T_EQ_I64(call("slow/3000", slow_loopy), LIL_E_HTTP);
    T_CONTAINS(err.msg, "exceeded LOOPY_AGENT_TIMEOUT_MS (300ms)");
    T_EQ_I64(call("big/100000", small), LIL_E_TOOBIG);
    T_EQ_STR(
        err.msg,
        "agent step exceeded LOOPY_AGENT_MAX_BUFFER (4096 bytes) in harness 'llm'");
}

/* ---- streams ----------------------------------------------------------------- */

T_TEST(stream_replies)
{
    const char *on[] = {"LOOPY_LLM_STREAM=TRUE", NULL};
    const char *model[] = {"LIL_LLM_STREAM=yes", "LIL_LLM_MODEL=gpt-4o-mini", NULL};
    json_t *body;

    T_EQ_I64(call("echo", on), LIL_OK); /* the request's stream fields */
    T_REQUIRE(echoed() != NULL);
    body = json_object_get(echoed(), "body");
    T_CHECK(json_is_true(json_object_get(body, "stream")));
    T_EQ_I64(usage.tokens, 5);
    T_EQ_I64(call("text", on), LIL_OK);
    T_EQ_STR(
        dump(result),
        "{\"result\":\"hello there\",\"usage\":{\"tokens\":5,\"usd\":1.6499999999999999e-6}}");
    T_CHECK(!usage.estimated && usage.tokens == 5);
    T_EQ_I64(call("crlf", on), LIL_OK);
    T_EQ_STR(
        dump(result),
        "{\"result\":\"hello there\",\"usage\":{\"tokens\":5,\"usd\":1.6499999999999999e-6}}");
    T_EQ_I64(call("fenced", model), LIL_OK);
    T_EQ_STR(dump(result),
             "{\"answer\":42,\"usage\":{\"tokens\":2000000,\"usd\":0.75}}");
    T_CHECK(usage.has_usd && fabs(usage.usd - 0.75) < 1e-9);
    T_EQ_I64(call("plainstream", on), LIL_OK); /* no data: line */
    T_EQ_STR(
        dump(result),
        "{\"result\":\"hello there\",\"usage\":{\"tokens\":5,\"usd\":1.6499999999999999e-6}}");
    T_EQ_I64(call("nousage", on), LIL_OK);
    T_CHECK(usage.estimated);
    T_EQ_STR(dump(result), "{\"result\":\"four score and seven\"}");
    T_EQ_I64(call("drop", on), LIL_E_HTTP);
    T_CONTAINS(err.msg, "LLM request failed: ");
}

/* ---- connections -------------------------------------------------------------- */

/* The client address the server saw ("127.0.0.1:PORT"), or "". */
static const char *peer(void)
{
    static char seen[64];
    const char *none[] = {NULL};
    const char *text;

    seen[0] = '\0';
    if (call("peer", none) == LIL_OK &&
        (text = json_string_value(json_object_get(result, "result"))) != NULL)
        snprintf(seen, sizeof(seen), "%s", text);
    return seen;
}

T_TEST(connection_reuse)
{
    char first[64];
    pid_t child;
    int status = -1;

    snprintf(first, sizeof(first), "%s", peer());
    T_CHECK(strncmp(first, "127.0.0.1:", 10) == 0);
    T_EQ_STR(peer(), first); /* the same connection */
    fflush(NULL);
    child = fork();
    if (child == 0) /* its own connection, not the parent's */
        _exit(peer()[0] && strcmp(peer(), first) != 0 ? 0 : 1);
    T_REQUIRE(child > 0);
    T_EQ_I64(waitpid(child, &status, 0), child);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    T_EQ_STR(peer(), first); /* the parent's is intact */
}

/* ---- configuration ----------------------------------------------------------- */

T_TEST(not_configured)
{
    static const char *const envp[] = {"OPENAI_API_KEY=", "LOOPY_LLM_API_KEY=", NULL};
    struct lil_agent_call c = {0};

    c.harness = "llm";
    c.prompt = "p";
    c.envp = envp;
    T_EQ_I64(lil__agent_ready(test_env(), &err, &c), LIL_E_INVAL);
    T_CONTAINS(err.msg, "agent harness 'llm' needs an LLM configured");
    T_CONTAINS(err.msg, "LIL_LLM_API_KEY");
    T_CONTAINS(err.msg, "AI_GATEWAY_API_KEY");
}

T_TEST(bad_limits)
{
    const char *bad[] = {"LIL_AGENT_TIMEOUT_MS=12s", NULL};
    const char *zero[] = {"LOOPY_AGENT_MAX_BUFFER=0", NULL};
    const char *blank[] = {"LOOPY_AGENT_TIMEOUT_MS= 5000 ", NULL};

    T_EQ_I64(call("text", bad), LIL_E_INVAL);
    T_EQ_STR(err.msg, "LIL_AGENT_TIMEOUT_MS must be a positive integer; got '12s'");
    T_EQ_I64(call("text", zero), LIL_E_INVAL);
    T_EQ_STR(err.msg, "LOOPY_AGENT_MAX_BUFFER must be a positive integer; got '0'");
    T_EQ_I64(call("text", blank), LIL_OK);
}

/* The host the call went to, through the server as an https proxy. */
static const char *connect_target(const char *const *envp)
{
    static char target[256];
    json_t *req, *out = NULL;
    char url[128];

    T_EQ_I64(call_env(envp, "p"), LIL_E_HTTP);
    snprintf(url, sizeof(url), "%s/connects", server());
    req = json_pack("{s:s, s:s}", "method", "GET", "url", url);
    target[0] = '\0';
    if (lil__http_perform(test_env(), &err, req, NULL, &out) == LIL_OK)
        snprintf(target, sizeof(target), "%s",
                 json_string_value(json_array_get(out, json_array_size(out) - 1)));
    json_decref(req);
    json_decref(out);
    return target;
}

T_TEST(provider_order)
{
    static const char *const gemini[] = {"ANTHROPIC_API_KEY=", "GEMINI_API_KEY=g",
                                         "GROQ_API_KEY=q", "OPENAI_API_KEY=", NULL};
    static const char *const groq[] = {"OPENROUTER_API_KEY=r", "GROQ_API_KEY=q", NULL};
    static const char *const openai[] = {"AI_GATEWAY_API_KEY=v", "OPENAI_API_KEY=o",
                                         NULL};
    static const char *const gateway[] = {"AI_GATEWAY_API_KEY=v", NULL};
    static const char *const own[] = {"LOOPY_LLM_API_KEY=k", "OPENAI_API_KEY=o", NULL};
    char proxy[96];

    snprintf(proxy, sizeof(proxy), "%s", server());
    setenv("https_proxy", proxy, 1);
    setenv("HTTPS_PROXY", proxy, 1);
    T_EQ_STR(connect_target(gemini), "generativelanguage.googleapis.com:443");
    T_EQ_STR(connect_target(groq), "api.groq.com:443");
    T_EQ_STR(connect_target(openai), "api.openai.com:443");
    T_EQ_STR(connect_target(gateway), "ai-gateway.vercel.sh:443");
    T_EQ_STR(connect_target(own), "api.openai.com:443");
    unsetenv("https_proxy");
    unsetenv("HTTPS_PROXY");
}

/* ---- prices ------------------------------------------------------------------ */

T_TEST(prices)
{
    static const char *const none[] = {NULL};
    static const char *const over[] = {"LOOPY_LLM_PRICE_IN=2", "LOOPY_LLM_PRICE_OUT=8",
                                       NULL};
    static const char *const blank[] = {
        "LOOPY_LLM_PRICE_IN= ", "LOOPY_LLM_PRICE_OUT=-1", NULL};
    static const char *const twin[] = {"LIL_LLM_PRICE_IN=1", "LOOPY_LLM_PRICE_IN=100",
                                       NULL};
    double usd = -1;

    T_CHECK(lil__agent_price_usd(none, "gpt-4o-mini", 1000000, 1000000, &usd));
    T_CHECK(fabs(usd - 0.75) < 1e-12);
    T_CHECK(!lil__agent_price_usd(none, "no-such-model", 1, 1, &usd));
    T_CHECK(lil__agent_price_usd(over, "no-such-model", 1000000, 0, &usd));
    T_CHECK(fabs(usd - 2) < 1e-12);
    T_CHECK(lil__agent_price_usd(blank, "gpt-4o", 1000000, 1000000, &usd));
    T_CHECK(fabs(usd - 12.5) < 1e-12); /* blank and negative: the table's */
    T_CHECK(lil__agent_price_usd(twin, "gpt-4o-mini", 1000000, 0, &usd));
    T_CHECK(fabs(usd - 1) < 1e-12);
    T_CHECK(lil__agent_price_usd(none, " OpenRouter/Claude-Sonnet-4-6-20250930 ", 0,
                                 1000000, &usd));
    T_CHECK(fabs(usd - 15) < 1e-12);
}

T_TEST(model_normalization)
{
    static const char *const vectors[][2] = {
        {"openai/gpt-4o-mini", "gpt-4o-mini"},
        {"gpt-4o-2024-08-06", "gpt-4o"},
        {"claude-sonnet-4-6-20250930", "claude-sonnet-4-6"},
        {"  GPT-4.1-Mini  ", "gpt-4.1-mini"},
        {"a/b/o3-mini", "o3-mini"},
        {"gpt-4o-2024-08", "gpt-4o-2024-08"},
        {"", ""},
    };
    char out[128];

    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        lil__agent_model_norm(vectors[i][0], out, sizeof(out));
        T_EQ_STR(out, vectors[i][1]);
    }
}

T_TEST(token_limit)
{
    static const char *const none[] = {NULL};
    static const char *const spaced[] = {"LIL_AGENT_MAX_TOKENS=  77 ", NULL};
    static const char *const twin[] = {
        "LIL_AGENT_MAX_TOKENS=", "LOOPY_AGENT_MAX_TOKENS=50", NULL};
    static const char *const bad[][2] = {
        {"LIL_AGENT_MAX_TOKENS=12x", NULL},
        {"LOOPY_AGENT_MAX_TOKENS=0", NULL},
        {"LIL_AGENT_MAX_TOKENS=-5", NULL},
        {"LIL_AGENT_MAX_TOKENS=1e3", NULL},
        {"LIL_AGENT_MAX_TOKENS=9007199254740992", NULL}};
    char var[40];
    int64_t n = 0;

    T_OK(lil__agent_max_tokens(none, &err, &n, var, sizeof(var)));
    T_EQ_I64(n, 2000);
    T_EQ_STR(var, "LIL_AGENT_MAX_TOKENS");
    T_OK(lil__agent_max_tokens(spaced, &err, &n, NULL, 0));
    T_EQ_I64(n, 77);
    T_OK(lil__agent_max_tokens(twin, &err, &n, var, sizeof(var)));
    T_EQ_I64(n, 50);
    T_EQ_STR(var, "LOOPY_AGENT_MAX_TOKENS");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        T_EQ_I64(lil__agent_max_tokens(bad[i], &err, &n, NULL, 0), LIL_E_INVAL);
        T_CHECK(strstr(err.msg, "must be a positive integer; got '") != NULL);
        T_EQ_I64(n, 2000);
    }
    T_EQ_STR(err.msg, "LIL_AGENT_MAX_TOKENS must be a positive integer; got "
                      "'9007199254740992'");
}

T_TEST(worst_case_of_a_call)
{
    static const char *const llm[] = {"LIL_LLM_BASE_URL=http://127.0.0.1:1/v1",
                                      "LIL_LLM_MODEL=gpt-4o-mini",
                                      "LIL_AGENT_MAX_TOKENS=100", NULL};
    static const char *const priced[] = {"LIL_LLM_PRICE_IN=1", "LIL_LLM_PRICE_OUT=2",
                                         NULL};
    static const char *const none[] = {NULL};
    struct lil_agent_call c;
    struct lil_agent_worst w;

    memset(&c, 0, sizeof(c));
    c.harness = "llm";
    c.prompt = "round 0";
    c.envp = llm;
    T_OK(lil__agent_worst_case(&c, &err, &w));
    T_EQ_I64(w.limit, 100);
    T_EQ_I64(w.prompt, 16 + 149 + 7); /* framing, the system message, the prompt */
    T_EQ_I64(w.tokens, 272);
    T_CHECK(w.priced);
    T_EQ_STR(w.model, "gpt-4o-mini");
    T_CHECK(fabs(w.usd - (172 * 0.15 + 100 * 0.60) / 1e6) < 1e-15);
    T_CHECK(w.price_in == 0.15 && w.price_out == 0.60);
    T_EQ_STR(w.limit_var, "LIL_AGENT_MAX_TOKENS");

    c.harness = "codex"; /* a CLI: its prompt; no model before it answers */
    c.envp = none;
    T_OK(lil__agent_worst_case(&c, &err, &w));
    T_EQ_I64(w.prompt, 7);
    T_EQ_I64(w.tokens, 2007);
    T_CHECK(!w.priced);
    T_EQ_STR(w.model, "");
    c.envp = priced;
    T_OK(lil__agent_worst_case(&c, &err, &w));
    T_CHECK(w.priced);
    T_CHECK(fabs(w.usd - (7 * 1.0 + 2000 * 2.0) / 1e6) < 1e-15);

    c.harness = "internal";
    T_OK(lil__agent_worst_case(&c, &err, &w));
    T_EQ_I64(w.tokens, 0);
    T_CHECK(w.priced && w.usd == 0);

    c.harness = "llm"; /* not configured */
    c.envp = (const char *const[]){"OPENAI_API_KEY=", NULL};
    T_EQ_I64(lil__agent_worst_case(&c, &err, &w), LIL_E_INVAL);
    c.harness = "nope";
    T_EQ_I64(lil__agent_worst_case(&c, &err, &w), LIL_E_INVAL);
}

T_MAIN()
