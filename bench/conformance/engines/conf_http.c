/*
 * conf_http.c -- the workload's two requests (conf.h), made with libcurl
 * directly and read with jansson: a chat completion to the fake LLM server
 * and a POST to the ledger.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "conf.h"

struct body {
    char *data;
    size_t len;
};

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    struct body *b = ud;
    size_t add = size * n;
    char *d = realloc(b->data, b->len + add + 1);

    if (!d)
        return 0;
    memcpy(d + b->len, p, add);
    b->len += add;
    d[b->len] = '\0';
    b->data = d;
    return add;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "conformance: %s: %s\n", what, detail);
    _exit(1);
}

/* POST json to url with an optional header line; the parsed answer. */
static json_t *post(const char *url, const char *json, const char *header)
{
    struct body b = {NULL, 0};
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    CURL *c = curl_easy_init();
    json_t *ans;
    CURLcode cc;

    if (!c || !h)
        die("curl", "out of memory");
    if (header)
        h = curl_slist_append(h, header);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    cc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    if (cc != CURLE_OK)
        die(url, curl_easy_strerror(cc));
    ans = json_loads(b.data ? b.data : "", 0, NULL);
    free(b.data);
    if (!ans)
        die(url, "the answer is not JSON");
    return ans;
}

static const char *env_or_null(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int conf_env_read(struct conf_env *e)
{
    const char *steps = env_or_null("CONF_STEPS");

    e->llm_url = env_or_null("CONF_LLM_URL");
    e->ledger_url = env_or_null("CONF_LEDGER_URL");
    e->run = env_or_null("CONF_RUN");
    e->dir = env_or_null("CONF_DIR");
    e->steps = steps ? atoi(steps) : 0;
    if (!e->llm_url || !e->ledger_url || !e->run || !e->dir || e->steps <= 0) {
        fprintf(stderr, "conformance: set CONF_LLM_URL, CONF_LEDGER_URL, CONF_RUN, "
                        "CONF_DIR and CONF_STEPS\n");
        return -1;
    }
    return 0;
}

void conf_llm(const struct conf_env *e, int i, const char *prev, char *tag)
{
    char url[1024], prompt[512];
    json_t *req, *ans, *inner;
    const char *content = NULL, *t = NULL;
    char *text;

    snprintf(url, sizeof(url), "%s/chat/completions", e->llm_url);
    snprintf(prompt, sizeof(prompt), "run %s step %d after %s", e->run, i, prev);
    req = json_pack("{s:s, s:i, s:[{s:s, s:s}]}", "model", "conformance", "max_tokens",
                    200, "messages", "role", "user", "content", prompt);
    text = json_dumps(req, JSON_COMPACT);
    ans = post(url, text, NULL);
    free(text);
    json_decref(req);
    json_unpack(ans, "{s:[{s:{s:s}}]}", "choices", "message", "content", &content);
    inner = content ? json_loads(content, 0, NULL) : NULL;
    if (inner)
        json_unpack(inner, "{s:s}", "tag", &t);
    if (!t)
        die(url, "no tag in the answer");
    snprintf(tag, CONF_TAG_MAX, "%s", t);
    json_decref(inner);
    json_decref(ans);
}

void conf_effect(const struct conf_env *e, int i, const char *prev, const char *key,
                 char *receipt)
{
    char url[1024], header[256];
    json_t *req = json_pack("{s:s, s:i, s:s}", "run", e->run, "step", i, "input", prev);
    char *text = json_dumps(req, JSON_COMPACT);
    const char *r = NULL;
    json_t *ans;

    snprintf(url, sizeof(url), "%s/effects", e->ledger_url);
    snprintf(header, sizeof(header), "Idempotency-Key: %s", key ? key : "");
    ans = post(url, text, key ? header : NULL);
    free(text);
    json_decref(req);
    if (json_unpack(ans, "{s:s}", "receipt", &r) != 0)
        die(url, "no receipt in the answer");
    snprintf(receipt, CONF_TAG_MAX, "%s", r);
    json_decref(ans);
}

void conf_receipt_json(const char *receipt, char *out, size_t cap)
{
    snprintf(out, cap, "{\"applied\":true,\"receipt\":\"%s\"}", receipt);
}

void conf_print_result(char (*tags)[CONF_TAG_MAX], size_t n)
{
    json_t *arr = json_array();
    json_t *obj;
    char *text;

    for (size_t k = 0; k < n; k++)
        json_array_append_new(arr, json_string(tags[k]));
    obj = json_pack("{s:o}", "tags", arr);
    text = json_dumps(obj, JSON_COMPACT);
    printf("RESULT %s\n", text ? text : "{}");
    fflush(stdout);
    free(text);
    json_decref(obj);
}
