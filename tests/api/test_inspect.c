/*
 * test_inspect.c -- lil_run_foreach, lil_run_get_info and lil_run_check,
 * and what open does with damaged journals.
 *
 * Journals are damaged by hand, following the layout of docs/format.md
 * (64-byte file header with a CRC-32 of bytes 0..59 at 60; records of
 * len, crc = CRC-32 of bytes 8..len-1, seq, ts, dur, key_len, type, flags,
 * key, payload, chain): junk after the last record is a torn tail that open
 * truncates; a flipped byte in an early record is LIL_E_CORRUPT naming its
 * offset; a deleted record breaks the sequence; an edited record whose CRC
 * was recomputed and two swapped records (sequence numbers kept in order)
 * are caught by the hash chain, which lil_run_check and an open with
 * LIL_OPEN_VERIFY_CHAIN verify and a plain open does not; a header of
 * format version 2 is LIL_E_VERSION.  CRC-32 is computed here (zlib's CRC-32), not
 * taken from the library.
 */
#include "t.h"

#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "api_util.h"

static int fn_fail(lil_call *call, void *ud)
{
    (void)ud;
    lil_call_fail(call, "boom");
    return 1;
}

/* Run r: step a, failing step f, effect e; optionally complete. */
static lil_run *sample_run(lil_store *st, int complete)
{
    lil_run *run = u_run(st, "r");
    if (!run)
        return NULL;
    struct fn_ctx e = {.result = "E", .result_len = 1};
    T_OK(u_step_text(run, "a", "A"));
    T_EQ_I64(lil_step(run, "f", fn_fail, NULL, NULL), LIL_E_FAILED);
    T_OK(lil_effect(run, "e", "REQ", 3, fn_generic, &e, NULL));
    if (complete)
        T_OK(lil_run_complete(run, "fin", 3));
    return run;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void check_framing(const struct u_recs *rs)
{
    int64_t now = now_ns(), day = 86400LL * 1000000000LL;
    for (size_t i = 0; i < rs->n; i++) {
        const struct u_rec *r = &rs->r[i];
        T_EQ_I64(r->seq, i + 1);
        T_EQ_I64(r->size, 64 + strlen(r->key) + r->payload_len);
        T_CHECK(r->ts_ns > now - day && r->ts_ns < now + day);
        if (i == 0)
            T_EQ_I64(r->offset, 64);
        else {
            T_EQ_I64(r->offset, rs->r[i - 1].offset + rs->r[i - 1].size);
            T_CHECK(r->ts_ns >= rs->r[i - 1].ts_ns);
        }
    }
}

/* Stores without a key of their own: its journals are crafted and damaged byte by byte
 * as docs/format.md lays them out, unkeyed; a rollback record would (rightly) refuse a
 * journal cut below a record it made (test_rollback.c tests keyed stores). */
__attribute__((constructor)) static void no_own_key(void)
{
    setenv("LIL_STORE_KEY", "off", 1);
}

T_TEST(foreach_sees_every_record_in_order)
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    T_REQUIRE(EVP_Digest("REQ", 3, md, &mdlen, EVP_sha256(), NULL) == 1);
    lil_store *st = u_store(NULL);
    lil_run *run = sample_run(st, 1);
    T_REQUIRE(run);
    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    T_REQUIRE(rs.n == 7);
    check_framing(&rs);
    const struct u_rec *r = rs.r;
    char pid[32];
    snprintf(pid, sizeof(pid), "\"pid\":%d", (int)getpid());
    T_EQ_I64(r[0].type, LIL_REC_BEGIN);
    T_EQ_STR(r[0].key, "r");
    T_EQ_I64(r[1].type, LIL_REC_OPEN);
    T_CONTAINS((const char *)r[1].payload, pid);
    T_EQ_I64(r[2].type, LIL_REC_STEP);
    T_EQ_STR(r[2].key, "a");
    T_EQ_I64(r[2].flags & LIL_RECF_EFFECT, 0);
    T_EQ_MEM(r[2].payload, r[2].payload_len, "A", 1);
    T_EQ_I64(r[3].type, LIL_REC_STEP_FAILED);
    T_EQ_STR(r[3].key, "f");
    T_CONTAINS((const char *)r[3].payload, "boom");
    T_EQ_I64(r[4].type, LIL_REC_INTENT);
    T_EQ_STR(r[4].key, "e");
    T_EQ_I64(r[4].flags & LIL_RECF_EFFECT, LIL_RECF_EFFECT);
    T_EQ_MEM(r[4].payload, r[4].payload_len, md, 32);
    T_EQ_I64(r[5].type, LIL_REC_STEP);
    T_EQ_STR(r[5].key, "e");
    T_EQ_I64(r[5].flags & LIL_RECF_EFFECT, LIL_RECF_EFFECT);
    T_EQ_MEM(r[5].payload, r[5].payload_len, "E", 1);
    T_EQ_I64(r[6].type, LIL_REC_RUN_DONE);
    T_EQ_MEM(r[6].payload, r[6].payload_len, "fin", 3);
    T_OK(lil_run_close(run));

    /* a new handle sees the same records first */
    run = u_run(st, "r");
    T_REQUIRE(run);
    struct u_recs again;
    T_OK(u_collect(run, &again));
    T_REQUIRE(again.n >= 7);
    check_framing(&again);
    for (size_t i = 0; i < 7; i++) {
        T_EQ_I64(again.r[i].offset, rs.r[i].offset);
        T_EQ_I64(again.r[i].type, rs.r[i].type);
        T_EQ_I64(again.r[i].ts_ns, rs.r[i].ts_ns);
        T_EQ_MEM(again.r[i].payload, again.r[i].payload_len, rs.r[i].payload,
                 rs.r[i].payload_len);
    }
    u_recs_free(&again);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static int stop_after_two(void *ud, const lil_record *rec)
{
    (void)rec;
    return ++*(int *)ud >= 2;
}

T_TEST(foreach_stops_when_asked)
{
    lil_store *st = u_store(NULL);
    lil_run *run = sample_run(st, 0);
    T_REQUIRE(run);
    int n = 0;
    lil_run_foreach(run, stop_after_two, &n);
    T_EQ_I64(n, 2);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(get_info_counts)
{
    lil_store *st = u_store(NULL);
    lil_run *run = sample_run(st, 0);
    T_REQUIRE(run);
    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    T_REQUIRE(rs.n == 6);
    lil_run_info info;
    memset(&info, 0xab, sizeof(info));
    info.struct_size = sizeof(info);
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.state, LIL_RUN_RUNNING);
    T_EQ_I64(info.records, 6);
    T_EQ_I64(info.steps_done, 2);
    T_EQ_I64(info.steps_failed, 1);
    T_EQ_I64(info.journal_bytes, rs.r[5].offset + rs.r[5].size);
    T_EQ_I64(info.created_ns, rs.r[0].ts_ns);
    T_EQ_I64(info.last_ns, rs.r[5].ts_ns);
    T_EQ_I64(info.holder_pid, getpid());
    T_EQ_I64(info.sync, LIL_SYNC_FULL);
    T_EQ_I64(info.keyed, 0);
    T_OK(lil_run_complete(run, "fin", 3));
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.state, LIL_RUN_COMPLETED);
    T_EQ_I64(info.records, 7);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static void report_init(lil_check_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    rep->struct_size = sizeof(*rep);
}

T_TEST(check_intact_journal)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    lil_store *st = u_store(NULL);
    lil_run *run = sample_run(st, 1);
    T_REQUIRE(run);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    lil_check_report rep;
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep)); /* allowed while open */
    T_EQ_I64(rep.intact, 1);
    T_OK(lil_run_close(run));
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 0);
    T_EQ_I64(rep.repaired, 0);
    T_EQ_I64(rep.records, info.records + 1); /* the close's CLOSE record */
    T_EQ_I64(rep.valid_bytes, info.journal_bytes + 64);
    T_EQ_I64(rep.file_bytes, u_journal_size(NULL, "r"));
    T_CHECK(rep.file_bytes >= rep.valid_bytes);
    T_CHECK(rep.message[0] != '\0');
    report_init(&rep);
    T_OK(lil_run_check(st, "r", LIL_CHECK_REPAIR, &rep)); /* nothing to do */
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.repaired, 0);
    lil_store_close(st);
}

