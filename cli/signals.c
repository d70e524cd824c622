/*
 * signals.c -- SIGINT and SIGTERM for the verbs that stop gracefully
 * (tick, worker, the loop verbs): one place installs their handler, and
 * puts the default back.
 */
#include <signal.h>
#include <string.h>

#include "cli.h"

void cli_catch_signals(void (*fn)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn ? fn : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
