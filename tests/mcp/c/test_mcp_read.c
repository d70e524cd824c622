/*
 * test_mcp_read.c -- the read tools of `lil mcp` over stdio, case by case.
 *
 * A store gets program runs p0..p4 (through lil.h), a loop run pz paused
 * at a breakpoint (`lil run`) and a damaged journal (junk); a spec
 * root gets a valid spec and a broken one, and a spec waits outside it.
 * Then one `lil mcp` process reads initialize and every case's tools/call
 * from stdin, and each answer is checked against what its case expects: a
 * JSON document that the answer must contain -- every key of an object
 * with a matching value, arrays of the same length element by element, and
 * a string "~text" standing for any string that holds text.
 */
#include <lil/lil.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "t.h"

#define OUT_CAP (4 * 1024 * 1024)

struct tcase {
    const char *call;   /* the params of tools/call */
    const char *expect; /* what the answer must contain */
};

static const struct tcase cases[] = {
    /* list_runs: paging, filters, a run that cannot be read, bad arguments */
    {"{\"name\": \"list_runs\", \"arguments\": {\"prefix\": \"p\", \"limit\": 2}}",
     "{\"result\": {\"isError\": false, \"structuredContent\": {\"runs\": [{\"run\": "
     "\"p0\", \"kind\": \"program\", \"status\": \"completed\", \"ended\": true, "
     "\"steps\": {\"done\": 3, \"failed\": 0}, \"holder\": null}, {\"run\": \"p1\"}], "
     "\"next_cursor\": \"p1\", \"total\": 6}}}"},
    {"{\"name\": \"list_runs\", \"arguments\": {\"prefix\": \"p\", \"limit\": 2, "
     "\"cursor\": \"p3\"}}",
     "{\"result\": {\"structuredContent\": {\"runs\": [{\"run\": \"p4\"}, {\"run\": "
     "\"pz\", \"kind\": \"loop\", \"status\": \"paused\", \"paused\": {\"id\": "
     "\"pause.1\", \"step\": \"ok\"}}], \"next_cursor\": null, \"total\": 6}}}"},
    {"{\"name\": \"list_runs\", \"arguments\": {\"status\": \"paused, waiting\"}}",
     "{\"result\": {\"structuredContent\": {\"runs\": [{\"run\": \"pz\"}], "
     "\"next_cursor\": null, \"total\": null}}}"},
    {"{\"name\": \"list_runs\", \"arguments\": {\"kind\": \"program\", \"limit\": 3}}",
     "{\"result\": {\"structuredContent\": {\"runs\": [{\"run\": \"p0\"}, {\"run\": "
     "\"p1\"}, {\"run\": \"p2\"}], \"next_cursor\": \"p2\"}}}"},
    {"{\"name\": \"list_runs\", \"arguments\": {\"prefix\": \"junk\"}}",
     "{\"result\": {\"structuredContent\": {\"runs\": [{\"run\": \"junk\", "
     "\"status\": \"damaged\", \"kind\": null, \"error\": {\"code\": "
     "\"LIL_E_CORRUPT\", \"message\": \"~\"}}], \"total\": 1}}}"},
    {"{\"name\": \"list_runs\", \"arguments\": {\"limit\": 0}}",
     "{\"error\": {\"code\": -32602, \"message\": \"~\\\"limit\\\" must be 1 to "
     "1000\"}}"},
    {"{\"name\": \"list_runs\", \"arguments\": {\"status\": \"paused,sleepy\"}}",
     "{\"error\": {\"code\": -32602, \"message\": \"~not 'sleepy'\"}}"},
    /* inspect_run: the facts, the pause with its id and digest, hints */
    {"{\"name\": \"inspect_run\", \"arguments\": {\"run_id\": \"pz\"}}",
     "{\"result\": {\"isError\": false, \"structuredContent\": {\"run\": \"pz\", "
     "\"kind\": \"loop\", \"status\": \"paused\", \"paused\": {\"id\": \"pause.1\", "
     "\"digest\": \"~\"}, \"budget\": {}, \"meters\": {}, \"stop_request\": null, "
     "\"hints\": [{\"tool\": \"approve_run\", \"arguments\": {\"run_id\": \"pz\", "
     "\"pause_id\": \"pause.1\"}, \"text\": \"~go on?\"}]}}}"},
    {"{\"name\": \"inspect_run\", \"arguments\": {\"run_id\": \"p0\"}}",
     "{\"result\": {\"structuredContent\": {\"run\": \"p0\", \"status\": "
     "\"completed\", \"result\": \"done\", \"hints\": []}}}"},
    {"{\"name\": \"inspect_run\", \"arguments\": {\"run_id\": \"nope\"}}",
     "{\"result\": {\"isError\": true, \"_meta\": {\"lil/code\": \"LIL_E_NOTFOUND\"}, "
     "\"content\": [{\"type\": \"text\", \"text\": \"~no run 'nope' in store\"}]}}"},
    {"{\"name\": \"inspect_run\", \"arguments\": {\"run_id\": \"a/b\"}}",
     "{\"error\": {\"code\": -32602, \"message\": \"~\\\"run_id\\\" is not a run "
     "id\"}}"},
    {"{\"name\": \"inspect_run\", \"arguments\": {}}",
     "{\"error\": {\"code\": -32602, \"message\": \"~\\\"run_id\\\" is required\"}}"},
    /* run_events: a page, its continuation, a type filter */
    {"{\"name\": \"run_events\", \"arguments\": {\"run_id\": \"p0\", \"limit\": 2}}",
     "{\"result\": {\"structuredContent\": {\"run\": \"p0\", \"kind\": \"program\", "
     "\"events\": [{\"seq\": 1, \"type\": \"run_start\"}, {\"seq\": 2, \"type\": "
     "\"process_open\"}], \"next\": 3, \"more\": true}}}"},
    {"{\"name\": \"run_events\", \"arguments\": {\"run_id\": \"p0\", \"from_seq\": 3, "
     "\"types\": \"step\", \"limit\": 1}}",
     "{\"result\": {\"structuredContent\": {\"events\": [{\"seq\": 3, \"type\": "
     "\"step\", \"step\": \"s1\", \"outcome\": \"ok\"}], \"next\": 4}}}"},
    {"{\"name\": \"run_events\", \"arguments\": {\"run_id\": \"p0\", \"types\": "
     "\"run_end\"}}",
     "{\"result\": {\"structuredContent\": {\"events\": [{\"type\": \"run_end\", "
     "\"status\": \"completed\"}], \"more\": false}}}"},
    {"{\"name\": \"run_events\", \"arguments\": {\"run_id\": \"p0\", \"limit\": "
     "10001}}",
     "{\"error\": {\"code\": -32602, \"message\": \"~\\\"limit\\\" must be 1 to "
     "10000\"}}"},
    {"{\"name\": \"run_events\", \"arguments\": {\"run_id\": \"p0\", \"from_seq\": -1}}",
     "{\"error\": {\"code\": -32602}}"},
    {"{\"name\": \"run_events\", \"arguments\": {\"run_id\": \"nope\"}}",
     "{\"result\": {\"isError\": true, \"_meta\": {\"lil/code\": "
     "\"LIL_E_NOTFOUND\"}}}"},
    /* validate_spec: valid, broken (file:line:column), outside the root */
    {"{\"name\": \"validate_spec\", \"arguments\": {\"spec\": \"pause.yaml\"}}",
     "{\"result\": {\"isError\": false, \"structuredContent\": {\"valid\": true, "
     "\"spec\": \"pz\", \"diagnostics\": []}}}"},
    {"{\"name\": \"validate_spec\", \"arguments\": {\"spec\": \"bad.yaml\"}}",
     "{\"result\": {\"isError\": true, \"structuredContent\": {\"valid\": false, "
     "\"spec\": \"bad\"}, \"content\": [{\"text\": \"~bad.yaml:4:5: error: step 'x': "
     "missing required key 'kind' [schema]\"}]}}"},
    {"{\"name\": \"validate_spec\", \"arguments\": {\"spec\": \"../outside.yaml\"}}",
     "{\"result\": {\"isError\": true, \"content\": [{\"text\": \"~is outside "
     "--spec-root\"}]}}"},
    {"{\"name\": \"validate_spec\", \"arguments\": {\"spec\": \"nope.yaml\"}}",
     "{\"result\": {\"isError\": true, \"_meta\": {\"lil/code\": "
     "\"LIL_E_NOTFOUND\"}}}"},
    /* explain_spec and doctor */
    {"{\"name\": \"explain_spec\", \"arguments\": {\"spec\": \"pause.yaml\"}}",
     "{\"result\": {\"isError\": false, \"structuredContent\": {\"id\": \"pz\", "
     "\"pattern\": \"react\"}}}"},
    {"{\"name\": \"explain_spec\", \"arguments\": {\"spec\": \"bad.yaml\"}}",
     "{\"result\": {\"isError\": true, \"_meta\": {\"lil/code\": \"LIL_E_SPEC\"}, "
     "\"content\": [{\"text\": \"~bad.yaml:4:5: error\"}]}}"},
    {"{\"name\": \"doctor\", \"arguments\": {\"spec\": \"pause.yaml\"}}",
     "{\"result\": {\"isError\": false, \"structuredContent\": {\"loop\": \"pz\", "
     "\"ok\": true, \"version\": \"~\"}}}"},
    {"{\"name\": \"doctor\", \"arguments\": {\"spec\": \"bad.yaml\"}}",
     "{\"result\": {\"isError\": true, \"content\": [{\"text\": \"~is not a valid "
     "loop spec\"}]}}"},
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* ---- the store and the specs ------------------------------------------------- */

static int step_fn(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "r", 1) != LIL_OK;
}