/* Steps a..d in run r, closed; returns the offset and size of step b. */
static int four_steps(lil_store *st, uint64_t *b_off, uint32_t *b_size,
                      lil_run_info *info)
{
    lil_run *run = u_run(st, "r");
    if (!run)
        return -1;
    T_OK(u_step_text(run, "a", "AAAA"));
    T_OK(u_step_text(run, "b", "BBBB"));
    T_OK(u_step_text(run, "c", "CCCC"));
    T_OK(u_step_text(run, "d", "DDDD"));
    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    const struct u_rec *b = u_find(&rs, LIL_REC_STEP, "b");
    *b_off = b ? b->offset : 0;
    *b_size = b ? b->size : 0;
    u_recs_free(&rs);
    info->struct_size = sizeof(*info);
    T_OK(lil_run_get_info(run, info));
    T_OK(lil_run_close(run));
    return b ? 0 : -1;
}

static int fn_count(lil_call *call, void *ud)
{
    (*(int *)ud)++;
    return lil_call_set_result(call, "new", 3) != LIL_OK;
}

T_TEST(junk_after_last_record_is_torn_tail)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    const char junk[] = "\xff\x7f\x00\x01 torn junk that is no record";
    T_EQ_I64(u_write_at(path, info.journal_bytes, junk, sizeof(junk)), 0);

    lil_check_report rep;
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.torn_tail, 1);
    T_EQ_I64(rep.records, info.records);
    T_EQ_I64(rep.valid_bytes, info.journal_bytes);
    if (!rep.intact)
        T_EQ_I64(rep.damage_offset, info.journal_bytes);

    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    int n = 0;
    lil_bytes out = {0};
    T_OK(lil_step(run, "d", fn_count, &n, &out));
    T_EQ_MEM(out.data, out.len, "DDDD", 4);
    lil_free(out.data);
    T_EQ_I64(n, 0);
    T_OK(lil_step(run, "e", fn_count, &n, NULL));
    T_EQ_I64(n, 1);
    T_OK(lil_run_close(run));
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    T_EQ_I64(rep.torn_tail, 0);
    T_EQ_I64(rep.records, info.records + 3); /* an open, step e and a close */
    lil_store_close(st);
}

