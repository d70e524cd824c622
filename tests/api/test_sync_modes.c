/*
 * test_sync_modes.c -- sync modes chosen by option or by $LIL_SYNC, as
 * lil_run_get_info reports them; every mode survives a process crash; and
 * what was synced, read from the SETTLED flag (bit 7) that the journal format
 * (docs/format.md) sets on a record when every byte before it had been
 * fdatasync'd: full syncs each commit, off never syncs unless lil_run_sync
 * is called, normal syncs before an effect starts; and a clean close's
 * CLOSE record, which spares the next open its sync.
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

#define REC_SETTLED 0x80

static lil_sync mode_of(lil_store *st, const char *id, lil_sync asked)
{
    lil_run *run = u_run_opts(st, id, asked, 0, 0);
    lil_run_info info = {.struct_size = sizeof(info)};
    if (!run)
        return (lil_sync)-1;
    T_OK(lil_run_get_info(run, &info));
    T_OK(lil_run_close(run));
    return info.sync;
}

T_TEST(sync_mode_from_options)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    T_EQ_I64(mode_of(st, "d", LIL_SYNC_DEFAULT), LIL_SYNC_FULL);
    T_EQ_I64(mode_of(st, "f", LIL_SYNC_FULL), LIL_SYNC_FULL);
    T_EQ_I64(mode_of(st, "n", LIL_SYNC_NORMAL), LIL_SYNC_NORMAL);
    T_EQ_I64(mode_of(st, "o", LIL_SYNC_OFF), LIL_SYNC_OFF);
    /* the mode belongs to the handle, not to the journal */
    T_EQ_I64(mode_of(st, "o", LIL_SYNC_NORMAL), LIL_SYNC_NORMAL);
    lil_run *run = u_run(st, "null-opts");
    T_REQUIRE(run);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.sync, LIL_SYNC_FULL);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static lil_sync env_mode(const char *value, lil_sync asked)
{
    setenv("LIL_SYNC", value, 1);
    lil_store *st = u_store(NULL);
    lil_sync m = st ? mode_of(st, "r", asked) : (lil_sync)-1;
    lil_store_close(st);
    unsetenv("LIL_SYNC");
    return m;
}

T_TEST(sync_mode_from_env)
{
    T_EQ_I64(env_mode("normal", LIL_SYNC_DEFAULT), LIL_SYNC_NORMAL);
    T_EQ_I64(env_mode("off", LIL_SYNC_DEFAULT), LIL_SYNC_OFF);
    T_EQ_I64(env_mode("full", LIL_SYNC_DEFAULT), LIL_SYNC_FULL);
    /* an explicit option wins over the environment */
    T_EQ_I64(env_mode("off", LIL_SYNC_FULL), LIL_SYNC_FULL);
    T_EQ_I64(env_mode("full", LIL_SYNC_NORMAL), LIL_SYNC_NORMAL);
}

struct crash_ctx {
    lil_sync mode;
};

/* Child: three steps and an effect in the given mode, then die unclosed. */
static int child_steps_then_exit(void *ud)
{
    struct crash_ctx *c = ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    lil_run_opts o = {.struct_size = sizeof(o), .sync = c->mode};
    if (lil_run_open(st, "r", &o, &run) != LIL_OK)
        return 11;
    if (u_step_text(run, "a", "A") || u_step_text(run, "b", "B") ||
        u_step_text(run, "c", "C"))
        return 12;
    struct fn_ctx e = {.result = "E", .result_len = 1};
    if (lil_effect(run, "e", "q", 1, fn_generic, &e, NULL) != LIL_OK)
        return 13;
    _exit(0); /* no close: a process crash */
}

