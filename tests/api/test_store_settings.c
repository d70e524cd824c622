/*
 * test_store_settings.c -- what a store reads once when it opens (LIL_DIR,
 * LIL_SYNC, LIL_JOURNAL_KEY), the journal key passed through the API
 * (lil_store_set_key) instead of the environment, and the argument rules
 * of lil_run_open: UTF-8 run ids, known flags only; lil_store_foreach_run
 * lists journals and nothing else.
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "t.h"

static lil_sync sync_of(lil_run *run)
{
    lil_run_info info = {sizeof(info)};

    T_OK(lil_run_get_info(run, &info));
    return info.sync;
}

static int keyed(lil_run *run)
{
    lil_run_info info = {sizeof(info)};

    T_OK(lil_run_get_info(run, &info));
    return info.keyed;
}

T_TEST(key_through_the_api_not_the_environment)
{
    static const unsigned char key[] = {0x00, 0x01, 's', 'e', 'c', 'r', 'e', 't', 0xff};
    lil_check_report rep = {sizeof(rep)};
    lil_store *st = u_store(NULL);
    lil_run *run = NULL;

    unsetenv("LIL_JOURNAL_KEY");
    T_REQUIRE(st);
    T_OK(lil_store_set_key(st, key, sizeof(key))); /* bytes, NUL included */
    T_OK(lil_run_open(st, "k", NULL, &run));
    T_CHECK(keyed(run));
    T_OK(u_step_text(run, "a", "A"));
    T_OK(lil_run_close(run));
    T_OK(lil_run_check(st, "k", 0, &rep));
    T_CHECK(rep.intact);

    T_OK(lil_store_set_key(st, NULL, 0)); /* no key now */
    T_EQ_I64(lil_run_open(st, "k", NULL, &run), LIL_E_KEY);
    T_EQ_I64(lil_run_check(st, "k", 0, &rep), LIL_E_KEY);
    T_OK(lil_store_set_key(st, key, sizeof(key) - 1)); /* another key */
    T_EQ_I64(lil_run_open(st, "k", NULL, &run), LIL_E_KEY);
    T_OK(lil_store_set_key(st, key, sizeof(key)));
    T_OK(lil_run_open(st, "k", NULL, &run));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(settings_are_read_when_the_store_opens)
{
    lil_store *st;
    lil_run *run = NULL;

    setenv("LIL_SYNC", "off", 1);
    setenv("LIL_JOURNAL_KEY", "from-env", 1);
    st = u_store(NULL);
    T_REQUIRE(st);
    unsetenv("LIL_SYNC"); /* too late for this store */
    unsetenv("LIL_JOURNAL_KEY");
    T_OK(lil_run_open(st, "s", NULL, &run));
    T_EQ_I64(sync_of(run), LIL_SYNC_OFF);
    T_CHECK(keyed(run));
    T_OK(lil_run_close(run));
    lil_store_close(st);

    st = u_store(NULL); /* a new store sees the environment of now */
    T_EQ_I64(lil_run_open(st, "s", NULL, &run), LIL_E_KEY);
    T_OK(lil_store_set_key(st, "from-env", 8));
    T_OK(lil_run_open(st, "s", NULL, &run));
    T_EQ_I64(sync_of(run), LIL_SYNC_FULL);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(bad_sync_setting_fails_the_runs_that_use_it)
{
    lil_store *st;
    lil_run *run = NULL;

    setenv("LIL_SYNC", "sometimes", 1);
    st = u_store(NULL);
    unsetenv("LIL_SYNC");
    T_REQUIRE(st);
    T_EQ_I64(lil_run_open(st, "b", NULL, &run), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "LIL_SYNC=sometimes");
    run = u_run_opts(st, "b", LIL_SYNC_NORMAL, 0, 0); /* explicit: fine */
    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(store_dir_from_the_environment)
{
    lil_store *st = NULL;

    setenv("LIL_DIR", "from-env-dir", 1);
    T_OK(lil_store_open(NULL, NULL, &st));
    unsetenv("LIL_DIR");
    T_EQ_STR(lil_store_path(st), "from-env-dir");
    lil_store_close(st);
}

T_TEST(run_ids_must_be_utf8)
{
    lil_store *st = u_store(NULL);
    lil_run *run = NULL;

    T_REQUIRE(st);
    T_EQ_I64(lil_run_id_check("caf\xe9"), LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "not UTF-8");
    T_EQ_I64(lil_run_id_check("\xc0\xaf"), LIL_E_INVAL);         /* overlong '/' */
    T_EQ_I64(lil_run_id_check("\xed\xa0\x80"), LIL_E_INVAL);     /* a surrogate */
    T_EQ_I64(lil_run_id_check("\xf4\x90\x80\x80"), LIL_E_INVAL); /* past U+10FFFF */
    T_EQ_I64(lil_run_id_check("ab\xe2\x82"), LIL_E_INVAL);       /* cut short */
    T_OK(lil_run_id_check("caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80"));
    T_EQ_I64(lil_run_open(st, "caf\xe9", NULL, &run), LIL_E_INVAL);
    T_CHECK(run == NULL);
    T_CHECK(u_file_size(u_journal_path(U_STORE, "caf\xe9")) < 0); /* nothing made */
    lil_store_close(st);
}

T_TEST(unknown_open_flags_are_refused)
{
    lil_store *st = u_store(NULL);
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT, 1u << 7, 0};
    lil_run *run = NULL;
    lil_check_report rep = {sizeof(rep)};

    T_REQUIRE(st);
    T_EQ_I64(lil_run_open(st, "f", &o, &run), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "0x80");
    T_CHECK(u_file_size(u_journal_path(U_STORE, "f")) < 0);
    o.flags = LIL_OPEN_READONLY | (1u << 24); /* a bit the library keeps for itself */
    T_EQ_I64(lil_run_open(st, "f", &o, &run), LIL_E_INVAL);
    T_CONTAINS(lil_store_errmsg(st), "0x1000000");
    T_EQ_I64(lil_run_check(st, "f", 1u << 5, &rep), LIL_E_INVAL);
    lil_store_close(st);
}

static int collect_id(void *ud, const char *id)
{
    char *all = ud;

    strcat(all, id);
    strcat(all, ";");
    return 0;
}

T_TEST(foreach_lists_journals_only)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    char all[256] = "";

    T_REQUIRE(st);
    lil_run *run = u_run(st, "real");
    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    T_EQ_I64(u_write_file(U_STORE_DIR "/garbage.lil", "not a journal at all", 20), 0);
    T_EQ_I64(u_write_file(U_STORE_DIR "/short.lil", "xy", 2), 0);
    T_EQ_I64(u_write_file(U_STORE_DIR "/notes.txt", "x", 1), 0);
    T_OK(lil_store_foreach_run(st, collect_id, all));
    T_EQ_STR(all, "real;");
    lil_store_close(st);
}

T_MAIN()
