/*
 * test_key.c -- keyed journals.  A run written while $LIL_JOURNAL_KEY is set
 * has an HMAC chain and needs the same key to open: without a key or with
 * another one, lil_run_open and lil_run_check give LIL_E_KEY; with the
 * right key the run replays.  The key itself never reaches the file.
 *
 * The key is set before the store is opened, so the test does not depend
 * on when the library reads the variable.
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "t.h"

#define KEY1 "correct horse battery staple"
#define KEY2 "another key entirely"

/* Open run r with the key (NULL: unset); returns the status. */
static lil_status open_with_key(const char *key, lil_run_info *info, int replay)
{
    if (key)
        setenv("LIL_JOURNAL_KEY", key, 1);
    else
        unsetenv("LIL_JOURNAL_KEY");
    lil_store *st = u_store(NULL);
    lil_run *run = (lil_run *)st;
    lil_status rc = st ? lil_run_open(st, "r", NULL, &run) : LIL_E_IO;
    if (rc == LIL_OK) {
        if (info)
            T_OK(lil_run_get_info(run, info));
        if (replay) {
            int never = 0;
            lil_bytes out = {0};
            T_OK(lil_step(run, "a", fn_never, &never, &out));
            T_EQ_MEM(out.data, out.len, "secret result", 13);
            T_EQ_I64(never, 0);
            lil_free(out.data);
        }
        T_OK(lil_run_close(run));
    } else {
        T_CHECK(run == NULL);
        if (rc == LIL_E_KEY)
            T_CHECK(lil_store_errmsg(st)[0] != '\0');
    }
    lil_store_close(st);
    unsetenv("LIL_JOURNAL_KEY");
    return rc;
}

static void write_keyed_run(void)
{
    setenv("LIL_JOURNAL_KEY", KEY1, 1);
    lil_store *st = u_store(NULL);
    lil_run *run = st ? u_run(st, "r") : NULL;
    if (run) {
        T_OK(u_step_text(run, "a", "secret result"));
        lil_run_info info = {.struct_size = sizeof(info)};
        T_OK(lil_run_get_info(run, &info));
        T_EQ_I64(info.keyed, 1);
        T_OK(lil_run_close(run));
    }
    T_CHECK(run != NULL);
    lil_store_close(st);
    unsetenv("LIL_JOURNAL_KEY");
}

T_TEST(keyed_run_needs_its_key)
{
    write_keyed_run();
    T_EQ_I64(open_with_key(NULL, NULL, 0), LIL_E_KEY);
    T_EQ_I64(open_with_key("", NULL, 0), LIL_E_KEY);
    T_EQ_I64(open_with_key(KEY2, NULL, 0), LIL_E_KEY);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(open_with_key(KEY1, &info, 1));
    T_EQ_I64(info.keyed, 1);
    /* the failed opens changed nothing: it still opens with the key */
    T_OK(open_with_key(KEY1, NULL, 1));
}

static lil_status check_with_key(const char *key, lil_check_report *rep)
{
    if (key)
        setenv("LIL_JOURNAL_KEY", key, 1);
    else
        unsetenv("LIL_JOURNAL_KEY");
    lil_store *st = u_store(NULL);
    memset(rep, 0, sizeof(*rep));
    rep->struct_size = sizeof(*rep);
    lil_status rc = st ? lil_run_check(st, "r", 0, rep) : LIL_E_IO;
    lil_store_close(st);
    unsetenv("LIL_JOURNAL_KEY");
    return rc;
}

T_TEST(keyed_run_check)
{
    write_keyed_run();
    lil_check_report rep;
    T_EQ_I64(check_with_key(NULL, &rep), LIL_E_KEY);
    T_EQ_I64(check_with_key(KEY2, &rep), LIL_E_KEY);
    T_OK(check_with_key(KEY1, &rep));
    T_EQ_I64(rep.intact, 1);
}

T_TEST(key_not_in_file_and_header_flag)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    write_keyed_run();
    size_t n = 0;
    setenv("LIL_JOURNAL_KEY", KEY1, 1); /* an export verifies the chain */
    unsigned char *b = u_journal_read(NULL, "r", &n);
    unsetenv("LIL_JOURNAL_KEY");
    T_REQUIRE(b && n > 64);
    T_CHECK(memmem(b, n, KEY1, strlen(KEY1)) == NULL);
    T_EQ_I64(u_rd32(b + 12) & 1u, 1); /* incompat bit 0: keyed chain */
    free(b);
}

T_TEST(unkeyed_run_info)
{
    T_ONE_PROCESS();                   /* its store is shared with another process */
    setenv("LIL_STORE_KEY", "off", 1); /* no key of the store's own */
    lil_store *st = u_store(NULL);
    unsetenv("LIL_STORE_KEY");
    lil_run *run = u_run(st, "plain");
    T_REQUIRE(run);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.keyed, 0);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    size_t n = 0;
    unsigned char *b = u_journal_read(NULL, "plain", &n);
    T_REQUIRE(b && n > 64);
    T_EQ_I64(u_rd32(b + 12) & 1u, 0);
    free(b);
}

T_MAIN()
