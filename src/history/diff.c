/*
 * diff.c -- where two runs' journals stop agreeing, and how their steps'
 * results differ (lil_run_diff, lil diff; fork.h has the rules).
 *
 * Each run is read as its verified image and reduced to the records that
 * say what happened (steps, effects, resolutions, the run's end), each with
 * the iteration it belongs to in a loop run.  The first index where the two
 * lists differ is the divergence.  The steps are each identity's last
 * outcome, sorted by identity and merged: those in both with another type
 * or payload, and those in one only, in the order of the first run (then
 * the second's own).
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/run.h"
#include "history/fork.h"
#include "loop/record_name.h"
#include "store/image.h"

/* A record that says what happened. */
struct drec {
    uint64_t seq;
    int64_t iteration; /* a loop run's: the one it belongs to; -1 none */
    int type;
    bool effect;
    const uint8_t *key;
    size_t key_len;
    const uint8_t *payload;
    size_t payload_len;
    size_t pos; /* its place in the list */
};

/* One run read. */
struct side {
    const char *run;
    const char *store;
    struct lil_buf image;
    struct drec *r;
    size_t n, cap;
    uint64_t records;
    bool loop, nomem;
    int64_t iteration; /* the iteration in flight */
};

static bool compared(int type)
{
    return type == LIL_REC_STEP || type == LIL_REC_STEP_FAILED ||
           type == LIL_REC_INTENT || type == LIL_REC_RESOLVE ||
           type == LIL_REC_RUN_DONE || type == LIL_REC_RUN_FAILED ||
           type == LIL_REC_REQUEST;
}

/* The iteration r belongs to, and the one in flight after it. */
static int64_t iteration_of(struct side *s, const struct lil_rec *r)
{
    struct lil_loop_name nm;

    if (r->type == LIL_REC_STEP && r->key_len == 4 && memcmp(r->key, "loop", 4) == 0) {
        s->loop = true;
        s->iteration = 0;
        return -1;
    }
    if (!s->loop)
        return -1;
    if (!lil__loop_name_parse((const char *)r->key, r->key_len, &nm))
        return s->iteration;
    if (nm.kind == LIL_LOOP_NAME_SNAP) {
        s->iteration = nm.iteration + 1;
        return nm.iteration;
    }
    return nm.kind == LIL_LOOP_NAME_SLOT && nm.iteration >= 0 ? nm.iteration
                                                              : s->iteration;
}

static int each(void *ud, const struct lil_rec *r)
{
    struct side *s = ud;
    struct drec *d;
    int64_t it;

    s->records = r->seq;
    it = iteration_of(s, r);
    if (!compared(r->type))
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        d = lil__realloc(s->image.env, s->r, cap * sizeof(*d));
        if (!d) {
            s->nomem = true;
            return 1;
        }
        s->r = d;
        s->cap = cap;
    }
    d = &s->r[s->n];
    d->seq = r->seq;
    d->iteration = it;
    d->type = r->type;
    d->effect = (r->flags & LIL_SREC_EFFECT) != 0;
    d->key = r->key;
    d->key_len = r->key_len;
    d->payload = r->payload;
    d->payload_len = r->payload_len;
    d->pos = s->n++;
    return 0;
}

static lil_status read_side(struct lil_store *st, struct lil_err *err, struct side *s)
{
    uint64_t valid = 0;
    lil_status rc;

    s->store = st->where;
    rc = lil__store_image(st, err, s->run, &s->image, &valid);
    if (rc != LIL_OK)
        return rc;
    (void)lil__image_records(s->image.data, (size_t)valid, each, s);
    return s->nomem ? lil__seterr(err, LIL_E_NOMEM, 0, "out of memory") : LIL_OK;
}

static void free_side(struct side *s)
{
    lil__free(s->image.env, s->r);
    lil__buf_free(&s->image);
}

