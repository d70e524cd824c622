/*
 * futex.h -- sleep until another thread changes a 32-bit word (Linux futex).
 *
 * The group commit (journal/journal.c) parks each waiting thread on a word
 * of its own and wakes exactly the threads a sync covered.  Unlike a
 * condition variable, a futex wakes the sleeper without making it take a
 * mutex, and the waker may store and wake after the sleeper's memory is
 * gone: the wake touches only the address (a wake of an address where
 * nobody sleeps does nothing).
 *
 * Thread rules: the word is read and written only with __atomic builtins;
 * the waker stores with release order before lil__futex_wake, the sleeper
 * loads with acquire order after lil__futex_wait, so what the waker wrote
 * before its store is visible to the sleeper (ThreadSanitizer sees the
 * atomics; it does not see the system call).
 */
#ifndef LIL_OS_FUTEX_H
#define LIL_OS_FUTEX_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Sleep while *word holds val, until woken or until *until
 * (CLOCK_MONOTONIC, absolute; NULL: no limit) passes.  May return early
 * for any reason (a signal, a wake meant for an earlier use of the
 * address): the caller checks the word again.  False once until passed. */
bool lil__futex_wait(uint32_t *word, uint32_t val, const struct timespec *until);

/* Wake one thread sleeping on word. */
void lil__futex_wake(uint32_t *word);

#endif
