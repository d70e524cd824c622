/*
 * cassette.c -- recording a loop run's effect results to a JSON Lines
 * file and replaying a run from one (cassette.h has the format and the
 * rules).  Record uses the runner's recorder hook, replay its mock hook;
 * both first walk the journal the loop opened with.
 */
#include "replay/cassette.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "loop/record_name.h"
#include "os/os.h"

#define SHOW 64 /* bytes of an identity shown in a message */

struct entry {
    json_t *v;            /* the line's object (owns the strings below) */
    const char *kind;     /* "shell", "http", "agent" */
    const char *identity; /* canonical JSON, secrets redacted */
    bool used;
};

struct lil_cassette {
    struct lil_loop *lp;
    char *path;
    int fd;       /* record: the file; -1 when replaying */
    uint64_t off; /* record: where the next line goes */
    struct entry *e;
    size_t n, cap;
};

/* ---- entries ------------------------------------------------------------------- */

static bool kind_ok(const char *k)
{
    return k && (strcmp(k, "shell") == 0 || strcmp(k, "http") == 0 ||
                 strcmp(k, "agent") == 0);
}

/* The entry of an object with kind, identity and result, or NULL fields. */
static struct entry entry_of(json_t *v)
{
    struct entry e = {0};
    const char *kind = json_string_value(json_object_get(v, "kind"));
    const char *id = json_string_value(json_object_get(v, "identity"));

    if (kind_ok(kind) && id && json_object_get(v, "result")) {
        e.v = v;
        e.kind = kind;
        e.identity = id;
    }
    return e;
}

/* The length of the credential digest at s ("hmac-sha256:" or "sha256:"
 * and 64 lowercase hex digits), or 0. */
static size_t digest_at(const char *s)
{
    static const char *const prefixes[] = {"hmac-sha256:", "sha256:"};

    for (size_t k = 0; k < sizeof(prefixes) / sizeof(*prefixes); k++) {
        size_t n = strlen(prefixes[k]), i = 0;

        if (strncmp(s, prefixes[k], n) != 0)
            continue;
        while (i < 64 && ((s[n + i] >= '0' && s[n + i] <= '9') ||
                          (s[n + i] >= 'a' && s[n + i] <= 'f')))
            i++;
        return i == 64 ? n + 64 : 0;
    }
    return 0;
}

/* Are identities a and b the same request, whatever the credentials'
 * digests (each run digests them under its own key: a cassette recorded
 * by one run answers another, and a journal's digests never leave it)? */
static bool same_identity(const char *a, const char *b)
{
    while (*a && *b) {
        size_t da = digest_at(a), db = da ? digest_at(b) : 0;

        if (da && db) {
            a += da;
            b += db;
        } else if (*a++ != *b++) {
            return false;
        }
    }
    return *a == *b;
}

/* Find the first unused entry of kind and identity, or NULL. */
static struct entry *find_unused(struct lil_cassette *c, const char *kind,
                                 const char *identity)
{
    for (size_t i = 0; i < c->n; i++)
        if (!c->e[i].used && strcmp(c->e[i].kind, kind) == 0 &&
            same_identity(c->e[i].identity, identity))
            return &c->e[i];
    return NULL;
}

/* ---- record -------------------------------------------------------------------- */

/* Append outcome as one line: {"kind", "identity", "result", "usage"?,
 * "step"?} and a newline, in one write. */
static lil_status write_entry(void *ud, struct lil_err *err, json_t *outcome)
{
    struct lil_cassette *c = ud;
    const struct lil_env *env = c->lp->env;
    json_t *line = json_object(), *v;
    struct lil_buf b;
    lil_status rc = line ? LIL_OK : LIL_E_NOMEM;
    static const char *const keys[] = {"kind", "identity", "result", "usage", "step"};

    for (size_t i = 0; rc == LIL_OK && i < sizeof(keys) / sizeof(*keys); i++)
        if ((v = json_object_get(outcome, keys[i])) != NULL &&
            json_object_set(line, keys[i], v) != 0)
            rc = LIL_E_NOMEM;
    lil__buf_init(&b, env, SIZE_MAX);
    if (rc == LIL_OK)
        rc = lil__json_dump(env, err, line, JSON_COMPACT | JSON_SORT_KEYS, &b);
    if (rc == LIL_OK)
        rc = lil__buf_add(&b, "\n", 1);
    if (rc == LIL_OK)
        rc = lil__os_pwrite_all(env, err, c->fd, b.data, b.len, c->off, c->path);
    if (rc == LIL_OK)
        c->off += b.len;
    else if (rc == LIL_E_NOMEM)
        lil__seterr(err, rc, 0, "out of memory");
    lil__buf_free(&b);
    json_decref(line);
    return rc;
}

