/*
 * progress.c -- the loop verbs' progress on stderr (progress.h).
 */
#include "progress.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "safe_out.h"

#define SAY_MAX 1400 /* bytes of what a signal handler writes */

static struct {
    pthread_mutex_t mu;
    enum progress_mode mode;
    bool ticking;
    pthread_t ticker;
    int64_t iteration;
    char step[120], effect[16], note[200];
    bool in_effect;
    int64_t effect_t0_ns; /* monotonic */
    int64_t tokens;
    int64_t call_tokens; /* the streamed agent call in flight's, or 0 */
    double usd;
    char stopping[160];      /* the first Ctrl-C's line */
    char abandoned[SAY_MAX]; /* the second's, as of the last event */
    char hint[600];
} pg = {.mu = PTHREAD_MUTEX_INITIALIZER};

bool progress_mode_of(const char *word, enum progress_mode *out)
{
    bool tty = isatty(2) != 0;

    if (!word || strcmp(word, "auto") == 0)
        *out = tty ? PROGRESS_TERM : PROGRESS_PLAIN;
    else if (strcmp(word, "off") == 0)
        *out = PROGRESS_OFF;
    else if (strcmp(word, "plain") == 0)
        *out = PROGRESS_PLAIN;
    else if (strcmp(word, "json") == 0)
        *out = PROGRESS_JSON;
    else
        return false;
    return true;
}

void progress_fmt_usd(double usd, char *buf, size_t cap)
{
    int digits = 2;

    if (!(usd > 0)) {
        snprintf(buf, cap, "$0");
        return;
    }
    if (usd < 0.01) { /* the first non-zero digit, and one more */
        double scaled = usd * 100;

        while (scaled < 1 && digits < 11) {
            scaled *= 10;
            digits++;
        }
        digits++;
        if (scaled < 1) { /* below $0.000000000001: the digits would be 0 */
            snprintf(buf, cap, "$%.1e", usd);
            return;
        }
    }
    snprintf(buf, cap, "$%.*f", digits, usd);
}

static int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- what a signal handler writes ---------------------------------------------- */

/* The second Ctrl-C's line as things stand (under mu). */
static void set_abandoned(void)
{
    if (pg.in_effect)
        snprintf(pg.abandoned, sizeof(pg.abandoned),
                 "lil: abandoned %s %s of iteration %lld: its outcome is unknown, "
                 "the run is left uncertain; decide it with `%s --retry | "
                 "--assume-done --result-json JSON | --abort --reason R`\n",
                 pg.effect, pg.step[0] ? pg.step : "(on_exit)", (long long)pg.iteration,
                 pg.hint);
    else
        snprintf(pg.abandoned, sizeof(pg.abandoned),
                 "lil: abandoned between effects: nothing is left uncertain\n");
}

static void say(const char *text)
{
    size_t len = strlen(text);

    if (pg.mode == PROGRESS_TERM && write(2, "\r\033[K", 4) < 0)
        return;
    while (len > 0) {
        ssize_t n = write(2, text, len);
        if (n <= 0)
            return;
        text += n;
        len -= (size_t)n;
    }
}

void progress_say_stopping(void)
{
    say(pg.stopping);
}

void progress_say_abandoned(void)
{
    say(pg.abandoned);
}

/* ---- the terminal line ---------------------------------------------------------- */

/* Draw the line (under mu). */
static void draw(void)
{
    char usd[32], clock[32] = "", what[300], streamed[48] = "";
    int64_t s;

    progress_fmt_usd(pg.usd, usd, sizeof(usd));
    if (pg.in_effect) {
        s = (mono_ns() - pg.effect_t0_ns) / 1000000000;
        snprintf(clock, sizeof(clock), "  %lld:%02lld", (long long)(s / 60),
                 (long long)(s % 60));
        snprintf(what, sizeof(what), "  %s %s", pg.effect, pg.step);
    } else {
        snprintf(what, sizeof(what), "%s%s", pg.note[0] ? "  " : "", pg.note);
    }
    if (pg.in_effect && pg.call_tokens > 0)
        snprintf(streamed, sizeof(streamed), " (+%lld streaming)",
                 (long long)pg.call_tokens);
    fprintf(stderr, "\r\033[Klil: iteration %lld%s%s  tokens %lld%s  %s",
            (long long)pg.iteration, what, clock, (long long)pg.tokens, streamed, usd);
    (void)fflush(stderr);
}

