/*
 * test_dl.c -- the loader of optional libraries (src/base/dl/dl.h), with the C
 * library as the optional one: the first soname that loads wins, the
 * functions land in the table, a missing library or function fails with
 * dlerror()'s reason and leaves the table empty, the accept hook decides
 * last, and a second call returns what the first found.
 */
#include <gnu/lib-names.h>
#include <stddef.h>
#include <string.h>

#include "base/dl/dl.h"
#include "t.h"

struct libc_table {
    __typeof__(strlen) *len;
    __typeof__(strcmp) *cmp;
};

#define AT(field) offsetof(struct libc_table, field)

static const struct lil_dl_fn fns[] = {{"strlen", AT(len)}, {"strcmp", AT(cmp)}};
static const struct lil_dl_fn missing_fn[] = {{"strlen", AT(len)},
                                              {"lil_no_such_function", AT(cmp)}};
static const char *const sonames[] = {"liblil-no-such.so.1", LIBC_SO};
static const char *const none[] = {"liblil-no-such.so.1", "liblil-no-such.so.2"};

T_TEST(loads_first_soname_that_exists)
{
    static struct libc_table t;
    static struct lil_dl dl = LIL_DL_INIT(sonames, fns, t, NULL);

    T_CHECK(lil__dl_load(&dl));
    T_REQUIRE(t.len != NULL && t.cmp != NULL);
    T_EQ_I64(t.len("four"), 4);
    T_CHECK(t.cmp("a", "a") == 0);
    T_CHECK(lil__dl_load(&dl)); /* the second call: the same answer */
}

T_TEST(no_library_says_why)
{
    static struct libc_table t;
    static struct lil_dl dl = LIL_DL_INIT(none, fns, t, NULL);

    T_CHECK(!lil__dl_load(&dl));
    T_CHECK(strstr(dl.why, "liblil-no-such.so.1") != NULL); /* the first one's */
    T_CHECK(t.len == NULL && t.cmp == NULL);
    T_CHECK(!lil__dl_load(&dl));
}

T_TEST(missing_function_empties_the_table)
{
    static struct libc_table t;
    static struct lil_dl dl = LIL_DL_INIT(sonames, missing_fn, t, NULL);

    T_CHECK(!lil__dl_load(&dl));
    T_CHECK(strstr(dl.why, "lil_no_such_function") != NULL);
    T_CHECK(t.len == NULL && t.cmp == NULL);
}

static bool refuse(void *lib, char *why, size_t cap)
{
    __typeof__(strlen) *fn = NULL;

    if (!lil__dl_fn(lib, "strlen", &fn, why, cap) || fn("x") != 1)
        return false;
    strncpy(why, "too old", cap - 1);
    return false;
}

T_TEST(accept_hook_decides)
{
    static struct libc_table t;
    static struct lil_dl dl = LIL_DL_INIT(sonames, fns, t, refuse);

    T_CHECK(!lil__dl_load(&dl));
    T_EQ_STR(dl.why, "too old");
    T_CHECK(t.len == NULL);
}

T_MAIN()