T_TEST(every_mode_survives_process_crash)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    const lil_sync modes[] = {LIL_SYNC_FULL, LIL_SYNC_NORMAL, LIL_SYNC_OFF};
    for (int i = 0; i < 3; i++) {
        char dir[32];
        snprintf(dir, sizeof(dir), "m%d", i);
        T_REQUIRE(mkdir(dir, 0700) == 0 && chdir(dir) == 0);
        struct crash_ctx c = {.mode = modes[i]};
        pid_t pid = u_fork(child_steps_then_exit, &c);
        T_REQUIRE(pid > 0);
        T_EQ_I64(u_wait(pid), 0);
        lil_store *st = u_store(NULL);
        lil_run *run = u_run(st, "r");
        T_REQUIRE(run);
        int never = 0;
        const char *names[] = {"a", "b", "c"}, *vals[] = {"A", "B", "C"};
        for (int k = 0; k < 3; k++) {
            lil_bytes out = {0};
            T_OK(lil_step(run, names[k], fn_never, &never, &out));
            T_EQ_MEM(out.data, out.len, vals[k], 1);
            lil_free(out.data);
        }
        T_OK(lil_effect(run, "e", "q", 1, fn_never, &never, NULL));
        T_EQ_I64(never, 0);
        T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
        T_OK(lil_run_close(run));
        lil_store_close(st);
        T_REQUIRE(chdir("..") == 0);
    }
}

/* The flags byte of the nth (0: first) record with this type and key, or
 * -1. */
static int raw_nth_flags(const char *id, int type, const char *key, int nth)
{
    size_t n = 0;
    unsigned char *b = u_read_file(u_journal_path(NULL, id), &n);
    int found = -1;
    size_t off = 64;
    while (b && found < 0 && off + 64 <= n) {
        uint32_t len = u_rd32(b + off);
        if (len < 64 || off + len > n)
            break;
        size_t klen = (size_t)b[off + 28] | (size_t)b[off + 29] << 8;
        if (b[off + 30] == type && klen == strlen(key) &&
            memcmp(b + off + 32, key, klen) == 0 && nth-- == 0)
            found = b[off + 31];
        off += len;
    }
    free(b);
    return found;
}

static int raw_flags(const char *id, int type, const char *key)
{
    return raw_nth_flags(id, type, key, 0);
}

T_TEST(off_never_syncs_until_run_sync)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_OFF, 0, 0);
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_OK(u_step_text(run, "b", "B"));
    T_OK(lil_run_sync(run));
    T_OK(u_step_text(run, "c", "C"));
    int fb = raw_flags("r", LIL_REC_STEP, "b");
    int fc = raw_flags("r", LIL_REC_STEP, "c");
    T_CHECK(fb >= 0 && fc >= 0);
    T_EQ_I64(fb & REC_SETTLED, 0);           /* a was never synced */
    T_EQ_I64(fc & REC_SETTLED, REC_SETTLED); /* lil_run_sync covered a and b */
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(full_syncs_every_commit)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_FULL, 0, 0);
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_OK(u_step_text(run, "b", "B"));
    T_OK(u_step_text(run, "c", "C"));
    T_EQ_I64(raw_flags("r", LIL_REC_STEP, "b") & REC_SETTLED, REC_SETTLED);
    T_EQ_I64(raw_flags("r", LIL_REC_STEP, "c") & REC_SETTLED, REC_SETTLED);
    T_OK(lil_run_sync(run));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(normal_syncs_before_effect)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_NORMAL, 0, 0);
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    struct fn_ctx e = {.result = "E", .result_len = 1};
    T_OK(lil_effect(run, "e", "q", 1, fn_generic, &e, NULL));
    /* the intent was synced before fn ran: the outcome after it is SETTLED */
    int fe = raw_flags("r", LIL_REC_STEP, "e");
    T_CHECK(fe >= 0);
    T_EQ_I64(fe & REC_SETTLED, REC_SETTLED);
    T_OK(u_step_text(run, "b", "B"));
    T_OK(lil_run_sync(run));
    T_OK(u_step_text(run, "c", "C"));
    T_EQ_I64(raw_flags("r", LIL_REC_STEP, "c") & REC_SETTLED, REC_SETTLED);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* A clean close (full, normal) appends CLOSE after its last sync, so the
 * next open has nothing to sync: its own OPEN record is not SETTLED, and
 * the records after it are once the first commit has synced them. */
