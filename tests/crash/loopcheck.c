/*
 * loopcheck.c -- the loop, the journal summary, the checks and the
 * process helpers of loopcheck.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "loopcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t.h"

/* ---- the loop -----------------------------------------------------------------------
 */

static const char loop_spec[] =
    "loopspec: \"0.1\"\n"
    "id: " T_LOOP_RUN "\n"
    "pattern: react\n"
    "inputs:\n"
    "  tok: {type: string}\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "    total: {type: int, init: 0}\n"
    "    seen: {type: list, init: []}\n"
    "body:\n"
    "  - id: a\n"
    "    kind: shell\n"
    "    cmd: \"echo '${inputs.tok} ${state.n} a' $$ >> side.txt\"\n"
    "    on_done:\n"
    "      incr: total\n"
    "  - id: nap\n"
    "    kind: sleep\n"
    "    for: 3ms\n"
    "  - id: b\n"
    "    kind: shell\n"
    "    cmd: \"sleep 0.004; echo '${inputs.tok} ${state.n} b' $$ >> side.txt; sleep "
    "0.002\"\n"
    "  - id: c\n"
    "    kind: shell\n"
    "    cmd: \"echo '${inputs.tok} ${state.n} c' $$ >> side.txt\"\n"
    "    on_done:\n"
    "      incr: n\n"
    "      append:\n"
    "        seen: \"${state.n}\"\n"
    "terminate:\n"
    "  signal: state-predicate\n"
    "  until: \"${state.n >= %d}\"\n"
    "caps:\n"
    "  max_iterations: %d\n"
    "  budget: {wallclock: 1h}\n";

