/*
 * test_cli_exit.c -- the exit-status table of `lil` (enum cli_exit in
 * cli/cli.h, "Exit status" in docs/cli.md), against runs held by a child
 * process of the test:
 *
 *  - every verb that takes the run's lock (check --repair, resolve) exits
 *    75 (EX_TEMPFAIL) with exactly "lil: VERB: run R is held by pid P; try
 *    again when it is done", prints nothing on stdout and leaves the journal
 *    byte for byte as it was; once the holder is gone the same command
 *    succeeds;
 *  - a holder whose pid lil cannot vouch for (a child forked without exec
 *    after its parent closed the run) gives 75 too, with "run R is held by
 *    another process";
 *  - the verbs that take no lock (ls, inspect, log, check) read a held run
 *    as usual;
 *  - `lil --help` prints the whole table, and every verb's help points to
 *    it.
 */
#include "t.h"

#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* Every verb that takes the run's lock: its name and its words, on run "u"
 * (uncertain in effect "charge"). */
static const struct {
    const char *verb;
    const char *words;
} lockers[] = {
    {"check", "check u --repair"},
    {"resolve", "resolve u charge --retry --reason 'after the holder'"},
};

#define NLOCKERS (sizeof(lockers) / sizeof(lockers[0]))

/* Run locker i in the test's store; its exit status. */
static int run_locker(size_t i)
{
    return c_lil(out, err, "%s --dir '%s'", lockers[i].words, c_store());
}

/* A child that holds run id through the journal descriptor it inherited:
 * this process opens the run, forks, and closes its handle (which leaves
 * the child's lock alone, see lil_run_open on fork).  The journal's last
 * OPEN record is then closed, so lil does not know the holder's pid.
 * Returns the child's pid, or -1. */
static pid_t hold_through_fork(const char *id)
{
    lil_store *st = c_open_store();
    lil_run *run = st ? c_open_run(st, id) : NULL;
    pid_t pid = -1;

    if (run) {
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
            for (;;)
                pause();
        }
    }
    lil_run_close(run);
    lil_store_close(st);
    return pid;
}

T_TEST(every_locking_verb_exits_75_naming_the_holder)
{
    char want[256];
    uint64_t before;
    pid_t holder;

    c_make_uncertain_run("u");
    holder = c_hold("u");
    T_REQUIRE(holder > 0);
    before = c_file_hash(c_journal("u"));
    for (size_t i = 0; i < NLOCKERS; i++) {
        T_EQ_I64(run_locker(i), 75);
        snprintf(want, sizeof(want),
                 "lil: %s: run u is held by pid %d; try again when it is done\n",
                 lockers[i].verb, (int)holder);
        T_EQ_STR(err, want);
        T_EQ_STR(out, "");
    }
    T_CHECK(c_file_hash(c_journal("u")) == before);
    c_release(holder);
    for (size_t i = 0; i < NLOCKERS; i++) {
        T_EQ_I64(run_locker(i), 0);
        T_EQ_STR(err, "");
    }
    T_EQ_I64(c_state("u"), LIL_RUN_RUNNING);
}

T_TEST(holder_with_unknown_pid_is_75_too)
{
    T_FILE_ONLY();
    char want[256];
    uint64_t before;
    pid_t holder;

    c_make_uncertain_run("u");
    holder = hold_through_fork("u");
    T_REQUIRE(holder > 0);
    before = c_file_hash(c_journal("u"));
    for (size_t i = 0; i < NLOCKERS; i++) {
        T_EQ_I64(run_locker(i), 75);
        snprintf(want, sizeof(want),
                 "lil: %s: run u is held by another process; try again when it is "
                 "done\n",
                 lockers[i].verb);
        T_EQ_STR(err, want);
    }
    T_CHECK(c_file_hash(c_journal("u")) == before);
    c_release(holder);
    T_EQ_I64(run_locker(0), 0);
}

T_TEST(verbs_without_the_lock_read_a_held_run)
{
    static const char *const readers[] = {"ls", "inspect busy", "log busy",
                                          "check busy"};
    uint64_t before;
    pid_t holder;

    c_make_run("busy", 2, false);
    holder = c_hold("busy");
    T_REQUIRE(holder > 0);
    before = c_file_hash(c_journal("busy"));
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
        T_EQ_I64(c_lil(out, err, "%s --dir '%s'", readers[i], c_store()), 0);
        T_EQ_STR(err, "");
    }
    T_CHECK(c_file_hash(c_journal("busy")) == before);
    c_release(holder);
}

T_TEST(help_prints_the_table_and_each_verb_points_to_it)
{
    static const char *const rows[] = {
        "  0   success\n",
        "  1   failure: ",
        "  2   the run is uncertain",
        "  3   loop verbs: the run is paused",
        "  4   loop verbs: the run is waiting",
        "  5   loop verbs: the run was stopped\n",
        "  64  usage error",
        "  75  the run is held by another process",
    };
    static const char *const verbs[] = {
        "ls",      "inspect", "log",  "check",  "resolve", "validate", "new",
        "explain", "run",     "step", "resume", "stop",    "approve",  "recover"};

    T_EQ_I64(c_lil(out, err, "--help"), 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        T_CONTAINS(out, rows[i]);
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        T_EQ_I64(c_lil(out, err, "help %s", verbs[i]), 0);
        T_CONTAINS(out, "Exit status (the table is in `lil --help`): ");
    }
}

T_MAIN()