static void make_program_run(lil_store *st, const char *id)
{
    lil_run *run = NULL;

    T_CHECK(lil_run_open(st, id, NULL, &run) == LIL_OK);
    for (int i = 1; run && i <= 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "s%d", i);
        T_CHECK(lil_step(run, name, step_fn, NULL, NULL) == LIL_OK);
    }
    T_CHECK(run && lil_run_complete(run, "done", 4) == LIL_OK);
    lil_run_close(run);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");

    T_CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Flip a byte in the middle of the journal at path: a record before the
 * tail no longer matches its checksum. */
static void damage(const char *path)
{
    FILE *f = fopen(path, "r+e");
    long mid;
    int c;

    T_REQUIRE(f != NULL);
    fseek(f, 0, SEEK_END);
    mid = ftell(f) / 2;
    fseek(f, mid, SEEK_SET);
    c = fgetc(f);
    fseek(f, mid, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

static const char pause_spec[] =
    "loopspec: \"0.1\"\nid: pz\npattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: a, kind: shell, cmd: \"true\" }\n"
    "  - { id: ok, kind: breakpoint, ask: \"go on?\" }\n"
    "  - { id: b, kind: shell, cmd: \"true\", on_done: { incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
    "caps: { max_iterations: 5, budget: { wallclock: 1h } }\n";

static const char bad_spec[] = "version: \"0.1\"\nid: bad\nbody:\n"
                               "  - id: x\n    shell: echo\n";

static void setup(void)
{
    lil_store *st = NULL;
    char cmd[8192], out[4096];
    const char *ids[] = {"p0", "p1", "p2", "p3", "p4", "junk"};

    T_CHECK(lil_store_open(NULL, t_path("store"), &st) == LIL_OK);
    for (size_t i = 0; st && i < sizeof(ids) / sizeof(ids[0]); i++)
        make_program_run(st, ids[i]);
    lil_store_close(st);
    damage(t_path("store/junk.lil"));
    T_CHECK(system(NULL) != 0);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", t_path("specs"));
    T_CHECK(t_run(cmd, out, sizeof(out), 1) == 0);
    write_file(t_path("specs/pause.yaml"), pause_spec);
    write_file(t_path("specs/bad.yaml"), bad_spec);
    write_file(t_path("outside.yaml"), pause_spec);
    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' run '%s' 2>&1", t_lil_bin(),
             t_path("store"), t_path("specs/pause.yaml"));
    T_EQ_I64(t_run(cmd, out, sizeof(out), 1), 3); /* paused */
}

/* ---- the server ---------------------------------------------------------------- */

/* Every case as a line of requests after initialize; `lil mcp` reads them
 * and its answers, one a line, land in out. */
static bool serve(char *out, size_t cap)
{
    char cmd[8192];
    FILE *in = fopen(t_path("requests.jsonl"), "we");

    if (!in)
        return false;
    fputs("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\": "
          "{\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, "
          "\"clientInfo\": {\"name\": \"test\", \"version\": \"1\"}}}\n"
          "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}\n"
          "{\"jsonrpc\": \"2.0\", \"id\": 0, \"method\": \"tools/list\"}\n",
          in);
    for (size_t i = 0; i < N_CASES; i++)
        fprintf(in,
                "{\"jsonrpc\": \"2.0\", \"id\": %zu, \"method\": \"tools/call\", "
                "\"params\": %s}\n",
                i + 2, cases[i].call);
    fclose(in);
    snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' --dir store mcp --spec-root specs < %s",
             t_tmpdir(), t_lil_bin(), t_path("requests.jsonl"));
    return t_run(cmd, out, cap, 0) == 0;
}