int t_loop_spec_write(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    int ok;

    if (!f || n < 1 || n > T_LOOP_MAX_IT) {
        if (f)
            fclose(f);
        return -1;
    }
    ok = fprintf(f, loop_spec, n, n + 5) > 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

bool t_loop_is_effect(int s)
{
    return s == 0 || s == 2 || s == 3;
}

char t_loop_step_of(int s)
{
    return "a-bc"[s & 3];
}

/* ---- the journal summary ------------------------------------------------------------
 */

void t_lj_init(struct t_lj *j, int n)
{
    memset(j, 0, sizeof(*j));
    j->n = n;
    j->rep.struct_size = sizeof(j->rep);
}

void t_lj_free(struct t_lj *j)
{
    json_decref(j->state);
    j->state = NULL;
}

static void lj_bad(struct t_lj *j, const char *ctx, const char *key, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

static void lj_bad(struct t_lj *j, const char *ctx, const char *key, const char *fmt,
                   ...)
{
    va_list ap;

    j->bad++;
    fprintf(stderr, "  VIOLATION [%s] journal record %d '%s': ", ctx, j->records, key);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* "I.S" with I < n and S a slot: *it, *s. */
static bool parse_slot(const struct t_lj *j, const char *key, int *it, int *s)
{
    char tail;

    return sscanf(key, "%d.%d%c", it, s, &tail) == 2 && *it >= 0 && *it < j->n &&
           *s >= 0 && *s < T_LOOP_SLOTS;
}

static bool parse_snap(const struct t_lj *j, const char *key, int *it)
{
    char word[8] = "";

    return sscanf(key, "%d.%7s", it, word) == 2 && strcmp(word, "snap") == 0 &&
           *it >= 0 && *it < j->n;
}

static bool prefixed(const char *key, const char *prefix)
{
    return strncmp(key, prefix, strlen(prefix)) == 0;
}

static json_t *payload_json(const char *payload, size_t len)
{
    return payload ? json_loadb(payload, len, JSON_DECODE_ANY, NULL) : NULL;
}

static void on_intent(struct t_lj *j, struct t_slot *sl, const char *key,
                      const char *ctx)
{
    if (sl->at != T_SLOT_NONE && sl->at != T_SLOT_RETRY)
        lj_bad(j, ctx, key,
               "an intent after %d intent(s) and %d retry resolution(s): the effect "
               "would run again without a retry",
               sl->intents, sl->retries);
    sl->intents++;
    sl->at = T_SLOT_INTENT;
}

static void on_resolve(struct t_lj *j, struct t_slot *sl, const char *key,
                       const char *payload, size_t len, const char *ctx)
{
    json_t *p = payload_json(payload, len);
    const char *action = json_string_value(json_object_get(p, "action"));

    /* An assume-done whose outcome is missing was never acknowledged (the
     * deciding process died between the two records): the effect is still
     * uncertain, and is decided again. */
    if (sl->at == T_SLOT_ASSUMED)
        sl->assumed_lost++;
    else if (sl->at != T_SLOT_INTENT)
        lj_bad(j, ctx, key, "a resolution of an effect that is not uncertain");
    if (action && strcmp(action, "retry") == 0) {
        sl->retries++;
        sl->at = T_SLOT_RETRY;
    } else if (action && strcmp(action, "assume-done") == 0) {
        sl->assumed++;
        sl->at = T_SLOT_ASSUMED;
    } else {
        lj_bad(j, ctx, key, "an unexpected resolution %.*s", (int)len,
               payload ? payload : "");
    }
    json_decref(p);
}

static void on_outcome(struct t_lj *j, struct t_slot *sl, int it, int s,
                       const char *key, const char *payload, size_t len,
                       const char *ctx)
{
    json_t *p = payload_json(payload, len);
    bool recovered = json_is_true(json_object_get(p, "recovered"));
    const char *step = json_string_value(json_object_get(p, "step"));

    if (!(sl->at == T_SLOT_INTENT && !recovered) &&
        !(sl->at == T_SLOT_ASSUMED && recovered))
        lj_bad(j, ctx, key,
               "an outcome (recovered: %d) after %d intent(s), %d outcome(s)",
               recovered, sl->intents, sl->outcomes);
    if (json_integer_value(json_object_get(p, "iteration")) != it ||
        json_integer_value(json_object_get(p, "seq")) != s ||
        (!recovered && (!step || step[0] != t_loop_step_of(s) || step[1])))
        lj_bad(j, ctx, key, "the outcome names another effect: %.*s", (int)len,
               payload ? payload : "");
    sl->outcomes++;
    sl->recovered = recovered;
    sl->at = T_SLOT_DONE;
    json_decref(p);
}

static void on_snapshot(struct t_lj *j, int it, const char *key, const char *payload,
                        size_t len, const char *ctx)
{
    json_t *p = payload_json(payload, len);
    json_t *state = json_object_get(p, "state");

    if (++j->snaps[it] > 1)
        lj_bad(j, ctx, key, "a second snapshot of iteration %d", it);
    if (!json_is_object(state))
        lj_bad(j, ctx, key, "a snapshot without a state");
    json_decref(j->state);
    j->state = json_incref(state);
    json_decref(p);
}

static void on_step(struct t_lj *j, bool effect, const char *key, const char *payload,
                    size_t len, const char *ctx)
{
    int it, s;

    if (strcmp(key, "loop") == 0) {
        if (++j->starts > 1)
            lj_bad(j, ctx, key, "a second start record");
    } else if (parse_snap(j, key, &it)) {
        on_snapshot(j, it, key, payload, len, ctx);
    } else if (parse_slot(j, key, &it, &s) && t_loop_is_effect(s) == effect) {
        if (effect)
            on_outcome(j, &j->slot[it][s], it, s, key, payload, len, ctx);
        else if (++j->slot[it][s].outcomes > 1)
            lj_bad(j, ctx, key, "a second sleep record");
    } else if (prefixed(key, "terminated.")) {
        j->terminated++;
    } else if (prefixed(key, "parked.")) {
        j->parked++;
    } else {
        lj_bad(j, ctx, key, "an unexpected step record (effect %d)", effect);
    }
}

void t_lj_feed(struct t_lj *j, const char *type, bool effect, const char *key,
               const char *payload, size_t len, const char *ctx)
{
    int it, s;

    j->records++;
    if (strcmp(type, "begin") == 0 || strcmp(type, "open") == 0 ||
        strcmp(type, "close") == 0)
        return;
    if (strcmp(type, "run-done") == 0) {
        j->run_done++;
    } else if (strcmp(type, "step") == 0) {
        on_step(j, effect, key, payload, len, ctx);
    } else if ((strcmp(type, "intent") == 0 || strcmp(type, "resolve") == 0) &&
               parse_slot(j, key, &it, &s) && t_loop_is_effect(s)) {
        if (type[0] == 'i')
            on_intent(j, &j->slot[it][s], key, ctx);
        else
            on_resolve(j, &j->slot[it][s], key, payload, len, ctx);
    } else {
        lj_bad(j, ctx, key, "an unexpected %s record: %.*s", type, (int)len,
               payload ? payload : "");
    }
}

/* ---- reading a journal --------------------------------------------------------------
 */

struct api_walk {
    struct t_lj *j;
    const char *ctx;
};

static int api_record(void *ud, const lil_record *r)
{
    struct api_walk *w = ud;
    char key[256];

    snprintf(key, sizeof(key), "%.*s", (int)r->key_len, r->key);
    t_lj_feed(w->j, lil_record_type_name(r->type), (r->flags & LIL_RECF_EFFECT) != 0,
              key, r->type == LIL_REC_INTENT ? NULL : (const char *)r->payload,
              r->payload_len, w->ctx);
    return 0;
}

void t_lj_read_api(struct t_lj *j, const char *store, const char *run_id,
                   const char *ctx)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    struct api_walk w = {j, ctx};
    lil_store *st = NULL;
    lil_run *run = NULL;
    struct stat sb;

    j->open_rc = LIL_E_NOTFOUND;
    j->check_rc = LIL_E_NOTFOUND;
    if (stat(store, &sb) != 0) /* the runner died before it made the store */
        return;
    j->open_rc = lil_store_open(NULL, store, &st);
    if (j->open_rc != LIL_OK) {
        snprintf(j->msg, sizeof(j->msg), "%s", lil_errmsg());
        return;
    }
    j->open_rc = lil_run_open(st, run_id, &ro, &run);
    if (j->open_rc == LIL_OK) {
        j->open_rc = lil_run_foreach(run, api_record, &w);
        lil_run_close(run);
    } else {
        snprintf(j->msg, sizeof(j->msg), "%s", lil_store_errmsg(st));
    }
    j->check_rc = lil_run_check(st, run_id, 0, &j->rep);
    lil_store_close(st);
}

static bool has_effect_flag(json_t *flags)
{
    size_t i;
    json_t *f;

    json_array_foreach(flags, i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), "effect") == 0)
            return true;
    }
    return false;
}

