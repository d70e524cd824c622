/*
 * proc_util.h -- what the child-process tests look at from outside: the
 * state of a process in /proc, whether a process group still has a live
 * member, the descriptors of this process, and leftover children.
 */
#ifndef LIL_TESTS_PROC_UTIL_H
#define LIL_TESTS_PROC_UTIL_H

#include <stdbool.h>
#include <sys/types.h>

/* The state letter of pid in /proc/<pid>/stat ('R', 'S', 'Z', ...), or 0
 * when there is no such process. */
char tp_state(pid_t pid);

/* The process group and session of pid (-1 when it is gone). */
pid_t tp_pgid(pid_t pid);
pid_t tp_sid(pid_t pid);

/* Wait up to 5 s for pid to be gone or a zombie.  An orphan is reaped by
 * init, which may be slow or, in a container, never do it: a zombie is
 * dead all the same. */
bool tp_dead(pid_t pid);

/* Wait up to 5 s for every member of process group pgid to be dead. */
bool tp_group_dead(pid_t pgid);

/* Descriptors open in this process. */
int tp_fd_count(void);

/* true when this process has no child left, zombies included. */
bool tp_no_children(void);

#endif