/* The answers of out by id (an object: "id" -> message). */
static json_t *answers_by_id(const char *out)
{
    json_t *by = json_object();

    for (const char *p = out; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        json_t *m = json_loadb(p, len, 0, NULL);
        char key[32];

        T_CHECK(m != NULL);
        if (json_is_integer(json_object_get(m, "id"))) {
            snprintf(key, sizeof(key), "%lld",
                     (long long)json_integer_value(json_object_get(m, "id")));
            json_object_set(by, key, m);
        }
        json_decref(m);
        p = nl ? nl + 1 : p + len;
    }
    return by;
}

/* ---- matching ------------------------------------------------------------------ */

static bool contains(json_t *want, json_t *got, const char *at);

static bool contains_object(json_t *want, json_t *got, const char *at)
{
    const char *key;
    json_t *w;
    char sub[512];

    if (!json_is_object(got))
        return false;
    json_object_foreach(want, key, w)
    {
        snprintf(sub, sizeof(sub), "%s.%s", at, key);
        if (!contains(w, json_object_get(got, key), sub))
            return false;
    }
    return true;
}

static bool contains_array(json_t *want, json_t *got, const char *at)
{
    char sub[512];

    if (!json_is_array(got) || json_array_size(got) != json_array_size(want))
        return false;
    for (size_t i = 0; i < json_array_size(want); i++) {
        snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
        if (!contains(json_array_get(want, i), json_array_get(got, i), sub))
            return false;
    }
    return true;
}

