/*
 * where.c -- the run and step a supervised child died in (where.h), read
 * from the store without writing anything: the store picks the runs that
 * changed, the engine's fold of a run's place (engine/place.h, the one
 * lil_run_facts reports) names the step.
 */
#include "supervise/where.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/place.h"
#include "engine/run.h"
#include "os/os.h"
#include "store/store.h"

/* A journal's modification time comes from the kernel's coarse clock:
 * runs changed this little before the child's start are read too. */
#define CHANGED_SLACK_NS 100000000 /* 100 ms */

/* The run ids of the store. */
struct ids {
    const struct lil_env *env;
    char **v;
    size_t n, cap;
    bool nomem;
};

/* ---- one run ------------------------------------------------------------- */

static lil_status walk_record(void *ud, const struct lil_rec *rec, struct lil_err *err)
{
    return lil__place_add(ud, err, rec->type, rec->key, rec->key_len, rec->ts_ns);
}

/* The place the fold found, into out (which gets the run id too). */
static lil_status keep_place(const struct lil_env *env, struct lil_err *err,
                             const char *run_id, struct lil_place_fold *f,
                             struct lil_sv_where *out)
{
    struct lil_sv_where n = {0};
    struct lil_place p;
    lil_status rc = lil__place_take(f, err, &p);

    if (rc != LIL_OK)
        return rc;
    n.run_id = lil__strdup(env, run_id);
    if (!n.run_id) {
        lil__place_clear(env, &p);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    n.step = p.step; /* taken */
    n.started = p.started;
    n.last_ns = p.last_ns;
    n.store = out->store;
    lil__sv_where_free(env, out);
    *out = n;
    return LIL_OK;
}

/* Read run_id; when its last record is newer than both since_ns and out's,
 * it becomes out.  A run that cannot be opened is passed over. */
static lil_status read_run(struct lil_store *st, struct lil_err *err,
                           const char *run_id, int64_t since_ns,
                           struct lil_sv_where *out)
{
    struct lil_srun_opts so = {.sync = LIL_SYNC_FULL, .readonly = true};
    struct lil_place_fold f;
    struct lil_srun *sr = NULL;
    uint8_t *key = NULL;
    lil_status rc = lil__store_key_copy(st, err, &key, &so.key_len);

    if (rc != LIL_OK)
        return rc;
    lil__place_init(&f, st->env);
    /* NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result): 64 MiB */
    so.max_record = LIL_DEFAULT_MAX_RECORD;
    so.key = key;
    rc = st->ops->run_open(st, NULL, run_id, &so, walk_record, &f, &sr);
    lil__store_key_free(st, key, so.key_len);
    if (rc == LIL_OK && f.last_ns >= since_ns &&
        (!out->run_id || f.last_ns > out->last_ns))
        rc = keep_place(st->env, err, run_id, &f, out);
    else if (rc != LIL_E_NOMEM)
        rc = LIL_OK; /* not this one */
    else
        lil__seterr(err, rc, 0, "out of memory reading run %s", run_id);
    if (sr)
        st->ops->run_close(sr, NULL, false);
    lil__place_free(&f);
    return rc;
}

/* ---- the store ----------------------------------------------------------- */

static int collect_id(void *ud, const char *run_id)
{
    struct ids *ids = ud;
    char **v = lil__grow(ids->env, ids->v, &ids->cap, ids->n, sizeof(*v), 16);
    char *copy = v ? lil__strdup(ids->env, run_id) : NULL;

    if (v)
        ids->v = v;
    if (!copy) {
        ids->nomem = true;
        return 1;
    }
    ids->v[ids->n++] = copy;
    return 0;
}

static void free_ids(struct ids *ids)
{
    for (size_t i = 0; i < ids->n; i++)
        lil__free(ids->env, ids->v[i]);
    lil__free(ids->env, ids->v);
}

/* Changed since since_ns, as far as the store can tell without reading it. */
static bool maybe_changed(struct lil_store *st, const char *run_id, int64_t since_ns)
{
    int64_t ns = 0;

    if (!st->ops->run_changed)
        return true;
    if (st->ops->run_changed(st, NULL, run_id, &ns) != LIL_OK)
        return false;
    return ns >= since_ns - CHANGED_SLACK_NS;
}

static bool dir_exists(const struct lil_env *env, const char *dir)
{
    int fd;

    do
        fd = env->os->open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    while (fd < 0 && errno == EINTR);
    lil__os_close(env, fd);
    return fd >= 0;
}

static lil_status read_store(struct lil_store *st, struct lil_err *err,
                             int64_t since_ns, struct lil_sv_where *out)
{
    struct ids ids = {.env = st->env};
    lil_status rc = st->ops->foreach_run(st, err, collect_id, &ids);

    if (rc == LIL_OK && ids.nomem)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory listing runs");
    for (size_t i = 0; rc == LIL_OK && i < ids.n; i++)
        if (maybe_changed(st, ids.v[i], since_ns))
            rc = read_run(st, err, ids.v[i], since_ns, out);
    free_ids(&ids);
    return rc;
}

lil_status lil__sv_where(struct lil_env *env, struct lil_err *err, const char *dir,
                         int64_t since_ns, struct lil_sv_where *out)
{
    struct lil_store *st = NULL;
    lil_status rc;

    memset(out, 0, sizeof(*out));
    if (!dir || !dir_exists(env, dir))
        return LIL_OK;
    rc = lil__store_open(env, err, dir, 0, &st);
    if (rc == LIL_OK)
        rc = read_store(st, err, since_ns, out);
    out->store = rc == LIL_OK;
    if (st)
        lil__store_close(st);
    if (rc != LIL_OK)
        lil__sv_where_free(env, out);
    return rc;
}

void lil__sv_where_free(const struct lil_env *env, struct lil_sv_where *w)
{
    if (!w)
        return;
    lil__free(env, w->run_id);
    lil__free(env, w->step);
    memset(w, 0, sizeof(*w));
}

size_t lil__sv_where_key(const struct lil_sv_where *w, char *buf, size_t cap)
{
    size_t a, b, need;

    if (!w->run_id || cap == 0)
        return 0;
    a = strlen(w->run_id);
    b = w->step ? strlen(w->step) : 0;
    need = a + 1 + b + 2;
    if (need > cap)
        return 0;
    memcpy(buf, w->run_id, a + 1);
    if (b)
        memcpy(buf + a + 1, w->step, b);
    buf[a + 1 + b] = '\0';
    buf[a + 2 + b] = w->started ? '1' : '0';
    return need;
}
