/*
 * test_rollback.c -- keys by default and rollback, through lil.h: a new
 * file store makes its own journal key (journal.key, 0600), unless told
 * not to; its markers' done files are authenticated (a planted one is
 * refused, its work neither skipped nor run); a keyed run's journal that is
 * replaced by an older copy, cut at a record boundary, emptied or deleted
 * is refused with LIL_E_ROLLBACK ("rolled back to seq N (last known M)"),
 * and an honest journal never is, even when its process died after a sync
 * (the record may lag, never lead).  Import verifies under the source key
 * and seals with the destination's.
 *
 * Every attack writes the store's files directly, as someone who can write
 * the directory but does not hold the key would.
 */
#include <fcntl.h>
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

#define JPATH "st/r.lil"

/* A run r with n steps s1..sn (text results "v<i>"), closed. */
static void steps(lil_store *st, int from, int to)
{
    char name[32], val[32];
    lil_run *run = u_run(st, "r");

    T_REQUIRE(run != NULL);
    for (int i = from; i <= to; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        snprintf(val, sizeof(val), "v%d", i);
        T_OK(u_step_text(run, name, val));
    }
    T_OK(lil_run_close(run));
}

/* The open of run r: its status (the run closed again). */
static lil_status open_r(lil_store *st, unsigned flags)
{
    lil_run_opts o = {.struct_size = sizeof(o), .flags = flags};
    lil_run *run = NULL;
    lil_status rc = lil_run_open(st, "r", &o, &run);

    if (rc == LIL_OK)
        T_OK(lil_run_close(run));
    return rc;
}

/* The valid end of the journal (its records, no preallocated zeros). */
static uint64_t valid_end(lil_store *st)
{
    lil_check_report rep = {.struct_size = sizeof(rep)};

    T_OK(lil_run_check(st, "r", 0, &rep));
    return rep.valid_bytes;
}

static int copy_file(const char *from, const char *to)
{
    size_t n = 0;
    unsigned char *b = u_read_file(from, &n);
    int rc = b ? u_write_file(to, b, n) : -1;

    free(b);
    return rc;
}

T_TEST(new_store_makes_its_own_key)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    struct stat sb;
    T_REQUIRE(st != NULL);
    T_CHECK(stat("st/journal.key", &sb) != 0); /* made with the first run */
    steps(st, 1, 1);
    T_REQUIRE(stat("st/journal.key", &sb) == 0);
    T_EQ_I64(sb.st_mode & 0777, 0600);
    T_EQ_I64(sb.st_size, 64);
    lil_run *run = u_run(st, "r");
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.keyed, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    /* the key never reaches the journal */
    size_t kn = 0, jn = 0;
    unsigned char *k = u_read_file("st/journal.key", &kn);
    unsigned char *j = u_read_file(JPATH, &jn);
    T_REQUIRE(k && j && kn == 64);
    T_CHECK(memmem(j, jn, k + 16, 32) == NULL);
    free(k);
    free(j);
    /* a second handle reads the same key: the run replays */
    st = u_store(NULL);
    int never = 0;
    lil_bytes out = {0};
    run = u_run(st, "r");
    T_OK(lil_step(run, "s1", fn_never, &never, &out));
    T_EQ_I64(never, 0);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(opting_out_and_given_keys)
{
    T_FILE_ONLY();
    struct stat sb;
    setenv("LIL_STORE_KEY", "off", 1);
    lil_store *st = u_store("a");
    unsetenv("LIL_STORE_KEY");
    lil_run *run = u_run(st, "r");
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.keyed, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_CHECK(stat("a/journal.key", &sb) != 0);
    /* an older store (journals, no key file) stays as it is */
    st = u_store("a");
    run = u_run(st, "r2");
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.keyed, 0);
    T_OK(lil_run_close(run));
    T_OK(open_r(st, 0));
    lil_store_close(st);
    T_CHECK(stat("a/journal.key", &sb) != 0);
    /* the API's opt-out */
    st = u_store("b");
    T_OK(lil_store_set_own_key(st, 0));
    run = u_run(st, "r");
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.keyed, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_CHECK(stat("b/journal.key", &sb) != 0);
    /* a key given wins, and the store makes none */
    setenv("LIL_JOURNAL_KEY", "given", 1);
    st = u_store("c");
    unsetenv("LIL_JOURNAL_KEY");
    run = u_run(st, "r");
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.keyed, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_CHECK(stat("c/journal.key", &sb) != 0);
}

T_TEST(key_file_is_never_followed_or_guessed)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    steps(st, 1, 1);
    lil_store_close(st);
    /* a key file replaced by a symlink, or damaged: refused, never "no key" */
    T_REQUIRE(rename("st/journal.key", "st/k.real") == 0);
    T_REQUIRE(symlink("k.real", "st/journal.key") == 0);
    st = u_store(NULL);
    T_EQ_I64(open_r(st, 0), LIL_E_KEY);
    T_CONTAINS(lil_store_errmsg(st), "symbolic link");
    lil_store_close(st);
    T_REQUIRE(unlink("st/journal.key") == 0);
    T_REQUIRE(u_write_file("st/journal.key", "short", 5) == 0);
    st = u_store(NULL);
    T_EQ_I64(open_r(st, 0), LIL_E_KEY);
    lil_store_close(st);
}