/* Does got hold want (see the top of the file)?  Says where it does not. */
static bool contains(json_t *want, json_t *got, const char *at)
{
    const char *w = json_string_value(want);
    bool ok;

    if (w && w[0] == '~')
        ok = json_is_string(got) && strstr(json_string_value(got), w + 1);
    else if (json_is_object(want))
        return contains_object(want, got, at);
    else if (json_is_array(want))
        ok = contains_array(want, got, at);
    else
        ok = got && json_equal(want, got);
    if (!ok) {
        fprintf(stderr, "  at %s: want ", at);
        json_dumpf(want, stderr, JSON_ENCODE_ANY);
        fprintf(stderr, ", got ");
        if (got)
            json_dumpf(got, stderr, JSON_ENCODE_ANY);
        fprintf(stderr, "%s\n", got ? "" : "(nothing)");
    }
    return ok;
}

/* ---- the tests ----------------------------------------------------------------- */

/* The read tools as tools/list offers them: annotations, schemas. */
static void check_list(json_t *answer)
{
    static const char *const names[] = {"list_runs",     "inspect_run",  "run_events",
                                        "validate_spec", "explain_spec", "doctor"};
    json_t *tools = json_object_get(json_object_get(answer, "result"), "tools"), *t;
    size_t found = 0, i;

    json_array_foreach(tools, i, t)
    {
        const char *name = json_string_value(json_object_get(t, "name"));
        json_t *ann = json_object_get(t, "annotations");
        json_t *in = json_object_get(t, "inputSchema");
        for (size_t k = 0; name && k < sizeof(names) / sizeof(names[0]); k++) {
            if (strcmp(name, names[k]) != 0)
                continue;
            found++;
            T_CHECK(json_is_true(json_object_get(ann, "readOnlyHint")));
            T_CHECK(json_is_true(json_object_get(ann, "idempotentHint")));
            T_CHECK(json_is_false(json_object_get(ann, "destructiveHint")));
            T_CHECK(json_is_false(json_object_get(in, "additionalProperties")));
            T_CHECK(json_is_object(json_object_get(t, "outputSchema")));
        }
    }
    T_EQ_I64(found, 6);
}

T_TEST(read_tools_over_stdio)
{
    static char out[OUT_CAP];
    json_t *by;

    setup();
    T_REQUIRE(serve(out, sizeof(out)));
    by = answers_by_id(out);
    check_list(json_object_get(by, "0"));
    for (size_t i = 0; i < N_CASES; i++) {
        json_t *want = json_loads(cases[i].expect, 0, NULL);
        char key[32], at[64];

        T_CHECK(want != NULL);
        snprintf(key, sizeof(key), "%zu", i + 2);
        snprintf(at, sizeof(at), "case %zu", i + 1);
        if (!contains(want, json_object_get(by, key), at)) {
            fprintf(stderr, "case %zu failed: %s\n", i + 1, cases[i].call);
            t_fail();
        }
        json_decref(want);
    }
    json_decref(by);
}

T_MAIN()
