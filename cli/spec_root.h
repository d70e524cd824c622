/*
 * spec_root.h -- spec paths held under a root directory (spec_root.c):
 * what `lil mcp` and `lil serve` open or run, given by a client or named
 * by a run's journal, only when it is a regular file under --spec-root.
 */
#ifndef LIL_CLI_SPEC_ROOT_H
#define LIL_CLI_SPEC_ROOT_H

#include <stddef.h>

/* The real path of spec (relative to root when not absolute) when it is a
 * regular file under root (absolute, resolved): a new string (free), or
 * NULL with a message in msg ("spec PATH is outside --spec-root DIR", "no
 * such spec PATH: ...", "spec PATH is not a regular file"). */
char *cli_spec_root_path(const char *root, const char *spec, char *msg, size_t msg_len);

/* The spec a run's journal names: path, relative to cwd (the run's working
 * directory, may be NULL: then to root) when not absolute, held under root
 * as cli_spec_root_path holds it.  A new string (free), or NULL with a
 * message in msg. */
char *cli_spec_root_run_path(const char *root, const char *path, const char *cwd,
                             char *msg, size_t msg_len);

#endif
