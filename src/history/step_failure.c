/*
 * step_failure.c -- the journaled failure of a step a program just called
 * (lil_run_step_failure): a binding that replays a failed step raises its
 * journaled reason again, whole, without reading it out of an error
 * message.
 *
 * The step is the latest call of its name in this execution (the engine's
 * counter of names, under the run's lock): identity name for the first
 * call, name#k for the k-th.  Its reason is the payload of the last
 * STEP_FAILED record of that identity, found by a walk of the run's
 * records (a replay need not have built the index).
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/run.h"
#include "history/history.h"

struct find {
    const struct lil_env *env;
    const char *identity;
    size_t len;
    lil_bytes reason; /* the last STEP_FAILED payload of identity */
    bool found, nomem;
};

static int each_record(void *ud, const lil_record *rec)
{
    struct find *f = ud;

    if (rec->type != LIL_REC_STEP_FAILED || rec->key_len != f->len ||
        memcmp(rec->key, f->identity, f->len) != 0)
        return 0;
    lil__export_free(f->reason.data);
    f->reason.data = lil__export_copy(f->env, rec->payload, rec->payload_len);
    f->reason.len = rec->payload_len;
    f->found = true;
    f->nomem = !f->reason.data;
    return f->nomem;
}

/* The identity of the latest call of name, into identity (cap bytes);
 * false when name was not called in this execution. */
static bool latest_identity(struct lil_run *run, const char *name, char *identity,
                            size_t cap)
{
    struct ientry *c;
    uint32_t calls;

    pthread_mutex_lock(&run->mu);
    c = lil__imap_find(&run->names, name, strlen(name));
    calls = c ? c->calls : 0;
    pthread_mutex_unlock(&run->mu);
    if (calls == 0)
        return false;
    if (calls == 1)
        snprintf(identity, cap, "%s", name);
    else
        snprintf(identity, cap, "%s#%u", name, (unsigned)calls);
    return true;
}

lil_status lil__history_step_failure(struct lil_run *run, struct lil_err *err,
                                     const char *name, char **identity,
                                     lil_bytes *reason)
{
    char id[LIL_STEP_NAME_MAX + 16];
    struct find f = {run->env, id, 0, {NULL, 0}, false, false};
    lil_status rc;

    if (!latest_identity(run, name, id, sizeof(id)))
        return lil__seterr(err, LIL_E_NOTFOUND, 0,
                           "step '%s' was not called in this execution of run %s", name,
                           run->id);
    f.len = strlen(id);
    rc = lil__run_foreach(run, err, each_record, &f);
    if (rc == LIL_OK && f.nomem)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK && !f.found)
        rc = lil__seterr(err, LIL_E_NOTFOUND, 0, "step '%s' of run %s has not failed",
                         id, run->id);
    if (rc == LIL_OK && !(*identity = lil__export_copy(run->env, id, f.len + 1)))
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    if (rc == LIL_OK) {
        *reason = f.reason;
        return LIL_OK;
    }
    lil__export_free(f.reason.data);
    return rc;
}
