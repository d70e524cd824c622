/*
 * spec_root.c -- spec paths held under a root directory (spec_root.h).
 *
 * A client names specs (`lil mcp`'s start_run, validate_spec, ...) and a
 * run's journal names the spec it was started from (steering a run of
 * `lil mcp` or `lil serve`); both are words of someone else.  Neither is
 * opened unless its real path -- every symbolic link and ".." resolved --
 * is a regular file inside the spec root, so a client cannot make a server
 * read /etc/shadow through a diagnostic, nor a journal in a shared store
 * make it run a spec of its choosing.
 */
#include "spec_root.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Is path (absolute, resolved) root itself or inside it? */
static bool under(const char *root, const char *path)
{
    size_t n = strlen(root);

    if (n == 1 && root[0] == '/')
        return true;
    return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

char *cli_spec_root_path(const char *root, const char *spec, char *msg, size_t msg_len)
{
    char joined[PATH_MAX], *real;
    struct stat sb;
    int n;

    if (!spec || !*spec || strlen(spec) >= PATH_MAX) {
        snprintf(msg, msg_len, "the spec path is empty or too long");
        return NULL;
    }
    n = spec[0] == '/' ? snprintf(joined, sizeof(joined), "%s", spec)
                       : snprintf(joined, sizeof(joined), "%s/%s", root, spec);
    if (n < 0 || (size_t)n >= sizeof(joined)) {
        snprintf(msg, msg_len, "the spec path is too long");
        return NULL;
    }
    real = realpath(joined, NULL);
    if (!real) {
        snprintf(msg, msg_len, "no such spec %.400s: %s", spec, strerror(errno));
        return NULL;
    }
    if (!under(root, real)) {
        snprintf(msg, msg_len, "spec %.400s is outside --spec-root %.400s", spec, root);
        free(real);
        return NULL;
    }
    if (stat(real, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(msg, msg_len, "spec %.400s is not a regular file", spec);
        free(real);
        return NULL;
    }
    return real;
}

char *cli_spec_root_run_path(const char *root, const char *path, const char *cwd,
                             char *msg, size_t msg_len)
{
    char joined[PATH_MAX];

    if (!path || !*path) {
        snprintf(msg, msg_len, "the run names no spec file");
        return NULL;
    }
    if (path[0] == '/' || !cwd || !*cwd)
        return cli_spec_root_path(root, path, msg, msg_len);
    if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", cwd, path) >=
        sizeof(joined)) {
        snprintf(msg, msg_len, "the spec path of the run is too long");
        return NULL;
    }
    return cli_spec_root_path(root, joined, msg, msg_len);
}
