/*
 * api_util.c -- helpers shared by the black-box API tests (see
 * api_util.h).  Failures in the helpers are reported through t.h checks,
 * so a test that uses them fails at the right line of its own file when
 * the returned handle is NULL.
 */
#include "api_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

static void write_key_file(const char *path, const char *key)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return;
    if (key && write(fd, key, strlen(key)) < 0)
        perror("write key file");
    fsync(fd);
    close(fd);
}

static void note_call(struct fn_ctx *c, lil_call *call)
{
    const char *id = lil_call_identity(call);
    const char *key = lil_call_idempotency_key(call);
    c->calls++;
    snprintf(c->identity, sizeof(c->identity), "%s", id ? id : "(null)");
    snprintf(c->key, sizeof(c->key), "%s", key ? key : "(null)");
    c->attempt = lil_call_attempt(call);
}

int fn_generic(lil_call *call, void *ud)
{
    struct fn_ctx *c = ud;
    note_call(c, call);
    if (c->key_file)
        write_key_file(c->key_file, c->key);
    if (c->die)
        _exit(0);
    c->set_rc = LIL_OK;
    if (c->result)
        c->set_rc = lil_call_set_result(call, c->result, c->result_len);
    if (c->json)
        c->set_rc = lil_call_set_json(call, c->json);
    if (c->fail_msg) {
        lil_call_fail(call, "%s", c->fail_msg);
        return 1;
    }
    return c->ret;
}

int fn_never(lil_call *call, void *ud)
{
    (void)call;
    (*(int *)ud)++;
    return 0;
}

lil_store *u_store(const char *dir)
{
    lil_store *st = NULL;
    T_OK(lil_store_open(NULL, t_store(dir ? dir : U_STORE_DIR), &st));
    return st;
}

lil_run *u_run_opts(lil_store *st, const char *id, lil_sync sync, unsigned flags,
                    size_t max_record)
{
    lil_run *run = NULL;
    lil_run_opts o;
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.sync = sync;
    o.flags = flags;
    o.max_record = max_record;
    lil_status rc = lil_run_open(st, id, &o, &run);
    if (rc != LIL_OK)
        fprintf(stderr, "lil_run_open(%s): %s: %s\n", id, lil_status_name(rc),
                st ? lil_store_errmsg(st) : "");
    return run;
}

lil_run *u_run(lil_store *st, const char *id)
{
    lil_run *run = NULL;
    lil_status rc = lil_run_open(st, id, NULL, &run);
    if (rc != LIL_OK)
        fprintf(stderr, "lil_run_open(%s): %s: %s\n", id, lil_status_name(rc),
                st ? lil_store_errmsg(st) : "");
    return run;
}

lil_status u_step_text(lil_run *run, const char *name, const char *text)
{
    struct fn_ctx c;
    memset(&c, 0, sizeof(c));
    c.result = text;
    c.result_len = strlen(text);
    return lil_step(run, name, fn_generic, &c, NULL);
}

const char *u_journal_path(const char *dir, const char *id)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof(bufs[0]), "%s/%s.lil", dir ? dir : U_STORE_DIR, id);
    return b;
}

struct export_buf {
    unsigned char *data;
    size_t len;
};

static int export_into(void *ud, const void *data, size_t len)
{
    struct export_buf *b = ud;
    unsigned char *p = realloc(b->data, b->len + len);

    if (!p)
        return 1;
    memcpy(p + b->len, data, len);
    b->data = p;
    b->len += len;
    return 0;
}

unsigned char *u_journal_read(const char *dir, const char *id, size_t *len)
{
    struct export_buf b = {NULL, 0};
    lil_store *st = NULL;

    *len = 0;
    if (!t_store_pg())
        return u_read_file(u_journal_path(dir, id), len);
    if (lil_store_open(NULL, t_store(dir ? dir : U_STORE_DIR), &st) != LIL_OK)
        return NULL;
    if (lil_run_export(st, id, export_into, &b) != LIL_OK) {
        free(b.data);
        b.data = NULL;
    }
    lil_store_close(st);
    *len = b.len;
    return b.data;
}

long long u_journal_size(const char *dir, const char *id)
{
    size_t n = 0;
    unsigned char *b = u_journal_read(dir, id, &n);

    free(b);
    return b ? (long long)n : -1;
}

