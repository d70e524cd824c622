/*
 * runner_artifacts.c -- the spec's `artifacts` key acted on (docs/loops.md,
 * "Artifacts"): when the run ends (completed, failed, or stopped by its
 * caps), the files it names are recorded in the journal, just before the
 * end record, as
 *
 *   artifacts.N {"files": [{"path", "size", "sha256"} | {"path", "error"}],
 *                "truncated"?: "max_files" | "max_bytes"}
 *
 * The files: regular files under the run's working directory whose path
 * relative to it matches an include pattern and no exclude pattern.  A
 * pattern is a POSIX glob per path part (fnmatch: `*`, `?`, `[...]`; a
 * `*` matches names starting with a dot too), and a part `**` matches any
 * number of parts, none included.  Symbolic links are never followed nor
 * listed (a link to a file outside the directory names nothing), nor are
 * directories named `.git` or `node_modules` entered (the validator
 * refuses includes in them).  Names are visited in byte order, so the list
 * is the same on every machine; the walk stops at max_files files or
 * before the file that would take the total past max_bytes, and says so.
 * A file that cannot be read is listed with its error; nothing here fails
 * the run (only the journal's own errors are returned).
 *
 * Files are opened, stat'ed, read and closed through the env's system-call
 * table (os/os.h: openat and fstatat relative to the directory walked), so
 * tests can fail them; the directory streams are libc's (fdopendir,
 * readdir, closedir, which closes its descriptor), as the journal's own
 * directory scans are.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "loop/runner.h"
#include "os/os.h"

#define ARTIFACT_DEPTH_MAX 64
#define ARTIFACT_PATH_MAX  4096
#define ARTIFACT_CHUNK     65536

struct walk {
    struct lil_loop *lp;
    json_t *files;
    long long nfiles, nbytes;
    const char *truncated;
    lil_status rc;
};

/* ---- patterns ------------------------------------------------------------- */

/* Does the pattern (its parts from pat) match the path (its parts from
 * path)?  Both are '/'-separated, without a leading '/'. */
static bool match_parts(const char *pat, const char *path, int depth)
{
    const char *pe = strchr(pat, '/'), *se = strchr(path, '/');
    size_t plen = pe ? (size_t)(pe - pat) : strlen(pat);
    char ps[ARTIFACT_PATH_MAX], ss[ARTIFACT_PATH_MAX];
    size_t slen = se ? (size_t)(se - path) : strlen(path);

    if (depth > ARTIFACT_DEPTH_MAX || plen >= sizeof(ps) || slen >= sizeof(ss))
        return false;
    if (plen == 2 && memcmp(pat, "**", 2) == 0) {
        if (!pe)
            return true; /* `**` last: everything below */
        if (match_parts(pe + 1, path, depth + 1))
            return true; /* no part */
        return se && match_parts(pat, se + 1, depth + 1);
    }
    memcpy(ps, pat, plen);
    ps[plen] = '\0';
    memcpy(ss, path, slen);
    ss[slen] = '\0';
    if (fnmatch(ps, ss, 0) != 0)
        return false;
    if (!pe || !se)
        return !pe && !se;
    return match_parts(pe + 1, se + 1, depth + 1);
}

static bool any_match(const struct lil_ir_strlist *l, const char *path)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].s && match_parts(l->v[i].s, path, 0))
            return true;
    return false;
}

/* ---- one file ------------------------------------------------------------- */

static void add_error(struct walk *w, const char *path, int e)
{
    json_array_append_new(
        w->files, json_pack("{s:s, s:s}", "path", path, "error", lil__errstr(e)));
}

/* SHA-256 and size of the regular file name in dirfd (not through a link). */
static int digest_file(struct walk *w, int dirfd, const char *name, char hex[65],
                       long long *size)
{
    const struct lil_env *env = w->lp->env;
    uint8_t sum[LIL_SHA256_LEN];
    struct lil_mac *m = NULL;
    char *buf = NULL;
    int fd =
        env->os->openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0);
    int e = 0;
    ssize_t got = 0;

    *size = 0;
    if (fd < 0)
        return errno;
    buf = lil__malloc(w->lp->env, ARTIFACT_CHUNK);
    if (!buf || lil__mac_new(w->lp->env, &w->lp->err, NULL, 0, &m) != LIL_OK)
        e = ENOMEM;
    if (!e)
        lil__mac_begin(m);
    while (!e && (got = env->os->read(fd, buf, ARTIFACT_CHUNK)) != 0) {
        if (got < 0 && errno != EINTR)
            e = errno;
        if (got > 0) {
            lil__mac_update(m, buf, (size_t)got);
            *size += got;
        }
    }
    if (!e) {
        lil__mac_end(m, sum);
        lil__hex(sum, sizeof(sum), hex);
    }
    lil__mac_free(w->lp->env, m);
    lil__free(w->lp->env, buf);
    lil__os_close(env, fd);
    return e;
}

