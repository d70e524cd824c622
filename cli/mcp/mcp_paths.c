/*
 * mcp_paths.c -- spec paths of `lil mcp`, held under --spec-root (mcp.h).
 *
 * A client names specs (start_run, validate_spec, ...) and a run's journal
 * names the spec it was started from (step_run, approve_run, ...); both are
 * words of someone else.  Neither is opened unless its real path -- every
 * symbolic link and ".." resolved -- is a regular file inside the spec root,
 * so a client cannot make the server read /etc/shadow through a
 * diagnostic, nor a journal in a shared store make it run a spec of its
 * choosing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mcp.h"

/* Is path (absolute, resolved) root itself or inside it? */
static bool under(const char *root, const char *path)
{
    size_t n = strlen(root);

    if (n == 1 && root[0] == '/')
        return true;
    return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

char *mcp_spec_path(const struct mcp_server *srv, const char *spec, char *msg,
                    size_t msg_len)
{
    const char *root = srv->opts.spec_root;
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
