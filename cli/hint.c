/*
 * hint.c -- the commands lil prints as a next step (hint.h): one
 * formatter, so every hint names the store and the run it was printed
 * for.
 *
 * The store: `--dir` as it was given, when it was given and is not the
 * store lil would use without it ($LIL_DIR, else .lil); a PostgreSQL URI
 * without its password (libpq finds it in PGPASSWORD or ~/.pgpass), so a
 * hint never shows a secret.  The run: `--run-id` unless it is the spec's
 * own id.
 */
#include "hint.h"

#include <stdio.h>
#include <string.h>

/* Characters a POSIX shell gives no meaning to in a word. */
static bool plain(const char *w)
{
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789_./:=@%+,-";

    return *w && strspn(w, ok) == strlen(w);
}

void cli_hint_quote(const char *word, char *buf, size_t cap)
{
    size_t n = 0;

    if (!cap)
        return;
    if (plain(word)) {
        snprintf(buf, cap, "%s", word);
        return;
    }
    buf[n++ % cap] = '\'';
    for (const char *p = word; *p && n + 5 < cap; p++) {
        if (*p == '\'') {
            memcpy(buf + n, "'\\''", 4); /* close, an escaped quote, open */
            n += 4;
        } else {
            buf[n++] = *p;
        }
    }
    if (n + 1 < cap)
        buf[n++] = '\'';
    buf[n < cap ? n : cap - 1] = '\0';
}

/* A PostgreSQL URI without the password of its user part
 * ("postgresql://u:pw@h/db" -> "postgresql://u@h/db"). */
static void without_password(const char *where, char *buf, size_t cap)
{
    const char *scheme = strstr(where, "://");
    const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
    const char *colon = scheme ? strchr(scheme + 3, ':') : NULL;

    if (!at || !colon || colon > at || strchr(scheme + 3, '/') < at) {
        snprintf(buf, cap, "%s", where);
        return;
    }
    snprintf(buf, cap, "%.*s%s", (int)(colon - where), where, at);
}

/* Whether --dir names the store lil uses without it (lil_store_location
 * of both; asked here, not through cli_store_dir, whose one cached answer
 * a caller may still hold). */
static bool default_store(const char *dir)
{
    char *given = NULL, *dflt = NULL;
    bool same = lil_store_location(dir, &given, NULL) == LIL_OK &&
                lil_store_location(NULL, &dflt, NULL) == LIL_OK &&
                strcmp(given, dflt) == 0;

    lil_free(given);
    lil_free(dflt);
    return same;
}

/* " --dir DIR" when the store is not the one lil uses without --dir. */
static void dir_part(const struct cli_ctx *ctx, char *buf, size_t cap)
{
    char dir[2048], quoted[4200];

    buf[0] = '\0';
    if (!ctx || !ctx->dir || default_store(ctx->dir))
        return;
    if (cli_store_is_url(ctx->dir))
        without_password(ctx->dir, dir, sizeof(dir));
    else
        snprintf(dir, sizeof(dir), "%s", ctx->dir);
    cli_hint_quote(dir, quoted, sizeof(quoted));
    snprintf(buf, cap, " --dir %s", quoted);
}

const char *cli_hint(const struct cli_hint_run *r, const char *verb, const char *tail,
                     char *buf, size_t cap)
{
    char dir[4300], target[4200], id[700] = "";

    dir_part(r->ctx, dir, sizeof(dir));
    cli_hint_quote(r->spec     ? r->spec
                   : r->run_id ? r->run_id
                               : "RUN",
                   target, sizeof(target));
    if (r->spec && r->run_id && !(r->spec_id && strcmp(r->spec_id, r->run_id) == 0)) {
        char q[600];

        cli_hint_quote(r->run_id, q, sizeof(q));
        snprintf(id, sizeof(id), " --run-id %s", q);
    }
    snprintf(buf, cap, "lil%s %s %s%s%s%s", dir, verb, target, id,
             tail && *tail ? " " : "", tail ? tail : "");
    return buf;
}
