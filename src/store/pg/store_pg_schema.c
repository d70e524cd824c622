/*
 * store_pg_schema.c -- the PostgreSQL store's schema: its tables (the
 * layout is in store_pg.h), created and migrated by lil itself (`lil db
 * init`, `lil db migrate`, lil_store_schema), and the check every open
 * makes.
 *
 * Versions.  lil_meta holds schema_version (the migrations applied) and
 * lil_version (the lil that applied the last).  migrations[k] takes the
 * schema from version k to k + 1; init applies them all to a new schema,
 * migrate those a schema lacks.  Each runs in one transaction that first
 * takes an advisory lock of the schema (pg_advisory_xact_lock), so that two
 * lils that init or migrate at once do the work once.  A store opened on a
 * schema newer than this lil knows is refused (LIL_E_VERSION, naming the lil
 * that migrated it); on an older one, the message says to migrate.
 *
 * In the SQL below '@' stands for the quoted schema name (lil__pg_sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/store_pg.h"

static const char *const migrations[PG_SCHEMA_VERSION] = {
    /* 0 -> 1: the first schema */
    "CREATE SCHEMA IF NOT EXISTS @;"
    "CREATE TABLE @.lil_meta (key text PRIMARY KEY, value text NOT NULL);"
    "CREATE TABLE @.runs ("
    " run_id text COLLATE \"C\" PRIMARY KEY,"
    " created timestamptz NOT NULL DEFAULT now(),"
    " header bytea NOT NULL,"
    " keyed boolean NOT NULL,"
    " sync text NOT NULL,"
    " lease_epoch bigint NOT NULL DEFAULT 0,"
    " lease_owner text,"
    " lease_until timestamptz,"
    " holder_backend_pid integer,"
    " holder_pid integer,"
    " state text,"
    " wake_at timestamptz);"
    "CREATE TABLE @.records ("
    " run_id text COLLATE \"C\" NOT NULL,"
    " seq bigint NOT NULL,"
    " off bigint NOT NULL,"
    " frame bytea NOT NULL,"
    " PRIMARY KEY (run_id, seq));"
    "ALTER TABLE @.records ALTER COLUMN frame SET STORAGE EXTERNAL;"
    "CREATE TABLE @.stop_requests ("
    " run_id text COLLATE \"C\" PRIMARY KEY,"
    " request bytea NOT NULL,"
    " created timestamptz NOT NULL DEFAULT now());"
    "CREATE TABLE @.markers ("
    " name text COLLATE \"C\" PRIMARY KEY,"
    " state text NOT NULL CHECK (state IN ('pending', 'done')),"
    " owner bytea,"
    " result bytea,"
    " updated timestamptz NOT NULL DEFAULT now());",
    /* 1 -> 2: the queue of `lil worker` (store_pg_queue.c): a submitted
     * run's spec and inputs, its place in the queue, its claims */
    "ALTER TABLE @.runs"
    " ADD COLUMN spec_name text,"
    " ADD COLUMN spec_text text,"
    " ADD COLUMN spec_sha256 text,"
    " ADD COLUMN inputs text,"
    " ADD COLUMN submitted_at timestamptz,"
    " ADD COLUMN attempts integer NOT NULL DEFAULT 0,"
    " ADD COLUMN claimed_by text,"
    " ADD COLUMN last_error text;"
    "CREATE INDEX runs_queue ON @.runs ((coalesce(wake_at, submitted_at)))"
    " WHERE state IN ('queued', 'parked', 'running');",
    /* 2 -> 3: the queue knows nothing of loops: a queued run carries an
     * opaque payload; the spec, its name and digest, and the inputs of runs
     * queued under 2 move into theirs, in the queue layer's form
     * (queue/payload.h: canonical JSON's keys in order) */
    "ALTER TABLE @.runs ADD COLUMN payload bytea;"
    "UPDATE @.runs SET payload = convert_to(json_build_object("
    " 'inputs', coalesce(inputs, '{}')::json, 'name', coalesce(spec_name, ''),"
    " 'sha256', coalesce(spec_sha256, ''), 'spec', coalesce(spec_text, ''))::text,"
    " 'UTF8') WHERE state IS NOT NULL;"
    "ALTER TABLE @.runs DROP COLUMN spec_name, DROP COLUMN spec_text,"
    " DROP COLUMN spec_sha256, DROP COLUMN inputs;",
    /* 3 -> 4: the workers that run (store_pg_workers.c: one row per
     * process, its heartbeat kept by the lease renewer) and the schedules
     * of cron loops (store_pg_sched.c: the document and the last slot
     * fired) */
    "CREATE TABLE @.workers ("
    " owner text COLLATE \"C\" PRIMARY KEY,"
    " name text NOT NULL,"
    " host text NOT NULL,"
    " pid integer NOT NULL,"
    " threads integer NOT NULL,"
    " lease_ms bigint NOT NULL,"
    " started timestamptz NOT NULL DEFAULT now(),"
    " heartbeat timestamptz NOT NULL DEFAULT now());"
    "CREATE TABLE @.schedules ("
    " id text COLLATE \"C\" PRIMARY KEY,"
    " doc bytea NOT NULL,"
    " mark_ms bigint NOT NULL DEFAULT 0,"
    " updated timestamptz NOT NULL DEFAULT now());",
};