static int fn_count(lil_call *call, void *ud)
{
    (void)call;
    ++*(int *)ud;
    return 0;
}

/* Path of marker name's done file (docs/format.md: m-<first 32 hex digits
 * of SHA-256(name)>.done), found by listing: the test does not hash. */
static void done_path(char *out, size_t cap)
{
    FILE *p = popen("ls st/markers/*.done", "r");
    T_REQUIRE(p != NULL);
    T_REQUIRE(fgets(out, (int)cap, p) != NULL);
    out[strcspn(out, "\n")] = 0;
    pclose(p);
}

T_TEST(planted_done_file_is_refused)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    int calls = 0;
    lil_bytes out = {0};
    char done[512], other[600];

    T_OK(lil_marker(st, "pay", LIL_MARKER_RETRY, fn_count, &calls, &out));
    lil_free(out.data);
    T_EQ_I64(calls, 1);
    done_path(done, sizeof(done));
    T_OK(lil_marker(st, "pay", LIL_MARKER_RETRY, fn_count, &calls, &out));
    lil_free(out.data);
    T_EQ_I64(calls, 1); /* an authentic done file: skipped */
    /* planted by someone without the key: refused, fn not run */
    T_REQUIRE(u_write_file(done, "forged", 6) == 0);
    T_EQ_I64(lil_marker(st, "pay", LIL_MARKER_RETRY, fn_count, &calls, &out),
             LIL_E_KEY);
    T_CONTAINS(lil_store_errmsg(st), "not authenticated");
    T_EQ_I64(calls, 1);
    /* a genuine done file of another marker copied over: refused too */
    T_OK(lil_marker_reset(st, "pay"));
    T_OK(lil_marker(st, "other", LIL_MARKER_RETRY, fn_count, &calls, &out));
    lil_free(out.data);
    T_EQ_I64(calls, 2);
    done_path(other, sizeof(other));
    T_REQUIRE(copy_file(other, done) == 0);
    T_EQ_I64(lil_marker(st, "pay", LIL_MARKER_RETRY, fn_count, &calls, &out),
             LIL_E_KEY);
    T_EQ_I64(calls, 2);
    /* the operator removes it: the work runs */
    T_OK(lil_marker_reset(st, "pay"));
    T_OK(lil_marker(st, "pay", LIL_MARKER_RETRY, fn_count, &calls, &out));
    lil_free(out.data);
    T_EQ_I64(calls, 3);
    lil_store_close(st);
}

T_TEST(older_copy_is_refused)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    steps(st, 1, 2);
    T_REQUIRE(copy_file(JPATH, "old.lil") == 0);
    steps(st, 3, 5);
    T_REQUIRE(copy_file("old.lil", JPATH) == 0);
    T_EQ_I64(open_r(st, 0), LIL_E_ROLLBACK);
    T_CONTAINS(lil_store_errmsg(st), "rolled back to seq ");
    T_CONTAINS(lil_store_errmsg(st), "(last known ");
    T_EQ_I64(open_r(st, LIL_OPEN_READONLY | LIL_OPEN_EXISTING), LIL_E_ROLLBACK);
    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_EQ_I64(lil_run_check(st, "r", 0, &rep), LIL_E_ROLLBACK);
    /* nothing was written: the copy is still byte for byte the old one */
    size_t a = 0, b = 0;
    unsigned char *x = u_read_file("old.lil", &a), *y = u_read_file(JPATH, &b);
    T_REQUIRE(x && y);
    T_EQ_MEM(x, a, y, b);
    free(x);
    free(y);
    lil_store_close(st);
}

T_TEST(cut_at_a_record_boundary_is_refused)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    steps(st, 1, 2);
    uint64_t cut = valid_end(st);
    steps(st, 3, 4);
    T_REQUIRE(truncate(JPATH, (off_t)cut) == 0);
    T_EQ_I64(open_r(st, 0), LIL_E_ROLLBACK);
    T_CONTAINS(lil_store_errmsg(st), "rolled back to seq ");
    lil_store_close(st);
}

T_TEST(emptied_or_deleted_journal_is_refused)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    steps(st, 1, 2);
    T_REQUIRE(truncate(JPATH, 0) == 0);
    T_EQ_I64(open_r(st, 0), LIL_E_ROLLBACK);
    T_CONTAINS(lil_store_errmsg(st), "rolled back to seq 0");
    T_EQ_I64(u_file_size(JPATH), 0); /* not started afresh */
    T_REQUIRE(unlink(JPATH) == 0);
    T_EQ_I64(open_r(st, 0), LIL_E_ROLLBACK);
    T_CONTAINS(lil_store_errmsg(st), "deleted");
    T_EQ_I64(u_file_size(JPATH), -1); /* not created again */
    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_EQ_I64(lil_run_check(st, "r", 0, &rep), LIL_E_ROLLBACK);
    lil_store_close(st);
}

