/*
 * test_cli_move.c -- `lil export`, `lil import` and `lil db` through the
 * binary.  Registered for both backends (tests/pg): the test's store is a
 * directory or a PostgreSQL schema, and the other store a run moves to is
 * always a directory, so the moves file -> file, PostgreSQL -> file and
 * file -> PostgreSQL are all made.
 *
 * What is checked: an exported run imported elsewhere checks intact and
 * logs the same records; exported again it is the same bytes; --out writes
 * a whole file and never replaces one; an import of a run that exists, of
 * a file that is no journal or is damaged exits 1 naming why; --run-id
 * renames (the copy checks intact); `lil db` init, migrate and status with
 * their JSON and exit statuses on either store; `lil doctor` on a
 * PostgreSQL store.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* The other store: always a directory. */
static const char *files(void)
{
    return t_path("files");
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    int rc = f && fputs(text, f) >= 0 ? 0 : -1;

    if (f && fclose(f) != 0)
        rc = -1;
    return rc;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long n;

    *len = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
        fseek(f, 0, SEEK_SET) == 0) {
        b = malloc((size_t)n);
        if (b && fread(b, 1, (size_t)n, f) == (size_t)n)
            *len = (size_t)n;
    }
    fclose(f);
    return b;
}

/* `lil log RUN --jsonl` of a store without the lines of BEGIN (which names
 * the run) and with the store's own fields left out: the records. */
static void records_of(const char *dir, const char *id, char *buf, size_t cap)
{
    char raw[C_OUT_CAP];
    const char *line = raw;

    buf[0] = '\0';
    T_EQ_I64(c_lil(raw, NULL, "--dir '%s' log %s --jsonl", dir, id), 0);
    while (line && *line) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (!strstr(line, "\"type\":\"begin\"") &&
            !strstr(line, "\"type\": \"begin\"") && strlen(buf) + n + 2 < cap)
            strncat(buf, line, n);
        line = nl ? nl + 1 : NULL;
    }
}

/* The other store with the test store's key: a file store's own key copied
 * (PostgreSQL keeps none: the other store then makes none either). */
static void same_key_both_sides(void)
{
    char key[4200];
    unsigned char *k;
    size_t n = 0;
    FILE *f;

    if (t_store_pg()) {
        setenv("LIL_STORE_KEY", "off", 1);
        return;
    }
    snprintf(key, sizeof(key), "%s/journal.key", c_store());
    k = slurp(key, &n);
    T_REQUIRE(k && n == 64);
    T_REQUIRE(mkdir(files(), 0700) == 0);
    f = fopen(t_path("files/journal.key"), "wb");
    T_REQUIRE(f && fwrite(k, 1, n, f) == n && fclose(f) == 0);
    free(k);
}

T_TEST(export_import_check_both_sides)
{
    char a[C_OUT_CAP], b[C_OUT_CAP];
    unsigned char *one, *two;
    size_t n1, n2;

    c_make_run("r", 3, true);
    same_key_both_sides();
    T_EQ_I64(c_lil(out, err, "--dir '%s' export r > '%s'", c_store(), t_path("r.lil")),
             0);
    T_CONTAINS(err, "lil: export: run r: ");
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s'", files(), t_path("r.lil")), 0);
    T_CONTAINS(out, "imported run r (");
    T_CONTAINS(out, " bytes)\n");
    T_EQ_I64(c_lil(out, err, "--dir '%s' check r", files()), 0);
    T_CONTAINS(out, "r: intact: ");
    T_EQ_I64(c_lil(out, err, "--dir '%s' check r", c_store()), 0);
    records_of(c_store(), "r", a, sizeof(a));
    records_of(files(), "r", b, sizeof(b));
    T_EQ_STR(a, b);
    /* exported again from the copy: the same bytes */
    T_EQ_I64(
        c_lil(out, err, "--dir '%s' export r --out '%s'", files(), t_path("r2.lil")),
        0);
    one = slurp(t_path("r.lil"), &n1);
    two = slurp(t_path("r2.lil"), &n2);
    T_REQUIRE(one && two);
    T_EQ_MEM(one, n1, two, n2);
    free(one);
    free(two);
    unsetenv("LIL_STORE_KEY");
}

/* Two file stores, each with a key of its own: the import verifies under
 * the source key and seals with its own; the records are the same. */