static void *tick(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec one = {1, 0};

        nanosleep(&one, NULL);
        pthread_mutex_lock(&pg.mu);
        if (!pg.ticking) {
            pthread_mutex_unlock(&pg.mu);
            return NULL;
        }
        if (pg.in_effect)
            draw();
        pthread_mutex_unlock(&pg.mu);
    }
}

void progress_start(enum progress_mode mode, const char *hint)
{
    pthread_mutex_lock(&pg.mu);
    pg.mode = mode;
    snprintf(pg.hint, sizeof(pg.hint), "%s", hint);
    snprintf(pg.stopping, sizeof(pg.stopping),
             "lil: stopping after the current effect (Ctrl-C again to abandon it)\n");
    set_abandoned();
    pg.ticking =
        mode == PROGRESS_TERM && pthread_create(&pg.ticker, NULL, tick, NULL) == 0;
    pthread_mutex_unlock(&pg.mu);
}

/* ---- one line per event ---------------------------------------------------------- */

static const char *event_name(lil_loop_event_kind k)
{
    switch (k) {
    case LIL_LOOP_EV_ITERATION:
        return "iteration_start";
    case LIL_LOOP_EV_EFFECT:
        return "effect_start";
    case LIL_LOOP_EV_EFFECT_END:
        return "effect_end";
    case LIL_LOOP_EV_SLEEP:
        return "sleep";
    case LIL_LOOP_EV_PAUSE:
        return "pause";
    case LIL_LOOP_EV_CAP:
        return "cap";
    case LIL_LOOP_EV_TOKENS:
        return "tokens";
    }
    return "event";
}

static void print_json(const lil_loop_event *ev)
{
    json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:f}", "event", event_name(ev->kind),
                          "iteration", (json_int_t)ev->iteration, "elapsed_ms",
                          (json_int_t)ev->elapsed_ms, "tokens", (json_int_t)ev->tokens,
                          "usd", ev->usd);
    char *text;

    if (ev->step)
        json_object_set_new(o, "step", json_string(ev->step));
    if (ev->effect)
        json_object_set_new(o, "effect", json_string(ev->effect));
    if (ev->kind == LIL_LOOP_EV_EFFECT_END || ev->kind == LIL_LOOP_EV_SLEEP)
        json_object_set_new(o, ev->kind == LIL_LOOP_EV_SLEEP ? "ms" : "dur_ms",
                            json_integer(ev->value));
    if (ev->kind == LIL_LOOP_EV_TOKENS)
        json_object_set_new(o, "call_tokens", json_integer(ev->value));
    if (ev->text)
        json_object_set_new(o, ev->kind == LIL_LOOP_EV_EFFECT_END ? "note" : "reason",
                            json_string(ev->text));
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (text)
        fprintf(stderr, "%s\n", text);
    free(text);
    json_decref(o);
}

static void print_plain(const lil_loop_event *ev)
{
    char dur[32], safe[400], usd[32];
    const char *step = ev->step ? ev->step : "(on_exit)";

    cli_fmt_printable(ev->text ? ev->text : "", ev->text ? strlen(ev->text) : 0, 300,
                      safe, sizeof(safe));
    fprintf(stderr, "lil: +%.1fs ", (double)ev->elapsed_ms / 1000.0);
    switch (ev->kind) {
    case LIL_LOOP_EV_ITERATION:
        progress_fmt_usd(ev->usd, usd, sizeof(usd));
        fprintf(stderr, "iteration %lld starts  tokens %lld  %s\n",
                (long long)ev->iteration, (long long)ev->tokens, usd);
        break;
    case LIL_LOOP_EV_EFFECT:
        fprintf(stderr, "iteration %lld: %s %s starts\n", (long long)ev->iteration,
                ev->effect ? ev->effect : "?", step);
        break;
    case LIL_LOOP_EV_EFFECT_END:
        cli_fmt_dur((uint64_t)(ev->value > 0 ? ev->value : 0) * 1000, dur, sizeof(dur));
        fprintf(stderr, "iteration %lld: %s %s ended after %s%s%s\n",
                (long long)ev->iteration, ev->effect ? ev->effect : "?", step, dur,
                ev->text ? ": " : "", safe);
        break;
    case LIL_LOOP_EV_SLEEP:
        cli_fmt_dur((uint64_t)(ev->value > 0 ? ev->value : 0) * 1000, dur, sizeof(dur));
        fprintf(stderr, "sleeping %s\n", dur);
        break;
    case LIL_LOOP_EV_PAUSE:
        fprintf(stderr, "iteration %lld: paused: %s\n", (long long)ev->iteration, safe);
        break;
    case LIL_LOOP_EV_CAP:
        fprintf(stderr, "cap tripped: %s\n", safe);
        break;
    case LIL_LOOP_EV_TOKENS:
        fprintf(stderr, "iteration %lld: %s %s streaming: %lld tokens so far\n",
                (long long)ev->iteration, ev->effect ? ev->effect : "?", step,
                (long long)ev->value);
        break;
    }
}