T_TEST(forged_record_is_never_believed)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    steps(st, 1, 1);
    T_REQUIRE(copy_file(JPATH, "old.lil") == 0);
    steps(st, 2, 3);
    size_t n = 0;
    unsigned char *h = u_read_file("st/r.head", &n);
    T_REQUIRE(h && n == 112);
    h[16] = 1; /* a record that would let the old copy in: seq 1, mac kept */
    T_REQUIRE(u_write_file("st/r.head", h, n) == 0);
    free(h);
    /* not believed (read as no record, like a deleted one); the next close
     * writes a true one, and the old copy is refused again */
    T_OK(open_r(st, 0));
    T_REQUIRE(copy_file("old.lil", JPATH) == 0);
    T_EQ_I64(open_r(st, 0), LIL_E_ROLLBACK);
    lil_store_close(st);
}

/* A child that syncs and dies without closing. */
static int child_sync_dies(void *ud)
{
    (void)ud;
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    if (!run || u_step_text(run, "late", "x") != LIL_OK || lil_run_sync(run) != LIL_OK)
        return 1;
    if (u_step_text(run, "later", "y") != LIL_OK)
        return 1;
    _exit(0); /* no close */
}

T_TEST(honest_journals_are_never_rolled_back)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    for (int i = 0; i < 5; i++)
        T_OK(open_r(st, 0));
    T_OK(open_r(st, LIL_OPEN_READONLY | LIL_OPEN_EXISTING));
    pid_t pid = u_fork(child_sync_dies, NULL);
    T_EQ_I64(u_wait(pid), 0);
    T_OK(open_r(st, 0));
    /* sync off: its close does not sync and records nothing */
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_OFF, 0, 0);
    T_REQUIRE(run != NULL);
    T_OK(u_step_text(run, "off", "z"));
    T_OK(lil_run_close(run));
    T_OK(open_r(st, 0));
    /* a repair the operator asks for moves the record with the journal */
    uint64_t cut = valid_end(st);
    steps(st, 1, 2);
    T_REQUIRE(truncate(JPATH, (off_t)cut + 10) == 0); /* a record cut in two */
    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_OK(lil_run_check(st, "r", LIL_CHECK_REPAIR, &rep));
    T_OK(open_r(st, 0));
    lil_store_close(st);
}

/* The 32 key bytes of the store at dir (its journal.key). */
static void key_of(const char *dir, unsigned char key[32])
{
    char path[256];
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/journal.key", dir);
    unsigned char *b = u_read_file(path, &n);
    T_REQUIRE(b && n == 64);
    memcpy(key, b + 16, 32);
    free(b);
}

static int sink(void *ud, const void *data, size_t len)
{
    FILE *f = ud;
    return fwrite(data, 1, len, f) == len ? 0 : 1;
}

T_TEST(import_verifies_with_source_key_and_reseals)
{
    T_FILE_ONLY();
    lil_store *a = u_store("a"), *b = u_store("b");
    unsigned char ka[32], kb[32];
    steps(a, 1, 2);
    lil_run *own = u_run(b, "own"); /* b has a key of its own, another one */
    T_REQUIRE(own != NULL);
    T_OK(lil_run_close(own));
    key_of("a", ka);
    key_of("b", kb);
    T_CHECK(memcmp(ka, kb, 32) != 0);
    FILE *f = fopen("r.lil", "wb");
    T_REQUIRE(f != NULL);
    T_OK(lil_run_export(a, "r", sink, f));
    fclose(f);
    size_t n = 0;
    unsigned char *img = u_read_file("r.lil", &n);
    T_REQUIRE(img != NULL);
    /* without the source key it does not verify under b's */
    T_EQ_I64(lil_run_import(b, img, n, "moved", NULL), LIL_E_KEY);
    /* under a wrong source key neither */
    T_EQ_I64(lil_run_import_keyed(b, img, n, "moved", kb, 32, NULL), LIL_E_KEY);
    char *id = NULL;
    T_OK(lil_run_import_keyed(b, img, n, "moved", ka, 32, &id));
    T_EQ_STR(id, "moved");
    lil_free(id);
    /* sealed with b's key: it opens in b and replays */
    lil_run *run = u_run(b, "moved");
    T_REQUIRE(run != NULL);
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_step(run, "s2", fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "v2", 2);
    T_EQ_I64(never, 0);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    /* the same id too (no rename), sealed anew */
    T_OK(lil_run_import_keyed(b, img, n, NULL, ka, 32, NULL));
    T_OK(open_r(b, 0));
    free(img);
    lil_store_close(a);
    lil_store_close(b);
}

T_MAIN()
