/*
 * serve_lab.c -- the crash lab of `lil serve` (serve.h; docs/serve.md,
 * "The crash lab"): the bundled demo loop run, SIGKILLed mid-step,
 * resumed and recovered, counted by the demo's own side file.
 *
 * One lab run at a time per server.  Start makes a private directory
 * (mkdtemp under $TMPDIR, 0700) holding the demo spec (lab/demo.yaml,
 * compiled in) and its side file, picks a fresh run id crash-lab-<8 hex>
 * and runs `lil run SPEC --run-id ID --json --progress json` as a child
 * (cli/jobs.h).  Each step of the demo appends `start NAME` and `done NAME`
 * to the side file; each tick reads what was appended since the last one.
 *
 * Kill freezes the child and everything it started (SIGSTOP to its process
 * group, then to the groups of its children: a shell step leads a session
 * of its own, which a signal to lil's group does not reach), reads the
 * side file, and only when a step is in flight (its start is the last
 * line) SIGKILLs them all; otherwise it lets them go on (SIGCONT) and
 * answers 409.  Frozen first, nothing can end or begin between the look
 * and the kill: the step killed has a start and no done, its intent is in
 * the journal without an outcome, and no completed step can have written
 * its done without the journal knowing.  Resume (`lil resume`) then finds
 * the effect uncertain; recover (`lil recover --retry`, with the session's
 * actor) runs it again and the run goes on to completed.  A completed step
 * that ran twice would show two dones: `duplicates` counts such steps.
 *
 * What the lab holds is in memory: a new server starts idle.  Its
 * directory goes when a new lab run starts or the server stops (unless a
 * child still runs then).  Every change is broadcast as a "lab" event.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "serve_lab_yaml.h" /* bp_demo: lab/demo.yaml */

#define LAB_STEPS_MAX  32
#define LAB_NAME_MAX   64
#define LAB_LOG_MAX    200  /* lines kept in the log, the oldest dropped */
#define LAB_GROUPS_MAX 64   /* process groups frozen at a kill */
#define LAB_WAIT_MS    1000 /* how long a kill waits for a group to stop or die */
#define LAB_SPEC_NAME  "demo.yaml"
#define LAB_SIDE_NAME  "side.txt"
#define LAB_LINE_MAX   (LAB_NAME_MAX + 16)

enum lab_state {
    LAB_IDLE,
    LAB_RUNNING,
    LAB_KILLED,
    LAB_UNCERTAIN,
    LAB_COMPLETED,
    LAB_FAILED
};

static const char *const lab_words[] = {"idle",      "running",   "killed",
                                        "uncertain", "completed", "failed"};

/* What the child running the loop is. */
enum lab_verb { LAB_RUN, LAB_RESUME, LAB_RECOVER };

struct lab_step {
    char name[LAB_NAME_MAX + 1];
    int started, done; /* counted in the side file */
};

struct serve_lab {
    enum lab_state state;
    char run[32];        /* "crash-lab-<8 hex>", or "" before the first start */
    char *dir;           /* the private directory, or NULL */
    char *spec_path;     /* dir/demo.yaml */
    char *side_path;     /* dir/side.txt */
    struct cli_job *job; /* the child running the loop, or NULL */
    pid_t pid;           /* its pid, or 0 */
    enum lab_verb verb;  /* what it is */
    char actor[256];     /* who asked for it (resume, recover) */
    bool told_progress;  /* the child's first progress line was seen */
    int kills;           /* SIGKILLs of this lab run */
    struct lab_step steps[LAB_STEPS_MAX];
    size_t n_steps;  /* the demo's body, in order */
    off_t side_read; /* bytes of the side file counted */
    int in_flight;   /* the step whose start is the last line, or -1 */
    json_t *log;     /* [{"ms", "text"}], newest last */
    bool changed;    /* broadcast at the next tick */
};