/* ---- the journal's outcomes ------------------------------------------------------ */

struct walk {
    struct lil_cassette *c;
    bool record; /* write each outcome; else use up its entry */
    lil_status rc;
};

static int each_record(void *ud, const lil_record *rec)
{
    struct walk *w = ud;
    struct lil_loop *lp = w->c->lp;
    struct entry e;
    json_t *v = NULL;

    if (rec->type != LIL_REC_STEP || !lil__loop_name_is_slot(rec->key, rec->key_len) ||
        rec->payload_len == 0 || *(const char *)rec->payload != '{')
        return 0;
    w->rc = lil__json_parse(lp->env, &lp->err, LIL_E_CORRUPT, rec->payload,
                            rec->payload_len, 0, NULL, &v);
    if (w->rc != LIL_OK)
        return 1;
    e = entry_of(v);
    if (e.v && w->record) {
        w->rc = write_entry(w->c, &lp->err, v);
    } else if (e.v) {
        struct entry *hit = find_unused(w->c, e.kind, e.identity);

        if (hit)
            hit->used = true;
    }
    json_decref(v);
    return w->rc != LIL_OK;
}

static lil_status walk_journal(struct lil_cassette *c, bool record)
{
    struct walk w = {c, record, LIL_OK};
    lil_status rc = lil__run_foreach(c->lp->run, &c->lp->err, each_record, &w);

    return w.rc != LIL_OK ? w.rc : rc;
}

/* ---- replay: reading the file ---------------------------------------------------- */

static lil_status read_all(struct lil_cassette *c, struct lil_buf *out)
{
    struct lil_loop *lp = c->lp;
    uint64_t size = 0;
    int fd = -1;
    lil_status rc =
        lil__os_open(lp->env, &lp->err, c->path, O_RDONLY | O_CLOEXEC, 0, &fd);

    if (rc == LIL_OK)
        rc = lil__os_fstat_size(lp->env, &lp->err, fd, &size, c->path);
    if (rc == LIL_OK && size > LIL_CASSETTE_MAX)
        rc = lil__seterr(&lp->err, LIL_E_TOOBIG, 0,
                         "cassette %s is larger than %u bytes", c->path,
                         LIL_CASSETTE_MAX);
    if (rc == LIL_OK)
        rc = lil__buf_reserve(out, (size_t)size + 1);
    if (rc == LIL_OK && size)
        rc = lil__os_pread_all(lp->env, &lp->err, fd, out->data, (size_t)size, 0,
                               c->path);
    if (rc == LIL_OK)
        out->len = (size_t)size;
    lil__os_close(lp->env, fd);
    if (rc == LIL_E_NOMEM)
        lil__seterr(&lp->err, rc, 0, "out of memory");
    return rc;
}

static lil_status bad_line(struct lil_cassette *c, size_t lineno, const char *why)
{
    char what[LIL_ERRMSG_MAX];

    snprintf(what, sizeof(what), "%s", why);
    return lil__seterr(&c->lp->err, LIL_E_INVAL, 0, "cassette %s line %zu: %s", c->path,
                       lineno, what);
}

/* Add line lineno (len bytes at s); last: the file's last line, with no
 * newline after it (torn when it is not JSON: ignored). */
static lil_status add_line(struct lil_cassette *c, const char *s, size_t len,
                           size_t lineno, bool torn_ok)
{
    struct lil_loop *lp = c->lp;
    struct entry *grown;
    json_t *v = NULL;
    lil_status rc;

    while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len == 0)
        return LIL_OK;
    rc = lil__json_parse(lp->env, &lp->err, LIL_E_INVAL, s, len, 0, NULL, &v);
    if (rc == LIL_E_NOMEM)
        return rc;
    if (rc != LIL_OK)
        return torn_ok ? LIL_OK : bad_line(c, lineno, lp->err.msg);
    if (!entry_of(v).v) {
        json_decref(v);
        return bad_line(c, lineno,
                        "not a cassette entry (an object with kind shell, http or "
                        "agent, identity and result)");
    }
    grown = lil__grow(lp->env, c->e, &c->cap, c->n, sizeof(*c->e), 64);
    if (!grown) {
        json_decref(v);
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    }
    c->e = grown;
    c->e[c->n++] = entry_of(v);
    return LIL_OK;
}

