/*
 * test_settings.c -- the settings table (src/base/settings/settings.h): the LIL_
 * name wins over the LOOPY_ one only when it is not empty, an envp is
 * read instead of the process's environment when given, LIL_SYNC and
 * LIL_PG_LEASE_MS keep their rules (an unreadable sync mode is kept to be
 * reported, a short lease is the default), the store location rule, and
 * lil__setting_value's checks and messages.  Each test sets and unsets
 * the variables it reads (every test runs in a process of its own).
 */
#include <stdlib.h>
#include <string.h>

#include "base/settings/settings.h"
#include "t.h"

static const char *value_of(const char *name, lil_status *rc, const char **from)
{
    static char buf[32];
    static struct lil_err err;
    const char *v = NULL;

    *rc = lil__setting_value(&err, name, &v, from, buf, sizeof(buf));
    return *rc == LIL_OK ? v : err.msg;
}

T_TEST(twin_precedence)
{
    const char *which = NULL;
    const char *const envp[] = {"LOOPY_AGENT_CMD=loopy", "LIL_AGENT_CMD=", NULL};

    unsetenv("LIL_AGENT_CMD");
    unsetenv("LOOPY_AGENT_CMD");
    T_CHECK(lil__setting_twin(NULL, "AGENT_CMD", &which) == NULL);
    setenv("LOOPY_AGENT_CMD", "", 1);
    T_EQ_STR(lil__setting_twin(NULL, "AGENT_CMD", &which), ""); /* even empty */
    T_EQ_STR(which, "LOOPY_");
    setenv("LIL_AGENT_CMD", "", 1);
    T_EQ_STR(lil__setting_twin(NULL, "AGENT_CMD", &which), "");
    T_EQ_STR(which, "LOOPY_"); /* an empty LIL_ name does not win */
    setenv("LIL_AGENT_CMD", "lil", 1);
    T_EQ_STR(lil__setting_twin(NULL, "AGENT_CMD", &which), "lil");
    T_EQ_STR(which, "LIL_");
    T_EQ_STR(lil__setting_raw("LOOPY_AGENT_CMD"), "lil");
    T_EQ_STR(lil__setting_twin(envp, "AGENT_CMD", &which), "loopy");
    T_EQ_STR(which, "LOOPY_");
    T_EQ_STR(lil__env_lookup(envp, "LIL_AGENT_CMD"), "");
    T_CHECK(lil__env_lookup(envp, "LIL_AGENT") == NULL);
    unsetenv("LIL_AGENT_CMD");
    unsetenv("LOOPY_AGENT_CMD");
}

T_TEST(sync_and_lease)
{
    char bad[32];
    int mode = 0;

    unsetenv("LIL_SYNC");
    lil__setting_sync(&mode, bad, sizeof(bad));
    T_EQ_I64(mode, 1);
    T_EQ_STR(bad, "");
    setenv("LIL_SYNC", "off", 1);
    lil__setting_sync(&mode, bad, sizeof(bad));
    T_EQ_I64(mode, 3);
    setenv("LIL_SYNC", "sometimes", 1);
    lil__setting_sync(&mode, bad, sizeof(bad));
    T_EQ_I64(mode, 1);
    T_EQ_STR(bad, "sometimes");
    unsetenv("LIL_SYNC");
    setenv("LIL_PG_LEASE_MS", "99", 1);
    T_EQ_I64(lil__setting_pg_lease_ms(), LIL_SETTING_PG_LEASE_MS);
    setenv("LIL_PG_LEASE_MS", "400", 1);
    T_EQ_I64(lil__setting_pg_lease_ms(), 400);
    unsetenv("LIL_PG_LEASE_MS");
    T_EQ_I64(lil__setting_pg_lease_ms(), LIL_SETTING_PG_LEASE_MS);
}

T_TEST(store_where)
{
    unsetenv("LIL_DIR");
    T_EQ_STR(lil__setting_store_where(NULL), ".lil");
    T_EQ_STR(lil__setting_store_where(""), ".lil");
    setenv("LIL_DIR", "", 1);
    T_EQ_STR(lil__setting_store_where(NULL), ".lil");
    setenv("LIL_DIR", "postgresql:///db", 1);
    T_EQ_STR(lil__setting_store_where(NULL), "postgresql:///db");
    T_EQ_STR(lil__setting_store_where("given"), "given");
    unsetenv("LIL_DIR");
}

T_TEST(values_and_checks)
{
    const char *from = NULL;
    lil_status rc;

    unsetenv("LIL_SPEC_MAX_BYTES");
    T_CHECK(value_of("LIL_SPEC_MAX_BYTES", &rc, &from) == NULL);
    T_EQ_I64(rc, LIL_OK);
    setenv("LIL_SPEC_MAX_BYTES", "1MB", 1);
    T_EQ_STR(value_of("LIL_SPEC_MAX_BYTES", &rc, &from),
             "LIL_SPEC_MAX_BYTES must be a positive number of bytes, not '1MB'");
    T_EQ_I64(rc, LIL_E_INVAL);
    setenv("LIL_SPEC_MAX_BYTES", "3000", 1);
    T_EQ_STR(value_of("LIL_SPEC_MAX_BYTES", &rc, &from), "3000");
    T_EQ_STR(from, "LIL_SPEC_MAX_BYTES");
    unsetenv("LIL_SPEC_MAX_BYTES");

    unsetenv("LIL_AGENT_MAX_TOKENS");
    setenv("LOOPY_AGENT_MAX_TOKENS", "0", 1);
    T_EQ_STR(value_of("LIL_AGENT_MAX_TOKENS", &rc, &from),
             "LOOPY_AGENT_MAX_TOKENS must be a positive integer; got '0'");
    setenv("LOOPY_AGENT_MAX_TOKENS", "  ", 1);
    T_EQ_STR(value_of("LIL_AGENT_MAX_TOKENS", &rc, &from), "2000");
    T_CHECK(from == NULL);
    unsetenv("LOOPY_AGENT_MAX_TOKENS");

    setenv("LIL_LLM_PRICE_IN", "-1", 1);
    T_CHECK(value_of("LIL_LLM_PRICE_IN", &rc, &from) == NULL); /* not in force */
    unsetenv("LIL_LLM_PRICE_IN");
    setenv("LIL_JOURNAL_KEY", "k", 1);
    T_CONTAINS(value_of("LIL_JOURNAL_KEY", &rc, &from), "secret");
    T_EQ_I64(rc, LIL_E_INVAL);
    unsetenv("LIL_JOURNAL_KEY");
    value_of("LIL_NOPE", &rc, &from);
    T_EQ_I64(rc, LIL_E_NOTFOUND);
}

T_TEST(table_rows)
{
    size_t n = 0;

    for (const struct lil_setting_def *d; (d = lil__setting_at(n)) != NULL; n++) {
        T_CHECK(d->description && *d->description && d->values && *d->values);
        T_CHECK(lil__setting_find(d->name) == d);
        T_CHECK(!d->alias || lil__setting_find(d->alias) == d);
        T_CHECK(!d->alias || strcmp(d->alias + 6, d->name + 4) == 0);
    }
    T_CHECK(n >= 20);
}

T_MAIN()
