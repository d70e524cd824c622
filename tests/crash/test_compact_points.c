/*
 * test_compact_points.c -- every system call of a rotation (docs/loops.md,
 * "Compaction"; docs/format.md, "Segments"), failed and crashed in turn.
 *
 * The loop: iteration I runs one shell effect that appends "I" to side.txt
 * and increments state.n, until n reaches NIT; LIL_COMPACT_ITERATIONS=1,
 * so the run goes on in a new segment at every iteration boundary.  A calibration run
 * (in a child, as every case) reports, through a pipe, the fault table's call counts at
 * each effect's end and at each iteration's start: the calls between the two are the
 * snapshot's commit and the rotation (archive link, temporary segment, its sync, the
 * rename, the directory syncs, the keyed run's rollback record).
 *
 * For every call of every file kind in those windows (the fault is armed
 * at the window's start in the child, its call numbers counted from there,
 * and taken back at the window's end; open, pwrite,
 * fdatasync, fsync, ftruncate, fallocate, rename, link, unlink, mkdir):
 *   - EIO: the call fails; the life ends in an error (LIL_E_IO or
 *     LIL_E_POISONED, never a crash), or goes on when the failure was
 *     harmless;
 *   - crash: the process ends just before the call or just after it, and
 *     the power is cut (every change no sync covered kept, dropped, torn or
 *     garbled, seeded).
 * After each: the run opens read-only with its whole history (the start
 * record once, snapshots 0..k-1 each once, k at least the iterations
 * acknowledged before the fault), lil_run_check finds it intact (a torn
 * tail allowed) across every segment kept; then it is resumed to the end in
 * this process: state n == NIT, every effect ran exactly once (no effect
 * is in doubt at a rotation), snapshots 0..NIT-1 once each, check intact,
 * and no temporary file of a rotation is left.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faults.h"
#include "t.h"
#include "workload.h"

#define NIT      3 /* iterations: two rotations */
#define RUN_ID   "tick"
#define MAX_WIN  (NIT + 1)
#define T_KINDS  10 /* the file kinds: T_K_OPEN .. T_K_MKDIR */
#define MAX_REPS 64

static const char spec_text[] =
    "loopspec: \"0.1\"\n"
    "id: tick\n"
    "pattern: react\n"
    "state:\n"
    "  vars:\n"
    "    n: {type: int, init: 0}\n"
    "body:\n"
    "  - id: work\n"
    "    kind: shell\n"
    "    cmd: \"echo ${state.n} >> side.txt\"\n"
    "    on_done: {incr: n}\n"
    "terminate: {signal: state-predicate, until: \"${state.n >= 3}\"}\n"
    "caps: {max_iterations: 100, budget: {wallclock: 1h}}\n";

struct pcase {
    char dir[512], store[600], spec[600], side[600], pclog[600], ctx[200];
};

struct stats {
    long cases, fired, errors_ended, went_on, crashes, cuts, poisoned, io;
};

/* ---- one life -------------------------------------------------------------------- */

static int report_fd = -1;
/* The child's fault, armed at the end of effect arm_at (its call numbers
 * count from there) and taken back at the next iteration's start when it
 * has not fired: the calls of one window only. */
static struct t_fault armed;
static int64_t arm_at = -1;

/* "E it counts..." at an effect's end, "I it counts..." at an iteration's
 * start: the call counts of every file kind so far. */
