/*
 * agent_settings.c -- the document behind lil_agent_settings (lil.h): what the agent
 * harnesses would use in this process's environment, as one JSON document for `lil
 * doctor` and hosts.
 *
 *   {"harnesses": [{"name", "ready", "message"}],   one per harness (agent.h)
 *    "llm": lil__agent_llm_describe's object,       server, model, prices
 *    "limits": {"cli_timeout_ms", "llm_timeout_ms", "max_buffer",
 *               "max_tokens"}}
 *
 * Each limit is {"value", "default", "from", "error"?}: "from" is
 * "default" or the variable read (the LIL_ name wins over the LOOPY_ one,
 * blank means the default: lil__agent_limit), and a value that does not
 * parse has "value" null and the message a call would fail with in
 * "error".  One variable, AGENT_TIMEOUT_MS, sets both timeouts; their
 * defaults differ.
 *
 * Secrets: the document holds no key -- "llm" says whether one is set and
 * which variable holds it; its base URL is redacted.  A harness's message
 * is the one lil_agent_harness_check gives (what to set), which names
 * variables and programs, never their secret values.
 *
 * Memory: a private env (the process's allocator); the text is exported
 * for lil_free.
 */
#include <stdio.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/agent_info.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/env.h"
#include "os/os.h"

#define BUF_UNCAPPED (SIZE_MAX / 4)

/* Inside a json scope. */
static json_t *harnesses_json(const struct lil_env *env)
{
    json_t *a = json_array();
    const char *name;

    for (size_t i = 0; a && (name = lil__agent_name(i)) != NULL; i++) {
        struct lil_agent_call call;
        struct lil_err err;
        lil_status rc;

        memset(&call, 0, sizeof(call));
        call.harness = name;
        call.prompt = "";
        lil__clearerr(&err);
        rc = lil__agent_ready(env, &err, &call);
        json_array_append_new(a, json_pack("{s:s, s:b, s:s?}", "name", name, "ready",
                                           rc == LIL_OK, "message",
                                           rc == LIL_OK ? NULL : err.msg));
    }
    return a;
}

static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (!strchr(" \t\n\r\v\f", *s))
            return false;
    return true;
}

/* One limit (inside a json scope). */
static json_t *limit_json(const char *x, int64_t def)
{
    char var[48];
    struct lil_err err;
    int64_t value = def;
    lil_status rc;
    json_t *o;

    lil__clearerr(&err);
    rc = lil__agent_limit(&err, NULL, x, def, &value, var, sizeof(var));
    o = json_pack("{s:I, s:s}", "default", (json_int_t)def, "from",
                  blank(lil__agent_setting(NULL, x, NULL)) ? "default" : var);
    json_object_set_new(o, "value", rc == LIL_OK ? json_integer(value) : json_null());
    if (rc != LIL_OK)
        json_object_set_new(o, "error", json_string(err.msg));
    return o;
}

/* AGENT_MAX_TOKENS as the harnesses read it: the worst case of a call
 * that budgets reserve (inside a json scope). */
static json_t *max_tokens_json(void)
{
    char var[48];
    struct lil_err err;
    int64_t value = LIL_AGENT_MAX_TOKENS;
    lil_status rc;
    json_t *o;

    lil__clearerr(&err);
    rc = lil__agent_max_tokens(NULL, &err, &value, var, sizeof(var));
    o = json_pack("{s:I, s:s}", "default", (json_int_t)LIL_AGENT_MAX_TOKENS, "from",
                  blank(lil__agent_setting(NULL, "AGENT_MAX_TOKENS", NULL)) ? "default"
                                                                            : var);
    json_object_set_new(o, "value", rc == LIL_OK ? json_integer(value) : json_null());
    if (rc != LIL_OK)
        json_object_set_new(o, "error", json_string(err.msg));
    return o;
}

/* Inside a json scope. */
static json_t *limits_json(void)
{
    json_t *o = json_object();

    json_object_set_new(o, "cli_timeout_ms",
                        limit_json("AGENT_TIMEOUT_MS", LIL_AGENT_TIMEOUT_MS));
    json_object_set_new(o, "llm_timeout_ms",
                        limit_json("AGENT_TIMEOUT_MS", LIL_AGENT_LLM_TIMEOUT_MS));
    json_object_set_new(o, "max_buffer",
                        limit_json("AGENT_MAX_BUFFER", LIL_AGENT_MAX_BUFFER));
    json_object_set_new(o, "max_tokens", max_tokens_json());
    return o;
}

/* The document (a new object in *out). */
static lil_status settings_doc(const struct lil_env *env, struct lil_err *err,
                               json_t **out)
{
    struct lil_json_scope sc;
    json_t *llm = NULL, *doc;
    lil_status rc = lil__agent_llm_describe(env, err, NULL, &llm);

    lil__json_begin(&sc, env);
    doc = json_object();
    json_object_set_new(doc, "harnesses", harnesses_json(env));
    json_object_set_new(doc, "llm", llm);
    json_object_set_new(doc, "limits", limits_json());
    if (lil__json_end(&sc) != LIL_OK || rc != LIL_OK || !doc) {
        lil__json_begin(&sc, env);
        json_decref(doc);
        (void)lil__json_end(&sc);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    *out = doc;
    return LIL_OK;
}

lil_status lil__agent_settings(struct lil_err *err, lil_bytes *out)
{
    struct lil_env env;
    struct lil_buf text;
    struct lil_json_scope sc;
    json_t *doc = NULL;
    lil_status rc;

    lil__clearerr(err);
    lil__os_env_init(&env);
    lil__buf_init(&text, &env, BUF_UNCAPPED);
    rc = settings_doc(&env, err, &doc);
    if (rc == LIL_OK)
        rc = lil__json_dump(&env, err, doc, JSON_COMPACT, &text);
    if (rc == LIL_OK && lil__buf_export(&text, out) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    lil__json_begin(&sc, &env);
    json_decref(doc);
    (void)lil__json_end(&sc);
    lil__buf_free(&text);
    return rc;
}