/* ---- the document ----------------------------------------------------------- */

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One line of the log, with the time. */
static void lab_log(struct serve_lab *lab, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void lab_log(struct serve_lab *lab, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    while (json_array_size(lab->log) >= LAB_LOG_MAX)
        json_array_remove(lab->log, 0);
    json_array_append_new(
        lab->log, json_pack("{s:I,s:s}", "ms", (json_int_t)wall_ms(), "text", text));
    lab->changed = true;
}

static int lab_duplicates(const struct serve_lab *lab)
{
    int n = 0;

    for (size_t i = 0; i < lab->n_steps; i++)
        if (lab->steps[i].done > 1)
            n++;
    return n;
}

static int lab_steps_done(const struct serve_lab *lab)
{
    int n = 0;

    for (size_t i = 0; i < lab->n_steps; i++)
        if (lab->steps[i].done > 0)
            n++;
    return n;
}

static json_t *lab_steps_json(const struct serve_lab *lab)
{
    json_t *steps = json_array();

    for (size_t i = 0; steps && i < lab->n_steps; i++)
        json_array_append_new(
            steps, json_pack("{s:s,s:i,s:i}", "name", lab->steps[i].name, "started",
                             lab->steps[i].started, "done", lab->steps[i].done));
    return steps;
}

/* The lab's document (docs/serve.md), or NULL when out of memory. */
static json_t *lab_doc(const struct serve_lab *lab)
{
    return json_pack("{s:s,s:o,s:o,s:o,s:o,s:i,s:i,s:O}", "state",
                     lab_words[lab->state], "run",
                     lab->run[0] ? json_string(lab->run) : json_null(), "pid",
                     lab->pid > 0 ? json_integer(lab->pid) : json_null(), "step",
                     lab->in_flight >= 0 ? json_string(lab->steps[lab->in_flight].name)
                                         : json_null(),
                     "steps", lab_steps_json(lab), "duplicates", lab_duplicates(lab),
                     "kills", lab->kills, "log", lab->log);
}

/* Tell every event stream what the lab is now. */
static void lab_broadcast(struct serve *srv)
{
    json_t *doc = lab_doc(srv->lab);

    srv->lab->changed = false;
    if (doc)
        serve_broadcast(srv, "lab", NULL, doc);
    json_decref(doc);
}

/* ---- the demo's steps ------------------------------------------------------- */

/* The ids of the demo's body, from its normalized spec: 0, or -1. */
static int lab_read_steps(struct serve *srv, struct serve_lab *lab)
{
    lil_spec *spec = NULL;
    lil_bytes js = {0};
    json_t *doc = NULL, *body, *step;
    size_t i;

    if (lil_spec_parse(srv->env, LAB_SPEC_NAME, (const char *)bp_demo,
                       sizeof(bp_demo) - 1, NULL, &spec) == LIL_OK &&
        lil_spec_json(spec, &js) == LIL_OK)
        doc = json_loadb(js.data, js.len, 0, NULL);
    lil_free(js.data);
    lil_spec_free(spec);
    body = json_object_get(doc, "body");
    json_array_foreach(body, i, step)
    {
        const char *id = json_string_value(json_object_get(step, "id"));

        if (!id || strlen(id) > LAB_NAME_MAX || lab->n_steps == LAB_STEPS_MAX)
            break;
        snprintf(lab->steps[lab->n_steps++].name, LAB_NAME_MAX + 1, "%s", id);
    }
    json_decref(doc);
    return lab->n_steps > 0 ? 0 : -1;
}

static int lab_step_index(const struct serve_lab *lab, const char *name)
{
    for (size_t i = 0; i < lab->n_steps; i++)
        if (strcmp(lab->steps[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* One whole line of the side file: `start NAME` or `done NAME`. */
static void lab_count_line(struct serve_lab *lab, const char *line)
{
    int i;

    if (strncmp(line, "start ", 6) == 0 && (i = lab_step_index(lab, line + 6)) >= 0) {
        lab->steps[i].started++;
        lab->in_flight = i;
    } else if (strncmp(line, "done ", 5) == 0 &&
               (i = lab_step_index(lab, line + 5)) >= 0) {
        lab->steps[i].done++;
        lab->in_flight = -1;
    }
}

/* Count the whole lines appended to the side file since the last call
 * (each is one append); true when there were some. */
static bool lab_read_side(struct serve_lab *lab)
{
    char buf[4096];
    bool any = false;
    ssize_t n;
    int fd;

    if (!lab->side_path || (fd = open(lab->side_path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    while ((n = pread(fd, buf, sizeof(buf) - 1, lab->side_read)) > 0) {
        char *line = buf, *nl;

        buf[n] = '\0';
        while ((nl = memchr(line, '\n', (size_t)(buf + n - line))) != NULL) {
            *nl = '\0';
            lab_count_line(lab, line);
            line = nl + 1;
            any = true;
        }
        if (line == buf && n < (ssize_t)sizeof(buf) - 1)
            break; /* a line not yet whole */
        if (line == buf)
            line += n; /* a line too long for the demo: skipped */
        lab->side_read += line - buf;
    }
    close(fd);
    if (any)
        lab->changed = true;
    return any;
}

/* ---- the lab's directory ---------------------------------------------------- */

static void lab_remove_dir(struct serve_lab *lab)
{
    if (lab->spec_path)
        unlink(lab->spec_path);
    if (lab->side_path)
        unlink(lab->side_path);
    if (lab->dir)
        rmdir(lab->dir);
    free(lab->dir);
    free(lab->spec_path);
    free(lab->side_path);
    lab->dir = lab->spec_path = lab->side_path = NULL;
}

/* a, sep and b (malloc), or NULL. */
static char *join3(const char *a, const char *sep, const char *b)
{
    size_t len = strlen(a) + strlen(sep) + strlen(b) + 1;
    char *p = malloc(len);

    if (p)
        snprintf(p, len, "%s%s%s", a, sep, b);
    return p;
}

static char *path_join(const char *dir, const char *name)
{
    return join3(dir, "/", name);
}

static char *concat(const char *a, const char *b)
{
    return join3(a, "", b);
}

/* Write len bytes to a new file at path (0600): 0, or -1 with errno. */
static int write_new_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const char *p = data;
    int rc = 0;

    if (fd < 0)
        return -1;
    while (len > 0 && rc == 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno != EINTR)
            rc = -1;
        else if (n > 0) {
            p += n;
            len -= (size_t)n;
        }
    }
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

/* A new private directory holding the spec and an empty side file: 0, or
 * -1 with the reason in err. */
static int lab_make_dir(struct serve_lab *lab, char *err, size_t err_len)
{
    char *tmp = NULL, *templ;

    if (lil_setting("TMPDIR", &tmp) == LIL_E_NOMEM) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    templ = path_join(tmp && *tmp ? tmp : "/tmp", "lil-lab-XXXXXX");
    lil_free(tmp);
    if (!templ || !mkdtemp(templ)) {
        snprintf(err, err_len, "cannot make the lab's directory: %s", strerror(errno));
        free(templ);
        return -1;
    }
    lab->dir = templ;
    lab->spec_path = path_join(templ, LAB_SPEC_NAME);
    lab->side_path = path_join(templ, LAB_SIDE_NAME);
    if (!lab->spec_path || !lab->side_path ||
        write_new_file(lab->spec_path, bp_demo, sizeof(bp_demo) - 1) != 0 ||
        write_new_file(lab->side_path, "", 0) != 0) {
        snprintf(err, err_len, "cannot write the lab's files in %s: %s", templ,
                 strerror(errno));
        lab_remove_dir(lab);
        return -1;
    }
    return 0;
}

/* A fresh run id, crash-lab-<8 hex>: 0, or -1. */
static int lab_new_run_id(struct serve_lab *lab)
{
    unsigned char r[4];

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return -1;
    snprintf(lab->run, sizeof(lab->run), "crash-lab-%02x%02x%02x%02x", r[0], r[1], r[2],
             r[3]);
    return 0;
}

/* Forget the last lab run: its directory, counts and log. */
static void lab_reset(struct serve_lab *lab)
{
    lab_remove_dir(lab);
    for (size_t i = 0; i < lab->n_steps; i++)
        lab->steps[i].started = lab->steps[i].done = 0;
    lab->side_read = 0;
    lab->in_flight = -1;
    lab->kills = 0;
    lab->run[0] = '\0';
    json_array_clear(lab->log);
    lab->state = LAB_IDLE;
    lab->changed = true;
}

/* The server's lab, made at its first use; NULL when out of memory or when
 * the demo cannot be read. */
static struct serve_lab *lab_get(struct serve *srv)
{
    struct serve_lab *lab = srv->lab;

    if (lab)
        return lab;
    lab = calloc(1, sizeof(*lab));
    if (!lab)
        return NULL;
    lab->log = json_array();
    lab->in_flight = -1;
    if (!lab->log || lab_read_steps(srv, lab) != 0) {
        json_decref(lab->log);
        free(lab);
        return NULL;
    }
    srv->lab = lab;
    return lab;
}

/* ---- freezing and killing the child with what it started -------------------- */

struct proc_stat {
    char state; /* R S D T t Z X ... */
    pid_t ppid, pgid;
};

/* /proc/PID/stat's state, parent and group: 0, or -1 (gone). */
static int proc_stat_read(pid_t pid, struct proc_stat *ps)
{
    char path[64], buf[1024];
    const char *rp;
    char *end;
    long ppid, pgid;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    rp = strrchr(buf, ')'); /* the command's name may hold anything */
    if (!rp || rp[1] != ' ' || !rp[2] || rp[3] != ' ')
        return -1;
    ps->state = rp[2]; /* ") S PPID PGID ..." */
    ppid = strtol(rp + 4, &end, 10);
    pgid = strtol(end, &end, 10);
    if (*end != ' ' || ppid < 0 || pgid <= 0)
        return -1;
    ps->ppid = (pid_t)ppid;
    ps->pgid = (pid_t)pgid;
    return 0;
}

/* The process groups of a lab child: its own first (it leads its session),
 * then those its children lead (a shell step leads a session of its own). */
struct lab_groups {
    pid_t id[LAB_GROUPS_MAX];
    size_t n;
    bool moving; /* scan_moving found a process not yet stopped */
};

static bool groups_has(const struct lab_groups *g, pid_t id)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->id[i] == id)
            return true;
    return false;
}

/* fn for each process of /proc. */
static void proc_each(void (*fn)(const struct proc_stat *ps, struct lab_groups *g),
                      struct lab_groups *g)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        struct proc_stat ps;

        if (*end == '\0' && pid > 0 && proc_stat_read((pid_t)pid, &ps) == 0)
            fn(&ps, g);
    }
    closedir(d);
}

/* A child of the lab's child: the group it leads joins g. */
static void scan_children(const struct proc_stat *ps, struct lab_groups *g)
{
    if (ps->ppid == g->id[0] && !groups_has(g, ps->pgid) && g->n < LAB_GROUPS_MAX)
        g->id[g->n++] = ps->pgid;
}

/* A process of g neither stopped nor dead. */
static void scan_moving(const struct proc_stat *ps, struct lab_groups *g)
{
    if (groups_has(g, ps->pgid) && !strchr("TtZX", ps->state))
        g->moving = true;
}

static void groups_signal(const struct lab_groups *g, size_t from, int sig)
{
    for (size_t i = from; i < g->n; i++)
        kill(-g->id[i], sig);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};

    nanosleep(&ts, NULL);
}

/* Every process of g has stopped (or died): true; false after LAB_WAIT_MS. */
static bool groups_wait_stopped(struct lab_groups *g)
{
    for (int waited = 0; waited <= LAB_WAIT_MS; waited += 2) {
        g->moving = false;
        proc_each(scan_moving, g);
        if (!g->moving)
            return true;
        sleep_ms(2);
    }
    return false;
}

/* Wait until pid has died (a zombie, or reaped): its locks are released. */
static void wait_dead(pid_t pid)
{
    struct proc_stat ps;

    for (int waited = 0; waited <= LAB_WAIT_MS; waited += 2) {
        if (proc_stat_read(pid, &ps) != 0 || ps.state == 'Z' || ps.state == 'X')
            return;
        sleep_ms(2);
    }
}

/* Stop the child (pid, which leads its group) first, so that it starts
 * nothing more, then the groups of its children: 0, or -1 when they did
 * not all stop (they are let go on). */
static int lab_freeze(pid_t pid, struct lab_groups *g)
{
    g->id[0] = pid;
    g->n = 1;
    kill(-pid, SIGSTOP);
    if (groups_wait_stopped(g)) {
        proc_each(scan_children, g);
        groups_signal(g, 1, SIGSTOP);
        if (groups_wait_stopped(g))
            return 0;
    }
    groups_signal(g, 0, SIGCONT);
    return -1;
}

/* SIGKILL the lab's child and every group it started, when a step is in
 * flight: the step's index; -1 when none is (everything goes on), -2 when
 * they could not be stopped to look. */
static int lab_kill_in_flight(struct serve_lab *lab)
{
    struct lab_groups g;

    if (lab_freeze(lab->pid, &g) != 0)
        return -2;
    lab_read_side(lab);
    if (lab->in_flight < 0 || g.n < 2) { /* no step's start last, or no step */
        groups_signal(&g, 0, SIGCONT);
        return -1;
    }
    groups_signal(&g, 1, SIGKILL);
    kill(-lab->pid, SIGKILL);
    wait_dead(lab->pid);
    return lab->in_flight;
}

/* ---- the child ---------------------------------------------------------------- */

#define LAB_RESUME_REASON  "crash lab: resume after the kill"
#define LAB_RECOVER_REASON "crash lab: retry the interrupted step"

static const char *const verb_words[] = {"run", "resume", "recover"};

static void lab_log_replay(struct serve_lab *lab, int k)
{
    if (k <= 0)
        lab_log(lab, "resumed: no step to replay from the journal");
    else if (k == 1)
        lab_log(lab, "resumed: step 1 replayed from the journal");
    else
        lab_log(lab, "resumed: steps 1-%d replayed from the journal", k);
}

/* A progress line of the child (cli.md, "Progress of the loop verbs"). */
static void lab_on_line(struct cli_job *job, const char *line, void *ud)
{
    struct serve_lab *lab = ((struct serve *)ud)->lab;
    json_t *ev = json_loads(line, 0, NULL);
    const char *event = json_string_value(json_object_get(ev, "event"));
    const char *step = json_string_value(json_object_get(ev, "step"));

    (void)job; /* the lab's: a job killed was detached, and calls no more */
    if (lab && lab->job && event && !lab->told_progress) {
        if (lab->verb == LAB_RECOVER) { /* the recovery is journaled */
            lab_log(lab, "recovered by %s: retry", lab->actor);
            lab->told_progress = true;
        } else if (lab->verb == LAB_RESUME && strcmp(event, "effect_start") == 0) {
            lab_log_replay(lab, step ? lab_step_index(lab, step) : -1);
            lab->told_progress = true;
        }
    }
    json_decref(ev);
}

/* The last line of text that is not empty, into out. */
static void last_line(const char *text, char *out, size_t len)
{
    const char *end = text + strlen(text), *start;

    while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
        end--;
    start = end;
    while (start > text && start[-1] != '\n')
        start--;
    snprintf(out, len, "%.*s", (int)(end - start), start);
}

static void lab_end_completed(struct serve_lab *lab)
{
    if (lab->verb == LAB_RESUME && !lab->told_progress)
        lab_log_replay(lab, (int)lab->n_steps);
    if (lab->verb == LAB_RECOVER && !lab->told_progress)
        lab_log(lab, "recovered by %s: retry", lab->actor);
    lab->state = LAB_COMPLETED;
    lab_log(lab, "completed: %d steps, %d duplicates", lab_steps_done(lab),
            lab_duplicates(lab));
}

/* The run is uncertain (exit 2): which step, from the result's "uncertain". */
static void lab_end_uncertain(struct serve_lab *lab, json_t *res)
{
    json_t *seq = json_object_get(json_object_get(res, "uncertain"), "seq");
    int k = json_is_integer(seq) ? (int)json_integer_value(seq) : lab->in_flight;

    if (lab->verb == LAB_RESUME && !lab->told_progress)
        lab_log_replay(lab, k);
    lab->state = LAB_UNCERTAIN;
    if (k >= 0 && (size_t)k < lab->n_steps)
        lab_log(lab, "step %d %s uncertain: its outcome is unknown", k + 1,
                lab->steps[k].name);
    else
        lab_log(lab, "uncertain: an effect's outcome is unknown");
}

/* Any other end: a status the lab does not go on from, or a refusal
 * (usage 64, held by another process 75), after which the lab is where it
 * was before. */
static void lab_end_other(struct serve_lab *lab, json_t *res,
                          const struct cli_job_end *end)
{
    static const enum lab_state before[] = {LAB_FAILED, LAB_KILLED, LAB_UNCERTAIN};

    const char *status = json_string_value(json_object_get(res, "status"));
    const char *reason = json_string_value(json_object_get(res, "reason"));
    char why[300];

    if (reason)
        snprintf(why, sizeof(why), "%s", reason);
    else
        last_line(end->err, why, sizeof(why));
    lab->state =
        end->exit_code == 64 || end->exit_code == 75 ? before[lab->verb] : LAB_FAILED;
    lab_log(lab, "lil %s ended %s (exit %d): %s", verb_words[lab->verb],
            status ? status : "without a result", end->exit_code, why);
}

static void lab_on_end(struct cli_job *job, const struct cli_job_end *end, void *ud)
{
    struct serve *srv = ud;
    struct serve_lab *lab = srv->lab;
    json_t *res;

    (void)job; /* the lab's: a job killed was detached, and calls no more */
    if (!lab || !lab->job)
        return;
    lab->job = NULL;
    lab->pid = 0;
    lab_read_side(lab);
    res = json_loads(end->out, 0, NULL);
    if (end->exit_code == 0)
        lab_end_completed(lab);
    else if (end->exit_code == 2)
        lab_end_uncertain(lab, res);
    else
        lab_end_other(lab, res, end);
    json_decref(res);
    serve_index_touch(srv, lab->run);
    lab->changed = true;
}

/* Start `lil VERB SPEC --run-id ID ... --json --progress json` for the
 * lab: 0, or -1 with the reason in err. */
static int lab_spawn(struct serve *srv, enum lab_verb verb, const char *actor,
                     char *err, size_t err_len)
{
    struct serve_lab *lab = srv->lab;
    char *input = concat("side_file=", lab->side_path);
    const char *argv[20];
    size_t n = 0;
    int rc;

    if (!input) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    argv[n++] = verb_words[verb];
    argv[n++] = lab->spec_path;
    argv[n++] = "--run-id";
    argv[n++] = lab->run;
    if (verb == LAB_RUN) {
        argv[n++] = "--input";
        argv[n++] = input;
    }
    if (verb == LAB_RECOVER)
        argv[n++] = "--retry";
    if (verb != LAB_RUN) {
        argv[n++] = "--actor";
        argv[n++] = actor;
        argv[n++] = "--reason";
        argv[n++] = verb == LAB_RESUME ? LAB_RESUME_REASON : LAB_RECOVER_REASON;
    }
    argv[n++] = "--json";
    argv[n++] = "--progress";
    argv[n++] = "json";
    argv[n] = NULL;
    rc = cli_job_start(&srv->jobs, argv, lab_on_line, lab_on_end, srv, &lab->job, err,
                       err_len);
    free(input);
    if (rc != 0)
        return -1;
    lab->pid = cli_job_pid(lab->job);
    lab->verb = verb;
    lab->told_progress = false;
    snprintf(lab->actor, sizeof(lab->actor), "%s", actor ? actor : "");
    lab->state = LAB_RUNNING;
    lab->changed = true;
    return 0;
}

/* ---- the routes ---------------------------------------------------------------- */

/* Broadcast the lab and answer its document. */
static void lab_answer(struct serve *srv, struct serve_answer *a)
{
    lab_broadcast(srv);
    serve_ok(a, lab_doc(srv->lab));
}

/* The server's lab, or NULL after a 500 answered. */
static struct serve_lab *lab_or_fail(struct serve *srv, struct serve_answer *a)
{
    struct serve_lab *lab = lab_get(srv);

    if (!lab)
        serve_fail(a, 500,
                   "the crash lab cannot be set up: out of memory, or its demo "
                   "loop does not load");
    return lab;
}

void serve_get_lab(struct serve_call *c, struct serve_answer *a)
{
    struct serve_lab *lab = lab_or_fail(c->srv, a);

    if (!lab)
        return;
    lab_read_side(lab);
    serve_ok(a, lab_doc(lab));
}

/* A new run of the demo, in a new directory. */
static int lab_start(struct serve *srv, char *err, size_t err_len)
{
    struct serve_lab *lab = srv->lab;

    lab_reset(lab);
    if (lab_new_run_id(lab) != 0) {
        snprintf(err, err_len, "cannot draw a run id: %s", strerror(errno));
        return -1;
    }
    if (lab_make_dir(lab, err, err_len) != 0 ||
        lab_spawn(srv, LAB_RUN, NULL, err, err_len) != 0)
        return -1;
    lab_log(lab, "started %s: %zu steps of about a second each", lab->run,
            lab->n_steps);
    return 0;
}

void serve_post_lab_start(struct serve_call *c, struct serve_answer *a)
{
    struct serve_lab *lab = lab_or_fail(c->srv, a);
    char err[512];

    if (!lab)
        return;
    if (lab->job || lab->state == LAB_KILLED || lab->state == LAB_UNCERTAIN) {
        serve_fail(
            a, 409,
            "the lab's run %s is not over (%s): kill, resume or recover it first",
            lab->run, lab_words[lab->state]);
        return;
    }
    if (lab_start(c->srv, err, sizeof(err)) != 0) {
        lab->state = LAB_FAILED;
        lab_log(lab, "cannot start: %s", err);
        lab_broadcast(c->srv);
        serve_fail(a, 500, "%s", err);
        return;
    }
    serve_index_touch(c->srv, lab->run);
    lab_answer(c->srv, a);
}

void serve_post_lab_kill(struct serve_call *c, struct serve_answer *a)
{
    struct serve_lab *lab = lab_or_fail(c->srv, a);
    pid_t pid;
    int k;

    if (!lab)
        return;
    if (!lab->job) {
        serve_fail(a, 409, "nothing runs in the lab (%s)", lab_words[lab->state]);
        return;
    }
    pid = lab->pid;
    k = lab_kill_in_flight(lab);
    if (k < 0) {
        serve_fail(a, 409,
                   k == -1 ? "no step is in flight right now: try again"
                           : "the lab's processes did not stop: try again");
        return;
    }
    cli_job_detach(lab->job); /* reaped by the jobs; its end is the kill */
    lab->job = NULL;
    lab->pid = 0;
    lab->state = LAB_KILLED;
    lab->kills++;
    lab_log(lab, "killed at step %d %s (pid %d)", k + 1, lab->steps[k].name, (int)pid);
    serve_index_touch(c->srv, lab->run);
    lab_answer(c->srv, a);
}

/* Run the next verb from state from: the lab's answer, or 409. */
static void lab_go_on(struct serve_call *c, struct serve_answer *a, enum lab_state from,
                      enum lab_verb verb)
{
    struct serve_lab *lab = lab_or_fail(c->srv, a);
    char actor[256], err[512];

    if (!lab)
        return;
    if (lab->job || lab->state != from) {
        serve_fail(a, 409, "the lab is %s: %s is for a run that is %s",
                   lab->job ? "running" : lab_words[lab->state], verb_words[verb],
                   lab_words[from]);
        return;
    }
    serve_actor(c->sess, actor, sizeof(actor));
    if (lab_spawn(c->srv, verb, actor, err, sizeof(err)) != 0) {
        serve_fail(a, 500, "%s", err);
        return;
    }
    if (verb == LAB_RESUME)
        lab_log(lab, "resuming, asked by %s", actor);
    else if (lab->in_flight >= 0)
        lab_log(lab, "recovering step %d %s: retry, asked by %s", lab->in_flight + 1,
                lab->steps[lab->in_flight].name, actor);
    lab_answer(c->srv, a);
}

void serve_post_lab_resume(struct serve_call *c, struct serve_answer *a)
{
    lab_go_on(c, a, LAB_KILLED, LAB_RESUME);
}

void serve_post_lab_recover(struct serve_call *c, struct serve_answer *a)
{
    lab_go_on(c, a, LAB_UNCERTAIN, LAB_RECOVER);
}

void serve_lab_tick(struct serve *srv)
{
    if (!srv->lab)
        return;
    lab_read_side(srv->lab);
    if (srv->lab->changed)
        lab_broadcast(srv);
}

void serve_lab_free(struct serve *srv)
{
    struct serve_lab *lab = srv->lab;

    if (!lab)
        return;
    if (lab->job) { /* it goes on, and its directory stays */
        cli_job_detach(lab->job);
        free(lab->dir);
        free(lab->spec_path);
        free(lab->side_path);
    } else {
        lab_remove_dir(lab);
    }
    json_decref(lab->log);
    free(lab);
    srv->lab = NULL;
}
