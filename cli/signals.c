/*
 * signals.c -- SIGINT and SIGTERM for the verbs that stop gracefully
 * (tick, worker, the loop verbs): one place installs their handler, and
 * puts the default back.  The servers (`lil mcp --http`, `lil serve`)
 * poll: for them a signal writes a byte to a self-pipe their poll watches.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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

/* ---- the self-pipe of a server's poll loop ---------------------------------- */

static int stop_pipe[2] = {-1, -1};
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    int saved = errno;

    (void)sig;
    stop_requested = 1;
    if (stop_pipe[1] >= 0)
        (void)!write(stop_pipe[1], "x", 1);
    errno = saved;
}

int cli_stop_pipe_open(struct cli_stop_pipe *sp)
{
    struct sigaction sa = {.sa_handler = on_stop_signal};

    if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    sigemptyset(&sa.sa_mask);
    stop_requested = 0;
    sigaction(SIGINT, &sa, &sp->old_int);
    sigaction(SIGTERM, &sa, &sp->old_term);
    return 0;
}

int cli_stop_pipe_fd(void)
{
    return stop_pipe[0];
}

void cli_stop_pipe_drain(void)
{
    char drain[64];

    while (read(stop_pipe[0], drain, sizeof(drain)) > 0) {
    }
}

bool cli_stop_requested(void)
{
    return stop_requested != 0;
}

void cli_stop_pipe_close(const struct cli_stop_pipe *sp)
{
    sigaction(SIGINT, &sp->old_int, NULL);
    sigaction(SIGTERM, &sp->old_term, NULL);
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    stop_pipe[0] = stop_pipe[1] = -1;
}
