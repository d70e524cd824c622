/*
 * store_pg_conn.c -- the PostgreSQL store's location and connections: the
 * URI lil reads its own parameter from (schema=) and names without its
 * password, connecting, the pool of idle connections, running statements
 * (prepared on first use), and the server's errors as lil errors that say
 * what to do.  The rules are in store_pg.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "os/os.h"
#include "store/pg/store_pg.h"

#define CONNECT_TIMEOUT_S "10"

bool lil__store_pg_location(const char *where)
{
    return where && (strncmp(where, "postgresql://", 13) == 0 ||
                     strncmp(where, "postgres://", 11) == 0);
}

/* ---- parameters ------------------------------------------------------------ */

static int param_slot(struct pg_params *p, unsigned type)
{
    int i = p->n++;

    p->types[i] = type;
    p->fmts[i] = 1;
    return i;
}

void lil__pg_param_text(struct pg_params *p, const char *s)
{
    int i = param_slot(p, PG_OID_TEXT);

    p->vals[i] = s;
    p->lens[i] = (int)strlen(s);
    p->fmts[i] = 0;
}

void lil__pg_param_int8(struct pg_params *p, int64_t v)
{
    int i = param_slot(p, PG_OID_INT8);
    uint64_t u = (uint64_t)v;

    for (int k = 0; k < 8; k++)
        p->ints[i][k] = (uint8_t)(u >> (56 - 8 * k));
    p->vals[i] = (const char *)p->ints[i];
    p->lens[i] = 8;
}

void lil__pg_param_int4(struct pg_params *p, int32_t v)
{
    int i = param_slot(p, PG_OID_INT4);
    uint32_t u = (uint32_t)v;

    for (int k = 0; k < 4; k++)
        p->ints[i][k] = (uint8_t)(u >> (24 - 8 * k));
    p->vals[i] = (const char *)p->ints[i];
    p->lens[i] = 4;
}

void lil__pg_param_bool(struct pg_params *p, bool v)
{
    int i = param_slot(p, PG_OID_BOOL);

    p->ints[i][0] = v ? 1 : 0;
    p->vals[i] = (const char *)p->ints[i];
    p->lens[i] = 1;
}

void lil__pg_param_bytea(struct pg_params *p, const void *data, size_t len)
{
    int i = param_slot(p, PG_OID_BYTEA);

    p->vals[i] = len ? (const char *)data : "";
    p->lens[i] = (int)len;
}

int64_t lil__pg_get_int8(const struct lil_pq *pq, const PGresult *res, int row, int col)
{
    const uint8_t *b = (const uint8_t *)pq->getvalue(res, row, col);
    int len = pq->getlength(res, row, col);
    uint64_t u = 0;

    for (int k = 0; k < len && k < 8; k++)
        u = u << 8 | b[k];
    if (len == 4) /* an int4 column */
        return (int64_t)(int32_t)(uint32_t)u;
    return (int64_t)u;
}

int64_t lil__pg_changed(const struct lil_pq *pq, PGresult *res)
{
    const char *n = pq->cmd_tuples(res);

    return n && *n ? strtoll(n, NULL, 10) : 0;
}

/* ---- the location ----------------------------------------------------------- */