static int cli_line(struct t_lj *j, const char *line, const char *ctx)
{
    json_t *r = json_loads(line, 0, NULL);
    const char *type = json_string_value(json_object_get(r, "type"));
    const char *key = json_string_value(json_object_get(r, "key"));
    json_t *payload = json_object_get(r, "payload");

    if (!type || !key) {
        fprintf(stderr, "  [%s] lil log printed a line that is not a record: %s\n", ctx,
                line);
        json_decref(r);
        return -1;
    }
    t_lj_feed(j, type, has_effect_flag(json_object_get(r, "flags")), key,
              json_string_value(payload), json_string_length(payload), ctx);
    json_decref(r);
    return 0;
}

int t_lj_read_cli(struct t_lj *j, const char *store, const char *run_id,
                  const char *ctx)
{
    char cmd[8192], *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int bad = 0, st;
    FILE *p;

    snprintf(cmd, sizeof(cmd), "'%s' --dir '%s' log '%s' --jsonl", t_lil_bin(), store,
             run_id);
    p = popen(cmd, "r");
    if (!p)
        return -1;
    while ((n = getline(&line, &cap, p)) > 0) {
        if (line[n - 1] == '\n')
            line[n - 1] = '\0';
        if (line[0] && cli_line(j, line, ctx) != 0)
            bad++;
    }
    free(line);
    st = pclose(p);
    j->open_rc = st == 0 ? LIL_OK : LIL_E_IO;
    if (st != 0)
        fprintf(stderr, "  [%s] %s: exit status %d\n", ctx, cmd, st);
    return st == 0 && bad == 0 ? 0 : -1;
}