static lil_status load(struct lil_cassette *c)
{
    struct lil_buf b;
    const char *p, *end, *nl;
    size_t lineno = 1;
    lil_status rc;

    lil__buf_init(&b, c->lp->env, (size_t)LIL_CASSETTE_MAX + 1);
    rc = read_all(c, &b);
    p = (const char *)b.data;
    end = p ? p + b.len : p;
    for (; rc == LIL_OK && p && p < end; lineno++) {
        nl = memchr(p, '\n', (size_t)(end - p));
        rc = add_line(c, p, (size_t)((nl ? nl : end) - p), lineno, !nl);
        p = nl ? nl + 1 : end;
    }
    lil__buf_free(&b);
    return rc;
}

/* ---- replay: answering --------------------------------------------------------- */

/* s cut for a message: from about the byte at, SHOW bytes, on UTF-8
 * boundaries, with "..." where cut. */
static void excerpt(const char *s, size_t at, char *out, size_t cap)
{
    size_t n = strlen(s), from = at > SHOW / 2 ? at - SHOW / 2 : 0, to;

    while (from > 0 && ((unsigned char)s[from] & 0xC0) == 0x80)
        from--;
    to = n - from > SHOW ? from + SHOW : n;
    while (to < n && to > from && ((unsigned char)s[to] & 0xC0) == 0x80)
        to--;
    snprintf(out, cap, "%s%.*s%s", from ? "..." : "", (int)(to - from), s + from,
             to < n ? "..." : "");
}

static size_t common_prefix(const char *a, const char *b)
{
    size_t i = 0;

    while (a[i] && a[i] == b[i])
        i++;
    return i;
}

/* The nearest entry of kind to identity; *spent: entries of kind with
 * this very identity, all used. */
static const struct entry *nearest(const struct lil_cassette *c, const char *kind,
                                   const char *identity, size_t *spent, size_t *dist)
{
    const struct entry *best = NULL;
    size_t bestd = SIZE_MAX, d, n = strlen(identity);

    *spent = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct entry *e = &c->e[i];

        if (strcmp(e->kind, kind) != 0)
            continue;
        if (same_identity(e->identity, identity)) {
            (*spent)++;
            continue;
        }
        d = lil__cassette_distance(identity, n, e->identity, strlen(e->identity));
        if (d < bestd) {
            bestd = d;
            best = e;
        }
    }
    *dist = bestd;
    return best;
}

static lil_status not_held(const struct lil_cassette *c, struct lil_err *err,
                           const char *kind, const char *identity)
{
    const char *step =
        c->lp->replay.mock_step ? c->lp->replay.mock_step : "(on_exit or hook)";
    size_t spent, dist;
    const struct entry *near = nearest(c, kind, identity, &spent, &dist);
    char want[SHOW + 8], have[SHOW + 8];
    size_t at = near ? common_prefix(identity, near->identity) : 0;

    excerpt(identity, at, want, sizeof(want));
    if (spent)
        return lil__seterr(err, LIL_E_NOTFOUND, 0,
                           "replay: step '%s' asks %s %s more often than the cassette "
                           "holds (%zu recorded, all used)",
                           step, kind, want, spent);
    if (!near)
        return lil__seterr(err, LIL_E_NOTFOUND, 0,
                           "replay: step '%s' asks %s %s; the cassette has no %s entry",
                           step, kind, want, kind);
    excerpt(near->identity, at, have, sizeof(have));
    return lil__seterr(err, LIL_E_NOTFOUND, 0,
                       "replay: step '%s' asks %s %s, not in the cassette; nearest "
                       "by edit distance (%zu): %s",
                       step, kind, want, dist, have);
}

/* The runner's mock: the first unused entry of the effect's kind and
 * identity (lp->replay.mock_note), copied (the runner redacts it in place). */