T_TEST(half_written_last_record_is_torn_tail)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    T_REQUIRE(truncate(path, (off_t)info.journal_bytes - 20) == 0);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    int n = 0;
    lil_bytes out = {0};
    T_OK(lil_step(run, "c", fn_count, &n, &out));
    T_EQ_MEM(out.data, out.len, "CCCC", 4);
    lil_free(out.data);
    T_EQ_I64(n, 0);
    T_OK(lil_step(run, "d", fn_count, &n, &out)); /* torn: runs again */
    T_EQ_MEM(out.data, out.len, "new", 3);
    lil_free(out.data);
    T_EQ_I64(n, 1);
    T_OK(lil_run_close(run));
    lil_check_report rep;
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    lil_store_close(st);
}

static void expect_corrupt_at(lil_store *st, uint64_t off, uint64_t records_before,
                              const lil_run_opts *opts)
{
    lil_run *run = (lil_run *)st;
    T_EQ_I64(lil_run_open(st, "r", opts, &run), LIL_E_CORRUPT);
    T_CHECK(run == NULL);
    if (!u_mentions_offset(lil_store_errmsg(st), off)) {
        fprintf(stderr, "message does not name offset %llu: %s\n",
                (unsigned long long)off, lil_store_errmsg(st));
        t_fail();
    }
    lil_check_report rep;
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 0);
    T_EQ_I64(rep.torn_tail, 0);
    T_EQ_I64(rep.repaired, 0);
    T_EQ_I64(rep.damage_offset, off);
    T_EQ_I64(rep.records, records_before);
    T_EQ_I64(rep.valid_bytes, off);
}

/* Damage that only the hash chain shows: a plain open does not verify the
 * chain (lil.h), an open with LIL_OPEN_VERIFY_CHAIN and lil_run_check do. */
static void expect_chain_broken_at(lil_store *st, uint64_t off, uint64_t records_before)
{
    lil_run_opts opts = {.struct_size = sizeof(opts), .flags = LIL_OPEN_VERIFY_CHAIN};
    lil_run *run = NULL;
    T_OK(lil_run_open(st, "r", NULL, &run));
    T_OK(lil_run_close(run));
    run = (lil_run *)st;
    T_EQ_I64(lil_run_open(st, "r", &opts, &run), LIL_E_CORRUPT);
    T_CHECK(run == NULL);
    T_CONTAINS(lil_store_errmsg(st), "hash chain broken");
    expect_corrupt_at(st, off, records_before, &opts);
}

