/*
 * make_corpus.c -- writes the seed corpus of the journal fuzz targets
 * (fuzz/corpus/recover/).  Run once by hand; its output is committed:
 *
 *     build/dev/fuzz/fuzz_make_corpus fuzz/corpus/recover
 *
 * Two kinds of seeds:
 *
 *   v-*  valid journals written through lil.h, for run id "fz" (the name
 *        fuzz_open gives the file): steps, repeated names, failures,
 *        effects (done, uncertain, resolved three ways), run outcomes,
 *        several opens, sync=full (SETTLED flags) and sync=off, a keyed
 *        journal (LIL_JOURNAL_KEY = FUZZ_KEY), results near max_record.
 *        Each file is cut at its last valid byte (the writer preallocates,
 *        and a megabyte of zeros makes a poor seed); one keeps a zero tail.
 *   d-*  damaged copies made here by hand: torn tails, flipped bytes in
 *        the header and in records, another version, unknown feature bits,
 *        a keyed header, huge and tiny length fields, a key_len past the
 *        record, CRCs recomputed over edited bytes (so only the chain can
 *        tell), reordered and duplicated records, zeroed records, garbage
 *        tails, the empty file.
 *
 * Each seed's verdict from the recovery scan is printed, which also shows
 * that the set covers every outcome (OK, torn, CORRUPT, VERSION, KEY).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include "base/env.h"
#include "base/err.h"
#include "journal/journal.h"

#define FUZZ_KEY "fuzz-key-0123456789abcdef"

struct blob {
    unsigned char *data;
    size_t len;
};

static const char *out_dir;
static char work_dir[4096];
static int seq_store;

static void die(const char *what)
{
    fprintf(stderr, "make_corpus: %s: %s (%s)\n", what, lil_errmsg(), strerror(errno));
    exit(1);
}

/* ---- writing valid journals through lil.h ------------------------------- */

/* Pass a string literal as a step's ud (set_fn reads it back as const). */
#define UD(s) ((void *)(uintptr_t)(s))

static int set_fn(lil_call *call, void *ud)
{
    const char *s = ud ? ud : "";
    return lil_call_set_result(call, s, strlen(s)) == LIL_OK ? 0 : 1;
}

static int json_fn(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_json(call, "{\"b\": [1, 2.5, \"x\"], \"a\": null}") == LIL_OK
               ? 0
               : 1;
}

static int fail_fn(lil_call *call, void *ud)
{
    (void)ud;
    lil_call_fail(call, "upstream said %d", 503);
    return 1;
}

static int die_fn(lil_call *call, void *ud)
{
    (void)call;
    (void)ud;
    _exit(0); /* the process dies inside the effect: intent, no outcome */
}

static int big_fn(lil_call *call, void *ud)
{
    static char buf[8192];
    size_t n = (size_t)(uintptr_t)ud;
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('A' + i % 23);
    return lil_call_set_result(call, buf, n) == LIL_OK ? 0 : 1;
}

typedef void (*scenario_fn)(lil_store *st, lil_sync sync);

static lil_run *open_fz(lil_store *st, lil_sync sync)
{
    lil_run_opts opts = {.struct_size = sizeof(opts), .sync = sync};
    lil_run *run = NULL;
    if (lil_run_open(st, "fz", &opts, &run) != LIL_OK)
        die("lil_run_open");
    return run;
}

static void step(lil_run *run, const char *name, lil_fn fn, void *ud)
{
    lil_status rc = lil_step(run, name, fn, ud, NULL);
    if (rc != LIL_OK && rc != LIL_E_FAILED)
        die(name);
}

static void sc_empty(lil_store *st, lil_sync sync)
{
    lil_run_close(open_fz(st, sync));
}

static void sc_steps(lil_store *st, lil_sync sync)
{
    lil_run *run = open_fz(st, sync);
    step(run, "fetch", set_fn, UD("{\"page\":1}"));
    step(run, "parse", json_fn, NULL);
    step(run, "store", set_fn, UD("ok"));
    lil_run_close(run);
}

static void sc_loop(lil_store *st, lil_sync sync)
{
    lil_run *run = open_fz(st, sync);
    for (int i = 0; i < 12; i++)
        step(run, "tick", set_fn, UD(i % 2 ? "odd" : "even"));
    lil_run_close(run);
}

