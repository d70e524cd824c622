/*
 * t.c -- the test runner behind t.h: registration, one temporary directory
 * per test, the summary line.
 */
#define _GNU_SOURCE
#include "t.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json/json.h"

#define T_MAX_CASES 512

static struct t_case cases[T_MAX_CASES];
static int ncases;
static int current_failed;
static int current_file_only;
static char tmpdir[4096];

void t_register(const char *name, t_fn fn)
{
    if (ncases < T_MAX_CASES)
        cases[ncases++] = (struct t_case){name, fn};
}

void t_fail(void)
{
    current_failed = 1;
}

int t_file_only(void)
{
    if (!t_store_pg() && !t_store_mem())
        return 0;
    current_file_only = 1;
    return 1;
}

int t_one_process(void)
{
    if (!t_store_mem())
        return 0;
    current_file_only = 1;
    return 1;
}

const char *t_tmpdir(void)
{
    return tmpdir;
}

/* Every path handed out is kept for the life of the process (one copy of
 * each), so a test may hold t_path's result across any number of calls,
 * from any thread. */
struct t_kept_path {
    struct t_kept_path *next;
    char path[];
};

const char *t_path(const char *name)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct t_kept_path *kept;
    char full[4096];
    struct t_kept_path *k;
    size_t n;

    snprintf(full, sizeof(full), "%s/%s", tmpdir, name);
    pthread_mutex_lock(&lock);
    for (k = kept; k; k = k->next)
        if (strcmp(k->path, full) == 0)
            break;
    if (!k) {
        n = strlen(full) + 1;
        k = malloc(sizeof(*k) + n);
        if (!k) {
            fprintf(stderr, "t_path: out of memory\n");
            exit(2);
        }
        memcpy(k->path, full, n);
        k->next = kept;
        kept = k;
    }
    pthread_mutex_unlock(&lock);
    return k->path;
}

const char *t_lil_bin(void)
{
    const char *e = getenv("LIL_BIN");
#ifdef T_LIL_BIN
    if (!e || !*e)
        e = T_LIL_BIN;
#endif
    return e ? e : "lil";
}

int t_run(const char *cmd, char *out, size_t cap, int want_err)
{
    char full[8192];
    snprintf(full, sizeof(full), "%s%s", cmd, want_err ? " 2>&1" : "");
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t n = 0;
    if (out && cap) {
        n = fread(out, 1, cap - 1, p);
        out[n] = '\0';
    }
    char sink[4096];
    while (fread(sink, 1, sizeof(sink), p) > 0)
        ;
    int st = pclose(p);
    if (st == -1)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int make_tmpdir(const char *name)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(tmpdir, sizeof(tmpdir), "%s/lil-t-%s-XXXXXX", base, name);
    if (!mkdtemp(tmpdir))
        return -1;
    return chdir(tmpdir);
}

static void remove_tmpdir(void)
{
    char cmd[4200];
    if (chdir("/") != 0)
        return;
    if (getenv("T_KEEP"))
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", tmpdir);
}

/* 0 passed, 1 failed, 2 file-only (T_FILE_ONLY under PostgreSQL). */
static int run_case(const struct t_case *c)
{
    current_failed = 0;
    current_file_only = 0;
    if (make_tmpdir(c->name) != 0) {
        fprintf(stderr, "cannot make a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    unsetenv("LIL_DIR");
    unsetenv("LIL_SYNC");
    unsetenv("LIL_JOURNAL_KEY");
    c->fn();
    remove_tmpdir();
    if (current_file_only && !current_failed) {
        fprintf(stderr, "file-only %s (the file store's own; this run: %s)\n", c->name,
                t_store_mem() ? "in memory" : "PostgreSQL");
        return 2;
    }
    fprintf(stderr, "%s %s\n", current_failed ? "FAIL" : "ok  ", c->name);
    return current_failed;
}

int t_main(int argc, char **argv)
{
    int passed = 0, failed = 0, file_only = 0;

    /* Failing allocators reach jansson's calls too (the library itself
     * leaves jansson's allocator alone: src/json/json.h). */
    lil__json_hooks_install();
    for (int i = 0; i < ncases; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        switch (run_case(&cases[i])) {
        case 0:
            passed++;
            break;
        case 2:
            file_only++;
            break;
        default:
            failed++;
        }
    }
    if (file_only)
        printf("%d passed, %d failed (%d file-only)\n", passed, failed, file_only);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}
