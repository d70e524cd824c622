/*
 * test_cli_inspect.c -- `lil inspect RUN`: the header and the timeline of
 * completed, failed and uncertain runs (exit 2 and the UNCERTAIN flag on
 * the intent that has no outcome), --json, a missing run, a damaged run,
 * a torn tail,
 * a keyed run (and, when liblil.so does not need libcrypto.so.3, plain and
 * keyed runs while that library cannot be loaded), and that inspect writes
 * nothing.
 */
#include "t.h"

#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli_util.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* Number of lines of text that contain needle. */
static int lines_with(const char *text, const char *needle)
{
    int n = 0;

    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[4096];
        snprintf(line, sizeof(line), "%.*s", (int)len, p);
        n += strstr(line, needle) != NULL;
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

T_TEST(completed_run)
{
    uint64_t before;

    c_make_run("job", 3, true);
    before = c_file_hash(c_journal("job"));
    T_EQ_I64(c_lil(out, err, "inspect job --dir '%s'", c_store()), 0);
    T_EQ_STR(err, "");
    T_CONTAINS(out, "run           job\n");
    T_CONTAINS(out, "status        completed\n");
    T_CONTAINS(out, "created       ");
    T_CONTAINS(out, "last activity ");
    T_CONTAINS(out, " ago)");
    T_CONTAINS(out, "steps: 3 done, 0 failed");
    T_CONTAINS(out, "sync          ");
    /* a file store keys its runs by default; PostgreSQL's key is the caller's */
    T_CONTAINS(out, t_store_pg() ? "keyed         no\n" : "keyed         yes\n");
    T_CONTAINS(out, "holder pid    -\n");
    T_CHECK(strstr(out, "uncertain ") == NULL);
    T_CONTAINS(out, "SEQ");
    T_CONTAINS(out, "+0.000s");
    T_CONTAINS(out, "begin");
    T_EQ_I64(lines_with(out, " done "), 3);
    T_CONTAINS(out, "run-done");
    T_CONTAINS(out, "result: all-good");
    T_CHECK(c_file_hash(c_journal("job")) == before);
}

T_TEST(timeline_has_one_row_per_record)
{
    json_t *doc, *tl, *row;
    size_t i;

    c_make_run("job", 4, true);
    T_EQ_I64(c_lil(out, err, "inspect job --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    tl = json_object_get(doc, "timeline");
    T_EQ_I64(json_array_size(tl), c_record_count("job"));
    T_EQ_STR(json_string_value(json_object_get(doc, "run")), "job");
    T_EQ_STR(json_string_value(json_object_get(doc, "status")), "completed");
    T_EQ_I64(json_integer_value(json_object_get(doc, "steps_done")), 4);
    T_EQ_I64(json_integer_value(json_object_get(doc, "records")),
             c_record_count("job"));
    T_CHECK(json_is_boolean(json_object_get(doc, "keyed")) &&
            json_is_true(json_object_get(doc, "keyed")) == !t_store_pg());
    T_CHECK(json_is_null(json_object_get(doc, "holder_pid")));
    T_EQ_I64(json_array_size(json_object_get(doc, "uncertain")), 0);
    json_array_foreach(tl, i, row)
    {
        T_EQ_I64(json_integer_value(json_object_get(row, "seq")), (int64_t)i + 1);
        if (i == 0)
            T_EQ_STR(json_string_value(json_object_get(row, "t")), "+0.000s");
    }
    row = json_array_get(tl, json_array_size(tl) - 2);
    T_EQ_STR(json_string_value(json_object_get(row, "type")), "run-done");
    T_EQ_STR(json_string_value(json_object_get(row, "status")), "completed");
    T_EQ_STR(json_string_value(json_object_get(row, "payload")), "all-good");
    row = json_array_get(tl, json_array_size(tl) - 1); /* the clean close */
    T_EQ_STR(json_string_value(json_object_get(row, "type")), "close");
    T_EQ_STR(json_string_value(json_object_get(row, "status")), "closed");
    json_decref(doc);
}

T_TEST(failed_run_shows_reasons)
{
    c_make_failed_run("f");
    T_EQ_I64(c_lil(out, err, "inspect f --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "status        failed\n");
    T_CONTAINS(out, "steps: 1 done, 1 failed");
    T_CONTAINS(out, "step-failed");
    T_CONTAINS(out, "boom: bad input");
    T_CONTAINS(out, "run-failed");
    T_CONTAINS(out, "gave up");
}

T_TEST(uncertain_run_flags_the_intent_and_exits_2)
{
    json_t *doc, *tl, *row, *intent = NULL;
    size_t i;

    c_make_uncertain_run("u");
    T_EQ_I64(c_lil(out, err, "inspect u --dir '%s'", c_store()), 2);
    T_CONTAINS(out, "status        uncertain\n");
    T_CONTAINS(out, "uncertain     charge");
    T_CONTAINS(out, "lil resolve u charge");
    T_EQ_I64(lines_with(out, "UNCERTAIN"), 1);
    T_CONTAINS(out, "intent");
    T_CONTAINS(out, "request sha256 ");
    T_EQ_I64(c_lil(out, err, "inspect u --json --dir '%s'", c_store()), 2);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_STR(json_string_value(json_object_get(doc, "status")), "uncertain");
    T_EQ_STR(json_string_value(json_array_get(json_object_get(doc, "uncertain"), 0)),
             "charge");
    tl = json_object_get(doc, "timeline");
    json_array_foreach(tl, i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "type")), "intent") == 0)
            intent = row;
    }
    T_REQUIRE(intent);
    T_EQ_STR(json_string_value(json_object_get(intent, "identity")), "charge");
    T_EQ_STR(json_string_value(json_object_get(intent, "status")), "UNCERTAIN");
    /* SHA-256("amount=10") */
    T_EQ_STR(json_string_value(json_object_get(intent, "request_sha256")),
             "baf62725a03085761123ef3983498c0acffd60eea7f6cad5d28ee7c3badfc592");
    json_decref(doc);
}

T_TEST(resolved_intent_is_no_longer_flagged)
{
    c_make_uncertain_run("u");
    T_EQ_I64(c_lil(out, err,
                   "resolve u charge --retry --actor t --reason 'was not sent' "
                   "--dir '%s'",
                   c_store()),
             0);
    T_EQ_I64(c_lil(out, err, "inspect u --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "status        running\n");
    T_EQ_I64(lines_with(out, "UNCERTAIN"), 0);
    T_CONTAINS(out, "resolved");
    T_CONTAINS(out, "was not sent");
}

T_TEST(held_run_shows_holder)
{
    char want[64];
    pid_t holder;

    c_make_run("busy", 1, false);
    holder = c_hold("busy");
    T_REQUIRE(holder > 0);
    T_EQ_I64(c_lil(out, err, "inspect busy --dir '%s'", c_store()), 0);
    snprintf(want, sizeof(want), "holder pid    %d\n", (int)holder);
    T_CONTAINS(out, want);
    c_release(holder);
}

T_TEST(missing_run)
{
    lil_store_close(c_open_store());
    T_EQ_I64(c_lil(out, err, "inspect nope --dir '%s'", c_store()), 1);
    T_CONTAINS(err, "lil: inspect: no run 'nope'");
    T_EQ_STR(out, "");
    T_EQ_I64(c_record_count("nope"), -1);
}

T_TEST(damaged_run_names_the_offset)
{
    uint64_t off;
    size_t klen, plen;
    char want[64];

    c_make_run("d", 5, true);
    T_REQUIRE(c_record_at("d", 3, &off, &klen, &plen));
    T_REQUIRE(c_flip_byte(c_journal("d"), off + 32 + klen));
    T_EQ_I64(c_lil(out, err, "inspect d --dir '%s'", c_store()), 1);
    snprintf(want, sizeof(want), "%llu", (unsigned long long)off);
    T_CONTAINS(err, "lil: inspect: ");
    T_CONTAINS(err, want);
}

T_TEST(torn_tail_is_shown)
{
    T_FILE_ONLY();
    unsigned char junk[40];
    uint64_t end;
    char want[96];
    json_t *doc;

    c_make_run("t", 2, false);
    end = c_journal_bytes("t");
    memset(junk, 0xab, sizeof(junk));
    T_REQUIRE(c_pwrite(c_journal("t"), end, junk, sizeof(junk)));
    T_EQ_I64(c_lil(out, err, "inspect t --dir '%s'", c_store()), 0);
    snprintf(want, sizeof(want), "torn tail     at offset %llu, never acknowledged",
             (unsigned long long)end);
    T_CONTAINS(out, want);
    T_EQ_I64(c_lil(out, err, "inspect t --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_I64(json_integer_value(json_object_get(doc, "torn_offset")), end);
    T_EQ_I64(json_integer_value(json_object_get(doc, "records_after_torn")), 0);
    json_decref(doc);
    c_make_run("u", 2, false);
    T_EQ_I64(c_lil(out, err, "inspect u --dir '%s'", c_store()), 0);
    T_CHECK(strstr(out, "torn tail") == NULL);
}

T_TEST(keyed_run)
{
    setenv("LIL_JOURNAL_KEY", "sesame", 1);
    c_make_run("k", 2, true);
    T_EQ_I64(c_lil(out, err, "inspect k --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "keyed         yes\n");
    unsetenv("LIL_JOURNAL_KEY");
    T_EQ_I64(c_lil(out, err, "inspect k --dir '%s'", c_store()), 1);
    T_CONTAINS(err, "lil: inspect: ");
}

#ifdef T_LIBLIL_WITHOUT_LIBCRYPTO
/* `lil ARGS --dir STORE` with LD_LIBRARY_PATH=dir. */
static int lil_with_libpath(const char *dir, const char *args)
{
    const char *old = getenv("LD_LIBRARY_PATH");
    char saved[4096];
    int rc;

    snprintf(saved, sizeof(saved), "%s", old ? old : "");
    setenv("LD_LIBRARY_PATH", dir, 1);
    rc = c_lil(out, err, "%s --dir '%s'", args, c_store());
    if (old)
        setenv("LD_LIBRARY_PATH", saved, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    return rc;
}

/* liblil.so never loads libcrypto.so.3: SHA-256 comes from libcrypto.a and
 * HMAC-SHA-256 is built on it (src/base/hash.c).  With a broken
 * libcrypto.so.3 first on LD_LIBRARY_PATH, plain and keyed runs both work. */
T_TEST(keyed_run_without_libcrypto)
{
    T_FILE_ONLY();
    char dir[4096];
    FILE *f;

    snprintf(dir, sizeof(dir), "%s", t_path("brokenlib"));
    T_REQUIRE(mkdir(dir, 0700) == 0);
    f = fopen(t_path("brokenlib/libcrypto.so.3"), "w");
    T_REQUIRE(f != NULL);
    fputs("not a shared library\n", f);
    fclose(f);
    setenv("LIL_STORE_KEY", "off", 1); /* a store without a key of its own */
    c_make_run("plain", 2, true);
    T_EQ_I64(lil_with_libpath(dir, "inspect plain"), 0);
    unsetenv("LIL_STORE_KEY");
    T_CONTAINS(out, "keyed         no\n");
    setenv("LIL_JOURNAL_KEY", "sesame", 1);
    c_make_run("k", 2, true);
    T_EQ_I64(lil_with_libpath(dir, "inspect k"), 0);
    unsetenv("LIL_JOURNAL_KEY");
    T_CONTAINS(out, "keyed         yes\n");
    T_EQ_STR(err, "");
}
#endif

T_MAIN()