static void on_progress(void *ud, const lil_loop_event *ev)
{
    char line[400];
    int n;

    (void)ud;
    if (report_fd < 0 ||
        (ev->kind != LIL_LOOP_EV_EFFECT_END && ev->kind != LIL_LOOP_EV_ITERATION))
        return;
    if (arm_at >= 0 && ev->kind == LIL_LOOP_EV_EFFECT_END && ev->iteration == arm_at)
        t_faults_arm(&armed);
    else if (arm_at >= 0 && ev->kind == LIL_LOOP_EV_ITERATION &&
             ev->iteration == arm_at + 1 && t_faults_fired() == 0)
        t_faults_reset();
    n = snprintf(line, sizeof(line), "%c %lld",
                 ev->kind == LIL_LOOP_EV_ITERATION ? 'I' : 'E',
                 (long long)ev->iteration);
    for (int k = 0; k < T_KINDS; k++)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %lu",
                      t_faults_count((enum t_kind)k));
    n += snprintf(line + n, sizeof(line) - (size_t)n, "\n");
    if (write(report_fd, line, (size_t)n) != n)
        _exit(4);
}

/* Whether the effect of iteration it appended its line. */
static bool side_has(const struct pcase *c, int64_t it)
{
    FILE *f = fopen(c->side, "r");
    int v;
    bool yes = false;

    while (f && fscanf(f, "%d", &v) == 1)
        yes |= v == it;
    if (f)
        fclose(f);
    return yes;
}

static lil_status loop_life(const struct pcase *c, lil_env *env, int *status)
{
    lil_loop_opts o;
    lil_loop_result res = {0};
    lil_store *st = NULL;
    lil_spec *spec = NULL;
    lil_loop *lp = NULL;
    lil_status rc;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.sync = LIL_SYNC_FULL;
    o.flags = LIL_LOOP_WAIT;
    o.cwd = c->dir;
    o.progress = on_progress;
    *status = -1;
    rc = lil_store_open(env, c->store, &st);
    if (rc == LIL_OK)
        rc = lil_spec_load(env, c->spec, NULL, &spec);
    if (rc == LIL_OK)
        rc = lil_loop_open(st, spec, &o, &lp);
    if (rc == LIL_OK)
        rc = lil_loop_run(lp, &res);
    /* A fault that came after an effect's intent, before its outcome (the
     * calls of an iteration vary a little from life to life): the side
     * file says whether it ran */
    if (rc == LIL_OK && report_fd < 0 && res.status == LIL_LOOP_UNCERTAIN &&
        res.has_uncertain) {
        bool ran = side_has(c, res.uncertain_iteration);
        lil_loop_result_free(&res);
        rc = lil_loop_recover(lp, ran ? LIL_RESOLVE_ASSUME_DONE : LIL_RESOLVE_RETRY,
                              ran ? "{\"code\":0,\"stdout\":\"\"}" : NULL, "crash test",
                              "the side file says", &res);
    }
    if (rc == LIL_OK && report_fd < 0 && res.status != LIL_LOOP_COMPLETED)
        fprintf(stderr, "  [%s] ended %s: %s\n", c->ctx,
                lil_loop_status_name(res.status), res.reason ? res.reason : "");
    if (rc == LIL_OK)
        *status = (int)res.status;
    else if (report_fd < 0)
        fprintf(stderr, "  [%s] %s: %s\n", c->ctx, lil_status_name(rc), lil_errmsg());
    lil_loop_result_free(&res);
    lil_loop_close(lp);
    lil_spec_free(spec);
    lil_store_close(st);
    return rc;
}

struct life_res {
    long counts[2 * MAX_WIN][T_KINDS]; /* E0 I1 E1 I2 ...: see windows() */
    char tags[2 * MAX_WIN];
    long its[2 * MAX_WIN];
    int nrep;
    int exited, code; /* code: the life's lil_status (negated), or T_CRASH_EXIT */
    int fired;
};

static void parse(struct life_res *lr, char *buf)
{
    char *save = NULL;

    for (char *line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *p = line + 1, *end;
        if (line[0] == 'F') {
            lr->fired = atoi(line + 2);
            continue;
        }
        if (lr->nrep >= 2 * MAX_WIN)
            continue;
        lr->tags[lr->nrep] = line[0];
        lr->its[lr->nrep] = strtol(p, &end, 10);
        for (int k = 0; k < T_KINDS; k++) {
            p = end;
            lr->counts[lr->nrep][k] = strtol(p, &end, 10);
        }
        lr->nrep++;
    }
}