T_TEST(flipped_byte_is_corrupt_then_repair)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    size_t n0 = 0;
    unsigned char *before = u_read_file(path, &n0);
    T_REQUIRE(before);
    unsigned char x = before[boff + 32 + 1] ^ 0x20; /* first payload byte */
    T_EQ_I64(u_write_at(path, boff + 32 + 1, &x, 1), 0);
    /* BEGIN, OPEN, a precede b */
    expect_corrupt_at(st, boff, 3, NULL);
    size_t n1 = 0;
    unsigned char *after = u_read_file(path, &n1);
    T_REQUIRE(after);
    T_EQ_I64(n1, n0); /* open and check wrote nothing */
    T_EQ_I64(after[boff + 33], x);
    free(after);

    lil_check_report rep;
    report_init(&rep);
    T_OK(lil_run_check(st, "r", LIL_CHECK_REPAIR, &rep));
    T_EQ_I64(rep.intact, 0);
    T_EQ_I64(rep.repaired, 1);
    T_EQ_I64(rep.damage_offset, boff);
    T_EQ_I64(u_file_size(path), boff);

    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    int calls = 0;
    lil_bytes out = {0};
    T_OK(lil_step(run, "a", fn_count, &calls, &out));
    T_EQ_MEM(out.data, out.len, "AAAA", 4);
    lil_free(out.data);
    T_EQ_I64(calls, 0);
    T_OK(lil_step(run, "b", fn_count, &calls, NULL));
    T_OK(lil_step(run, "c", fn_count, &calls, NULL));
    T_EQ_I64(calls, 2); /* b and c were cut away: they run again */
    T_OK(lil_run_close(run));
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    free(before);
    lil_store_close(st);
}

/* CRC-32 as zlib computes it (reflected, polynomial 0xEDB88320), bit by
 * bit: slow and obviously right, and no dependency on the library's own. */
static uint32_t crc_of(const unsigned char *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

T_TEST(edited_record_with_good_crc_breaks_chain)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    size_t n = 0;
    unsigned char *f = u_read_file(path, &n);
    T_REQUIRE(f && boff + bsize <= n);
    unsigned char *rec = f + boff;
    T_EQ_MEM(rec + 33, 4, "BBBB", 4);
    memcpy(rec + 33, "EVIL", 4);
    u_wr32(rec + 4, crc_of(rec + 8, bsize - 8));
    T_EQ_I64(u_write_at(path, boff, rec, bsize), 0);
    free(f);
    expect_chain_broken_at(st, boff, 3);
    lil_store_close(st);
}

T_TEST(deleted_record_detected)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    size_t n = 0;
    unsigned char *f = u_read_file(path, &n);
    T_REQUIRE(f);
    size_t end = (size_t)info.journal_bytes;
    memmove(f + boff, f + boff + bsize, end - boff - bsize);
    T_EQ_I64(u_write_file(path, f, end - bsize), 0);
    free(f);
    lil_run *run = (lil_run *)st;
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_CORRUPT);
    T_CHECK(run == NULL);
    lil_check_report rep;
    report_init(&rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 0);
    T_EQ_I64(rep.damage_offset, boff);
    lil_store_close(st);
}

T_TEST(swapped_records_detected)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    size_t n = 0;
    unsigned char *f = u_read_file(path, &n);
    T_REQUIRE(f);
    /* records b and c have the same size: swap them, seq fields too */
    unsigned char tmp[256];
    T_REQUIRE(bsize <= sizeof(tmp));
    unsigned char *b = f + boff, *c = f + boff + bsize;
    T_EQ_I64(u_rd32(c), bsize);
    unsigned char bseq[8], cseq[8];
    memcpy(bseq, b + 8, 8);
    memcpy(cseq, c + 8, 8);
    memcpy(tmp, b, bsize);
    memcpy(b, c, bsize);
    memcpy(c, tmp, bsize);
    memcpy(b + 8, bseq, 8); /* keep seq in order so only the chain can tell */
    memcpy(c + 8, cseq, 8);
    u_wr32(b + 4, crc_of(b + 8, bsize - 8));
    u_wr32(c + 4, crc_of(c + 8, bsize - 8));
    T_EQ_I64(u_write_at(path, boff, b, 2 * (size_t)bsize), 0);
    free(f);
    expect_chain_broken_at(st, boff, 3);
    lil_store_close(st);
}

