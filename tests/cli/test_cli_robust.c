/*
 * test_cli_robust.c -- the `lil` command never crashes: journals of random
 * bytes, real journals truncated at every interesting length or sprayed
 * with random bytes, empty files, stray files in the store, over-long and
 * non-UTF-8 run ids.  Every verb must exit with a documented status (0, 1,
 * 2 or 64; never a signal), and --json output must stay valid JSON.
 */
#include "t.h"

#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_util.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* verb, then what follows the run id */
static const char *const verbs[][2] = {
    {"inspect", ""},     {"inspect", "--json"},
    {"log", ""},         {"log", "--jsonl"},
    {"log", "--json"},   {"check", ""},
    {"check", "--json"}, {"resolve", "charge --retry --reason x"},
};

static bool documented(int rc)
{
    return rc == 0 || rc == 1 || rc == 2 || rc == 64 ||
           rc == 65; /* a keyed journal cut below its rollback record */
}

/* Every line of --jsonl output parses. */
static void check_jsonl(char *text)
{
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        json_decref(c_json(p));
        if (!nl)
            break;
        p = nl + 1;
    }
}

/* Run every verb (and ls) on run id; all must exit cleanly. */
static void all_verbs(const char *id)
{
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        int rc = c_lil(out, err, "%s '%s' %s --dir '%s'", verbs[i][0], id, verbs[i][1],
                       c_store());
        if (!documented(rc))
            fprintf(stderr, "lil %s %s %s: exit %d\n", verbs[i][0], id, verbs[i][1],
                    rc);
        T_CHECK(documented(rc));
        if (strcmp(verbs[i][1], "--json") == 0 && out[0])
            json_decref(c_json(out));
        if (strcmp(verbs[i][1], "--jsonl") == 0)
            check_jsonl(out);
    }
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_EQ_I64(c_lil(out, err, "ls --json --dir '%s'", c_store()), 0);
    json_decref(c_json(out));
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    T_REQUIRE(f);
    T_CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
}

static unsigned long next_rand(unsigned long *s)
{
    *s = *s * 6364136223846793005ul + 1442695040888963407ul;
    return *s >> 33;
}

T_TEST(random_bytes_as_journal)
{
    T_FILE_ONLY();
    unsigned char buf[512];
    unsigned long seed = 42;

    lil_store_close(c_open_store());
    for (int round = 0; round < 6; round++) {
        size_t len = next_rand(&seed) % sizeof(buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)next_rand(&seed);
        if (round % 2 && len >= 8)
            memcpy(buf, "\x89LIL\r\n\x1a\n", 8); /* a valid magic */
        write_file(c_journal("junk"), buf, len);
        all_verbs("junk");
    }
}

T_TEST(empty_file_and_stray_files)
{
    T_FILE_ONLY();
    lil_store_close(c_open_store());
    write_file(c_journal("empty"), "", 0);
    write_file(t_path("store/notes.txt"), "hello", 5);
    all_verbs("empty");
    c_make_run("real", 1, true);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "real");
    T_CHECK(strstr(out, "notes") == NULL);
}

T_TEST(truncated_journals)
{
    T_FILE_ONLY();
    static const int64_t cuts[] = {1, 8, 63, 64, 65, 96, 100, 130, -1, -33, -32};
    unsigned char full[8192];
    FILE *f;
    size_t len;
    uint64_t end;

    c_make_run("r", 3, true);
    end = c_journal_bytes("r");
    f = fopen(c_journal("r"), "rb");
    T_REQUIRE(f);
    len = fread(full, 1, sizeof(full), f);
    fclose(f);
    T_REQUIRE(len >= end && end > 0);
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        int64_t at = cuts[i] > 0 ? cuts[i] : (int64_t)end + cuts[i];
        if (at < 0 || (uint64_t)at > end)
            continue;
        write_file(c_journal("r"), full, (size_t)at);
        all_verbs("r");
    }
}

T_TEST(sprayed_journal)
{
    T_FILE_ONLY();
    unsigned char full[8192];
    unsigned long seed = 7;
    uint64_t end;
    size_t len;
    FILE *f;

    c_make_run("r", 6, true);
    end = c_journal_bytes("r");
    f = fopen(c_journal("r"), "rb");
    T_REQUIRE(f);
    len = fread(full, 1, sizeof(full), f);
    fclose(f);
    T_REQUIRE(len >= end && end > 64);
    for (int round = 0; round < 6; round++) {
        unsigned char copy[8192];
        memcpy(copy, full, len);
        for (int k = 0; k < 1 + round; k++)
            copy[next_rand(&seed) % end] ^= (unsigned char)(1 + next_rand(&seed) % 255);
        write_file(c_journal("r"), copy, len);
        all_verbs("r");
        T_CHECK(documented(c_lil(out, err, "check r --repair --dir '%s'", c_store())));
        all_verbs("r");
    }
}

T_TEST(odd_run_ids)
{
    char id[400];

    memset(id, 'x', 300);
    id[300] = '\0';
    lil_store_close(c_open_store());
    T_EQ_I64(c_lil(out, err, "inspect %s --dir '%s'", id, c_store()), 64);
    T_EQ_I64(c_lil(out, err, "inspect \"$(printf 'a\\001b')\" --dir '%s'", c_store()),
             64);
    /* a run id that is not UTF-8 is refused; a UTF-8 one is listed as it is */
    lil_store *st = c_open_store();
    lil_run *run = NULL;
    T_EQ_I64(lil_run_open(st, "caf\xe9", NULL, &run), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "not UTF-8");
    lil_store_close(st);
    T_EQ_I64(c_lil(out, err, "inspect \"$(printf 'caf\\351')\" --json --dir '%s'",
                   c_store()),
             64);
    c_make_run("\xc3\xa9t\xc3\xa9", 1, true);
    T_EQ_I64(c_lil(out, err, "ls --json --dir '%s'", c_store()), 0);
    json_t *doc = c_json(out);
    T_CHECK(doc && json_array_size(json_object_get(doc, "runs")) == 1);
    T_CONTAINS(out, "\xc3\xa9t\xc3\xa9");
    json_decref(doc);
    T_EQ_I64(c_lil(out, err,
                   "log \"$(printf '\\303\\251t\\303\\251')\" --jsonl --dir '%s'",
                   c_store()),
             0);
    check_jsonl(out);
}

T_TEST(store_is_a_file)
{
    write_file(t_path("file"), "x", 1);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", t_path("file")), 1);
    T_CONTAINS(err, "not a directory");
}

T_MAIN()