static void sc_failed(lil_store *st, lil_sync sync)
{
    lil_run *run = open_fz(st, sync);
    step(run, "fetch", set_fn, UD("x"));
    step(run, "charge", fail_fn, NULL);
    lil_run_close(run);
}

static void sc_effect(lil_store *st, lil_sync sync)
{
    lil_run *run = open_fz(st, sync);
    if (lil_effect(run, "pay", "POST /pay 10", 12, set_fn, UD("paid"), NULL) != LIL_OK)
        die("lil_effect");
    step(run, "after", set_fn, UD("1"));
    lil_run_close(run);
}

static void sc_uncertain(lil_store *st, lil_sync sync)
{
    pid_t pid = fork();
    if (pid == 0) {
        lil_run *run = open_fz(st, sync);
        step(run, "fetch", set_fn, UD("x"));
        lil_effect(run, "pay", "POST /pay 10", 12, die_fn, NULL, NULL);
        _exit(1);
    }
    int status;
    waitpid(pid, &status, 0);
}

static void resolve(lil_store *st, lil_sync sync, lil_resolution how)
{
    sc_uncertain(st, sync);
    lil_run *run = open_fz(st, sync);
    if (lil_run_resolve(run, "pay", how, how == LIL_RESOLVE_ASSUME_DONE ? "paid" : NULL,
                        how == LIL_RESOLVE_ASSUME_DONE ? 4 : 0, "ops@example",
                        "checked the bank") != LIL_OK)
        die("lil_run_resolve");
    if (how == LIL_RESOLVE_RETRY &&
        lil_effect(run, "pay", "POST /pay 10", 12, set_fn, UD("paid"), NULL) != LIL_OK)
        die("lil_effect retry");
    lil_run_close(run);
}

static void sc_retry(lil_store *st, lil_sync sync)
{
    resolve(st, sync, LIL_RESOLVE_RETRY);
}

static void sc_assume(lil_store *st, lil_sync sync)
{
    resolve(st, sync, LIL_RESOLVE_ASSUME_DONE);
}

static void sc_abort(lil_store *st, lil_sync sync)
{
    resolve(st, sync, LIL_RESOLVE_ABORT);
}

static void sc_complete(lil_store *st, lil_sync sync)
{
    lil_run *run = open_fz(st, sync);
    step(run, "a", set_fn, UD("1"));
    if (lil_run_complete(run, "{\"total\":3}", 11) != LIL_OK)
        die("lil_run_complete");
    lil_run_close(run);
}

static void sc_runfail(lil_store *st, lil_sync sync)
{
    lil_run *run = open_fz(st, sync);
    step(run, "a", set_fn, UD("1"));
    if (lil_run_fail(run, "gave up after 3 tries") != LIL_OK)
        die("lil_run_fail");
    lil_run_close(run);
}

static void sc_reopen(lil_store *st, lil_sync sync)
{
    for (int i = 0; i < 3; i++) {
        lil_run *run = open_fz(st, sync);
        step(run, "a", set_fn, UD("1"));
        step(run, "b", set_fn, UD("2"));
        if (i == 2)
            step(run, "c", set_fn, UD("3"));
        lil_run_close(run);
    }
}

static void sc_big(lil_store *st, lil_sync sync)
{
    lil_run *run = open_fz(st, sync);
    step(run, "small", big_fn, (void *)(uintptr_t)90);
    step(run, "near4k", big_fn, (void *)(uintptr_t)3900);
    step(run, "over4k", big_fn, (void *)(uintptr_t)5000);
    lil_run_close(run);
}

static void sc_longkey(lil_store *st, lil_sync sync)
{
    char name[LIL_STEP_NAME_MAX + 1];
    memset(name, 'k', LIL_STEP_NAME_MAX);
    name[LIL_STEP_NAME_MAX] = 0;
    lil_run *run = open_fz(st, sync);
    step(run, name, set_fn, UD(""));
    step(run, name, set_fn, UD(""));
    lil_run_close(run);
}

/* Read the file, cut at the end of the valid journal (keeping extra zero
 * bytes of the preallocated space). */
static struct blob read_journal(lil_store *st, const char *path, size_t extra)
{
    lil_check_report rep = {.struct_size = sizeof(rep)};
    struct blob b = {0};
    struct stat sb;
    int fd = open(path, O_RDONLY);

