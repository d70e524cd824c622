/*
 * sv_util.h -- what the supervisor tests share: running `lil watch` (in the
 * foreground or the background), waiting for files and processes, and
 * reading its events (--json lines on stderr).
 *
 * Every run happens in the test's directory with LIL_DIR=store, so the
 * fixture (sv_child, SV_CHILD) and lil watch see the same store.
 */
#ifndef LIL_TESTS_SV_UTIL_H
#define LIL_TESTS_SV_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#define SV_CAP 65536

/* The fixture program (tests/supervise/sv_child.c). */
const char *sv_child(void);

/* Run `lil watch ARGS` (printf format; the caller quotes) in a shell and
 * wait for it (at most 60 s).  stderr into err (SV_CAP bytes, may be
 * NULL).  Returns the exit status (128 + signal when killed). */
int sv_watch(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Start `lil watch ARGS` in the background, stderr to t_path("watch.err"),
 * stdout to t_path("watch.out").  Its pid (lil watch itself). */
pid_t sv_watch_bg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Wait up to timeout_ms for pid (a child of this process): its status as
 * a shell gives it, or -1 on time out (then it is killed). */
int sv_wait(pid_t pid, int timeout_ms);

/* Wait up to timeout_ms for the file at path to hold needle. */
bool sv_wait_file(const char *path, const char *needle, int timeout_ms);

/* The file's bytes (NUL-terminated, at most SV_CAP - 1) in a static
 * buffer that the next call reuses; "" when missing. */
const char *sv_slurp(const char *path);

/* Lines of text equal to line. */
int sv_count_lines(const char *text, const char *line);

/* The JSON objects among the lines of text (an array; never NULL unless
 * out of memory), and those of one kind ("event") in it. */
json_t *sv_events(const char *text);
size_t sv_count_kind(json_t *events, const char *kind);
/* The n-th (0-based) event of kind, or NULL. */
json_t *sv_event(json_t *events, const char *kind, size_t n);

/* The pid of the n-th start event in the background run's watch.err
 * (waiting up to 10 s for it), or -1. */
pid_t sv_started_pid(size_t n);

/* 'Z', 'S', ... for pid, 0 when there is no such process. */
char sv_state(pid_t pid);

#endif
