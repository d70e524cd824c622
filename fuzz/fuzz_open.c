/*
 * fuzz_open.c -- libFuzzer target: arbitrary bytes as the journal file of
 * a run, through the public API, so the real file path (mmap, header,
 * scan, index building, torn-tail truncation, append after it, check) is
 * fuzzed too.
 *
 * Each input is written to <store>/fz.lil (the store lives in /dev/shm when
 * it can, so the fsyncs cost nothing), then:
 *
 *   1. lil_run_open READONLY with LIL_OPEN_VERIFY_CHAIN; if it opens, walk
 *      it with lil_run_foreach (every byte of every key and payload is read,
 *      so ASan sees any pointer past the mapping) and lil_run_get_info;
 *   2. lil_run_check without repair: it must run (LIL_OK or a clean error),
 *      and must not call damaged a journal that step 1 opened;
 *   3. lil_run_open writable (sync=off, the chain not verified); if it
 *      opens, run one new step (replay looks for it in journal order, then
 *      builds the index) and close.  When step 1 opened the file, the
 *      writer has then truncated any torn tail and appended, so the file
 *      must now open READONLY and check intact.
 *
 * A file with no complete record (a creation cut short) is no run yet:
 * step 1 and the writable open of step 3 (LIL_OPEN_EXISTING) get
 * LIL_E_NOTFOUND, check calls it a torn tail with no record, and a writable
 * open that may create starts it afresh, after which it opens and checks
 * intact.
 *
 * Inputs whose header says "keyed" are opened with LIL_JOURNAL_KEY set to
 * the key the keyed seeds were written with.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"

#define FUZZ_KEY "fuzz-key-0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char store_dir[4096];
static lil_store *store;

static void close_store(void)
{
    lil_store_close(store);
    store = NULL;
}

static lil_store *fuzz_store(void)
{
    if (store)
        return store;
    snprintf(store_dir, sizeof(store_dir), "%s", fuzz_temp_dir("lil-fuzz-open"));
    atexit(close_store);
    if (lil_store_open(fuzz_env(), store_dir, &store) != LIL_OK)
        fuzz_fail("lil_store_open %s: %s", store_dir, lil_errmsg());
    return store;
}

static void write_journal(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fuzz_fail("open %s failed", path);
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0)
            fuzz_fail("write %s failed", path);
        done += (size_t)n;
    }
    close(fd);
}

struct walk {
    uint64_t records;
    uint64_t last_seq;
    unsigned sum;
};

static int walk_fn(void *ud, const lil_record *rec)
{
    struct walk *w = ud;
    const unsigned char *k = (const unsigned char *)rec->key;
    const unsigned char *p = rec->payload;

    for (size_t i = 0; i < rec->key_len; i++)
        w->sum += k[i];
    for (size_t i = 0; i < rec->payload_len; i++)
        w->sum += p[i];
    if (rec->seq != w->last_seq + 1)
        fuzz_fail("foreach: seq %llu after %llu", (unsigned long long)rec->seq,
                  (unsigned long long)w->last_seq);
    w->last_seq = rec->seq;
    w->records++;
    return 0;
}

/* Open READONLY and walk; returns the open status. */
static lil_status open_readonly(lil_store *st, uint64_t *records)
{
    lil_run_opts opts = {.struct_size = sizeof(opts),
                         .flags = LIL_OPEN_READONLY | LIL_OPEN_VERIFY_CHAIN};
    lil_run *run = NULL;
    lil_status rc = lil_run_open(st, "fz", &opts, &run);

    if (rc == LIL_E_NOTFOUND) /* no complete record */
        return rc;
    fuzz_check_status("open readonly", rc);
    if (rc != LIL_OK)
        return rc;
    struct walk w = {0};
    lil_status wrc = lil_run_foreach(run, walk_fn, &w);
    fuzz_check_status("foreach", wrc);
    lil_run_info info = {.struct_size = sizeof(info)};
    if (lil_run_get_info(run, &info) != LIL_OK)
        fuzz_fail("get_info on an open run: %s", lil_run_errmsg(run));
    if (wrc == LIL_OK && info.records != w.records)
        fuzz_fail("get_info says %llu records, foreach saw %llu",
                  (unsigned long long)info.records, (unsigned long long)w.records);
    *records = info.records;
    lil_run_close(run);
    return LIL_OK;
}