static bool same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static bool same_record(const struct drec *a, const struct drec *b)
{
    return a->type == b->type && a->effect == b->effect &&
           same_bytes(a->key, a->key_len, b->key, b->key_len) &&
           same_bytes(a->payload, a->payload_len, b->payload, b->payload_len);
}

static json_t *text_or_null(const uint8_t *p, size_t n)
{
    json_t *v = memchr(p, '\0', n) ? NULL : json_stringn(n ? (const char *)p : "", n);

    return v ? v : json_null();
}

static json_t *where_json(const struct drec *d)
{
    if (!d)
        return json_null();
    return json_pack("{sI ss so}", "seq", (json_int_t)d->seq, "type",
                     lil__record_type_name(d->type), "key",
                     text_or_null(d->key, d->key_len));
}

static json_t *divergence(const struct side *a, const struct side *b, size_t k)
{
    const struct drec *da = k < a->n ? &a->r[k] : NULL;
    const struct drec *db = k < b->n ? &b->r[k] : NULL;
    const struct drec *at = da ? da : db;

    if (!at) /* identical runs have no divergence */
        return json_null();
    return json_pack("{so so so so}", "iteration",
                     at->iteration >= 0 ? json_integer(at->iteration) : json_null(),
                     "step", text_or_null(at->key, at->key_len), "a", where_json(da),
                     "b", where_json(db));
}

/* ---- steps ------------------------------------------------------------------------
 */

/* A record in a sorted list of outcomes. */
struct ref {
    const struct drec *d;
};

static bool is_outcome(const struct drec *d)
{
    return d->type == LIL_REC_STEP || d->type == LIL_REC_STEP_FAILED;
}

static int key_cmp(const struct drec *a, const struct drec *b)
{
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = n ? memcmp(a->key, b->key, n) : 0;

    if (c)
        return c;
    return a->key_len < b->key_len ? -1 : a->key_len > b->key_len;
}

static int by_key_then_pos(const void *x, const void *y)
{
    const struct drec *a = ((const struct ref *)x)->d;
    const struct drec *b = ((const struct ref *)y)->d;
    int c = key_cmp(a, b);

    if (c)
        return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Each identity's last outcome, sorted by identity, into *out (*n). */
static lil_status last_outcomes(const struct side *s, struct lil_err *err,
                                struct ref **out, size_t *n)
{
    struct ref *v = lil__calloc(s->image.env, s->n + 1, sizeof(*v));
    size_t m = 0, k = 0;

    if (!v)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; i < s->n; i++)
        if (is_outcome(&s->r[i]))
            v[m++].d = &s->r[i];
    qsort(v, m, sizeof(*v), by_key_then_pos);
    for (size_t i = 0; i < m; i++)
        if (i + 1 == m || key_cmp(v[i].d, v[i + 1].d) != 0) /* the last of its key */
            v[k++] = v[i];
    *out = v;
    *n = k;
    return LIL_OK;
}

static json_t *outcome_json(const struct drec *d)
{
    char hex[2 * LIL_SHA256_LEN + 1];
    uint8_t sum[LIL_SHA256_LEN];

    if (!d)
        return json_null();
    lil__sha256(d->payload, d->payload_len, sum);
    lil__hex(sum, sizeof(sum), hex);
    return json_pack("{sI ss ss so}", "seq", (json_int_t)d->seq, "type",
                     lil__record_type_name(d->type), "sha256", hex, "result",
                     text_or_null(d->payload, d->payload_len));
}

/* One entry of "steps". */
static json_t *step_json(const struct drec *a, const struct drec *b, const char *change)
{
    const struct drec *at = a ? a : b;
    json_t *o;

    if (!at) /* never: merge gives one side at least */
        return NULL;
    o = json_pack("{so ss so so}", "step", text_or_null(at->key, at->key_len), "change",
                  change, "a", outcome_json(a), "b", outcome_json(b));

    if (o && at->iteration >= 0)
        json_object_set_new(o, "iteration", json_integer(at->iteration));
    return o;
}

