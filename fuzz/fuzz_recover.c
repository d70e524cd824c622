/*
 * fuzz_recover.c -- libFuzzer target: arbitrary bytes as a journal image,
 * through the recovery scan that lil_run_open runs (journal.h,
 * lil__journal_scan_buffer), without a file.
 *
 * Any input must give LIL_OK or a clean error (fuzz_check_status), never a
 * crash, a hang or a huge allocation.  Each input is scanned three ways:
 * without a key, with the fixed key the keyed seeds were written with
 * (FUZZ_KEY, see make_corpus.c), and with a tiny max_record.  When a scan
 * says OK, scanning only the valid prefix it reported must say OK again with
 * the same record count (the torn tail it ignored must not matter).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "base/env.h"
#include "base/err.h"
#include "fuzz_common.h"
#include "journal/journal.h"

#define FUZZ_KEY "fuzz-key-0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void scan_once(const uint8_t *data, size_t size, const uint8_t *key,
                      size_t key_len, size_t max_record)
{
    const struct lil_env *env = fuzz_env();
    struct lil_err err = {0};
    uint64_t end = 0, records = 0;
    lil_status rc = lil__journal_scan_buffer(env, &err, data, size, key, key_len,
                                             max_record, &end, &records);

    fuzz_check_status("scan_buffer", rc);
    if (rc != LIL_OK) {
        if (err.msg[0] == '\0')
            fuzz_fail("scan_buffer: %s without a message", lil_status_name(rc));
        return;
    }
    if (end > size)
        fuzz_fail("scan_buffer: valid end %llu past the %zu bytes given",
                  (unsigned long long)end, size);
    if (records > end / 64)
        fuzz_fail("scan_buffer: %llu records in %llu bytes",
                  (unsigned long long)records, (unsigned long long)end);

    /* The valid prefix alone scans the same. */
    uint64_t end2 = 0, records2 = 0;
    struct lil_err err2 = {0};
    rc = lil__journal_scan_buffer(env, &err2, data, (size_t)end, key, key_len,
                                  max_record, &end2, &records2);
    if (rc != LIL_OK || end2 != end || records2 != records)
        fuzz_fail("scan_buffer: prefix of %llu bytes (%llu records) rescans as %s, "
                  "end %llu, %llu records: %s",
                  (unsigned long long)end, (unsigned long long)records,
                  lil_status_name(rc), (unsigned long long)end2,
                  (unsigned long long)records2, err2.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scan_once(data, size, NULL, 0, 4096);
    scan_once(data, size, (const uint8_t *)FUZZ_KEY, sizeof(FUZZ_KEY) - 1, 4096);
    scan_once(data, size, NULL, 0, 100);
    return 0;
}
