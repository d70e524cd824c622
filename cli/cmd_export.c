/*
 * cmd_export.c -- `lil export RUN` and `lil import FILE`: moving a run
 * between stores (a file store and PostgreSQL, or two machines).
 *
 * export writes the run as a journal file (docs/format.md), byte for byte
 * as a file store keeps it, hash chain and all: to stdout (never to a
 * terminal), or to --out FILE, which must not exist (it is written whole,
 * fsync'd, and only then given its name).  import reads such a file (or
 * stdin for "-") and adds the run to the store, under its own id or
 * --run-id ID.  Both verify the run first (lil_run_export, lil_run_import),
 * so `lil check` passes on both sides.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define IMPORT_MAX (1ull << 34) /* 16 GiB: a journal larger than that is refused */

struct sink {
    int fd;
    uint64_t bytes;
};

static int write_all(void *ud, const void *data, size_t len)
{
    struct sink *s = ud;
    const char *p = data;

    while (len > 0) {
        ssize_t w = write(s->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 1;
        p += w;
        len -= (size_t)w;
        s->bytes += (uint64_t)w;
    }
    return 0;
}

/* The exit status of a failed lil_run_export, its error printed. */
static int export_failed(const struct cli_ctx *ctx, lil_store *st, const char *id,
                         lil_status rc)
{
    if (rc != LIL_E_NOTFOUND)
        return cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
    cli_err(ctx, "no run '%s' in store '%s'", id, lil_store_path(st));
    return CLI_EXIT_FAIL;
}

/* --out FILE: a temporary file beside it, renamed into place once whole and
 * synced; FILE must not exist (link(2) never replaces). */
static int export_to_file(const struct cli_ctx *ctx, lil_store *st, const char *id,
                          const char *out, struct sink *s)
{
    char tmp[4200];
    lil_status rc;
    int ret = CLI_EXIT_FAIL;

    s->fd = cli_create_temp(out, 0600, tmp, sizeof(tmp));
    if (s->fd < 0) {
        cli_err(ctx, "cannot create a temporary file beside %s: %s", out,
                strerror(errno));
        return CLI_EXIT_FAIL;
    }
    rc = lil_run_export(st, id, write_all, s);
    if (rc != LIL_OK)
        ret = export_failed(ctx, st, id, rc);
    else if (fsync(s->fd) != 0 || link(tmp, out) != 0)
        cli_err(ctx, "cannot write %s: %s", out, strerror(errno));
    else
        ret = CLI_EXIT_OK;
    close(s->fd);
    unlink(tmp);
    return ret;
}

static int do_export(const struct cli_ctx *ctx, lil_store *st, const char *id,
                     const char *out)
{
    struct sink s = {STDOUT_FILENO, 0};
    lil_status rc;
    int ret;

    if (out) {
        ret = export_to_file(ctx, st, id, out, &s);
    } else if (isatty(STDOUT_FILENO)) {
        return cli_usage(ctx, "stdout is a terminal: redirect it (lil export RUN > "
                              "run.lil) or use --out FILE");
    } else {
        rc = lil_run_export(st, id, write_all, &s);
        ret = rc == LIL_OK ? CLI_EXIT_OK : export_failed(ctx, st, id, rc);
    }
    if (ret == CLI_EXIT_OK)
        fprintf(stderr, "lil: export: run %s: %llu bytes\n", id,
                (unsigned long long)s.bytes);
    return ret;
}

static int export_verb(const struct cli_ctx *ctx, lil_store *st, const char *id,
                       void *ud)
{
    return do_export(ctx, st, id, *(const char *const *)ud);
}

static int cmd_export(struct cli_ctx *ctx, int argc, char **argv)
{
    const char *out = NULL;
    bool has_out = false;
    const struct cli_flag flags[] = {{"out", true, &out, &has_out},
                                     {NULL, false, NULL, NULL}};

    return cli_on_run_arg(ctx, argc, argv, flags, export_verb, &out);
}

const struct cli_verb cli_verb_export = {
    "export",
    "write a run as a journal file (to move it to another store)",
    "Usage: lil export RUN [--out FILE] [--dir DIR]\n"
    "\n"
    "Write the run as a journal file (docs/format.md): its header and every\n"
    "valid record, byte for byte as a file store keeps them, hash chain and\n"
    "all, from a file store or PostgreSQL alike; `lil import` adds it to\n"
    "another store, and `lil check` verifies it on both sides.  The run is\n"
    "verified first (a keyed run needs LIL_JOURNAL_KEY) and read as it is: a\n"
    "run another process holds exports what it has committed so far.\n"
    "\n"
    "  lil export RUN > run.lil\n"
    "  lil --dir postgresql://db/lil import run.lil\n"
    "\n"
    "Flags:\n"
    "  --out FILE  write to FILE (which must not exist) instead of stdout;\n"
    "              it gets its name only once written whole and synced\n"
    "  --dir DIR   the store (default: $LIL_DIR, else .lil)\n"
    "\n"
    "Exit status: 0 exported (the size on stderr); 1 no such run, damaged\n"
    "(see `lil check`), wrong key, I/O error; 64 on a usage error (also\n"
    "stdout on a terminal).\n",
    cmd_export,
};

/* ---- import ---------------------------------------------------------------------- */

/* The whole of fd into *data (free), at most IMPORT_MAX bytes. */
static int read_all(int fd, unsigned char **data, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);

    while (buf) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                break;
            free(buf);
            return -1;
        }
        n += (size_t)r;
        if (n == cap) {
            unsigned char *more = cap * 2 <= IMPORT_MAX ? realloc(buf, cap * 2) : NULL;
            if (!more) {
                free(buf);
                errno = cap * 2 > IMPORT_MAX ? EFBIG : ENOMEM;
                return -1;
            }
            buf = more;
            cap *= 2;
        }
    }
    if (!buf)
        return -1;
    *data = buf;
    *len = n;
    return 0;
}