/* Keep what the term line and the second Ctrl-C show (under mu). */
static void keep(const lil_loop_event *ev)
{
    pg.iteration = ev->iteration;
    pg.tokens = ev->tokens;
    pg.usd = ev->usd;
    if (ev->kind == LIL_LOOP_EV_TOKENS) { /* the effect in flight's so far */
        pg.call_tokens = ev->value;
        return;
    }
    pg.call_tokens = 0;
    if (ev->kind == LIL_LOOP_EV_EFFECT) {
        pg.in_effect = true;
        pg.effect_t0_ns = mono_ns();
        snprintf(pg.effect, sizeof(pg.effect), "%s", ev->effect ? ev->effect : "?");
        cli_fmt_printable(ev->step ? ev->step : "", ev->step ? strlen(ev->step) : 0, 80,
                          pg.step, sizeof(pg.step));
        pg.note[0] = '\0';
    } else if (ev->kind == LIL_LOOP_EV_EFFECT_END) {
        pg.in_effect = false;
        cli_fmt_printable(ev->text ? ev->text : "", ev->text ? strlen(ev->text) : 0,
                          120, pg.note, sizeof(pg.note));
    } else if (ev->kind == LIL_LOOP_EV_SLEEP) {
        snprintf(pg.note, sizeof(pg.note), "sleeping %llds",
                 (long long)(ev->value / 1000));
    } else if (ev->kind == LIL_LOOP_EV_ITERATION) {
        pg.note[0] = '\0';
    }
    set_abandoned();
}

void progress_event(void *ud, const lil_loop_event *ev)
{
    (void)ud;
    pthread_mutex_lock(&pg.mu);
    keep(ev);
    if (pg.mode == PROGRESS_PLAIN)
        print_plain(ev);
    else if (pg.mode == PROGRESS_JSON)
        print_json(ev);
    else if (pg.mode == PROGRESS_TERM)
        draw();
    (void)fflush(stderr);
    pthread_mutex_unlock(&pg.mu);
}

void progress_end(const lil_loop_result *res)
{
    bool join;

    pthread_mutex_lock(&pg.mu);
    join = pg.ticking;
    pg.ticking = false;
    pthread_mutex_unlock(&pg.mu);
    if (join)
        pthread_join(pg.ticker, NULL);
    if (pg.mode == PROGRESS_TERM)
        cli_term_raw(stderr, "\r\033[K");
    if (!res)
        return;
    if (pg.mode == PROGRESS_PLAIN)
        fprintf(stderr, "lil: end: %s at iteration %lld%s%s\n",
                lil_loop_status_name(res->status), (long long)res->iteration,
                res->reason ? ": " : "", res->reason ? res->reason : "");
    else if (pg.mode == PROGRESS_JSON) {
        json_t *o = json_pack("{s:s, s:s, s:I, s:s?}", "event", "end", "status",
                              lil_loop_status_name(res->status), "iteration",
                              (json_int_t)res->iteration, "reason", res->reason);
        char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

        if (text)
            fprintf(stderr, "%s\n", text);
        free(text);
        json_decref(o);
    }
    (void)fflush(stderr);
}