T_TEST(clean_close_spares_the_next_open_its_sync)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_FULL, 0, 0);
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_OK(lil_run_close(run));
    T_EQ_I64(raw_flags("r", LIL_REC_CLOSE, "") & REC_SETTLED, REC_SETTLED);
    T_EQ_I64(raw_nth_flags("r", LIL_REC_CLOSE, "", 1), -1);

    run = u_run_opts(st, "r", LIL_SYNC_FULL, 0, 0);
    T_REQUIRE(run);
    T_EQ_I64(raw_nth_flags("r", LIL_REC_OPEN, "", 1) & REC_SETTLED, 0);
    lil_bytes out = {0};
    int never = 0;
    T_OK(lil_step(run, "a", fn_never, &never, &out)); /* replays */
    T_EQ_MEM(out.data, out.len, "A", 1);
    lil_free(out.data);
    T_OK(u_step_text(run, "b", "B"));
    T_OK(u_step_text(run, "c", "C"));
    T_EQ_I64(raw_flags("r", LIL_REC_STEP, "b") & REC_SETTLED, 0);
    T_EQ_I64(raw_flags("r", LIL_REC_STEP, "c") & REC_SETTLED, REC_SETTLED);
    T_OK(lil_run_close(run));
    T_EQ_I64(raw_nth_flags("r", LIL_REC_CLOSE, "", 1) & REC_SETTLED, REC_SETTLED);
    lil_store_close(st);
}

/* After a crash there is no CLOSE at the end: the open syncs what it found
 * before anything else, so its own OPEN record is SETTLED. */
T_TEST(open_after_a_crash_syncs)
{
    struct crash_ctx c = {.mode = LIL_SYNC_FULL};
    pid_t pid = u_fork(child_steps_then_exit, &c);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 0);
    T_EQ_I64(raw_flags("r", LIL_REC_CLOSE, ""), -1);
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_FULL, 0, 0);
    T_REQUIRE(run);
    T_EQ_I64(raw_nth_flags("r", LIL_REC_OPEN, "", 1) & REC_SETTLED, REC_SETTLED);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Sync off never writes CLOSE (it did not sync), so an open with full
 * after it syncs; normal syncs at close and writes one. */
T_TEST(close_of_off_writes_no_close_record_normal_does)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_OFF, 0, 0);
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    T_OK(lil_run_close(run));
    T_EQ_I64(raw_flags("r", LIL_REC_CLOSE, ""), -1);
    run = u_run_opts(st, "r", LIL_SYNC_NORMAL, 0, 0);
    T_REQUIRE(run);
    T_EQ_I64(raw_nth_flags("r", LIL_REC_OPEN, "", 1) & REC_SETTLED, REC_SETTLED);
    T_OK(u_step_text(run, "b", "B"));
    T_OK(lil_run_close(run));
    T_EQ_I64(raw_flags("r", LIL_REC_CLOSE, "") & REC_SETTLED, REC_SETTLED);
    lil_store_close(st);
}

/* The names of the modes, both ways, as the CLI and the bindings use them. */
T_TEST(sync_mode_names)
{
    static const struct {
        lil_sync mode;
        const char *name;
    } modes[] = {{LIL_SYNC_DEFAULT, "default"},
                 {LIL_SYNC_FULL, "full"},
                 {LIL_SYNC_NORMAL, "normal"},
                 {LIL_SYNC_OFF, "off"}};

    lil_sync m;

    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        T_EQ_STR(lil_sync_name(modes[i].mode), modes[i].name);
        m = (lil_sync)-1;
        T_EQ_I64(lil_sync_from_name(modes[i].name, &m), LIL_OK);
        T_EQ_I64(m, modes[i].mode);
    }
    T_CHECK(lil_sync_name((lil_sync)4) == NULL);
    T_CHECK(lil_sync_name((lil_sync)-1) == NULL);
    m = LIL_SYNC_OFF;
    T_EQ_I64(lil_sync_from_name("FULL", &m), LIL_E_INVAL);
    T_EQ_I64(lil_sync_from_name("", &m), LIL_E_INVAL);
    T_EQ_I64(lil_sync_from_name(NULL, &m), LIL_E_INVAL);
    T_EQ_I64(m, LIL_SYNC_OFF); /* untouched on failure */
    T_EQ_I64(lil_sync_from_name("full", NULL), LIL_E_INVAL);
}

T_MAIN()
