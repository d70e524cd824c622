/*
 * test_stop_request.c -- stop requests of the file store (store/store.h):
 * published beside a run by any process without holding it, never
 * overwritten by a second request (processes racing: exactly one wins),
 * read and cleared by the holder, not listed as runs, and a failing link
 * leaves nothing behind.
 */
#include "t.h"

#include <dirent.h>
#include <errno.h>
#include <lil/lil.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"
#include "store/store.h"

#define STORE "st"

static lil_store *open_store(lil_env *env)
{
    lil_store *st = NULL;

    T_OK(lil_store_open(env, STORE, &st));
    return st;
}

static lil_status request(lil_store *st, const char *id, const char *text,
                          bool *already)
{
    struct lil_err err;

    return st->ops->stop_request(st, &err, id, text, strlen(text), already);
}

static int count(void *ud, const char *id)
{
    (void)id;
    ++*(int *)ud;
    return 0;
}

/* Entries of the store's directory whose name contains part. */
static int files_with(const char *part)
{
    DIR *d = opendir(STORE);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        n += strstr(e->d_name, part) != NULL;
    if (d)
        closedir(d);
    return n;
}

T_TEST(request_read_clear)
{
    lil_store *st = open_store(NULL);
    struct lil_err err;
    lil_bytes out = {0};
    bool already = true;
    int runs = 0;

    T_EQ_I64(st->ops->stop_read(st, &err, "r", &out), LIL_E_NOTFOUND);
    T_OK(request(st, "r", "{\"reason\":\"first\"}", &already));
    T_CHECK(!already);
    T_OK(request(st, "r", "{\"reason\":\"second\"}", &already));
    T_CHECK(already); /* the first stays */
    T_OK(st->ops->stop_read(st, &err, "r", &out));
    T_EQ_MEM(out.data, out.len, "{\"reason\":\"first\"}", 18);
    lil_free(out.data);
    T_OK(st->ops->foreach_run(st, &err, count, &runs));
    T_EQ_I64(runs, 0); /* a request is not a run */
    T_OK(st->ops->stop_clear(st, &err, "r"));
    T_EQ_I64(st->ops->stop_read(st, &err, "r", &out), LIL_E_NOTFOUND);
    T_CONTAINS(err.msg, "no stop request for run r");
    T_EQ_I64(st->ops->stop_clear(st, &err, "r"), LIL_E_NOTFOUND);
    T_EQ_I64(files_with(".tmp"), 0);
    T_EQ_I64(request(st, "../escape", "{}", &already), LIL_E_INVAL);
    T_EQ_I64(st->ops->stop_read(st, &err, "", &out), LIL_E_INVAL);
    T_EQ_I64(st->ops->stop_clear(st, &err, ".."), LIL_E_INVAL);
    lil_store_close(st);
}

/* A request needs no hold: the run is open for writing by this process. */
T_TEST(request_while_the_run_is_held)
{
    lil_store *st = open_store(NULL);
    lil_run *run = NULL;
    bool already = true;

    T_OK(lil_run_open(st, "held", NULL, &run));
    T_OK(request(st, "held", "{}", &already));
    T_CHECK(!already);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(racing_processes_one_wins)
{
    enum { N = 8 };

    pid_t pids[N];
    int winners = 0;
    char text[32];
    lil_bytes out = {0};
    struct lil_err err;
    lil_store *st = open_store(NULL);

    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            lil_store *cst = open_store(NULL);
            bool already = true;
            snprintf(text, sizeof(text), "{\"who\":%d}", i);
            lil_status rc = request(cst, "race", text, &already);
            lil_store_close(cst);
            _exit(rc != LIL_OK ? 2 : already ? 1 : 0);
        }
    }
    for (int i = 0; i < N; i++) {
        int status = 0;
        T_CHECK(waitpid(pids[i], &status, 0) == pids[i]);
        T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
        winners += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    T_EQ_I64(winners, 1);
    T_OK(st->ops->stop_read(st, &err, "race", &out));
    T_CHECK(out.len > 8 && memcmp(out.data, "{\"who\":", 7) == 0);
    lil_free(out.data);
    T_EQ_I64(files_with(".tmp"), 0);
    lil_store_close(st);
}

T_TEST(failing_link_leaves_nothing)
{
    lil_env *env = t_env_faulty();
    lil_store *st = open_store(env);
    struct t_fault f = {.kind = T_K_LINK, .nth = 1, .action = T_ACT_ERR, .err = EIO};
    struct lil_err err;
    lil_bytes out = {0};
    bool already = true;

    t_faults_arm(&f);
    T_EQ_I64(request(st, "f", "{}", &already), LIL_E_IO);
    T_EQ_I64(t_faults_fired(), 1);
    t_faults_reset();
    T_EQ_I64(files_with(".tmp"), 0);
    T_EQ_I64(st->ops->stop_read(st, &err, "f", &out), LIL_E_NOTFOUND);
    T_OK(request(st, "f", "{}", &already)); /* and works afterwards */
    T_CHECK(!already);
    lil_store_close(st);
    lil_env_free(env);
}

T_MAIN()
