/*
 * cli_util.c -- helpers for the black-box tests of the `lil` binary (see
 * cli_util.h).  Runs are made through <lil/lil.h>; the binary is run with
 * t_run() through /bin/sh, its stderr captured in a temporary file.
 */
#include "cli_util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "t.h"

const char *c_store(void)
{
    static char buf[4096];

    snprintf(buf, sizeof(buf), "%s", t_store(t_path("store")));
    return buf;
}

const char *c_journal(const char *id)
{
    static char buf[8192];

    if (snprintf(buf, sizeof(buf), "%s/%s.lil", t_path("store"), id) >=
        (int)sizeof(buf))
        t_fail(); /* a path that long is a bug of the test */
    return buf;
}

static void slurp(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;

    if (f) {
        n = fread(out, 1, cap - 1, f);
        fclose(f);
    }
    out[n] = '\0';
}

/* With $LIL_TEST_JSON_LOG (a directory) set, append the command and its
 * stdout as one JSON line to DIR/<pid>.jsonl: the test cli_json_schemas
 * (tests/schema_check.py) then validates every JSON document the tests saw
 * against docs/schemas/.  Output that is not UTF-8 is not JSON: left out. */
static void log_output(const char *args, int rc, const char *out)
{
    static char text[4 * C_OUT_CAP + 16384];
    const char *dir = getenv("LIL_TEST_JSON_LOG");
    char path[4096];
    json_t *line;
    size_t len = 0;
    int fd;

    if (!dir || !*dir)
        return;
    line = json_pack("{s:s, s:i, s:s}", "args", args, "rc", rc, "out", out);
    if (!line)
        line = json_pack("{s:s, s:i}", "args", args, "rc", rc);
    if (line)
        len = json_dumpb(line, text, sizeof(text) - 1, JSON_COMPACT);
    json_decref(line);
    if (len == 0 || len >= sizeof(text) - 1)
        return;
    text[len++] = '\n';
    snprintf(path, sizeof(path), "%s/%ld.jsonl", dir, (long)getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len)
        fprintf(stderr, "cannot write %s\n", path);
    if (fd >= 0)
        close(fd);
}

int c_lil(char *out, char *err, const char *fmt, ...)
{
    static char sink[C_OUT_CAP];
    char args[4096], cmd[8192];
    const char *errf = t_path("stderr.txt");
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "'%s' %s 2>'%s'", t_lil_bin(), args, errf);
    rc = t_run(cmd, out ? out : sink, C_OUT_CAP, 0);
    log_output(args, rc, out ? out : sink);
    if (err)
        slurp(errf, err, C_OUT_CAP);
    if (rc >= 128)
        fprintf(stderr, "lil %s: died by signal %d\n", args, rc - 128);
    return rc;
}

lil_store *c_open_store(void)
{
    lil_store *st = NULL;

    T_OK(lil_store_open(NULL, c_store(), &st));
    return st;
}

lil_run *c_open_run(lil_store *st, const char *id)
{
    lil_run *run = NULL;

    T_OK(lil_run_open(st, id, NULL, &run));
    return run;
}

struct step_ud {
    const char *result;
    const char *fail;
};

static int fn_step(lil_call *call, void *ud)
{
    const struct step_ud *s = ud;

    if (s->fail) {
        lil_call_fail(call, "%s", s->fail);
        return 1;
    }
    return lil_call_set_result(call, s->result, strlen(s->result)) != LIL_OK;
}

void c_make_run(const char *id, int nsteps, bool complete)
{
    lil_store *st = c_open_store();
    lil_run *run = st ? c_open_run(st, id) : NULL;
    char name[32], result[32];

    for (int i = 1; run && i <= nsteps; i++) {
        struct step_ud s = {result, NULL};
        snprintf(name, sizeof(name), "s%d", i);
        snprintf(result, sizeof(result), "r%d", i);
        T_OK(lil_step(run, name, fn_step, &s, NULL));
    }
    if (run && complete)
        T_OK(lil_run_complete(run, "all-good", 8));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

void c_make_failed_run(const char *id)
{
    lil_store *st = c_open_store();
    lil_run *run = st ? c_open_run(st, id) : NULL;
    struct step_ud ok = {"fine", NULL}, bad = {NULL, "boom: bad input"};

    if (run) {
        T_OK(lil_step(run, "load", fn_step, &ok, NULL));
        T_CHECK(lil_step(run, "parse", fn_step, &bad, NULL) == LIL_E_FAILED);
        T_OK(lil_run_fail(run, "gave up"));
    }
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static int fn_die(lil_call *call, void *ud)
{
    (void)call;
    (void)ud;
    _exit(9);
}

static void uncertain_child(const char *id)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    struct step_ud ok = {"ready", NULL};

    if (lil_store_open(NULL, c_store(), &st) != LIL_OK)
        _exit(2);
    if (lil_run_open(st, id, NULL, &run) != LIL_OK)
        _exit(3);
    if (lil_step(run, "prep", fn_step, &ok, NULL) != LIL_OK)
        _exit(4);
    lil_effect(run, "charge", "amount=10", 9, fn_die, NULL, NULL);
    _exit(5); /* not reached: fn_die exits */
}

void c_make_uncertain_run(const char *id)
{
    int status = 0;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0)
        uncertain_child(id);
    T_REQUIRE(waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 9);
    T_EQ_I64(c_state(id), LIL_RUN_UNCERTAIN);
}

/* Open id read-only; NULL on failure (the store is returned in *st). */
static lil_run *open_ro(const char *id, lil_store **st)
{
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT,
                      LIL_OPEN_READONLY | LIL_OPEN_EXISTING, 0};
    lil_run *run = NULL;

    *st = NULL;
    if (lil_store_open(NULL, c_store(), st) != LIL_OK)
        return NULL;
    if (lil_run_open(*st, id, &o, &run) != LIL_OK)
        return NULL;
    return run;
}