/* What lil_meta says: the version (0 when there is no schema), and the lil
 * that wrote it. */
struct found {
    int version;
    char by[32];
};

static void read_meta(const struct lil_pq *pq, PGresult *res, struct found *f)
{
    for (int i = 0; i < pq->ntuples(res); i++) {
        const char *k = pq->getvalue(res, i, 0), *v = pq->getvalue(res, i, 1);
        if (strcmp(k, "schema_version") == 0)
            f->version = (int)strtol(v, NULL, 10);
        else if (strcmp(k, "lil_version") == 0)
            snprintf(f->by, sizeof(f->by), "%s", v);
    }
}

/* The schema's version on c: 0 when lil_meta does not exist. */
static lil_status find_version(struct pg_store *ps, struct pg_conn *c,
                               struct lil_err *err, struct found *f)
{
    char name[PG_SCHEMA_MAX + 16];
    struct pg_params p = {0};
    PGresult *res;
    lil_status rc;
    bool there;

    memset(f, 0, sizeof(*f));
    snprintf(name, sizeof(name), "\"%s\".lil_meta", ps->schema);
    lil__pg_param_text(&p, name);
    rc = lil__pg_exec(ps, c, err, "looking for lil's schema",
                      "SELECT to_regclass($1) IS NOT NULL", &p, false, &res);
    if (rc != LIL_OK)
        return rc;
    there = strcmp(ps->pq->getvalue(res, 0, 0), "t") == 0;
    ps->pq->clear(res);
    if (!there)
        return LIL_OK;
    rc = lil__pg_query(ps, c, err, "reading lil's schema version",
                       "SELECT key, value FROM @.lil_meta", NULL, false, &res);
    if (rc != LIL_OK)
        return rc;
    read_meta(ps->pq, res, f);
    ps->pq->clear(res);
    return LIL_OK;
}

static lil_status newer_err(const struct pg_store *ps, struct lil_err *err,
                            const struct found *f)
{
    return lil__seterr(err, LIL_E_VERSION, 0,
                       "schema \"%s\" is at version %d, newer than this lil (%s) "
                       "knows (%d); lil %s migrated it: use that lil or a newer one",
                       ps->schema, f->version, LIL_VERSION, PG_SCHEMA_VERSION,
                       f->by[0] ? f->by : "(unknown)");
}

lil_status lil__pg_schema_check(struct pg_store *ps, struct pg_conn *c,
                                struct lil_err *err)
{
    struct found f;
    lil_status rc = find_version(ps, c, err, &f);

    if (rc != LIL_OK)
        return rc;
    if (f.version == 0)
        return lil__seterr(err, LIL_E_PG, 0,
                           "no lil schema \"%s\" in this database: run `lil db init` "
                           "(as a role that may create it), see docs/postgres.md",
                           ps->schema);
    if (f.version > PG_SCHEMA_VERSION)
        return newer_err(ps, err, &f);
    if (f.version < PG_SCHEMA_VERSION)
        return lil__seterr(err, LIL_E_PG, 0,
                           "schema \"%s\" is at version %d, older than this lil's "
                           "(%d): run `lil db migrate`",
                           ps->schema, f.version, PG_SCHEMA_VERSION);
    return LIL_OK;
}

/* ---- init and migrate ------------------------------------------------------------ */

/* In the transaction: the schema's advisory lock (its name's hash). */
static lil_status lock_schema(struct pg_store *ps, struct pg_conn *c,
                              struct lil_err *err)
{
    struct pg_params p = {0};

    lil__pg_param_text(&p, ps->schema);
    return lil__pg_exec(ps, c, err, "locking the schema",
                        "SELECT pg_advisory_xact_lock(1819044864, hashtext($1))", &p,
                        false, NULL);
}

static lil_status note_version(struct pg_store *ps, struct pg_conn *c,
                               struct lil_err *err)
{
    char version[16];
    struct pg_params p = {0};

    snprintf(version, sizeof(version), "%d", PG_SCHEMA_VERSION);
    lil__pg_param_text(&p, version);
    lil__pg_param_text(&p, LIL_VERSION);
    return lil__pg_query(ps, c, err, "writing the schema version",
                         "INSERT INTO @.lil_meta (key, value) VALUES "
                         "('schema_version', $1), ('lil_version', $2) "
                         "ON CONFLICT (key) DO UPDATE SET value = "
                         "EXCLUDED.value",
                         &p, false, NULL);
}