static bool schema_ok(const char *s, size_t n)
{
    if (n == 0 || n > PG_SCHEMA_MAX || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_'))
            return false;
    return true;
}

/* Copy the query parameter at q (n bytes, "k=v") to out unless it is lil's
 * own (schema=), which goes to schema.  LIL_E_INVAL for a bad schema. */
static lil_status take_param(struct lil_err *err, const char *q, size_t n,
                             struct lil_buf *out, char *schema)
{
    if (n >= 7 && strncmp(q, "schema=", 7) == 0) {
        if (!schema_ok(q + 7, n - 7))
            return lil__seterr(err, LIL_E_INVAL, 0,
                               "schema=%.*s: a schema name is 1 to 63 lower-case "
                               "letters, digits and '_', not starting with a digit",
                               (int)(n - 7 > 80 ? 80 : n - 7), q + 7);
        memcpy(schema, q + 7, n - 7);
        schema[n - 7] = '\0';
        return LIL_OK;
    }
    if ((out->data[out->len - 1] != '?' && lil__buf_add(out, "&", 1) != LIL_OK) ||
        lil__buf_add(out, q, n) != LIL_OK)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return LIL_OK;
}

/* where without lil's parameters into out; the schema into schema. */
static lil_status strip_params(struct lil_err *err, const char *where,
                               struct lil_buf *out, char *schema)
{
    const char *q = strchr(where, '?');
    size_t base = q ? (size_t)(q - where) : strlen(where);
    lil_status rc = LIL_OK;

    snprintf(schema, PG_SCHEMA_MAX + 1, "lil");
    if (lil__buf_add(out, where, base) != LIL_OK || lil__buf_add(out, "?", 1) != LIL_OK)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    while (q && rc == LIL_OK) {
        const char *p = q + 1, *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        if (n)
            rc = take_param(err, p, n, out, schema);
        q = amp;
    }
    if (out->data[out->len - 1] == '?')
        out->data[--out->len] = '\0';
    return rc;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Does the query key k (n bytes, percent-encoded as libpq reads it: %77 is
 * 'w', upper or lower case hex) name a password (password, sslpassword,
 * any case)?  A key too long to decode here is taken as one. */
static bool key_is_password(const char *k, size_t n)
{
    char d[128];
    size_t len = 0;

    for (size_t i = 0; i < n; i++, len++) {
        int hi = k[i] == '%' && i + 2 < n ? hex_digit(k[i + 1]) : -1;

        if (len + 1 >= sizeof(d))
            return true;
        if (hi >= 0 && hex_digit(k[i + 2]) >= 0) {
            d[len] = (char)(hi * 16 + hex_digit(k[i + 2]));
            i += 2;
        } else {
            d[len] = k[i];
        }
    }
    for (size_t i = 0; i < len; i++)
        if (d[i] >= 'A' && d[i] <= 'Z')
            d[i] = (char)(d[i] - 'A' + 'a');
    d[len] = '\0';
    return strstr(d, "password") != NULL || strstr(d, "passwd") != NULL;
}

/* Copy the query s (after '?') to out, the value of every parameter whose
 * key names a password as "***". */
static lil_status redact_query(const char *s, struct lil_buf *out)
{
    lil_status rc = LIL_OK;

    while (rc == LIL_OK && *s) {
        size_t n = strcspn(s, "&"), k = strcspn(s, "=&");

        if (k < n && key_is_password(s, k)) {
            rc = lil__buf_add(out, s, k + 1);
            if (rc == LIL_OK)
                rc = lil__buf_addstr(out, "***");
        } else {
            rc = lil__buf_add(out, s, n);
        }
        if (rc == LIL_OK && s[n] == '&')
            rc = lil__buf_add(out, "&", 1);
        s += n + (s[n] == '&');
    }
    return rc;
}

/* The password in user:password@ and the value of every query parameter
 * that names one (password=, sslpassword=, percent-encoded or not),
 * replaced by "***". */
static lil_status redact(struct lil_err *err, const char *where, struct lil_buf *out)
{
    const char *auth = strstr(where, "://") + 3;
    size_t auth_len = strcspn(auth, "/?");
    const char *at = memchr(auth, '@', auth_len);
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    const char *p = where, *q = strchr(auth, '?');
    lil_status rc = LIL_OK;

    if (colon) {
        rc = lil__buf_add(out, where, (size_t)(colon + 1 - where));
        if (rc == LIL_OK)
            rc = lil__buf_addstr(out, "***");
        p = at;
    }
    if (rc == LIL_OK)
        rc = q ? lil__buf_add(out, p, (size_t)(q + 1 - p)) : lil__buf_addstr(out, p);
    if (rc == LIL_OK && q)
        rc = redact_query(q + 1, out);
    return rc == LIL_OK ? LIL_OK : lil__seterr(err, rc, 0, "out of memory");
}

/* What libpq says of conninfo: LIL_E_INVAL with its reason. */
static lil_status libpq_parse(const struct lil_pq *pq, struct lil_err *err,
                              const char *conninfo, const char *display)
{
    char *why = NULL;
    PQconninfoOption *opts = pq->conninfo_parse(conninfo, &why);
    size_t n;

    if (opts) {
        pq->conninfo_free(opts);
        return LIL_OK;
    }
    n = why ? strcspn(why, "\n") : 0;
    lil__seterr(err, LIL_E_INVAL, 0,
                "invalid PostgreSQL connection string '%s': %.*s (docs/postgres.md "
                "shows the form)",
                display, (int)n, why ? why : "");
    if (why)
        pq->freemem(why);
    return LIL_E_INVAL;
}

lil_status lil__pg_location(const struct lil_env *env, const struct lil_pq *pq,
                            struct lil_err *err, const char *where, char **conninfo,
                            char *schema, char **display)
{
    struct lil_buf info, shown;
    lil_status rc;

    *conninfo = *display = NULL;
    lil__buf_init(&info, env, 65536);
    lil__buf_init(&shown, env, 65536);
    rc = redact(err, where, &shown);
    if (rc == LIL_OK)
        rc = strip_params(err, where, &info, schema);
    if (rc == LIL_OK && pq)
        rc = libpq_parse(pq, err, (const char *)info.data, (const char *)shown.data);
    if (rc == LIL_OK) {
        *conninfo = lil__strdup(env, (const char *)info.data);
        *display = lil__strdup(env, (const char *)shown.data);
        if (!*conninfo || !*display)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    if (rc != LIL_OK) {
        lil__free(env, *conninfo);
        lil__free(env, *display);
        *conninfo = *display = NULL;
    }
    lil__buf_free(&info);
    lil__buf_free(&shown);
    return rc;
}

/* ---- connections ------------------------------------------------------------- */

/* libpq's notices (NOTICE, WARNING from the server) go to the env's log,
 * never to stderr. */
static void on_notice(void *arg, const char *message)
{
    const struct pg_store *ps = arg;

    lil__log(ps->base.env, LIL_LOG_DEBUG, "event=pg_notice msg=\"%.*s\"",
             (int)strcspn(message, "\n"), message);
}

/* libpq's last message without its trailing newline. */
static const char *conn_message(const struct pg_store *ps, PGconn *pc, int *len)
{
    const char *m = pc ? ps->pq->error_message(pc) : "out of memory";

    *len = (int)strcspn(m, "\n");
    return m;
}

lil_status lil__pg_connect(struct pg_store *ps, struct lil_err *err,
                           struct pg_conn **out)
{
    static const char *const keys[] = {"connect_timeout", "fallback_application_name",
                                       "dbname", NULL};
    const char *vals[] = {CONNECT_TIMEOUT_S, "lil", ps->conninfo, NULL};
    struct pg_conn *c = lil__calloc(ps->base.env, 1, sizeof(*c));
    PGconn *pc;
    lil_status rc;
    int n;

    *out = NULL;
    if (!c)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    pc = ps->pq->connectdb_params(keys, vals, 1);
    if (!pc || ps->pq->status(pc) != CONNECTION_OK) {
        const char *m = conn_message(ps, pc, &n);
        lil__seterr(err, LIL_E_PG, 0,
                    "cannot connect to PostgreSQL at %s: %.*s (is the server "
                    "running, and the connection string right?)",
                    ps->base.where, n, m);
        if (pc)
            ps->pq->finish(pc);
        lil__free(ps->base.env, c);
        return LIL_E_PG;
    }
    ps->pq->set_notice_processor(pc, on_notice, ps);
    c->pc = pc;
    c->pid = lil__os_self_pid();
    c->backend_pid = ps->pq->backend_pid(pc);
    rc = lil__pg_simple(ps, c, err, "SET synchronous_commit TO on",
                        "setting up a connection");
    if (rc != LIL_OK) {
        lil__pg_disconnect(ps, c);
        return rc;
    }
    *out = c;
    return LIL_OK;
}

void lil__pg_disconnect(struct pg_store *ps, struct pg_conn *c)
{
    if (!c)
        return;
    /* a forked child's copy: the session is the parent's (PQfinish would
     * end it), so it is only forgotten */
    if (c->pid == lil__os_self_pid())
        ps->pq->finish(c->pc);
    lil__free(ps->base.env, c);
}

bool lil__pg_conn_ok(const struct pg_store *ps, const struct pg_conn *c)
{
    return c && c->pid == lil__os_self_pid() && ps->pq->status(c->pc) == CONNECTION_OK;
}

lil_status lil__pg_conn_get(struct pg_store *ps, struct lil_err *err,
                            struct pg_conn **out)
{
    struct pg_conn *c, *stale = NULL;

    pthread_mutex_lock(&ps->pool_mu);
    while ((c = ps->idle) != NULL) {
        ps->idle = c->next;
        ps->n_idle--;
        if (lil__pg_conn_ok(ps, c))
            break;
        c->next = stale; /* another process's, or closed by the server */
        stale = c;
    }
    pthread_mutex_unlock(&ps->pool_mu);
    while (stale) {
        struct pg_conn *next = stale->next;
        lil__pg_disconnect(ps, stale);
        stale = next;
    }
    if (c) {
        c->next = NULL;
        *out = c;
        return LIL_OK;
    }
    return lil__pg_connect(ps, err, out);
}

void lil__pg_conn_put(struct pg_store *ps, struct pg_conn *c)
{
    bool keep;

    if (!c)
        return;
    keep = lil__pg_conn_ok(ps, c) && ps->pq->transaction_status(c->pc) == PQTRANS_IDLE;
    pthread_mutex_lock(&ps->pool_mu);
    if (keep && ps->n_idle < PG_POOL_MAX) {
        c->next = ps->idle;
        ps->idle = c;
        ps->n_idle++;
        c = NULL;
    }
    pthread_mutex_unlock(&ps->pool_mu);
    lil__pg_disconnect(ps, c);
}

void lil__pg_pool_drain(struct pg_store *ps)
{
    struct pg_conn *c;

    pthread_mutex_lock(&ps->pool_mu);
    c = ps->idle;
    ps->idle = NULL;
    ps->n_idle = 0;
    pthread_mutex_unlock(&ps->pool_mu);
    while (c) {
        struct pg_conn *next = c->next;
        lil__pg_disconnect(ps, c);
        c = next;
    }
}

/* ---- statements and errors ------------------------------------------------------ */

const char *lil__pg_sql(const struct pg_store *ps, const char *tmpl, char *buf,
                        size_t cap)
{
    size_t n = 0, slen = strlen(ps->schema);

    for (const char *t = tmpl; *t && n + slen + 3 < cap; t++) {
        if (*t != '@') {
            buf[n++] = *t;
            continue;
        }
        buf[n++] = '"';
        memcpy(buf + n, ps->schema, slen);
        n += slen;
        buf[n++] = '"';
    }
    buf[n] = '\0';
    return buf;
}

static bool sqlstate_is(const char *state, const char *want)
{
    return state && strncmp(state, want, strlen(want)) == 0;
}

/* What to do about the server's error state, for the message. */
static const char *advice(const struct pg_store *ps, const char *state, bool lost,
                          char *buf, size_t cap)
{
    if (lost)
        return "; the connection was lost";
    if (sqlstate_is(state, "42501"))
        snprintf(buf, cap,
                 "; the role needs rights on schema \"%s\" (docs/postgres.md, "
                 "Permissions)",
                 ps->schema);
    else if (sqlstate_is(state, "3F000") || sqlstate_is(state, "42P01"))
        snprintf(buf, cap, "; run `lil db init` to create schema \"%s\"", ps->schema);
    else
        buf[0] = '\0';
    return buf;
}

lil_status lil__pg_fail(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                        const PGresult *res, const char *what, bool *lost)
{
    const struct lil_pq *pq = ps->pq;
    const char *state = res ? pq->result_error_field(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? pq->result_error_field(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    bool gone = !res || pq->status(c->pc) != CONNECTION_OK ||
                sqlstate_is(state, "08") || sqlstate_is(state, "57P");
    char hint[160];
    int n;

    if (!msg)
        msg = conn_message(ps, c->pc, &n);
    else
        n = (int)strlen(msg);
    if (lost)
        *lost = gone;
    return lil__seterr(err, LIL_E_PG, 0, "PostgreSQL, %s: %.*s%s%s%s%s", what, n, msg,
                       state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "",
                       advice(ps, state, gone, hint, sizeof(hint)));
}

static lil_status result_of(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                            const char *what, PGresult *res, PGresult **out)
{
    ExecStatusType st = res ? ps->pq->result_status(res) : PGRES_FATAL_ERROR;

    lil_status rc;

    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        if (out)
            *out = res;
        else
            ps->pq->clear(res);
        return LIL_OK;
    }
    rc = lil__pg_fail(ps, c, err, res, what, NULL);
    if (res)
        ps->pq->clear(res);
    return rc;
}

lil_status lil__pg_exec(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                        const char *what, const char *sql, const struct pg_params *p,
                        bool binary, PGresult **out)
{
    PGresult *res;

    if (out)
        *out = NULL;
    if (p)
        res = ps->pq->exec_params(c->pc, sql, p->n, p->types, p->vals, p->lens, p->fmts,
                                  binary ? 1 : 0);
    else
        res =
            ps->pq->exec_params(c->pc, sql, 0, NULL, NULL, NULL, NULL, binary ? 1 : 0);
    return result_of(ps, c, err, what, res, out);
}

lil_status lil__pg_query(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         const char *what, const char *tmpl, const struct pg_params *p,
                         bool binary, PGresult **out)
{
    char sql[SQL_MAX];

    return lil__pg_exec(ps, c, err, what, lil__pg_sql(ps, tmpl, sql, sizeof(sql)), p,
                        binary, out);
}

lil_status lil__pg_command(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                           const char *what, const char *tmpl,
                           const struct pg_params *p, int64_t *changed)
{
    PGresult *res;
    lil_status rc = lil__pg_query(ps, c, err, what, tmpl, p, false, &res);

    if (rc != LIL_OK)
        return rc;
    *changed = lil__pg_changed(ps->pq, res);
    ps->pq->clear(res);
    return LIL_OK;
}

lil_status lil__pg_exec_prepared(struct pg_store *ps, struct pg_conn *c,
                                 struct lil_err *err, const char *what, int bit,
                                 const char *name, const char *sql,
                                 const struct pg_params *p, bool binary, PGresult **out)
{
    uint64_t mask = (uint64_t)1 << bit;
    lil_status rc;

    if (out)
        *out = NULL;
    if (!(c->prepared & mask)) {
        rc = result_of(ps, c, err, what,
                       ps->pq->prepare(c->pc, name, sql, p->n, p->types), NULL);
        if (rc != LIL_OK)
            return rc;
        c->prepared |= mask;
    }
    return result_of(ps, c, err, what,
                     ps->pq->exec_prepared(c->pc, name, p->n, p->vals, p->lens, p->fmts,
                                           binary ? 1 : 0),
                     out);
}

lil_status lil__pg_simple(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                          const char *sql, const char *what)
{
    return result_of(ps, c, err, what, ps->pq->exec(c->pc, sql), NULL);
}

lil_status lil__pg_with_conn(struct pg_store *ps, struct lil_err *err, pg_work_fn fn,
                             void *ud)
{
    for (int attempt = 0;; attempt++) {
        struct pg_conn *c = NULL;
        lil_status rc = lil__pg_conn_get(ps, err, &c);
        bool lost;

        if (rc != LIL_OK)
            return rc;
        rc = fn(ps, c, err, ud);
        lost = rc != LIL_OK && !lil__pg_conn_ok(ps, c);
        lil__pg_conn_put(ps, c);
        if (!lost || attempt == 1)
            return rc;
        lil__pg_pool_drain(ps);
    }
}