/* ---- the side file -----------------------------------------------------------------
 */

static int side_line(struct t_lj *j, const char *line, const char *tok)
{
    char t[128], step;
    int it, pid, s;

    if (sscanf(line, "%127s %d %c %d", t, &it, &step, &pid) != 4 ||
        strcmp(t, tok) != 0 || it < 0 || it >= j->n)
        return -1;
    for (s = 0; s < T_LOOP_SLOTS; s++)
        if (t_loop_is_effect(s) && t_loop_step_of(s) == step) {
            j->slot[it][s].lines++;
            return 0;
        }
    return -1;
}

int t_side_read(struct t_lj *j, const char *path, const char *tok, const char *ctx)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int stray = 0;

    if (!f)
        return 0; /* nothing ran yet */
    while (fgets(line, sizeof(line), f))
        if (side_line(j, line, tok) != 0) {
            fprintf(stderr, "  VIOLATION [%s] a line of %s that no effect writes: %s",
                    ctx, path, line);
            stray++;
        }
    fclose(f);
    return stray;
}

/* ---- the checks -------------------------------------------------------------------
 */

static json_t *expected_state(int n)
{
    json_t *seen = json_array();

    for (int i = 1; i <= n; i++)
        json_array_append_new(seen, json_integer(i));
    return json_pack("{s:i, s:i, s:o}", "n", n, "total", n, "seen", seen);
}

static int check_effect(const struct t_lj *j, int it, int s, bool final,
                        const char *ctx)
{
    const struct t_slot *sl = &j->slot[it][s];
    int errors = 0;

    if (sl->lines > sl->intents) {
        fprintf(stderr,
                "  VIOLATION [%s] effect %d.%d (step %c) ran %d time(s), the journal "
                "holds %d intent(s) (%d retried)\n",
                ctx, it, s, t_loop_step_of(s), sl->lines, sl->intents, sl->retries);
        errors++;
    }
    if (sl->at == T_SLOT_DONE && !sl->recovered && sl->lines == 0) {
        fprintf(stderr, "  VIOLATION [%s] effect %d.%d has an outcome but never ran\n",
                ctx, it, s);
        errors++;
    }
    if (final && sl->at != T_SLOT_DONE) {
        fprintf(stderr, "  VIOLATION [%s] the run ended without the outcome of %d.%d\n",
                ctx, it, s);
        errors++;
    }
    return errors;
}