struct change {
    json_t *v;
    size_t order;
};

static int by_order(const void *x, const void *y)
{
    const struct change *a = x, *b = y;

    return a->order < b->order ? -1 : a->order > b->order;
}

/* Merge the sorted outcomes va (na) and vb (nb) into changes (room for
 * na + nb); returns how many. */
static size_t merge(const struct side *a, const struct ref *va, size_t na,
                    const struct ref *vb, size_t nb, struct change *ch)
{
    size_t i = 0, j = 0, n = 0;

    while (i < na || j < nb) {
        const struct drec *x = i < na ? va[i].d : NULL;
        const struct drec *y = j < nb ? vb[j].d : NULL;
        int c = !x ? 1 : !y ? -1 : key_cmp(x, y);
        if (c < 0) {
            ch[n].order = x->pos;
            ch[n++].v = step_json(x, NULL, "only_a");
            i++;
        } else if (c > 0 && y) {
            ch[n].order = a->n + y->pos;
            ch[n++].v = step_json(NULL, y, "only_b");
            j++;
        } else if (x && y) {
            if (x->type != y->type ||
                !same_bytes(x->payload, x->payload_len, y->payload, y->payload_len)) {
                ch[n].order = x->pos;
                ch[n++].v = step_json(x, y, "differs");
            }
            i++;
            j++;
        } else {
            break; /* never: one of them is left */
        }
    }
    return n;
}

static lil_status steps_json(const struct side *a, const struct side *b,
                             struct lil_err *err, json_t **out)
{
    struct ref *va = NULL, *vb = NULL;
    struct change *ch = NULL;
    size_t na = 0, nb = 0, n;
    lil_status rc = last_outcomes(a, err, &va, &na);

    if (rc == LIL_OK)
        rc = last_outcomes(b, err, &vb, &nb);
    if (rc == LIL_OK)
        ch = lil__calloc(a->image.env, na + nb + 1, sizeof(*ch));
    if (rc == LIL_OK && (!ch || !va || !vb))
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK && ch && va && vb) {
        n = merge(a, va, na, vb, nb, ch);
        qsort(ch, n, sizeof(*ch), by_order);
        *out = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(*out, ch[i].v);
    }
    lil__free(a->image.env, ch);
    lil__free(a->image.env, va);
    lil__free(a->image.env, vb);
    return rc;
}

/* ---- the document ------------------------------------------------------------------
 */

static json_t *side_json(const struct side *s)
{
    return json_pack("{ss ss sI}", "run", s->run, "store", s->store, "records",
                     (json_int_t)s->records);
}

static json_t *document(const struct side *a, const struct side *b, json_t *steps)
{
    size_t k = 0;
    bool same;

    while (k < a->n && k < b->n && same_record(&a->r[k], &b->r[k]))
        k++;
    same = k == a->n && k == b->n;
    return json_pack("{sb so so sI so so}", "identical", same, "a", side_json(a), "b",
                     side_json(b), "common", (json_int_t)k, "divergence",
                     same ? json_null() : divergence(a, b, k), "steps", steps);
}

lil_status lil__history_diff(struct lil_store *sa, const char *a, struct lil_store *sb,
                             const char *b, struct lil_err *err, json_t **out)
{
    struct side x, y;
    json_t *steps = NULL;
    lil_status rc;

    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    x.run = a;
    y.run = b;
    x.iteration = y.iteration = -1;
    lil__buf_init(&x.image, sa->env, (size_t)-1);
    lil__buf_init(&y.image, sb->env, (size_t)-1);
    rc = read_side(sa, err, &x);
    if (rc == LIL_OK)
        rc = read_side(sb, err, &y);
    if (rc == LIL_OK)
        rc = steps_json(&x, &y, err, &steps);
    if (rc == LIL_OK) {
        *out = document(&x, &y, steps);
        if (!*out)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    free_side(&x);
    free_side(&y);
    return rc;
}
