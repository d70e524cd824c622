/*
 * proc_util.c -- /proc readers for the child-process tests (proc_util.h).
 */
#include "proc_util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Fields of /proc/<pid>/stat after the command name, which may hold
 * spaces and parentheses: state, ppid, pgrp, session. */
struct stat_fields {
    char state;
    long ppid, pgrp, session;
};

static bool read_stat(pid_t pid, struct stat_fields *f)
{
    char path[64], line[1024];
    const char *rp;
    FILE *fp;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fp = fopen(path, "re");
    if (!fp)
        return false;
    n = fread(line, 1, sizeof(line) - 1, fp);
    fclose(fp);
    line[n] = '\0';
    rp = strrchr(line, ')');
    return rp && sscanf(rp + 1, " %c %ld %ld %ld", &f->state, &f->ppid, &f->pgrp,
                        &f->session) == 4;
}

char tp_state(pid_t pid)
{
    struct stat_fields f;

    return read_stat(pid, &f) ? f.state : 0;
}

pid_t tp_pgid(pid_t pid)
{
    struct stat_fields f;

    return read_stat(pid, &f) ? (pid_t)f.pgrp : -1;
}

pid_t tp_sid(pid_t pid)
{
    struct stat_fields f;

    return read_stat(pid, &f) ? (pid_t)f.session : -1;
}

bool tp_dead(pid_t pid)
{
    for (int i = 0; i < 500; i++) {
        char s = tp_state(pid);
        if (s == 0 || s == 'Z' || s == 'X')
            return true;
        usleep(10000);
    }
    return false;
}

static bool group_has_live_member(pid_t pgid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool live = false;

    if (!d)
        return true;
    while (!live && (e = readdir(d)) != NULL) {
        struct stat_fields f;
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (read_stat((pid_t)atol(e->d_name), &f) && f.pgrp == pgid && f.state != 'Z' &&
            f.state != 'X')
            live = true;
    }
    closedir(d);
    return live;
}

bool tp_group_dead(pid_t pgid)
{
    for (int i = 0; i < 500; i++) {
        if (!group_has_live_member(pgid))
            return true;
        usleep(10000);
    }
    return false;
}

int tp_fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (isdigit((unsigned char)e->d_name[0]) && atoi(e->d_name) != dirfd(d))
            n++;
    closedir(d);
    return n;
}

bool tp_no_children(void)
{
    return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}