static int check_final(const struct t_lj *j, const char *ctx)
{
    json_t *want = expected_state(j->n);
    int errors = 0;

    for (int it = 0; it < j->n; it++) {
        if (j->snaps[it] != 1 || j->slot[it][1].outcomes != 1) {
            fprintf(stderr,
                    "  VIOLATION [%s] iteration %d: %d snapshot(s), %d sleep(s)\n", ctx,
                    it, j->snaps[it], j->slot[it][1].outcomes);
            errors++;
        }
    }
    if (j->starts != 1 || j->terminated != 1 || j->run_done != 1) {
        fprintf(stderr, "  VIOLATION [%s] %d start(s), %d terminated, %d run-done\n",
                ctx, j->starts, j->terminated, j->run_done);
        errors++;
    }
    if (!j->state || !json_equal(j->state, want)) {
        char *got =
            j->state ? json_dumps(j->state, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_free_t free_fn = NULL;

        fprintf(stderr, "  VIOLATION [%s] final state %s\n", ctx, got ? got : "(none)");
        json_get_alloc_funcs(NULL, &free_fn);
        if (got && free_fn)
            free_fn(got);
        errors++;
    }
    json_decref(want);
    return errors;
}

int t_lj_check(const struct t_lj *j, bool final, const char *ctx)
{
    int errors = j->bad;

    for (int it = 0; it < j->n; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++)
            if (t_loop_is_effect(s))
                errors += check_effect(j, it, s, final, ctx);
    if (final)
        errors += check_final(j, ctx);
    return errors;
}

void t_lj_stats_add(const struct t_lj *j, struct t_lj_stats *st)
{
    for (int it = 0; it < j->n; it++)
        for (int s = 0; s < T_LOOP_SLOTS; s++) {
            const struct t_slot *sl = &j->slot[it][s];
            st->retried += sl->retries > 0;
            st->assumed += sl->assumed > 0;
            st->ran_twice += sl->lines > 1;
            st->uncertain_left += sl->at == T_SLOT_INTENT;
            st->assumed_lost += sl->assumed_lost;
        }
}

/* ---- processes ---------------------------------------------------------------------
 */

int64_t t_mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void t_orphans_adopt(void)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0)
        fprintf(stderr, "warning: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
}

/* Send SIGKILL to every child of this process and to its process group. */
static void kill_children(void)
{
    char path[64];
    FILE *f;
    int pid;

    snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
    f = fopen(path, "r");
    if (!f)
        return;
    while (fscanf(f, "%d", &pid) == 1) {
        if (getpgid(pid) == pid)
            kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    fclose(f);
}

int t_orphans_reap(bool kill)
{
    int64_t deadline = t_mono_us() + 5000000;
    int reaped = 0, st;

    if (kill)
        kill_children();
    for (;;) {
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            reaped++;
            continue;
        }
        if (p < 0 && errno == EINTR)
            continue;
        if (p < 0) /* ECHILD: none left */
            return reaped;
        if (t_mono_us() > deadline) {
            kill_children();
            deadline = INT64_MAX;
        }
        usleep(200);
    }
}

static void exec_child(char *const argv[], const char *cwd, const char *out_path)
{
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

    if (fd < 0 || in < 0 || chdir(cwd) != 0 || dup2(in, 0) < 0 || dup2(fd, 1) < 0 ||
        dup2(fd, 2) < 0)
        _exit(126);
    execv(argv[0], argv);
    _exit(127);
}

/* Wait until pid ends or until deadline (µs, monotonic): true if it ended. */
static bool wait_until(pid_t pid, int pidfd, int64_t deadline)
{
    siginfo_t si;

    for (;;) {
        int64_t left = deadline - t_mono_us();
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid == pid)
            return true;
        if (left <= 0)
            return false;
        if (pidfd >= 0) {
            struct pollfd pfd = {pidfd, POLLIN, 0};
            struct timespec ts = {(time_t)(left / 1000000),
                                  (long)(left % 1000000) * 1000};
            (void)ppoll(&pfd, 1, &ts, NULL);
        } else {
            usleep(left < 200 ? (useconds_t)left : 200);
        }
    }
}

int t_exec(char *const argv[], const char *cwd, const char *out_path,
           int64_t kill_after_us, struct t_exec_res *res)
{
    int64_t t0 = t_mono_us();
    int st = 0, pidfd;
    pid_t pid;

    memset(res, 0, sizeof(*res));
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        exec_child(argv, cwd, out_path);
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (kill_after_us >= 0 && !wait_until(pid, pidfd, t0 + kill_after_us))
        kill(pid, SIGKILL);
    if (pidfd >= 0)
        close(pidfd);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    res->us = t_mono_us() - t0;
    res->exited = WIFEXITED(st);
    res->code = res->exited ? WEXITSTATUS(st) : -1;
    res->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    res->killed = res->sig == SIGKILL;
    return 0;
}

void t_dump_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[1024];
    size_t n;

    if (!f)
        return;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, stderr);
    fclose(f);
}
