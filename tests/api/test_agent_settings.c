/*
 * test_agent_settings.c -- lil_agent_settings through lil.h: NULL out is
 * LIL_E_INVAL with a message; the document is one JSON object with every
 * harness (the same answer as lil_agent_harness_check), the llm server as
 * configured (a keyless one, a keyed one whose key is in no byte of the
 * document), and every limit with where it came from (a default, a LIL_
 * variable, a LOOPY_ one, one that does not parse).  `lil doctor` prints
 * the same document (tests/cli/test_cli_doctor.c).
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "t.h"

#define KEY "sk-settings-key-13579"

static json_t *settings(void)
{
    lil_bytes b = {NULL, 0};
    json_t *doc;

    T_EQ_I64(lil_agent_settings(&b), LIL_OK);
    T_CHECK(b.data && strlen(b.data) == b.len);
    T_CHECK(!b.data || strstr(b.data, KEY) == NULL);
    doc = b.data ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    lil_free(b.data);
    T_CHECK(json_is_object(doc));
    return doc;
}

static void clear(void)
{
    static const char *const names[] = {
        "LIL_LLM_API_KEY",        "LOOPY_LLM_API_KEY",      "LIL_LLM_BASE_URL",
        "LOOPY_LLM_BASE_URL",     "LIL_LLM_MODEL",          "LOOPY_LLM_MODEL",
        "OPENAI_API_KEY",         "ANTHROPIC_API_KEY",      "GEMINI_API_KEY",
        "GROQ_API_KEY",           "OPENROUTER_API_KEY",     "AI_GATEWAY_API_KEY",
        "LIL_AGENT_TIMEOUT_MS",   "LOOPY_AGENT_TIMEOUT_MS", "LIL_AGENT_MAX_BUFFER",
        "LOOPY_AGENT_MAX_BUFFER", "LIL_LLM_PRICE_IN",       "LOOPY_LLM_PRICE_IN",
        "LIL_LLM_PRICE_OUT",      "LOOPY_LLM_PRICE_OUT"};

    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
        unsetenv(names[i]);
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "(none)";
}

T_TEST(misuse)
{
    T_EQ_I64(lil_agent_settings(NULL), LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "out is NULL");
}

T_TEST(harnesses_as_checked)
{
    json_t *doc, *h;
    size_t i;

    clear();
    doc = settings();
    T_EQ_I64((int64_t)json_array_size(json_object_get(doc, "harnesses")), 9);
    json_array_foreach(json_object_get(doc, "harnesses"), i, h)
    {
        lil_status rc = lil_agent_harness_check(str(h, "name"));

        T_EQ_I64(json_is_true(json_object_get(h, "ready")), rc == LIL_OK);
        if (rc != LIL_OK)
            T_EQ_STR(str(h, "message"), lil_errmsg());
        else
            T_CHECK(json_is_null(json_object_get(h, "message")));
    }
    T_CHECK(json_is_false(json_object_get(json_object_get(doc, "llm"), "configured")));
    T_CONTAINS(str(json_object_get(doc, "llm"), "message"), "LIL_LLM_API_KEY");
    json_decref(doc);
}

T_TEST(llm_servers)
{
    json_t *doc, *llm;

    clear();
    setenv("LOOPY_LLM_BASE_URL", "http://127.0.0.1:9/v1/", 1);
    doc = settings();
    llm = json_object_get(doc, "llm");
    T_EQ_STR(str(llm, "provider"), "custom");
    T_EQ_STR(str(llm, "base_url"), "http://127.0.0.1:9/v1");
    T_EQ_STR(str(llm, "base_url_from"), "LOOPY_LLM_BASE_URL");
    T_CHECK(json_is_false(json_object_get(llm, "key_set")));
    T_CHECK(json_is_null(json_object_get(llm, "key_from")));
    json_decref(doc);
    clear();
    setenv("GROQ_API_KEY", KEY, 1);
    setenv("LIL_LLM_PRICE_OUT", "0.5", 1);
    doc = settings(); /* the key in no byte of it */
    llm = json_object_get(doc, "llm");
    T_EQ_STR(str(llm, "provider"), "groq");
    T_EQ_STR(str(llm, "key_from"), "GROQ_API_KEY");
    T_EQ_STR(str(llm, "model"), "llama-3.3-70b-versatile");
    T_EQ_STR(str(llm, "model_from"), "provider");
    T_CHECK(json_is_true(json_object_get(llm, "priced")));
    T_CHECK(json_real_value(json_object_get(llm, "price_in")) == 0.59);
    T_EQ_STR(str(llm, "price_in_from"), "table");
    T_CHECK(json_real_value(json_object_get(llm, "price_out")) == 0.5);
    T_EQ_STR(str(llm, "price_out_from"), "LIL_LLM_PRICE_OUT");
    json_decref(doc);
    clear();
}

T_TEST(limits_and_their_sources)
{
    json_t *doc, *lim;

    clear();
    setenv("LOOPY_AGENT_TIMEOUT_MS", "5000", 1);
    setenv("LIL_AGENT_MAX_BUFFER", "x1", 1);
    doc = settings();
    lim = json_object_get(doc, "limits");
    T_EQ_I64(json_integer_value(
                 json_object_get(json_object_get(lim, "cli_timeout_ms"), "value")),
             5000);
    T_EQ_STR(str(json_object_get(lim, "llm_timeout_ms"), "from"),
             "LOOPY_AGENT_TIMEOUT_MS");
    T_EQ_I64(json_integer_value(
                 json_object_get(json_object_get(lim, "llm_timeout_ms"), "default")),
             120000);
    T_CHECK(json_is_null(json_object_get(json_object_get(lim, "max_buffer"), "value")));
    T_EQ_STR(str(json_object_get(lim, "max_buffer"), "error"),
             "LIL_AGENT_MAX_BUFFER must be a positive integer; got 'x1'");
    T_EQ_STR(str(json_object_get(lim, "max_tokens"), "from"), "default");
    json_decref(doc);
    clear();
}

T_MAIN()
