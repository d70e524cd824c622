/*
 * test_json_host.c -- liblil leaves jansson's allocator to the host.
 *
 * jansson has one pair of allocation functions per process.  A host that
 * sets its own (json_set_alloc_funcs) before loading liblil, and again
 * after using it, finds them unchanged (json_get_alloc_funcs), and the
 * library still works: it builds and parses JSON with the host's
 * functions of the moment, and gives back every block it took.
 *
 * liblil.so is loaded with dlopen once the host's functions are in place,
 * so "before loading" is real.  This program has its own main: the test
 * harness (t.c) installs lil's test hooks, which is what it must not do.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <lil/lil.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static int failures, checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

/* Two host allocators, counting their blocks. */
static long a_alloc, a_free, b_alloc, b_free;

static void *a_malloc(size_t n)
{
    a_alloc++;
    return malloc(n);
}

static void a_freefn(void *p)
{
    if (p)
        a_free++;
    free(p);
}

static void *b_malloc(size_t n)
{
    b_alloc++;
    return malloc(n);
}

static void b_freefn(void *p)
{
    if (p)
        b_free++;
    free(p);
}

static bool funcs_are(json_malloc_t m, json_free_t f)
{
    json_malloc_t gm = NULL;
    json_free_t gf = NULL;

    json_get_alloc_funcs(&gm, &gf);
    return gm == m && gf == f;
}

/* The calls of liblil this program uses, found with dlsym. */
struct lib {
    lil_status (*agent_settings)(lil_bytes *out);
    lil_status (*spec_parse)(lil_env *env, const char *name, const char *text,
                             size_t len, const lil_spec_limits *lim, lil_spec **out);
    lil_status (*spec_json)(const lil_spec *spec, lil_bytes *out);
    void (*spec_free)(lil_spec *spec);
    void (*free_fn)(void *p);
};

static bool load(void *h, struct lib *l)
{
    *(void **)&l->agent_settings = dlsym(h, "lil_agent_settings");
    *(void **)&l->spec_parse = dlsym(h, "lil_spec_parse");
    *(void **)&l->spec_json = dlsym(h, "lil_spec_json");
    *(void **)&l->spec_free = dlsym(h, "lil_spec_free");
    *(void **)&l->free_fn = dlsym(h, "lil_free");
    return l->agent_settings && l->spec_parse && l->spec_json && l->spec_free &&
           l->free_fn;
}

static const char SPEC[] = "loopspec: \"0.1\"\n"
                           "id: host\n"
                           "pattern: react\n"
                           "state:\n"
                           "  vars:\n"
                           "    n: { type: int, init: 0 }\n"
                           "body:\n"
                           "  - id: hello\n"
                           "    kind: shell\n"
                           "    cmd: echo hi\n"
                           "    on_done: { incr: n }\n"
                           "terminate:\n"
                           "  signal: state-predicate\n"
                           "  until: \"${state.n >= 1}\"\n";

/* Work that makes JSON inside liblil: the agent settings document, and a
 * spec loaded and printed as JSON. */
static void use_lil(const struct lib *l)
{
    lil_bytes doc = {0}, js = {0};
    lil_spec *spec = NULL;

    CHECK(l->agent_settings(&doc) == LIL_OK);
    CHECK(doc.data && strstr((const char *)doc.data, "\"harnesses\""));
    l->free_fn(doc.data);
    CHECK(l->spec_parse(NULL, "host.yaml", SPEC, strlen(SPEC), NULL, &spec) == LIL_OK);
    CHECK(spec != NULL);
    CHECK(spec && l->spec_json(spec, &js) == LIL_OK);
    CHECK(js.data && strstr((const char *)js.data, "hello"));
    l->free_fn(js.data);
    l->spec_free(spec);
}

int main(void)
{
    struct lib l;
    void *h;

    /* Nothing has touched jansson's functions yet. */
    CHECK(funcs_are(malloc, free));
    json_set_alloc_funcs(a_malloc, a_freefn);
    h = dlopen(LIL_SO, RTLD_NOW | RTLD_LOCAL);
    if (!h || !load(h, &l)) {
        fprintf(stderr, "cannot load %s: %s\n", LIL_SO, dlerror());
        return 1;
    }
    CHECK(funcs_are(a_malloc, a_freefn)); /* loading changed nothing */
    use_lil(&l);
    CHECK(funcs_are(a_malloc, a_freefn)); /* using it neither */
    CHECK(a_alloc > 0);                   /* its JSON came from the host's */
    CHECK(a_alloc == a_free);             /* and all went back */

    /* The host changes its functions after using liblil. */
    json_set_alloc_funcs(b_malloc, b_freefn);
    use_lil(&l);
    CHECK(funcs_are(b_malloc, b_freefn));
    CHECK(b_alloc > 0 && b_alloc == b_free);
    dlclose(h);
    CHECK(funcs_are(b_malloc, b_freefn));
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