static void check_run(lil_store *st, lil_status opened)
{
    lil_check_report rep = {.struct_size = sizeof(rep)};
    lil_status rc = lil_run_check(st, "fz", 0, &rep);

    fuzz_check_status("check", rc);
    if (rc == LIL_OK && opened == LIL_OK && !rep.intact && !rep.torn_tail)
        fuzz_fail("check calls damaged (at %llu: %s) a journal that opens",
                  (unsigned long long)rep.damage_offset, rep.message);
    if (opened == LIL_E_NOTFOUND && (rc != LIL_OK || !rep.torn_tail || rep.records))
        fuzz_fail("check of a journal with no complete record: %s, %s",
                  lil_status_name(rc), rep.message);
}

static int one_step_fn(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "fuzz", 4) == LIL_OK ? 0 : 1;
}

/* Open writable, run one step, close.  True when the step was appended. */
static bool open_and_append(lil_store *st)
{
    lil_run_opts opts = {.struct_size = sizeof(opts),
                         .sync = LIL_SYNC_OFF,
                         .flags = LIL_OPEN_EXISTING,
                         .max_record = 1 << 16};
    lil_run *run = NULL;
    lil_status rc = lil_run_open(st, "fz", &opts, &run);

    if (rc == LIL_E_NOTFOUND) /* no complete record */
        return false;
    fuzz_check_status("open writable", rc);
    if (rc != LIL_OK)
        return false;
    rc = lil_step(run, "fuzz-new-step", one_step_fn, NULL, NULL);
    if (rc != LIL_OK && rc != LIL_E_FAILED && rc != LIL_E_NONDET &&
        rc != LIL_E_UNCERTAIN && rc != LIL_E_DONE)
        fuzz_fail("step on a writable run: %s: %s", lil_status_name(rc),
                  lil_run_errmsg(run));
    lil_status crc = lil_run_close(run);
    if (crc != LIL_OK)
        fuzz_fail("close: %s", lil_status_name(crc));
    return rc == LIL_OK;
}

/* A journal with no complete record: the open that may create starts it
 * afresh; then it opens with BEGIN and OPEN and checks intact. */
static void start_afresh(lil_store *st)
{
    lil_run_opts opts = {.struct_size = sizeof(opts), .sync = LIL_SYNC_OFF};
    lil_run *run = NULL;
    uint64_t records = 0;
    lil_status rc = lil_run_open(st, "fz", &opts, &run);

    if (rc != LIL_OK)
        fuzz_fail("open of a journal with no complete record: %s: %s",
                  lil_status_name(rc), lil_store_errmsg(st));
    if (lil_run_close(run) != LIL_OK)
        fuzz_fail("close after starting afresh: %s", lil_errmsg());
    if (open_readonly(st, &records) != LIL_OK || records != 2)
        fuzz_fail("started afresh, then %llu records: %s", (unsigned long long)records,
                  lil_store_errmsg(st));
    check_run(st, LIL_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lil_store *st = fuzz_store();
    char path[4200];
    uint64_t records = 0, after = 0;

    if (size >= 13 && (data[12] & 1))
        setenv("LIL_JOURNAL_KEY", FUZZ_KEY, 1);
    else
        unsetenv("LIL_JOURNAL_KEY");
    snprintf(path, sizeof(path), "%s/fz.lil", store_dir);
    write_journal(path, data, size);

    lil_status ro = open_readonly(st, &records);
    check_run(st, ro);
    if (ro == LIL_E_NOTFOUND)
        start_afresh(st);
    else if (open_and_append(st) && ro == LIL_OK) {
        if (open_readonly(st, &after) != LIL_OK)
            fuzz_fail("the journal does not reopen after a successful append: %s",
                      lil_store_errmsg(st));
        if (after <= records)
            fuzz_fail("append left %llu records (had %llu)", (unsigned long long)after,
                      (unsigned long long)records);
        check_run(st, LIL_OK);
    }
    unlink(path);
    return 0;
}
