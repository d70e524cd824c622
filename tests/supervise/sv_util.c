/*
 * sv_util.c -- helpers of the supervisor tests (sv_util.h).
 */
#include "sv_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t.h"

const char *sv_child(void)
{
    return SV_CHILD;
}

static void use_store(void)
{
    setenv("LIL_DIR", "store", 1);
    unsetenv("LIL_SUPERVISED");
    unsetenv("LIL_ATTEMPT");
}

int sv_watch(char *err, const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    use_store();
    snprintf(cmd, sizeof(cmd), "timeout -s KILL 60 '%s' watch %s >'%s' 2>'%s'",
             t_lil_bin(), args, t_path("watch.out"), t_path("watch.err"));
    rc = t_run(cmd, NULL, 0, 0);
    if (err)
        snprintf(err, SV_CAP, "%s", sv_slurp(t_path("watch.err")));
    return rc;
}

pid_t sv_watch_bg(const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    pid_t pid;

    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    use_store();
    snprintf(cmd, sizeof(cmd), "exec '%s' watch %s >'%s' 2>'%s'", t_lil_bin(), args,
             t_path("watch.out"), t_path("watch.err"));
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int sv_wait(pid_t pid, int timeout_ms)
{
    int st;

    for (int t = 0; t <= timeout_ms; t += 5) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0)
            return -1;
        sleep_ms(5);
    }
    fprintf(stderr, "sv_wait: pid %d still running after %d ms: killed\n", (int)pid,
            timeout_ms);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

const char *sv_slurp(const char *path)
{
    static char buf[SV_CAP];
    FILE *f = fopen(path, "re");
    size_t n = 0;

    if (f) {
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

bool sv_wait_file(const char *path, const char *needle, int timeout_ms)
{
    for (int t = 0; t <= timeout_ms; t += 5) {
        if (strstr(sv_slurp(path), needle))
            return true;
        sleep_ms(5);
    }
    fprintf(stderr, "timed out waiting for '%s' in %s; it holds:\n%s\n", needle, path,
            sv_slurp(path));
    return false;
}

int sv_count_lines(const char *text, const char *line)
{
    size_t len = strlen(line);
    int n = 0;

    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l == len && memcmp(p, line, len) == 0)
            n++;
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

json_t *sv_events(const char *text)
{
    json_t *a = json_array();

    for (const char *p = text; a && p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        json_t *o = l && p[0] == '{' ? json_loadb(p, l, 0, NULL) : NULL;
        if (o)
            json_array_append_new(a, o);
        p = nl ? nl + 1 : NULL;
    }
    return a;
}

json_t *sv_event(json_t *events, const char *kind, size_t n)
{
    size_t i;
    json_t *e;

    json_array_foreach(events, i, e)
    {
        const char *k = json_string_value(json_object_get(e, "event"));
        if (k && strcmp(k, kind) == 0 && n-- == 0)
            return e;
    }
    return NULL;
}

size_t sv_count_kind(json_t *events, const char *kind)
{
    size_t n = 0;

    while (sv_event(events, kind, n))
        n++;
    return n;
}

pid_t sv_started_pid(size_t n)
{
    for (int t = 0; t < 10000; t += 5) {
        json_t *ev = sv_events(sv_slurp(t_path("watch.err")));
        json_t *e = sv_event(ev, "start", n);
        pid_t pid = e ? (pid_t)json_integer_value(json_object_get(e, "pid")) : -1;
        json_decref(ev);
        if (pid > 0)
            return pid;
        sleep_ms(5);
    }
    fprintf(stderr, "no start event #%zu in watch.err:\n%s\n", n,
            sv_slurp(t_path("watch.err")));
    return -1;
}

char sv_state(pid_t pid)
{
    char path[64], line[1024];
    const char *rp;
    FILE *f;
    size_t n;
    char s = 0;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    n = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    line[n] = '\0';
    rp = strrchr(line, ')');
    if (rp && sscanf(rp + 1, " %c", &s) != 1)
        s = 0;
    return s;
}
