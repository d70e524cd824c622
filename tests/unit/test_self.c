/*
 * test_self.c -- what lil knows about processes: its own pid after a
 * fork (read again by a fork handler, not by a system call per use),
 * whether a process holds a file open, and the env's count of open runs
 * that a call which forks must find at zero.
 */
#include <fcntl.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/env.h"
#include "os/os.h"
#include "t.h"

T_TEST(self_pid_follows_fork)
{
    int parent = lil__os_self_pid(), status = 0;
    pid_t pid;

    T_EQ_I64(parent, getpid());
    fflush(NULL);
    pid = fork();
    if (pid == 0)
        _exit(lil__os_self_pid() == getpid() && lil__os_self_pid() != parent ? 0 : 1);
    T_REQUIRE(pid > 0);
    T_REQUIRE(waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    T_EQ_I64(lil__os_self_pid(), parent);
}

/* Whether process pid has exec'd sleep (its descriptors are then gone). */
static int is_sleep(pid_t pid)
{
    char path[64], comm[32] = {0};
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(comm, sizeof(comm), f))
        comm[0] = '\0';
    fclose(f);
    return strncmp(comm, "sleep", 5) == 0;
}

T_TEST(pid_has_open)
{
    struct lil_env env;
    int fd = open(t_path("f"), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    int status = 0;
    pid_t pid;

    lil__os_env_init(&env);
    T_REQUIRE(fd >= 0);
    T_EQ_I64(lil__os_pid_has_open(&env, getpid(), fd), 1);
    T_EQ_I64(lil__os_pid_has_open(&env, 0, fd), -1);
    /* a live process without it: fd is close-on-exec */
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(127);
    }
    T_REQUIRE(pid > 0);
    for (int i = 0; i < 500 && !is_sleep(pid); i++)
        usleep(10000);
    T_CHECK(is_sleep(pid));
    T_EQ_I64(lil__os_pid_has_open(&env, pid, fd), 0);
    kill(pid, SIGKILL);
    T_REQUIRE(waitpid(pid, &status, 0) == pid);
    T_EQ_I64(lil__os_pid_has_open(&env, pid, fd), 0); /* gone */
    close(fd);
}

T_TEST(env_counts_open_runs)
{
    lil_env *env = NULL;
    lil_store *st = NULL;
    lil_run *a = NULL, *b = NULL, *again = NULL;
    struct lil_env *e;

    T_OK(lil_env_new(&env));
    e = (struct lil_env *)env;
    T_OK(lil_store_open(env, t_path("st"), &st));
    T_EQ_I64(e->runs_open, 0);
    T_OK(lil_run_open(st, "a", NULL, &a));
    T_OK(lil_run_open(st, "b", NULL, &b));
    T_EQ_I64(e->runs_open, 2);
    T_EQ_I64(lil_run_open(st, "a", NULL, &again), LIL_E_LOCKED); /* not counted */
    T_EQ_I64(e->runs_open, 2);
    T_OK(lil_run_close(a));
    T_EQ_I64(e->runs_open, 1);
    T_OK(lil_run_close(b));
    T_EQ_I64(e->runs_open, 0);
    lil_store_close(st);
    lil_env_free(env);
}

T_MAIN()