T_TEST(import_under_another_key)
{
    T_FILE_ONLY();
    char a[C_OUT_CAP], b[C_OUT_CAP], key[4200];
    unsigned char *one, *two;
    size_t n1, n2;

    c_make_run("r", 3, true);
    T_EQ_I64(
        c_lil(out, err, "--dir '%s' export r --out '%s'", c_store(), t_path("r.lil")),
        0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s'", files(), t_path("r.lil")), 1);
    T_CONTAINS(err, "--source-key");
    snprintf(key, sizeof(key), "%s/journal.key", c_store());
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s' --source-key '%s'", files(),
                   t_path("r.lil"), key),
             0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' check r", files()), 0);
    T_CONTAINS(out, "r: intact: ");
    records_of(c_store(), "r", a, sizeof(a));
    records_of(files(), "r", b, sizeof(b));
    T_EQ_STR(a, b);
    /* sealed anew: the other store's own key, not the source's */
    T_EQ_I64(
        c_lil(out, err, "--dir '%s' export r --out '%s'", files(), t_path("r2.lil")),
        0);
    one = slurp(t_path("r.lil"), &n1);
    two = slurp(t_path("r2.lil"), &n2);
    T_REQUIRE(one && two && n1 == n2 && n1 > 64);
    T_CHECK(memcmp(one + 64, two + 64, n1 - 64) != 0);
    free(one);
    free(two);
    one = slurp(key, &n1);
    two = slurp(t_path("files/journal.key"), &n2);
    T_REQUIRE(one && two && n1 == 64 && n2 == 64);
    T_CHECK(memcmp(one, two, 64) != 0);
    free(one);
    free(two);
    /* a key given for a journal that is not keyed: refused */
    T_EQ_I64(write_text(t_path("k.txt"), "some key\n"), 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s' --run-id r3 --source-key '%s'",
                   files(), t_path("r.lil"), t_path("k.txt")),
             1);
}

T_TEST(import_back_and_under_another_id)
{
    char json[C_OUT_CAP];
    json_t *doc;

    c_make_failed_run("f");
    T_EQ_I64(
        c_lil(out, err, "--dir '%s' export f --out '%s'", c_store(), t_path("f.lil")),
        0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s'", c_store(), t_path("f.lil")), 1);
    T_CONTAINS(err, "already exists");
    T_EQ_I64(c_lil(json, err, "--dir '%s' import '%s' --run-id f2 --json", c_store(),
                   t_path("f.lil")),
             0);
    doc = c_json(json);
    T_EQ_STR(json_string_value(json_object_get(doc, "run")), "f2");
    json_decref(doc);
    T_EQ_I64(c_lil(out, err, "--dir '%s' check f2", c_store()), 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' inspect f2", c_store()), 0);
    T_CONTAINS(out, "failed");
    T_EQ_I64(c_lil(out, err, "--dir '%s' import - --run-id '../x' < '%s'", c_store(),
                   t_path("f.lil")),
             64);
}

T_TEST(export_out_never_replaces)
{
    c_make_run("r", 1, false);
    T_REQUIRE(write_text(t_path("there.lil"), "keep") == 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' export r --out '%s'", c_store(),
                   t_path("there.lil")),
             1);
    T_EQ_I64(c_file_size(t_path("there.lil")), 4);
    T_EQ_I64(c_lil(out, err, "--dir '%s' export nope > /dev/null", c_store()), 1);
    T_CONTAINS(err, "no run 'nope'");
}

T_TEST(import_refuses_what_is_no_journal)
{
    unsigned char *b;
    size_t n;
    FILE *f;

    T_REQUIRE(write_text(t_path("junk.lil"), "hello, world") == 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s'", c_store(), t_path("junk.lil")),
             1);
    T_CONTAINS(err, "not a lil journal");
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s'", c_store(), t_path("none.lil")),
             1);
    T_CONTAINS(err, "cannot read");
    c_make_run("r", 2, true);
    T_EQ_I64(c_lil(out, err, "--dir '%s' export r > '%s'", c_store(), t_path("r.lil")),
             0);
    b = slurp(t_path("r.lil"), &n);
    T_REQUIRE(b && n > 200);
    b[100] ^= 0x20; /* inside BEGIN, intact records after it */
    f = fopen(t_path("bad.lil"), "wb");
    T_REQUIRE(f && fwrite(b, 1, n, f) == n);
    fclose(f);
    free(b);
    T_EQ_I64(c_lil(out, err, "--dir '%s' import '%s' --run-id b", c_store(),
                   t_path("bad.lil")),
             1);
    T_CONTAINS(err, "damaged record at offset 64");
}