static int read_journal(const struct cli_ctx *ctx, const char *file,
                        unsigned char **data, size_t *len)
{
    bool std_in = strcmp(file, "-") == 0;
    int fd = std_in ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
    int rc = fd < 0 ? -1 : read_all(fd, data, len);

    if (rc != 0)
        cli_err(ctx, "cannot read %s: %s", std_in ? "stdin" : file, strerror(errno));
    if (fd >= 0 && !std_in)
        close(fd);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* --source-key FILE: a store's key file (docs/format.md, "The store's
 * key": its 32 key bytes), or a file holding the key's bytes as
 * LIL_JOURNAL_KEY would (one final newline ignored).  Never a symlink. */
#define KEY_FILE_MAGIC "\x89LILKEY\n"

static int read_source_key(const struct cli_ctx *ctx, const char *file,
                           unsigned char *key, size_t cap, size_t *len)
{
    int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, key, cap);

    if (fd >= 0)
        close(fd);
    if (n < 0) {
        cli_err(ctx, "cannot read the source key %s: %s", file, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    *len = (size_t)n;
    if (*len == 64 && memcmp(key, KEY_FILE_MAGIC, 8) == 0) {
        memmove(key, key + 16, 32);
        *len = 32;
    } else if (*len > 0 && key[*len - 1] == '\n') {
        (*len)--;
    }
    if (*len == 0 || *len == cap) {
        cli_err(ctx, "the source key %s is empty or too long", file);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int do_import(const struct cli_ctx *ctx, const char *file, const char *run_id,
                     const char *key_file)
{
    unsigned char *data = NULL, key[4096];
    size_t len = 0, key_len = 0;
    char *id = NULL;
    lil_store *st = NULL;
    int ret = read_journal(ctx, file, &data, &len);
    lil_status rc;

    if (ret == CLI_EXIT_OK && key_file)
        ret = read_source_key(ctx, key_file, key, sizeof(key), &key_len);
    if (ret == CLI_EXIT_OK)
        ret = cli_store_create(ctx, &st);
    if (ret == CLI_EXIT_OK) {
        rc = lil_run_import_keyed(st, data, len, run_id, key_len ? key : NULL, key_len,
                                  &id);
        ret =
            rc == LIL_OK ? CLI_EXIT_OK : cli_fail(ctx, rc, "%s", lil_store_errmsg(st));
    }
    if (ret == CLI_EXIT_OK && ctx->json) {
        json_t *o = json_object();
        cli_json_set(o, "run", cli_json_str(id, strlen(id)));
        cli_json_set(o, "bytes", cli_json_u64(len));
        ret = cli_json_print(ctx, o, false);
    } else if (ret == CLI_EXIT_OK) {
        printf("imported run %s (%zu bytes)\n", id, len);
    }
    lil_free(id);
    lil_store_close(st);
    free(data);
    explicit_bzero(key, sizeof(key));
    return ret;
}

static int cmd_import(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"FILE", NULL};
    const char *pos[1] = {NULL}, *run_id = NULL, *key_file = NULL;
    bool has_id = false, has_key = false;
    const struct cli_flag flags[] = {{"run-id", true, &run_id, &has_id},
                                     {"source-key", true, &key_file, &has_key},
                                     {NULL, false, NULL, NULL}};
    struct cli_args a = {flags, names, pos};
    int rc = cli_parse(ctx, argc, argv, &a);

    if (rc != CLI_EXIT_OK)
        return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    if (run_id && cli_run_id_ok(ctx, run_id) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    return do_import(ctx, pos[0], run_id, key_file);
}

const struct cli_verb cli_verb_import = {
    "import",
    "add a run to the store from a journal file (lil export's)",
    "Usage: lil import FILE [--run-id ID] [--source-key KEYFILE] [--dir DIR]\n"
    "                  [--json]\n"
    "\n"
    "Add the run of a journal file (what `lil export` writes, or a file\n"
    "store's RUN.lil) to the store, a file store or PostgreSQL alike.  The\n"
    "file is verified first, as `lil check` does, under the key it was\n"
    "written with (--source-key, else this store's key); a torn tail is left\n"
    "out.  The run is then sealed with this store's key (a new file store\n"
    "makes its own first): its chain is computed anew when the keys differ.\n"
    "FILE - reads stdin.  The run keeps its id and its bytes, hash chain and\n"
    "all, unless --run-id gives another: its BEGIN record then names the new\n"
    "id and the chain is computed anew from there (the records are kept).\n"
    "A run with that id must not be in the store yet.\n"
    "\n"
    "Flags:\n"
    "  --run-id ID  import the run under this id\n"
    "  --source-key KEYFILE  the key of the store the run comes from: its\n"
    "               journal.key, or a file holding the key's bytes\n"
    "  --json       {\"run\", \"bytes\"}\n"
    "  --dir DIR    the store (default: $LIL_DIR, else .lil; a missing\n"
    "               directory is created)\n"
    "\n"
    "Exit status: 0 imported; 1 the run exists, the file is not a journal or\n"
    "is damaged, wrong key, I/O error; 64 on a usage error.\n",
    cmd_import,
};