    if (lil_run_check(st, "fz", 0, &rep) != LIL_OK)
        die("lil_run_check");
    if (fd < 0 || fstat(fd, &sb) != 0)
        die(path);
    b.len = (size_t)rep.valid_bytes + extra;
    if (b.len > (size_t)sb.st_size)
        b.len = (size_t)sb.st_size;
    b.data = malloc(b.len ? b.len : 1);
    if (!b.data || pread(fd, b.data, b.len, 0) != (ssize_t)b.len)
        die("read journal");
    close(fd);
    return b;
}

static struct blob make_valid(scenario_fn fn, lil_sync sync, bool keyed, size_t extra)
{
    char dir[4200], path[4300];
    lil_store *st = NULL;

    snprintf(dir, sizeof(dir), "%s/s%d", work_dir, seq_store++);
    snprintf(path, sizeof(path), "%s/fz.lil", dir);
    if (keyed)
        setenv("LIL_JOURNAL_KEY", FUZZ_KEY, 1);
    else
        unsetenv("LIL_JOURNAL_KEY");
    if (lil_store_open(NULL, dir, &st) != LIL_OK)
        die("lil_store_open");
    fn(st, sync);
    struct blob b = read_journal(st, path, extra);
    lil_store_close(st);
    unsetenv("LIL_JOURNAL_KEY");
    return b;
}

/* ---- verdicts and output ------------------------------------------------ */

static const char *verdict(const struct blob *b, const char *key, char *buf, size_t cap)
{
    static lil_env *env;
    struct lil_err err = {0};
    uint64_t end = 0, records = 0;

    if (!env && lil_env_new(&env) != LIL_OK)
        die("lil_env_new");
    lil_status rc =
        lil__journal_scan_buffer(env, &err, b->data, b->len, (const uint8_t *)key,
                                 key ? strlen(key) : 0, 1 << 16, &end, &records);
    if (rc == LIL_OK)
        snprintf(buf, cap, "OK %llu records, end %llu%s", (unsigned long long)records,
                 (unsigned long long)end, end < b->len ? " (tail ignored)" : "");
    else
        snprintf(buf, cap, "%s: %s", lil_status_name(rc), err.msg);
    return buf;
}