static void add_file(struct walk *w, int dirfd, const char *name, const char *path,
                     const struct stat *sb)
{
    const struct lil_ir_spec *ir = w->lp->ir;
    char hex[65] = "";
    long long size = 0;
    int e;

    if (!any_match(&ir->artifacts.include, path) ||
        any_match(&ir->artifacts.exclude, path))
        return;
    if (w->nfiles >= ir->artifacts.max_files) {
        w->truncated = "max_files";
        return;
    }
    if (w->nbytes + (long long)sb->st_size > ir->artifacts.max_bytes) {
        w->truncated = "max_bytes";
        return;
    }
    w->nfiles++;
    e = digest_file(w, dirfd, name, hex, &size);
    if (e) {
        add_error(w, path, e);
        return;
    }
    w->nbytes += size;
    json_array_append_new(w->files, json_pack("{s:s, s:I, s:s}", "path", path, "size",
                                              (json_int_t)size, "sha256", hex));
}

/* ---- the walk ------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir (without . and ..), sorted; *n of them. */
static char **names_of(struct walk *w, DIR *dir, size_t *n)
{
    char **v = NULL, **grown;
    size_t cap = 0;
    struct dirent *d;

    *n = 0;
    while ((d = readdir(dir)) != NULL) { /* NOLINT(concurrency-mt-unsafe): own DIR */
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        grown = lil__grow(w->lp->env, v, &cap, *n, sizeof(*v), 16);
        if (!grown || !(grown[*n] = lil__strdup(w->lp->env, d->d_name))) {
            w->rc = LIL_E_NOMEM;
            v = grown ? grown : v;
            break;
        }
        v = grown;
        (*n)++;
    }
    if (v)
        qsort(v, *n, sizeof(*v), by_name);
    return v;
}

static void walk_dir(struct walk *w, int fd, const char *prefix, int depth);

static void visit(struct walk *w, int dirfd, const char *name, const char *prefix,
                  int depth)
{
    char path[ARTIFACT_PATH_MAX];
    struct stat sb;
    int sub;

    if (snprintf(path, sizeof(path), "%s%s", prefix, name) >= (int)sizeof(path) ||
        w->lp->env->os->fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    if (S_ISREG(sb.st_mode)) {
        add_file(w, dirfd, name, path, &sb);
    } else if (S_ISDIR(sb.st_mode) && depth < ARTIFACT_DEPTH_MAX &&
               strcmp(name, ".git") != 0 && strcmp(name, "node_modules") != 0) {
        sub = w->lp->env->os->openat(
            dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
        size_t len = strlen(path);

        if (sub >= 0 && len + 2 < sizeof(path)) {
            path[len] = '/';
            path[len + 1] = '\0';
            walk_dir(w, sub, path, depth + 1);
        } else {
            lil__os_close(w->lp->env, sub); /* -1 is a no-op */
        }
    }
}

/* Walk the directory open at fd (closed here). */
static void walk_dir(struct walk *w, int fd, const char *prefix, int depth)
{
    DIR *dir = fdopendir(fd);
    char **names;
    size_t n = 0;

    if (!dir) {
        lil__os_close(w->lp->env, fd);
        return;
    }
    names = names_of(w, dir, &n);
    for (size_t i = 0; i < n; i++) {
        if (!w->truncated && w->rc == LIL_OK)
            visit(w, dirfd(dir), names[i], prefix, depth);
        lil__free(w->lp->env, names[i]);
    }
    lil__free(w->lp->env, names);
    closedir(dir);
}

lil_status lil__loop_artifacts(struct lil_loop *lp)
{
    struct walk w = {0};
    json_t *rec;
    int fd;

    if (!lp->ir || !lp->ir->artifacts.present || lp->artifacts)
        return LIL_OK;
    w.lp = lp;
    w.files = json_array();
    if (!w.files)
        return lil__seterr(&lp->err, LIL_E_NOMEM, 0, "out of memory");
    fd = lp->env->os->open(lp->opt.cwd ? lp->opt.cwd : ".",
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd >= 0)
        walk_dir(&w, fd, "", 0);
    if (w.rc != LIL_OK) {
        json_decref(w.files);
        return lil__seterr(&lp->err, w.rc, 0, "out of memory");
    }
    rec = json_pack("{s:o}", "files", w.files);
    if (rec && w.truncated)
        json_object_set_new(rec, "truncated", json_string(w.truncated));
    if (rec)
        lp->artifacts = json_incref(rec);
    return lil__loop_control(lp, "artifacts", rec, false);
}
