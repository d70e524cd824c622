/*
 * t.h -- the test harness (in the style of libuv's task.h).
 *
 * A test file is one executable: it defines tests with T_TEST(name) and
 * ends with T_MAIN(), which runs each test in a fresh temporary directory
 * (the working directory during the test) and prints "N passed, N failed".
 * Checks print file:line and both values, and fail the current test
 * without stopping the others.  T_MAIN's exit status is 0 only if every
 * test passed.  Run one test by name: ./test_x name.
 */
#ifndef LIL_TESTS_T_H
#define LIL_TESTS_T_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*t_fn)(void);

struct t_case {
    const char *name;
    t_fn fn;
};

/* Register a test (constructor attribute; no list to maintain). */
void t_register(const char *name, t_fn fn);
/* Mark the current test failed (used by the macros). */
void t_fail(void);
/* Run the registered tests; the return value is the process exit status. */
int t_main(int argc, char **argv);
/* The temporary directory of the running test (absolute). */
const char *t_tmpdir(void);
/* A path inside it: t_path("x") -> "<tmpdir>/x", valid until the process ends. */
const char *t_path(const char *name);
/* Path of the build's lil binary (LIL_BIN env, else compile-time default). */
const char *t_lil_bin(void);
/* Run a shell command, capture stdout (and stderr if want_err) into out
 * (NUL-terminated, truncated to cap), return the exit status or -1. */
int t_run(const char *cmd, char *out, size_t cap, int want_err);

/* One suite, two backends (t_store.c).  The store of the current test at
 * path (a directory, relative to the test's directory or in it): path
 * itself, or, when the suite runs against PostgreSQL (LIL_TEST_STORE=pg;
 * the server's URI in LIL_TEST_PG, started by the CTest fixture of
 * tests/pg), the URI of a schema of that server made for this test case
 * and this path, created (`lil db init`) on first use.  Static buffer,
 * rotates 8. */
const char *t_store(const char *path);
/* 1 when the suite runs against PostgreSQL. */
int t_store_pg(void);
/* 1 when the suite runs against the in-memory store (LIL_TEST_STORE=mem:
 * a test's store is "mem:" and the same hash a schema's name would be). */
int t_store_mem(void);
/* Under PostgreSQL: run sql with psql on the server, '@' standing for the
 * schema of the store at path (a test damages what the store keeps this
 * way).  Its output (stdout and stderr) into out (cap bytes); the exit
 * status of psql. */
int t_store_sql(const char *path, const char *sql, char *out, size_t cap);
/* Under PostgreSQL, mark the current test file-only and return 1 (the
 * test then leaves: T_FILE_ONLY); else 0. */
int t_file_only(void);

/* A test that only the file store can run (it reads, damages or counts the
 * bytes of journal files, or syncs of the disk): under PostgreSQL it leaves
 * here and is reported "file-only", neither passed nor failed. */
#define T_FILE_ONLY()           \
    do {                        \
        if (t_file_only() != 0) \
            return;             \
    } while (0)

/* Under the in-memory store, mark the current test file-only and return 1
 * (T_ONE_PROCESS); else 0. */
int t_one_process(void);

/* A test whose store is shared with another process (a forked child, the
 * lil binary): the in-memory store is this process's alone, so under it the
 * test leaves here, reported "file-only". */
#define T_ONE_PROCESS()           \
    do {                          \
        if (t_one_process() != 0) \
            return;               \
    } while (0)

#define T_TEST(name)                                            \
    static void t_test_##name(void);                            \
    __attribute__((constructor)) static void t_reg_##name(void) \
    {                                                           \
        t_register(#name, t_test_##name);                       \
    }                                                           \
    static void t_test_##name(void)

#define T_MAIN()                    \
    int main(int argc, char **argv) \
    {                               \
        return t_main(argc, argv);  \
    }

#define T_CHECK(cond)                                                                \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            t_fail();                                                                \
        }                                                                            \
    } while (0)

/* Like T_CHECK, but leave the test function at once. */
#define T_REQUIRE(cond)                                                            \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: requirement failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                        \
            t_fail();                                                              \
            return;                                                                \
        }                                                                          \
    } while (0)

#define T_EQ_I64(a, b)                                                                 \
    do {                                                                               \
        int64_t t_a_ = (int64_t)(a), t_b_ = (int64_t)(b);                              \
        if (t_a_ != t_b_) {                                                            \
            fprintf(stderr, "%s:%d: %s == %s: %" PRId64 " != %" PRId64 "\n", __FILE__, \
                    __LINE__, #a, #b, t_a_, t_b_);                                     \
            t_fail();                                                                  \
        }                                                                              \
    } while (0)

#define T_EQ_STR(a, b)                                                                 \
    do {                                                                               \
        const char *t_a_ = (a), *t_b_ = (b);                                           \
        if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_) != 0) {                               \
            fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                    #a, #b, t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)");           \
            t_fail();                                                                  \
        }                                                                              \
    } while (0)

#define T_CONTAINS(hay, needle)                                                  \
    do {                                                                         \
        const char *t_h_ = (hay), *t_n_ = (needle);                              \
        if (!t_h_ || !strstr(t_h_, t_n_)) {                                      \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, \
                    __LINE__, t_h_ ? t_h_ : "(null)", t_n_);                     \
            t_fail();                                                            \
        }                                                                        \
    } while (0)

#define T_EQ_MEM(a, alen, b, blen)                                                 \
    do {                                                                           \
        size_t t_al_ = (size_t)(alen), t_bl_ = (size_t)(blen);                     \
        if (t_al_ != t_bl_ || (t_al_ && memcmp((a), (b), t_al_) != 0)) {           \
            fprintf(stderr, "%s:%d: %s (%zu bytes) != %s (%zu bytes)\n", __FILE__, \
                    __LINE__, #a, t_al_, #b, t_bl_);                               \
            t_fail();                                                              \
        }                                                                          \
    } while (0)

/* A lil call that must succeed; prints the status and lil_errmsg(). */
#define T_OK(call)                                                                    \
    do {                                                                              \
        int t_rc_ = (int)(call);                                                      \
        if (t_rc_ != 0) {                                                             \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, \
                    t_rc_, lil_errmsg());                                             \
            t_fail();                                                                 \
        }                                                                             \
    } while (0)

#endif