static void set_header_u32(const char *path, size_t at, uint32_t v)
{
    size_t n = 0;
    unsigned char *f = u_read_file(path, &n);
    T_REQUIRE(f && n >= 64);
    u_wr32(f + at, v);
    u_wr32(f + 60, crc_of(f, 60));
    T_EQ_I64(u_write_at(path, 0, f, 64), 0);
    free(f);
}

T_TEST(newer_format_version_refused)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    set_header_u32(path, 8, 2);
    lil_run *run = (lil_run *)st;
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_VERSION);
    T_CHECK(run == NULL);
    lil_run_opts o = {.struct_size = sizeof(o), .flags = LIL_OPEN_READONLY};
    T_EQ_I64(lil_run_open(st, "r", &o, &run), LIL_E_VERSION);
    lil_check_report rep;
    report_init(&rep);
    T_EQ_I64(lil_run_check(st, "r", 0, &rep), LIL_E_VERSION);
    /* an unknown incompatible feature bit is refused the same way */
    set_header_u32(path, 8, 1);
    set_header_u32(path, 12, 1u << 7);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_VERSION);
    T_CHECK(run == NULL);
    lil_store_close(st);
}

T_TEST(readonly_open_repairs_nothing)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    uint64_t boff;
    uint32_t bsize;
    lil_run_info info;
    T_REQUIRE(four_steps(st, &boff, &bsize, &info) == 0);
    const char *path = u_journal_path(NULL, "r");
    const char junk[] = "\xff\x7f\x00\x01 torn junk";
    T_EQ_I64(u_write_at(path, info.journal_bytes, junk, sizeof(junk)), 0);
    size_t n0 = 0, n1 = 0;
    unsigned char *before = u_read_file(path, &n0);
    T_REQUIRE(before);
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(run);
    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    T_EQ_I64(rs.n, info.records);
    u_recs_free(&rs);
    int never = 0;
    T_EQ_I64(lil_step(run, "new", fn_never, &never, NULL), LIL_E_INVAL);
    T_OK(lil_run_close(run));
    unsigned char *after = u_read_file(path, &n1);
    T_REQUIRE(after);
    T_EQ_MEM(after, n1, before, n0); /* not truncated, not synced into */
    free(before);
    free(after);
    lil_store_close(st);
}

struct dur_ctx {
    uint32_t dur_us;
};

static int grab_dur(void *ud, const lil_record *rec)
{
    if (rec->type == LIL_REC_STEP && rec->key_len == 4 &&
        memcmp(rec->key, "slow", 4) == 0)
        ((struct dur_ctx *)ud)->dur_us = rec->dur_us;
    return 0;
}

static int fn_slow(lil_call *call, void *ud)
{
    (void)ud;
    struct timespec ts = {0, 30 * 1000000L};
    nanosleep(&ts, NULL);
    return lil_call_set_result(call, "z", 1) != LIL_OK;
}

T_TEST(record_duration_of_step)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_step(run, "slow", fn_slow, NULL, NULL));
    struct dur_ctx d = {0};
    T_OK(lil_run_foreach(run, grab_dur, &d));
    T_CHECK(d.dur_us >= 30000 && d.dur_us < 10000000);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

struct inner {
    lil_run *run;
    lil_status foreach_rc, info_rc;
    uint64_t records;
};

static int count_rec(void *ud, const lil_record *rec)
{
    (void)rec;
    (*(uint64_t *)ud)++;
    return 0;
}

/* Inside a step function: inspect the run the step belongs to. */
static int fn_inspects(lil_call *call, void *ud)
{
    struct inner *in = ud;
    lil_run_info info = {.struct_size = sizeof(info)};
    in->foreach_rc = lil_run_foreach(in->run, count_rec, &in->records);
    in->info_rc = lil_run_get_info(in->run, &info);
    return lil_call_set_result(call, "i", 1) != LIL_OK;
}

T_TEST(inspect_from_inside_a_step)
{
    lil_store *st = u_store(NULL);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "A"));
    struct inner in = {.run = run};
    T_OK(lil_step(run, "in", fn_inspects, &in, NULL));
    T_EQ_I64(in.foreach_rc, LIL_OK);
    T_EQ_I64(in.info_rc, LIL_OK);
    T_EQ_I64(in.records, 3); /* begin, open, a */
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_MAIN()