unsigned char *u_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    *len = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            unsigned char *nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

int u_write_at(const char *path, uint64_t off, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    ssize_t w = pwrite(fd, data, len, (off_t)off);
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

int u_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, data, len);
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

long long u_file_size(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    return (long long)sb.st_size;
}

uint32_t u_rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void u_wr32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static int collect_one(void *ud, const lil_record *rec)
{
    struct u_recs *rs = ud;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 64;
        struct u_rec *nr = realloc(rs->r, cap * sizeof(*nr));
        if (!nr)
            return 1;
        rs->r = nr;
        rs->cap = cap;
    }
    struct u_rec *r = &rs->r[rs->n++];
    memset(r, 0, sizeof(*r));
    r->seq = rec->seq;
    r->offset = rec->offset;
    r->size = rec->size;
    r->ts_ns = rec->ts_ns;
    r->type = rec->type;
    r->flags = rec->flags;
    size_t kl = rec->key_len < sizeof(r->key) - 1 ? rec->key_len : sizeof(r->key) - 1;
    if (kl)
        memcpy(r->key, rec->key, kl);
    r->payload = malloc(rec->payload_len + 1);
    if (r->payload) {
        if (rec->payload_len)
            memcpy(r->payload, rec->payload, rec->payload_len);
        r->payload[rec->payload_len] = 0;
        r->payload_len = rec->payload_len;
    }
    return 0;
}

lil_status u_collect(lil_run *run, struct u_recs *out)
{
    memset(out, 0, sizeof(*out));
    return lil_run_foreach(run, collect_one, out);
}

void u_recs_free(struct u_recs *recs)
{
    for (size_t i = 0; i < recs->n; i++)
        free(recs->r[i].payload);
    free(recs->r);
    memset(recs, 0, sizeof(*recs));
}

const struct u_rec *u_find(const struct u_recs *recs, int type, const char *key)
{
    for (size_t i = 0; i < recs->n; i++)
        if (recs->r[i].type == type && strcmp(recs->r[i].key, key) == 0)
            return &recs->r[i];
    return NULL;
}

pid_t u_fork(int (*fn)(void *ud), void *ud)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(ud));
    return pid;
}

int u_wait(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int u_pipe_open(struct u_pipe *p)
{
    return pipe(p->fd);
}

void u_pipe_signal(struct u_pipe *p)
{
    char c = 'r';
    if (write(p->fd[1], &c, 1) != 1)
        perror("u_pipe_signal");
}

int u_pipe_wait(struct u_pipe *p, int secs)
{
    struct pollfd pfd = {.fd = p->fd[0], .events = POLLIN};
    char c;
    if (poll(&pfd, 1, secs * 1000) != 1)
        return -1;
    return read(p->fd[0], &c, 1) == 1 ? 0 : -1;
}

void u_pipe_close(struct u_pipe *p)
{
    close(p->fd[0]);
    close(p->fd[1]);
}

int u_is_idem_key(const char *s)
{
    if (!s || strncmp(s, "lil-", 4) != 0 || strlen(s) != 36)
        return 0;
    for (const char *q = s + 4; *q; q++)
        if (!strchr("0123456789abcdefABCDEF", *q))
            return 0;
    return 1;
}

const char *u_repeat(char c, size_t n)
{
    static char bufs[4][2048];
    static int next;
    char *b = bufs[next++ % 4];
    if (n >= sizeof(bufs[0]))
        n = sizeof(bufs[0]) - 1;
    memset(b, c, n);
    b[n] = 0;
    return b;
}

int u_mentions_offset(const char *msg, uint64_t n)
{
    char dec[32], hex[32], hexu[32];
    snprintf(dec, sizeof(dec), "%llu", (unsigned long long)n);
    snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)n);
    snprintf(hexu, sizeof(hexu), "0x%llX", (unsigned long long)n);
    if (!msg)
        return 0;
    /* a decimal match must not be part of a longer number */
    for (const char *p = strstr(msg, dec); p; p = strstr(p + 1, dec)) {
        size_t l = strlen(dec);
        int before = p > msg && p[-1] >= '0' && p[-1] <= '9';
        int after = p[l] >= '0' && p[l] <= '9';
        if (!before && !after)
            return 1;
    }
    return strstr(msg, hex) || strstr(msg, hexu);
}