/* Apply the migrations from version from (in the caller's transaction). */
static lil_status migrate_from(struct pg_store *ps, struct pg_conn *c,
                               struct lil_err *err, int from)
{
    char sql[SQL_MAX];
    lil_status rc = LIL_OK;

    for (int v = from; rc == LIL_OK && v < PG_SCHEMA_VERSION; v++)
        rc =
            lil__pg_simple(ps, c, err, lil__pg_sql(ps, migrations[v], sql, sizeof(sql)),
                           "migrating the schema");
    if (rc == LIL_OK)
        rc = note_version(ps, c, err);
    return rc;
}

/* What init and migrate decide, under the lock, from the version found. */
static lil_status apply(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                        int action, const struct found *f, lil_schema_info *info)
{
    const char *s = ps->schema;

    if (f->version > PG_SCHEMA_VERSION)
        return newer_err(ps, err, f);
    if (f->version == 0 && action == LIL_SCHEMA_MIGRATE)
        return lil__seterr(err, LIL_E_PG, 0,
                           "no lil schema \"%s\" to migrate: run `lil db init`", s);
    if (f->version > 0 && f->version < PG_SCHEMA_VERSION && action == LIL_SCHEMA_INIT)
        return lil__seterr(err, LIL_E_PG, 0,
                           "schema \"%s\" exists at version %d: run `lil db migrate`",
                           s, f->version);
    info->version = f->version;
    if (f->version == PG_SCHEMA_VERSION) {
        snprintf(info->message, sizeof(info->message),
                 "schema \"%s\" is at version %d, this lil's: nothing to do", s,
                 f->version);
        return LIL_OK;
    }
    if (migrate_from(ps, c, err, f->version) != LIL_OK)
        return err->code;
    info->changed = 1;
    info->version = PG_SCHEMA_VERSION;
    if (f->version == 0)
        snprintf(info->message, sizeof(info->message),
                 "created schema \"%s\" at version %d", s, PG_SCHEMA_VERSION);
    else
        snprintf(info->message, sizeof(info->message),
                 "migrated schema \"%s\" from version %d to %d", s, f->version,
                 PG_SCHEMA_VERSION);
    return LIL_OK;
}

static lil_status change(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         int action, lil_schema_info *info)
{
    struct found f;
    lil_status rc = lil__pg_simple(ps, c, err, "BEGIN", "starting a transaction");

    if (rc == LIL_OK)
        rc = lock_schema(ps, c, err);
    if (rc == LIL_OK)
        rc = find_version(ps, c, err, &f);
    if (rc == LIL_OK)
        rc = apply(ps, c, err, action, &f, info);
    if (rc == LIL_OK)
        return lil__pg_simple(ps, c, err, "COMMIT", "committing the schema");
    lil__pg_simple(ps, c, NULL, "ROLLBACK", "rolling back");
    return rc;
}

static lil_status status(struct pg_store *ps, struct pg_conn *c, struct lil_err *err,
                         lil_schema_info *info)
{
    struct found f;
    lil_status rc = find_version(ps, c, err, &f);

    if (rc != LIL_OK)
        return rc;
    info->version = f.version;
    if (f.version == 0)
        snprintf(info->message, sizeof(info->message),
                 "no lil schema \"%s\" in this database yet (`lil db init` creates it)",
                 ps->schema);
    else
        snprintf(info->message, sizeof(info->message),
                 "schema \"%s\" at version %d (this lil: %d, written by lil %s)%s",
                 ps->schema, f.version, PG_SCHEMA_VERSION, f.by[0] ? f.by : "?",
                 f.version < PG_SCHEMA_VERSION   ? ": run `lil db migrate`"
                 : f.version > PG_SCHEMA_VERSION ? ": newer than this lil"
                                                 : "");
    return LIL_OK;
}

lil_status lil__store_pg_schema(struct lil_env *env, struct lil_err *err,
                                const char *where, int action, lil_schema_info *info)
{
    struct pg_store *ps = NULL;
    struct pg_conn *c = NULL;
    lil_status rc = lil__pg_store_new(env, err, where, &ps);

    snprintf(info->backend, sizeof(info->backend), "postgresql");
    info->latest = PG_SCHEMA_VERSION;
    if (rc == LIL_OK)
        rc = lil__pg_connect(ps, err, &c);
    if (rc == LIL_OK && action == LIL_SCHEMA_STATUS)
        rc = status(ps, c, err, info);
    else if (rc == LIL_OK)
        rc = change(ps, c, err, action, info);
    if (ps) {
        lil__pg_disconnect(ps, c);
        lil__pg_store_free(ps);
    }
    return rc;
}