static lil_status answer(void *ud, struct lil_err *err, const char *kind,
                         json_t *request, json_t **result, json_t **usage)
{
    struct lil_cassette *c = ud;
    const char *note = c->lp->replay.mock_note;
    const char *identity = note ? note + strlen(kind) + 1 : "";
    struct entry *e = find_unused(c, kind, identity);
    json_t *u;

    (void)request;
    if (!e)
        return not_held(c, err, kind, identity);
    *result = json_deep_copy(json_object_get(e->v, "result"));
    u = json_object_get(e->v, "usage");
    *usage = json_is_object(u) ? json_deep_copy(u) : NULL;
    if (!*result || (json_is_object(u) && !*usage)) {
        json_decref(*result);
        json_decref(*usage);
        *result = *usage = NULL;
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    e->used = true;
    return LIL_OK;
}

/* ---- attach and close ---------------------------------------------------------- */

size_t lil__cassette_distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t row[2][LIL_CASSETTE_NEAR_BYTES + 1];
    size_t *prev = row[0], *cur = row[1], *t;

    na = na > LIL_CASSETTE_NEAR_BYTES ? LIL_CASSETTE_NEAR_BYTES : na;
    nb = nb > LIL_CASSETTE_NEAR_BYTES ? LIL_CASSETTE_NEAR_BYTES : nb;
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        t = prev;
        prev = cur;
        cur = t;
    }
    return prev[nb];
}

/* A cassette is as private as a journal (0600), also one that was there
 * before with a wider mode (a regular file only: never a device). */
static lil_status make_private(struct lil_cassette *c)
{
    struct lil_loop *lp = c->lp;
    struct stat st;

    if (lp->env->os->fstat(c->fd, &st) != 0)
        return lil__seterr(&lp->err, LIL_E_IO, errno, "fstat %s: %s", c->path,
                           lil__errstr(errno));
    if (S_ISREG(st.st_mode) && (st.st_mode & 077) && fchmod(c->fd, 0600) != 0)
        return lil__seterr(&lp->err, LIL_E_IO, errno, "chmod %s to 0600: %s", c->path,
                           lil__errstr(errno));
    return LIL_OK;
}

static lil_status start_record(struct lil_cassette *c)
{
    struct lil_loop *lp = c->lp;
    lil_status rc =
        lil__os_open(lp->env, &lp->err, c->path,
                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600, &c->fd);

    if (rc == LIL_OK)
        rc = make_private(c);
    if (rc == LIL_OK)
        rc = walk_journal(c, true);
    if (rc == LIL_OK)
        lil__loop_set_recorder(lp, write_entry, c);
    return rc;
}

static lil_status start_replay(struct lil_cassette *c)
{
    lil_status rc = load(c);

    if (rc == LIL_OK)
        rc = walk_journal(c, false);
    if (rc == LIL_OK)
        lil__loop_set_mock(c->lp, answer, c);
    return rc;
}

lil_status lil__cassette_attach(struct lil_loop *lp, const char *record_path,
                                const char *replay_path)
{
    struct lil_cassette *c;
    lil_status rc;

    if (!record_path && !replay_path)
        return LIL_OK;
    c = lil__calloc(lp->env, 1, sizeof(*c));
    if (!c)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    c->lp = lp;
    c->fd = -1;
    c->path = lil__strdup(lp->env, record_path ? record_path : replay_path);
    lp->replay.cassette = c;
    lp->replay.cassette_close = lil__cassette_close;
    if (!c->path)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    rc = record_path ? start_record(c) : start_replay(c);
    if (rc == LIL_E_NOMEM && !lp->err.msg[0])
        lil__seterr(&lp->err, rc, 0, "out of memory");
    return rc;
}

void lil__cassette_close(struct lil_loop *lp)
{
    struct lil_cassette *c = lp->replay.cassette;

    if (!c)
        return;
    lil__loop_set_recorder(lp, NULL, NULL);
    if (lp->replay.mock_ud == c)
        lil__loop_set_mock(lp, NULL, NULL);
    lil__os_close(lp->env, c->fd);
    for (size_t i = 0; i < c->n; i++)
        json_decref(c->e[i].v);
    lil__free(lp->env, c->e);
    lil__free(lp->env, c->path);
    lil__free(lp->env, c);
    lp->replay.cassette = NULL;
}
