/*
 * test_artifacts_os.c -- the files a spec's `artifacts` names are opened,
 * stat'ed and read through the env's system-call table (docs/loops.md,
 * "Artifacts"), so a failing call is what the run records:
 *
 *   - with a table whose openat fails with EIO for one file, that file is
 *     listed with its error and the others with their size and SHA-256,
 *     and the run completes (nothing about artifacts fails a run);
 *   - the table's openat, fstatat and read were the calls made (counted);
 *   - a read that fails with EIO is the listed error too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <lil/lil.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/env.h"
#include "os/os.h"
#include "t.h"

static const char spec_text[] =
    "loopspec: \"0.1\"\n"
    "id: arts\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 } } }\n"
    "body:\n"
    "  - { id: s, kind: shell, cmd: \"true\", on_done: { incr: n } }\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
    "caps: { max_iterations: 3, budget: { wallclock: 1m } }\n"
    "artifacts: { include: [\"*.txt\"] }\n";

/* The table: POSIX's, with openat failing for one name and read failing
 * once armed; every openat, fstatat and read counted. */
static struct lil_os table;
static const char *fail_open_name;
static bool fail_reads;
static int n_openat, n_fstatat, n_read;

static int counted_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    n_openat++;
    if (fail_open_name && strcmp(path, fail_open_name) == 0) {
        errno = EIO;
        return -1;
    }
    return lil__os_posix.openat(dirfd, path, flags, mode);
}

static int counted_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    n_fstatat++;
    return lil__os_posix.fstatat(dirfd, path, st, flags);
}

/* Once armed, a read of a regular file fails (a shell step's output comes
 * through pipes, the journal through pread: only the artifacts' files are
 * read so). */
static ssize_t counted_read(int fd, void *buf, size_t n)
{
    struct stat sb;

    n_read++;
    if (fail_reads && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        errno = EIO;
        return -1;
    }
    return lil__os_posix.read(fd, buf, n);
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(t_path(name), "w");

    T_REQUIRE(f != NULL);
    fputs(text, f);
    T_CHECK(fclose(f) == 0);
}

/* Run the spec once in the test's directory with the counting table
 * (installed in env); the RunResult's "artifacts" member (a new
 * reference), or NULL after a failed check. */
static json_t *run_with(lil_env *env, const char *run_id)
{
    lil_store *st = NULL;
    lil_spec *spec = NULL;
    lil_loop *lp = NULL;
    lil_loop_result res;
    lil_loop_opts o;
    json_t *doc = NULL, *arts = NULL;

    memset(&res, 0, sizeof(res));
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = run_id;
    o.cwd = t_tmpdir();
    T_OK(lil_store_open(env, t_path("store"), &st));
    if (st)
        T_OK(lil_spec_parse(env, "arts.yaml", spec_text, strlen(spec_text), NULL,
                            &spec));
    if (spec)
        T_OK(lil_loop_open(st, spec, &o, &lp));
    if (lp) {
        T_OK(lil_loop_run(lp, &res));
        T_EQ_I64(res.status, LIL_LOOP_COMPLETED);
        doc = res.json ? json_loads(res.json, 0, NULL) : NULL;
        T_CHECK(doc != NULL);
    }
    arts = json_incref(json_object_get(doc, "artifacts"));
    json_decref(doc);
    lil_loop_result_free(&res);
    lil_loop_close(lp);
    lil_spec_free(spec);
    lil_store_close(st);
    return arts;
}

static json_t *run_artifacts(const char *run_id)
{
    lil_env *env = NULL;
    json_t *arts = NULL;

    T_OK(lil_env_new(&env));
    if (!env)
        return NULL;
    table = lil__os_posix;
    table.openat = counted_openat;
    table.fstatat = counted_fstatat;
    table.read = counted_read;
    lil__env_set_os(env, &table);
    arts = run_with(env, run_id);
    lil_env_free(env);
    return arts;
}

static const json_t *file_at(const json_t *arts, size_t i)
{
    return json_array_get(json_object_get(arts, "files"), i);
}

T_TEST(a_failed_open_is_the_files_error)
{
    json_t *arts;

    put("a.txt", "alpha\n");
    put("b.txt", "beta\n");
    fail_open_name = "b.txt";
    fail_reads = false;
    n_openat = n_fstatat = n_read = 0;
    arts = run_artifacts("r1");
    T_REQUIRE(arts != NULL);
    T_EQ_I64(json_array_size(json_object_get(arts, "files")), 2);
    T_EQ_STR(json_string_value(json_object_get(file_at(arts, 0), "path")), "a.txt");
    T_EQ_I64(json_integer_value(json_object_get(file_at(arts, 0), "size")), 6);
    T_EQ_I64(strlen(json_string_value(json_object_get(file_at(arts, 0), "sha256"))),
             64);
    T_EQ_STR(json_string_value(json_object_get(file_at(arts, 1), "path")), "b.txt");
    T_CHECK(json_object_get(file_at(arts, 1), "sha256") == NULL);
    T_CONTAINS(json_string_value(json_object_get(file_at(arts, 1), "error")),
               strerror(EIO));
    T_CHECK(n_openat >= 2);  /* a.txt and b.txt */
    T_CHECK(n_fstatat >= 3); /* a.txt, b.txt, store */
    T_CHECK(n_read >= 2);    /* a.txt's bytes, then its end */
    json_decref(arts);
}

T_TEST(a_failed_read_is_the_files_error)
{
    json_t *arts;

    put("a.txt", "alpha\n");
    fail_open_name = NULL;
    fail_reads = true;
    arts = run_artifacts("r2");
    T_REQUIRE(arts != NULL);
    T_EQ_STR(json_string_value(json_object_get(file_at(arts, 0), "path")), "a.txt");
    T_CONTAINS(json_string_value(json_object_get(file_at(arts, 0), "error")),
               strerror(EIO));
    json_decref(arts);
}

T_MAIN()