/* A life in a child with fault f (NULL: none) armed in window w, and
 * tracking on. */
static int life(const struct pcase *c, const struct t_fault *f, int w,
                struct life_res *lr)
{
    static char buf[1 << 14];
    int fds[2], st = 0;
    size_t len = 0;
    ssize_t r;
    pid_t pid;

    memset(lr, 0, sizeof(*lr));
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        lil_env *env = t_env_faulty();
        int status;
        lil_status rc;
        char line[32];
        close(fds[0]);
        report_fd = fds[1];
        if (!env)
            _exit(2);
        t_faults_reset();
        if (f) {
            armed = *f;
            arm_at = w;
        }
        t_pc_track(c->pclog);
        rc = loop_life(c, env, &status);
        snprintf(line, sizeof(line), "F %lu\n", t_faults_fired());
        if (write(report_fd, line, strlen(line)) < 0)
            _exit(4);
        lil_env_free(env);
        _exit(rc == LIL_OK ? (status == LIL_LOOP_COMPLETED ? 0 : 3) : 10 - rc);
    }
    close(fds[1]);
    while ((r = read(fds[0], buf + len, sizeof(buf) - 1 - len)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(fds[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    lr->exited = WIFEXITED(st);
    lr->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    parse(lr, buf);
    return 0;
}

/* ---- the checks -------------------------------------------------------------------
 */

struct hist {
    int starts, snaps[NIT + 1], bad, records;
    uint64_t last_seq;
};

static int on_record(void *ud, const lil_record *rec)
{
    struct hist *h = ud;
    int it = -1;
    char tail[8] = "";

    h->records++;
    if (rec->seq <= h->last_seq)
        h->bad++;
    h->last_seq = rec->seq;
    if (rec->type != LIL_REC_STEP || !rec->key)
        return 0;
    if (strcmp(rec->key, "loop") == 0)
        h->starts++;
    else if (sscanf(rec->key, "%d.%7s", &it, tail) == 2 && strcmp(tail, "snap") == 0)
        h->snaps[it >= 0 && it < NIT ? it : NIT]++;
    return 0;
}

/* The run read back: its whole history, and lil_run_check. */
static int read_back(const struct pcase *c, int acked, bool final)
{
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    lil_check_report rep = {.struct_size = sizeof(rep)};
    struct hist h;
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_status rc;
    int errors = 0, k = 0;

    memset(&h, 0, sizeof(h));
    rc = lil_store_open(NULL, c->store, &st);
    if (rc == LIL_OK)
        rc = lil_run_open(st, RUN_ID, &ro, &run);
    if (rc == LIL_E_NOTFOUND && acked == 0 && !final) {
        lil_store_close(st);
        return 0; /* the run's creation itself was cut short */
    }
    if (rc == LIL_OK)
        rc = lil_run_foreach(run, on_record, &h);
    lil_run_close(run);
    if (rc != LIL_OK) {
        fprintf(stderr, "  VIOLATION [%s] the run does not read back: %s: %s\n", c->ctx,
                lil_status_name(rc), lil_store_errmsg(st));
        if (getenv("LIL_CP_KEEP")) {
            char cmd[1400];
            snprintf(cmd, sizeof(cmd), "cp -a %s %s", c->dir, getenv("LIL_CP_KEEP"));
            (void)system(cmd);
        }
        lil_store_close(st);
        return 1;
    }
    if (lil_run_check(st, RUN_ID, 0, &rep) != LIL_OK || !rep.intact) {
        fprintf(stderr, "  VIOLATION [%s] check: %s\n", c->ctx, rep.message);
        errors++;
    }
    lil_store_close(st);
    while (k < NIT && h.snaps[k] == 1)
        k++;
    for (int i = k; i <= NIT; i++)
        if (h.snaps[i])
            k = -1;
    if (h.starts != 1 || h.bad || k < 0 || k < acked || (final && k != NIT)) {
        fprintf(stderr,
                "  VIOLATION [%s] history: %d start records, %d out of order, "
                "snapshots 0..%d (acknowledged %d)%s\n",
                c->ctx, h.starts, h.bad, k - 1, acked, final ? ", at the end" : "");
        errors++;
    }
    return errors;
}

static int side_check(const struct pcase *c)
{
    FILE *f = fopen(c->side, "r");
    int seen[NIT] = {0}, v, errors = 0;

    while (f && fscanf(f, "%d", &v) == 1)
        if (v >= 0 && v < NIT)
            seen[v]++;
    if (f)
        fclose(f);
    for (int i = 0; i < NIT; i++)
        if (seen[i] != 1) {
            fprintf(stderr, "  VIOLATION [%s] effect %d ran %d times\n", c->ctx, i,
                    seen[i]);
            errors++;
        }
    return errors;
}

static int temps_left(const struct pcase *c)
{
    DIR *d = opendir(c->store);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".rot.")) {
            fprintf(stderr, "  VIOLATION [%s] %s left\n", c->ctx, e->d_name);
            n++;
        }
    if (d)
        closedir(d);
    return n;
}

/* ---- the cases --------------------------------------------------------------------
 */

static int case_init(struct pcase *c, const char *what)
{
    FILE *f;

    memset(c, 0, sizeof(*c));
    snprintf(c->dir, sizeof(c->dir), "%s", t_path("case"));
    snprintf(c->store, sizeof(c->store), "%s/store", c->dir);
    snprintf(c->spec, sizeof(c->spec), "%s/loop.yaml", c->dir);
    snprintf(c->side, sizeof(c->side), "%s/side.txt", c->dir);
    snprintf(c->pclog, sizeof(c->pclog), "%s/pc.log", t_tmpdir());
    snprintf(c->ctx, sizeof(c->ctx), "%s", what);
    t_rmtree(c->dir);
    if (mkdir(c->dir, 0700) != 0 || !(f = fopen(c->spec, "w")))
        return -1;
    fputs(spec_text, f);
    fclose(f);
    t_store_prepare(c->store);
    t_pc_forget(c->pclog);
    return 0;
}

/* Iterations acknowledged before the life ended: an iteration's start
 * follows the commit (synced: sync full) of the one before. */
static int acked_of(const struct life_res *lr)
{
    int acked = 0;

    for (int i = 0; i < lr->nrep; i++)
        if (lr->tags[i] == 'I' && i + 1 < lr->nrep) /* a report after it: it returned */
            acked = (int)lr->its[i];
    return acked;
}

static int one_case(const struct t_fault *f, int w, bool crash, const char *what,
                    struct stats *st)
{
    struct life_res lr;
    struct pcase c;
    int errors = 0, status = -1;

    if (case_init(&c, what) != 0 || life(&c, f, w, &lr) != 0)
        return 1;
    st->cases++;
    if (crash && lr.code != T_CRASH_EXIT) {
        t_pc_forget(c.pclog); /* the window ended first: no crash */
    } else if (crash) {
        st->fired++;
        st->crashes++;
        if (t_pc_apply(c.pclog, f->seed, T_PC_RANDOM, NULL) != 0)
            return 1;
        st->cuts++;
    } else {
        t_pc_forget(c.pclog);
        st->fired += lr.fired > 0;
        if (!lr.exited || lr.code == 2 || lr.code == 4) {
            fprintf(stderr, "  VIOLATION [%s] the life ended abnormally (%d)\n", what,
                    lr.code);
            errors++;
        }
        st->went_on += lr.code == 0;
        st->errors_ended += lr.code >= 10;
        st->io += lr.code == 10 - LIL_E_IO;
        st->poisoned += lr.code == 10 - LIL_E_POISONED;
    }
    errors += read_back(&c, acked_of(&lr), false);
    if (errors == 0 && loop_life(&c, NULL, &status) == LIL_OK &&
        status != LIL_LOOP_COMPLETED) {
        fprintf(stderr, "  VIOLATION [%s] the resumed run ended %d\n", what, status);
        errors++;
    }
    if (errors == 0) {
        errors += read_back(&c, NIT, true);
        errors += side_check(&c);
        errors += temps_left(&c);
    }
    return errors;
}

/* The windows of a calibration life: for window w, the counts at effect
 * w's end (from) and at iteration w+1's start (to). */
static int windows(const struct life_res *lr, long from[][T_KINDS], long to[][T_KINDS])
{
    int n = 0;

    for (int i = 0; i + 1 < lr->nrep && n < MAX_WIN; i++)
        if (lr->tags[i] == 'E' && lr->tags[i + 1] == 'I') {
            memcpy(from[n], lr->counts[i], sizeof(from[n]));
            memcpy(to[n], lr->counts[i + 1], sizeof(to[n]));
            n++;
        }
    return n;
}

static const enum t_kind kinds[T_KINDS] = {
    T_K_OPEN,      T_K_PWRITE, T_K_FDATASYNC, T_K_FSYNC,  T_K_FTRUNCATE,
    T_K_FALLOCATE, T_K_RENAME, T_K_LINK,      T_K_UNLINK, T_K_MKDIR};

T_TEST(compact_points)
{
    long from[MAX_WIN][T_KINDS], to[MAX_WIN][T_KINDS];
    long per_kind[T_KINDS] = {0};
    struct stats st;
    struct life_res cal;
    struct pcase c;
    int nwin, errors = 0;
    const char *only = getenv("LIL_CP_ONLY"); /* replays the cases named so */

    memset(&st, 0, sizeof(st));
    T_REQUIRE(setenv("LIL_COMPACT_ITERATIONS", "1", 1) == 0);
    T_REQUIRE(case_init(&c, "calibration") == 0 && life(&c, NULL, -1, &cal) == 0);
    T_EQ_I64(cal.code, 0);
    nwin = windows(&cal, from, to);
    T_EQ_I64(nwin, NIT); /* an iteration boundary after each effect */
    for (int w = 0; w < nwin && errors == 0; w++)
        for (int k = 0; k < T_KINDS && errors == 0; k++)
            for (long nth = 1; nth <= to[w][k] - from[w][k] && errors == 0; nth++) {
                for (int a = 0; a < 3 && errors == 0; a++) {
                    static const enum t_action acts[3] = {T_ACT_ERR, T_ACT_CRASH,
                                                          T_ACT_CRASH_AFTER};
                    struct t_fault f = {kinds[k], (unsigned long)nth,
                                        acts[a],  EIO,
                                        0,        (uint64_t)(nth * 131 + w * 7 + a)};
                    char what[120];
                    snprintf(what, sizeof(what), "rotation %d: %s #%ld %s", w,
                             t_kind_name(kinds[k]), nth, t_action_name(acts[a]));
                    if (only && !strstr(what, only))
                        continue;
                    errors += one_case(&f, w, a != 0, what, &st);
                }
                per_kind[k]++;
            }
    T_EQ_I64(errors, 0);
    printf("compact points: %d rotations; calls per kind:", nwin);
    for (int k = 0; k < T_KINDS; k++)
        if (per_kind[k])
            printf(" %s %ld", t_kind_name(kinds[k]), per_kind[k]);
    printf("; %ld cases, %ld faults fired; EIO: %ld ended in LIL_E_IO, %ld in "
           "LIL_E_POISONED, %ld went on; %ld crashes, %ld power cuts\n",
           st.cases, st.fired, st.io, st.poisoned, st.went_on, st.crashes, st.cuts);
    T_CHECK(per_kind[7] > 0 && per_kind[6] > 0); /* the link and the rename */
    T_CHECK(st.fired >= st.cases * 9 / 10);
}

T_MAIN()