static void emit(const char *name, const struct blob *b, bool keyed)
{
    char path[4200], v[400];
    snprintf(path, sizeof(path), "%s/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0)
        die(path);
    printf("%-28s %6zu bytes  %s\n", name, b->len,
           verdict(b, keyed ? FUZZ_KEY : NULL, v, sizeof(v)));
}

/* ---- damage ------------------------------------------------------------- */

static struct blob copy(const struct blob *b, size_t len)
{
    struct blob c = {malloc(len ? len : 1), len};
    if (!c.data)
        die("malloc");
    memset(c.data, 0, len ? len : 1);
    memcpy(c.data, b->data, len < b->len ? len : b->len);
    return c;
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Offsets of the records of a valid journal (at most cap). */
static size_t records_of(const struct blob *b, size_t *offs, size_t cap)
{
    size_t n = 0;
    for (size_t off = 64; off + 64 <= b->len && n < cap;) {
        uint32_t len = rd32(b->data + off);
        if (len < 64 || off + len > b->len)
            break;
        offs[n++] = off;
        off += len;
    }
    return n;
}

static void fix_header_crc(struct blob *b)
{
    wr32(b->data + 60, (uint32_t)crc32(0, b->data, 60));
}

static void fix_record_crc(struct blob *b, size_t off)
{
    uint32_t len = rd32(b->data + off);
    wr32(b->data + off + 4, (uint32_t)crc32(0, b->data + off + 8, len - 8));
}

static void emit_free(const char *name, struct blob b, bool keyed)
{
    emit(name, &b, keyed);
    free(b.data);
}

static void damage_header(const struct blob *v)
{
    struct blob c;

    emit_free("d-empty", copy(v, 0), false);
    emit_free("d-header-cut-10", copy(v, 10), false);
    emit_free("d-header-cut-63", copy(v, 63), false);
    emit_free("d-header-only", copy(v, 64), false);
    c = copy(v, v->len);
    c.data[1] ^= 0x20; /* magic */
    emit_free("d-bad-magic", c, false);
    c = copy(v, v->len);
    c.data[30] ^= 0x01; /* salt, CRC not fixed */
    emit_free("d-header-crc", c, false);
    c = copy(v, v->len);
    wr32(c.data + 8, 2);
    fix_header_crc(&c);
    emit_free("d-version-2", c, false);
    c = copy(v, v->len);
    wr32(c.data + 8, 0);
    fix_header_crc(&c);
    emit_free("d-version-0", c, false);
    c = copy(v, v->len);
    wr32(c.data + 12, 0x2);
    fix_header_crc(&c);
    emit_free("d-incompat-unknown", c, false);
    c = copy(v, v->len);
    wr32(c.data + 12, 0x1); /* keyed, but key_check is zero */
    fix_header_crc(&c);
    emit_free("d-keyed-bit-no-key", c, true);
    c = copy(v, v->len);
    wr32(c.data + 20, 128);
    fix_header_crc(&c);
    emit_free("d-header-len-128", c, false);
    c = copy(v, v->len);
    wr32(c.data + 16, 0xffffffffu); /* compat bits may be ignored */
    fix_header_crc(&c);
    emit_free("d-compat-bits", c, false);
}

static void damage_lengths(const struct blob *v, const size_t *offs, size_t n)
{
    static const uint32_t lens[] = {0xffffffffu, 0x7fffffffu, 0x04000040u, 63, 0, 64};
    static const char *names[] = {"d-len-ffffffff", "d-len-7fffffff", "d-len-64m",
                                  "d-len-63",       "d-len-0-mid",    "d-len-64"};
    size_t at = offs[n / 2];

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        struct blob c = copy(v, v->len);
        wr32(c.data + at, lens[i]);
        emit_free(names[i], c, false);
    }
    struct blob c = copy(v, v->len);
    c.data[at + 28] = 0xff; /* key_len past the record, CRC fixed */
    c.data[at + 29] = 0xff;
    fix_record_crc(&c, at);
    emit_free("d-keylen-ffff", c, false);
    c = copy(v, v->len);
    wr32(c.data + at, rd32(c.data + at) + 1); /* len one too long, CRC fixed */
    fix_record_crc(&c, at);
    emit_free("d-len-plus1-crc", c, false);
}

static void damage_records(const struct blob *v, const size_t *offs, size_t n,
                           const char *tag)
{
    char name[64];
    size_t mid = offs[n / 2], last = offs[n - 1];
    struct blob c;

    /* Torn tails: cut inside the last record, and just after its header. */
    snprintf(name, sizeof(name), "d-%s-torn-last-1", tag);
    emit_free(name, copy(v, v->len - 1), false);
    snprintf(name, sizeof(name), "d-%s-torn-last-40", tag);
    emit_free(name, copy(v, v->len - 40), false);
    snprintf(name, sizeof(name), "d-%s-torn-mid", tag);
    emit_free(name, copy(v, mid + 20), false);
    /* A flipped byte in the payload of a middle record, CRC not fixed. */
    c = copy(v, v->len);
    c.data[mid + rd32(c.data + mid) - 40] ^= 0x04;
    snprintf(name, sizeof(name), "d-%s-flip-mid", tag);
    emit_free(name, c, false);
    /* The same in the last record (a torn tail or damage, by SETTLED). */
    c = copy(v, v->len);
    c.data[last + 33] ^= 0x80;
    snprintf(name, sizeof(name), "d-%s-flip-last", tag);
    emit_free(name, c, false);
    /* An edit with the CRC recomputed: only the chain catches it. */
    c = copy(v, v->len);
    c.data[mid + 16] ^= 0x01; /* timestamp */
    fix_record_crc(&c, mid);
    snprintf(name, sizeof(name), "d-%s-edit-ts-crc", tag);
    emit_free(name, c, false);
    /* A middle record zeroed (looks like the end, records follow). */
    c = copy(v, v->len);
    memset(c.data + mid, 0, rd32(v->data + mid));
    snprintf(name, sizeof(name), "d-%s-zeroed-mid", tag);
    emit_free(name, c, false);
    /* A record removed. */
    uint32_t mlen = rd32(v->data + mid);
    c = copy(v, v->len - mlen);
    memcpy(c.data + mid, v->data + mid + mlen, v->len - mid - mlen);
    snprintf(name, sizeof(name), "d-%s-removed-mid", tag);
    emit_free(name, c, false);
    /* The last record twice. */
    c = copy(v, v->len + (v->len - last));
    memcpy(c.data + v->len, v->data + last, v->len - last);
    snprintf(name, sizeof(name), "d-%s-dup-last", tag);
    emit_free(name, c, false);
    /* Garbage after the end. */
    c = copy(v, v->len + 100);
    for (size_t i = 0; i < 100; i++)
        c.data[v->len + i] = (unsigned char)(i * 37 + 11);
    snprintf(name, sizeof(name), "d-%s-garbage-tail", tag);
    emit_free(name, c, false);
}

static void damage_reorder(const struct blob *v, const size_t *offs, size_t n)
{
    /* Swap two records of the same length (seq out of order), with and
     * without renumbering them and recomputing the CRCs (then only the
     * chain tells). */
    for (size_t i = 1; i + 1 < n; i++) {
        uint32_t a = rd32(v->data + offs[i]), b = rd32(v->data + offs[i + 1]);
        if (a != b)
            continue;
        struct blob c = copy(v, v->len);
        memcpy(c.data + offs[i], v->data + offs[i + 1], a);
        memcpy(c.data + offs[i + 1], v->data + offs[i], a);
        emit("d-swapped", &c, false);
        memcpy(c.data + offs[i] + 8, v->data + offs[i] + 8, 8);
        memcpy(c.data + offs[i + 1] + 8, v->data + offs[i + 1] + 8, 8);
        fix_record_crc(&c, offs[i]);
        fix_record_crc(&c, offs[i + 1]);
        emit_free("d-swapped-renumbered", c, false);
        return;
    }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void valid_seeds(struct blob *full_loop, struct blob *off_loop)
{
    static const struct {
        const char *name;
        scenario_fn fn;
        lil_sync sync;
        bool keyed;
    } list[] = {
        {"v-empty", sc_empty, LIL_SYNC_FULL, false},
        {"v-steps", sc_steps, LIL_SYNC_FULL, false},
        {"v-steps-off", sc_steps, LIL_SYNC_OFF, false},
        {"v-steps-normal", sc_steps, LIL_SYNC_NORMAL, false},
        {"v-failed", sc_failed, LIL_SYNC_FULL, false},
        {"v-effect", sc_effect, LIL_SYNC_FULL, false},
        {"v-uncertain", sc_uncertain, LIL_SYNC_FULL, false},
        {"v-resolved-retry", sc_retry, LIL_SYNC_FULL, false},
        {"v-resolved-assume", sc_assume, LIL_SYNC_FULL, false},
        {"v-resolved-abort", sc_abort, LIL_SYNC_FULL, false},
        {"v-complete", sc_complete, LIL_SYNC_FULL, false},
        {"v-runfail", sc_runfail, LIL_SYNC_NORMAL, false},
        {"v-reopened", sc_reopen, LIL_SYNC_FULL, false},
        {"v-big", sc_big, LIL_SYNC_OFF, false},
        {"v-longkey", sc_longkey, LIL_SYNC_FULL, false},
        {"v-keyed", sc_steps, LIL_SYNC_FULL, true},
        {"v-keyed-effect", sc_effect, LIL_SYNC_OFF, true},
    };

    for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
        struct blob b = make_valid(list[i].fn, list[i].sync, list[i].keyed, 0);
        emit(list[i].name, &b, list[i].keyed);
        free(b.data);
    }
    /* What a preallocated file looks like past the end: zeros. */
    struct blob v = make_valid(sc_steps, LIL_SYNC_FULL, false, 0);
    emit_free("v-steps-zero-tail", copy(&v, v.len + 256), false);
    free(v.data);
    *full_loop = make_valid(sc_loop, LIL_SYNC_FULL, false, 0);
    emit("v-loop", full_loop, false);
    *off_loop = make_valid(sc_loop, LIL_SYNC_OFF, false, 0);
    emit("v-loop-off", off_loop, false);
}

int main(int argc, char **argv)
{
    struct blob full, off;
    size_t offs[64], n;

    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_make_corpus OUT_DIR\n");
        return 64;
    }
    out_dir = argv[1];
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST)
        die(out_dir);
    snprintf(work_dir, sizeof(work_dir), "/tmp/lil-make-corpus.XXXXXX");
    if (!mkdtemp(work_dir))
        die("mkdtemp");

    valid_seeds(&full, &off);
    damage_header(&full);
    n = records_of(&full, offs, 64);
    damage_lengths(&full, offs, n);
    damage_records(&full, offs, n, "full");
    damage_reorder(&full, offs, n);
    n = records_of(&off, offs, 64);
    damage_records(&off, offs, n, "off");

    free(full.data);
    free(off.data);
    nftw(work_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