T_TEST(db_init_migrate_status)
{
    char json[C_OUT_CAP];
    json_t *doc;
    const char *backend = t_store_pg() ? "postgresql" : "file";

    c_make_run("r", 1, false); /* the store exists (a schema made, or a directory) */
    T_EQ_I64(c_lil(out, err, "--dir '%s' db status", c_store()), 0);
    T_CONTAINS(out, t_store_pg() ? "postgresql store: schema \"" : "file store: ");
    T_EQ_I64(c_lil(out, err, "--dir '%s' db init", c_store()), 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' db migrate", c_store()), 0);
    T_EQ_I64(c_lil(json, err, "--dir '%s' db status --json", c_store()), 0);
    doc = c_json(json);
    T_EQ_STR(json_string_value(json_object_get(doc, "backend")), backend);
    /* the file store's journal format, 1; PostgreSQL's schema (4: workers and
     * schedules) */
    T_EQ_I64(json_integer_value(json_object_get(doc, "version")), t_store_pg() ? 4 : 1);
    T_EQ_I64(json_integer_value(json_object_get(doc, "latest")), t_store_pg() ? 4 : 1);
    T_CHECK(json_is_false(json_object_get(doc, "changed")));
    json_decref(doc);
    T_EQ_I64(c_lil(out, err, "--dir '%s' db frobnicate", c_store()), 64);
    T_EQ_I64(c_lil(out, err, "--dir '%s' db", c_store()), 64);
    /* a store not made yet: status says so (exit 1), init makes it */
    T_EQ_I64(c_lil(out, err, "--dir '%s' db status", files()), 1);
    T_CONTAINS(out, "`lil db init` creates it");
    T_EQ_I64(c_lil(out, err, "--dir '%s' db init", files()), 0);
    T_CONTAINS(out, "created the store directory");
}

T_TEST(postgresql_db_and_doctor)
{
    char where[1024], spec[4096];

    if (!t_store_pg())
        return; /* the file store's side is db_init_migrate_status */
    snprintf(where, sizeof(where), "%s_fresh", c_store());
    T_EQ_I64(c_lil(out, err, "--dir '%s' db status", where), 1);
    T_CONTAINS(out, "no lil schema");
    T_EQ_I64(c_lil(out, err, "--dir '%s' ls", where), 1);
    T_CONTAINS(err, "run `lil db init`");
    T_EQ_I64(c_lil(out, err, "--dir '%s' db migrate", where), 1);
    T_CONTAINS(err, "run `lil db init`");
    T_EQ_I64(c_lil(out, err, "--dir '%s' db init", where), 0);
    T_CONTAINS(out, "created schema");
    T_EQ_I64(c_lil(out, err, "--dir '%s' ls", where), 0);
    snprintf(spec, sizeof(spec), "%s", t_path("doc.yaml"));
    T_REQUIRE(write_text(spec,
                         "loopspec: \"0.1\"\n"
                         "id: doc\n"
                         "pattern: react\n"
                         "state: { vars: { n: { type: int, init: 0 } } }\n"
                         "body:\n"
                         "  - { id: bump, kind: shell, cmd: \"true\", on_done: "
                         "{ incr: n } }\n"
                         "terminate: { signal: state-predicate, until: \"${state.n "
                         ">= 2}\" }\n"
                         "caps: { max_iterations: 7 }\n") == 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' doctor '%s'", where, spec), 0);
    T_CONTAINS(out, "\u2713 PostgreSQL store ready: schema \"");
    T_CHECK(strstr(out, "host=") == NULL); /* the location is not printed */
}

/* liblil.so loads libpq.so.5 only for a PostgreSQL store (src/store/
 * pq_dl.h).  With a broken libpq.so.5 first on LD_LIBRARY_PATH, a file
 * store works, and a PostgreSQL location fails naming the library. */
T_TEST(without_libpq_only_postgresql_fails)
{
    char dir[4096], cmd[8192];
    const char *saved = getenv("LD_LIBRARY_PATH");

    snprintf(dir, sizeof(dir), "%s", t_path("brokenlib"));
    T_REQUIRE(mkdir(dir, 0700) == 0);
    T_REQUIRE(write_text(t_path("brokenlib/libpq.so.5"), "not a shared library\n") ==
              0);
    setenv("LD_LIBRARY_PATH", dir, 1);
    T_EQ_I64(c_lil(out, err, "--dir '%s' db init", files()), 0);
    T_EQ_I64(c_lil(out, err, "--dir '%s' ls", files()), 0);
    snprintf(cmd, sizeof(cmd), "--dir 'postgresql:///x?host=/nonexistent' ls");
    T_EQ_I64(c_lil(out, err, "%s", cmd), 1);
    T_CONTAINS(err, "cannot load libpq.so.5");
    T_CONTAINS(err, "brokenlib/libpq.so.5"); /* dlerror()'s text */
    if (saved)
        setenv("LD_LIBRARY_PATH", saved, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
}

T_MAIN()
