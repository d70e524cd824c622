/*
 * test_effect_env.c -- the environment of a child (src/effects/effect_env.h):
 * the base names and the LC_* family pass, everything else only when
 * allowed (exact names, `PREFIX*` patterns, `*`), lil's own secrets (the
 * journal's key, the llm harness's key, LIL_DIR, the llm headers) only when
 * named exactly, the first of duplicate names, the source's order, one
 * block to free.
 */
#include <stdlib.h>
#include <string.h>

#include "effects/effect_env.h"
#include "t.h"

/* One env for the whole file (released at exit). */
static lil_env *env(void)
{
    static lil_env *e;

    if (!e && lil_env_new(&e) != LIL_OK)
        abort();
    return e;
}

static const char *const src[] = {
    "PATH=/usr/bin:/bin",
    "HOME=/home/u",
    "OPENAI_API_KEY=sk-secret-value",
    "LC_TIME=C",
    "LANG=C.UTF-8",
    "LIL_JOURNAL_KEY=journal-key",
    "LOOPY_JOURNAL_KEY=loopy-key",
    "AWS_REGION=eu-west-1",
    "AWS_SECRET_ACCESS_KEY=aws-secret",
    "NOEQUALS",
    "=nameless",
    "PATH=/second/path",
    "MY_VAR=x=y",
    "TZ=UTC",
    "TERM=xterm",
    "LIL_DIR=/runs",
    "LIL_LLM_API_KEY=llm-key",
    "LOOPY_LLM_HEADERS={\"Authorization\":\"Bearer t\"}",
    NULL,
};

/* The built environment as one "A B C" line of entries. */
static char *joined(const char *const *allow, size_t n)
{
    const char **vars = NULL;
    struct lil_err err = {0};
    size_t cap = 4096, len = 0;
    char *s = calloc(1, cap);

    if (lil__effect_env_build(env(), &err, src, allow, n, &vars) != LIL_OK) {
        fprintf(stderr, "build: %s\n", err.msg);
        t_fail();
        return s;
    }
    for (size_t i = 0; vars[i]; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%s", i ? " " : "", vars[i]);
    lil__effect_env_free(env(), vars);
    return s;
}

static void expect(const char *const *allow, size_t n, const char *want)
{
    char *got = joined(allow, n);

    T_EQ_STR(got, want);
    free(got);
}

T_TEST(scrubbed_by_default)
{
    expect(NULL, 0,
           "PATH=/usr/bin:/bin HOME=/home/u LC_TIME=C LANG=C.UTF-8 TZ=UTC TERM=xterm");
}

T_TEST(allowed_names_and_patterns)
{
    const char *exact[] = {"MY_VAR, AWS_REGION"};
    const char *pattern[] = {NULL, " AWS_* ", ",,"};
    const char *lil[] = {"LIL_*"};

    expect(
        exact, 1,
        "PATH=/usr/bin:/bin HOME=/home/u LC_TIME=C LANG=C.UTF-8 AWS_REGION=eu-west-1 "
        "MY_VAR=x=y TZ=UTC TERM=xterm");
    expect(
        pattern, 3,
        "PATH=/usr/bin:/bin HOME=/home/u LC_TIME=C LANG=C.UTF-8 AWS_REGION=eu-west-1 "
        "AWS_SECRET_ACCESS_KEY=aws-secret TZ=UTC TERM=xterm");
    /* A pattern does not reach lil's own secrets: the journal's key, LIL_DIR
     * (a PostgreSQL URI may hold a password), the llm key and headers. */
    expect(lil, 1,
           "PATH=/usr/bin:/bin HOME=/home/u LC_TIME=C LANG=C.UTF-8 TZ=UTC TERM=xterm");
}

T_TEST(everything_but_lil_secrets)
{
    const char *all[] = {"*"};
    const char *all_and_key[] = {"*", "LOOPY_JOURNAL_KEY,LIL_DIR"};

    expect(all, 1,
           "PATH=/usr/bin:/bin HOME=/home/u OPENAI_API_KEY=sk-secret-value LC_TIME=C "
           "LANG=C.UTF-8 AWS_REGION=eu-west-1 AWS_SECRET_ACCESS_KEY=aws-secret "
           "MY_VAR=x=y TZ=UTC TERM=xterm");
    expect(all_and_key, 2,
           "PATH=/usr/bin:/bin HOME=/home/u OPENAI_API_KEY=sk-secret-value LC_TIME=C "
           "LANG=C.UTF-8 LOOPY_JOURNAL_KEY=loopy-key AWS_REGION=eu-west-1 "
           "AWS_SECRET_ACCESS_KEY=aws-secret MY_VAR=x=y TZ=UTC TERM=xterm "
           "LIL_DIR=/runs");
}

T_TEST(keeps)
{
    const char *allow[] = {"A,B_*,LIL_JOURNAL_KEY"};

    T_CHECK(lil__effect_env_keeps("PATH", 4, NULL, 0));
    T_CHECK(lil__effect_env_keeps("LC_ALL", 6, NULL, 0));
    T_CHECK(lil__effect_env_keeps("LC_MESSAGES", 11, NULL, 0));
    T_CHECK(!lil__effect_env_keeps("path", 4, NULL, 0)); /* case-sensitive */
    T_CHECK(!lil__effect_env_keeps("PATHX", 5, NULL, 0));
    T_CHECK(!lil__effect_env_keeps("LIL_JOURNAL_KEY", 15, NULL, 0));
    T_CHECK(lil__effect_env_keeps("A", 1, allow, 1));
    T_CHECK(!lil__effect_env_keeps("AB", 2, allow, 1));
    T_CHECK(lil__effect_env_keeps("B_", 2, allow, 1));
    T_CHECK(lil__effect_env_keeps("B_X", 3, allow, 1));
    T_CHECK(!lil__effect_env_keeps("B", 1, allow, 1));
    T_CHECK(lil__effect_env_keeps("LIL_JOURNAL_KEY", 15, allow, 1));
    T_CHECK(!lil__effect_env_keeps("LOOPY_JOURNAL_KEY", 17, allow, 1));
    T_CHECK(!lil__effect_env_keeps("", 0, allow, 1));
    T_CHECK(!lil__effect_env_keeps("LIL_LLM_API_KEY", 15, allow, 1));
    T_CHECK(!lil__effect_env_keeps("LOOPY_LLM_API_KEY", 17, (const char *[]){"*"}, 1));
    T_CHECK(lil__effect_env_keeps("LIL_LLM_API_KEY", 15,
                                  (const char *[]){"LIL_LLM_API_KEY"}, 1));
}

T_TEST(this_process_environment)
{
    const char **vars = NULL;
    const char *allow[] = {"LIL_TEST_ALLOWED"};
    struct lil_err err = {0};
    int seen_allowed = 0, seen_secret = 0;

    setenv("LIL_TEST_ALLOWED", "yes", 1);
    setenv("LIL_TEST_SECRET_TOKEN", "no", 1);
    T_OK(lil__effect_env_build(env(), &err, NULL, allow, 1, &vars));
    T_REQUIRE(vars);
    for (size_t i = 0; vars[i]; i++) {
        seen_allowed += strcmp(vars[i], "LIL_TEST_ALLOWED=yes") == 0;
        seen_secret += strncmp(vars[i], "LIL_TEST_SECRET_TOKEN=", 22) == 0;
    }
    T_EQ_I64(seen_allowed, 1);
    T_EQ_I64(seen_secret, 0);
    lil__effect_env_free(env(), vars);
    lil__effect_env_free(env(), NULL);
}

T_MAIN()