static int count_fn(void *ud, const lil_record *rec)
{
    (void)rec;
    (*(int64_t *)ud)++;
    return 0;
}

int64_t c_record_count(const char *id)
{
    lil_store *st;
    lil_run *run = open_ro(id, &st);
    int64_t n = 0;

    if (!run || lil_run_foreach(run, count_fn, &n) != LIL_OK)
        n = -1;
    lil_run_close(run);
    lil_store_close(st);
    return n;
}

struct find_rec {
    uint64_t seq, off;
    size_t key_len, payload_len;
    bool found;
};

static int find_fn(void *ud, const lil_record *rec)
{
    struct find_rec *f = ud;

    if (rec->seq != f->seq)
        return 0;
    f->off = rec->offset;
    f->key_len = rec->key_len;
    f->payload_len = rec->payload_len;
    f->found = true;
    return 1;
}

bool c_record_at(const char *id, uint64_t seq, uint64_t *off, size_t *key_len,
                 size_t *payload_len)
{
    lil_store *st;
    lil_run *run = open_ro(id, &st);
    struct find_rec f = {seq, 0, 0, 0, false};

    if (run)
        lil_run_foreach(run, find_fn, &f);
    lil_run_close(run);
    lil_store_close(st);
    *off = f.off;
    *key_len = f.key_len;
    *payload_len = f.payload_len;
    return f.found;
}

lil_run_state c_state(const char *id)
{
    lil_store *st;
    lil_run *run = open_ro(id, &st);
    lil_run_state s = run ? lil_run_status(run) : (lil_run_state)0;

    lil_run_close(run);
    lil_store_close(st);
    return s;
}

uint64_t c_journal_bytes(const char *id)
{
    lil_store *st;
    lil_run *run = open_ro(id, &st);
    lil_run_info info;

    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (run)
        T_OK(lil_run_get_info(run, &info));
    lil_run_close(run);
    lil_store_close(st);
    return info.journal_bytes;
}

bool c_pwrite(const char *path, uint64_t off, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY);
    bool ok;

    if (fd < 0)
        return false;
    ok = pwrite(fd, data, len, (off_t)off) == (ssize_t)len;
    close(fd);
    return ok;
}

/* Under PostgreSQL: the run whose journal path is (c_journal's), and the
 * byte at journal offset off in its header or in the frame that holds it
 * (the store keeps the journal's bytes: store_pg.h), XORed with 0x5a. */
static bool pg_flip_byte(const char *path, uint64_t off)
{
    char id[512], sql[2048], out[256];
    const char *base = strrchr(path, '/');
    size_t n = base ? strlen(base + 1) : 0;

    if (n <= 4 || n - 4 >= sizeof(id) || strchr(base, '\''))
        return false;
    memcpy(id, base + 1, n - 4);
    id[n - 4] = '\0';
    if (off < 64)
        snprintf(sql, sizeof(sql),
                 "WITH u AS (UPDATE @.runs SET header = set_byte(header, %d, "
                 "get_byte(header, %d) # 90) WHERE run_id = '%s' RETURNING 1) "
                 "SELECT count(*) FROM u;",
                 (int)off, (int)off, id);
    else
        snprintf(sql, sizeof(sql),
                 "WITH u AS (UPDATE @.records SET frame = set_byte(frame, (%llu - "
                 "off)::int, get_byte(frame, (%llu - off)::int) # 90) WHERE run_id = "
                 "'%s' AND off <= %llu AND %llu < off + length(frame) RETURNING 1) "
                 "SELECT count(*) FROM u;",
                 (unsigned long long)off, (unsigned long long)off, id,
                 (unsigned long long)off, (unsigned long long)off);
    return t_store_sql(t_path("store"), sql, out, sizeof(out)) == 0 &&
           strncmp(out, "1\n", 2) == 0;
}

bool c_flip_byte(const char *path, uint64_t off)
{
    unsigned char b = 0;
    bool ok = false;
    int fd;

    if (t_store_pg())
        return pg_flip_byte(path, off);
    fd = open(path, O_RDWR);
    if (fd < 0)
        return false;
    if (pread(fd, &b, 1, (off_t)off) == 1) {
        b ^= 0x5a;
        ok = pwrite(fd, &b, 1, (off_t)off) == 1;
    }
    close(fd);
    return ok;
}

int64_t c_file_size(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

uint64_t c_file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint64_t h = 1469598103934665603u;
    int c;

    if (!f)
        return 0;
    while ((c = fgetc(f)) != EOF)
        h = (h ^ (uint64_t)c) * 1099511628211u;
    fclose(f);
    return h;
}

json_t *c_json(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);

    if (!v) {
        fprintf(stderr, "invalid JSON (%s at line %d): %s\n", e.text, e.line, text);
        t_fail();
    }
    return v;
}

/* Child of c_hold: open the run, say so on the pipe, wait to be killed. */
static void hold_child(const char *id, int wfd)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    char ok = 'k';

    if (lil_store_open(NULL, c_store(), &st) != LIL_OK ||
        lil_run_open(st, id, NULL, &run) != LIL_OK)
        ok = 'x';
    if (write(wfd, &ok, 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

pid_t c_hold(const char *id)
{
    int fds[2];
    char ok = 0;
    pid_t pid;

    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        hold_child(id, fds[1]);
    }
    close(fds[1]);
    if (pid < 0 || read(fds[0], &ok, 1) != 1 || ok != 'k') {
        close(fds[0]);
        c_release(pid);
        return -1;
    }
    close(fds[0]);
    return pid;
}

void c_release(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
