/*
 * effect_shell.c -- the shell effect (effect_shell.h).
 *
 * A run: check the options, check the working directory, run the program
 * to its end through os/proc.h's lil__proc_run (an exec failure of the
 * program's becomes a result; the group is killed when the time runs out
 * or a stream passes its cap), then build the result in a JSON scope bound
 * to the env.  The child never outlives the call, and neither does what it
 * leaves running in its process group (`sleep 1000 &`): killed when it
 * exits.  A daemon meant to outlive its step leaves the group (setsid).
 */
#include "effects/effect_shell.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "effects/text.h"
#include "lang/value.h"
#include "os/os.h"
#include "os/proc.h"

#define NS_PER_MS       1000000
#define JS_SAFE_INTEGER 9007199254740992.0 /* 2^53 */
#define NORMALIZE_DEPTH 4096               /* past jansson's parse depth */
#define JSON_LIKE_NODE  (JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL)

struct settings {
    int timeout_ms; /* < 0: none */
    int grace_ms;
    size_t cap;
};

/* What the child did. */
struct outcome {
    int exec_errno; /* the program could not be started */
    struct lil_proc_status st;
    struct lil_proc_output out, err;
    bool timed_out, over_cap;
};

/* ---- the program's own exec failures -------------------------------------------- */

static const struct {
    int e;
    const char *name;
} program_errnos[] = {
    {ENOENT, "ENOENT"},   {EACCES, "EACCES"},   {ENOEXEC, "ENOEXEC"},
    {ENOTDIR, "ENOTDIR"}, {ELOOP, "ELOOP"},     {ENAMETOOLONG, "ENAMETOOLONG"},
    {EISDIR, "EISDIR"},   {ETXTBSY, "ETXTBSY"}, {EPERM, "EPERM"},
    {E2BIG, "E2BIG"},     {ELIBBAD, "ELIBBAD"},
};

static const char *program_errno_name(int e)
{
    for (size_t i = 0; i < sizeof(program_errnos) / sizeof(program_errnos[0]); i++)
        if (program_errnos[i].e == e)
            return program_errnos[i].name;
    return NULL;
}

void lil__shell_signal_name(int sig, char buf[16])
{
    const char *abbrev = sigabbrev_np(sig);

    if (abbrev)
        snprintf(buf, 16, "SIG%s", abbrev);
    else
        snprintf(buf, 16, "SIG%d", sig);
}

/* ---- options -------------------------------------------------------------------- */

static lil_status check_cmd(struct lil_err *err, const struct lil_shell_cmd *cmd)
{
    if (!cmd || (cmd->script == NULL) == (cmd->command == NULL))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "shell: give either a script or a command with arguments");
    if (cmd->n_args && !cmd->args)
        return lil__seterr(err, LIL_E_INVAL, 0, "shell: %zu arguments but no array",
                           cmd->n_args);
    for (size_t i = 0; i < cmd->n_args; i++)
        if (!cmd->args[i])
            return lil__seterr(err, LIL_E_INVAL, 0, "shell: argument %zu is NULL", i);
    return LIL_OK;
}

static struct settings settings_of(const struct lil_shell_opts *o)
{
    struct settings s = {LIL_SHELL_TIMEOUT_DEFAULT_MS, LIL_SHELL_GRACE_DEFAULT_MS,
                         LIL_SHELL_CAP_DEFAULT};

    if (o && o->timeout_ms != 0)
        s.timeout_ms = o->timeout_ms < 0 ? -1 : o->timeout_ms;
    if (o && o->grace_ms != 0)
        s.grace_ms = o->grace_ms < 0 ? 0 : o->grace_ms;
    if (o && o->out_cap != 0)
        s.cap = o->out_cap;
    return s;
}

/* A directory that cannot be entered is lil's problem, not the program's
 * ENOENT: os/proc.c would report both as LIL_E_CHILD. */
static lil_status check_cwd(const struct lil_env *env, struct lil_err *err,
                            const char *cwd)
{
    int fd, e;

    if (!cwd)
        return LIL_OK;
    do
        fd = env->os->open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        e = errno;
        return lil__seterr(err, LIL_E_CHILD, e, "working directory %s: %s", cwd,
                           lil__errstr(e));
    }
    lil__os_close(env, fd);
    return LIL_OK;
}

/* "/bin/sh" "-c" script, or command and its arguments; NULL-terminated. */
static const char **make_argv(const struct lil_env *env,
                              const struct lil_shell_cmd *cmd)
{
    size_t n = cmd->script ? 3 : cmd->n_args + 1;
    const char **argv = lil__calloc(env, n + 1, sizeof(*argv));

    if (!argv)
        return NULL;
    if (cmd->script) {
        argv[0] = "/bin/sh";
        argv[1] = "-c";
        argv[2] = cmd->script;
    } else {
        argv[0] = cmd->command;
        for (size_t i = 0; i < cmd->n_args; i++)
            argv[i + 1] = cmd->args[i];
    }
    return argv;
}

/* ---- running -------------------------------------------------------------------- */

/* Run the program to its end (os/proc.h): the group killed when the time
 * runs out or a stream passes its cap.  An exec failure of the program's
 * own (ENOENT, EACCES, ...) is a result, not an error. */
static lil_status run_child(const struct lil_env *env, struct lil_err *err,
                            const struct lil_shell_cmd *cmd,
                            const struct lil_shell_opts *o, struct outcome *oc)
{
    struct settings s = settings_of(o);
    struct lil_proc_opts po = {0};
    struct lil_proc_result res;
    struct lil_err e = {0};
    const char **argv;
    lil_status rc = check_cwd(env, err, o ? o->cwd : NULL);

    if (rc != LIL_OK)
        return rc;
    argv = make_argv(env, cmd);
    if (!argv)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory starting a shell step");
    po.argv = argv;
    po.envp = o ? o->envp : NULL;
    po.cwd = o ? o->cwd : NULL;
    po.in = LIL_PROC_NULL;
    po.out = po.err = LIL_PROC_PIPE;
    po.out_cap = po.err_cap = s.cap;
    po.group = LIL_PROC_NEW_SESSION;
    po.stop_at_cap = true;
    po.end_group = true; /* `cmd &` ends with the step (setsid escapes) */
    po.running_pgid = o ? o->running_pgid : NULL;
    rc = lil__proc_run(env, &e, &po, s.timeout_ms, s.grace_ms, &res);
    lil__free(env, argv);
    if (rc == LIL_E_CHILD && program_errno_name(e.sys_errno)) {
        oc->exec_errno = e.sys_errno; /* a result, not an error */
        return LIL_OK;
    }
    if (rc != LIL_OK) {
        lil__copyerr(err, &e);
        return rc;
    }
    oc->st = res.status;
    oc->out = res.out;
    oc->err = res.err;
    oc->timed_out = res.status.timed_out;
    oc->over_cap = res.over_cap || res.out.truncated || res.err.truncated;
    return LIL_OK;
}

/* ---- the result ----------------------------------------------------------------- */

/* The bytes of o as Node decodes them, into b (a sequence cut by the cap
 * dropped). */
static lil_status decode(const struct lil_env *env, const struct lil_proc_output *o,
                         struct lil_buf *b)
{
    size_t len = o->truncated ? lil__text_cut_partial(o->data, o->len) : o->len;

    lil__buf_init(b, env, SIZE_MAX);
    return lil__text_from_utf8(b, o->data, len);
}

static json_t *buf_string(const struct lil_buf *b, size_t start, size_t end)
{
    return json_stringn_nocheck(b->data ? (const char *)b->data + start : "",
                                end - start);
}

/* A string of the decoded bytes of o; NULL on failure. */
static json_t *output_string(const struct lil_env *env, const struct lil_proc_output *o)
{
    struct lil_buf b;
    json_t *s = NULL;

    if (decode(env, o, &b) == LIL_OK)
        s = buf_string(&b, 0, b.len);
    lil__buf_free(&b);
    return s;
}

static void put(json_t *obj, const char *key, json_t *v, bool *failed)
{
    if (!v || json_object_set_new(obj, key, v) != 0)
        *failed = true;
}

static json_t *failure_code(const struct outcome *oc)
{
    if (oc->exec_errno)
        return json_string(program_errno_name(oc->exec_errno));
    if (oc->over_cap)
        return json_string(LIL_SHELL_MAXBUFFER_CODE);
    if (oc->timed_out || oc->st.signal)
        return json_integer(1);
    return json_integer(oc->st.code);
}

/* {stdout, stderr, code, ...}: every case but a success.  NULL on failure. */
static json_t *failure_result(const struct lil_env *env, const struct outcome *oc)
{
    json_t *o = json_object();
    bool failed = false;
    char sig[16];

    put(o, "stdout", output_string(env, &oc->out), &failed);
    put(o, "stderr", output_string(env, &oc->err), &failed);
    put(o, "code", failure_code(oc), &failed);
    if (!oc->over_cap && oc->timed_out) {
        put(o, "timedOut", json_true(), &failed);
    } else if (!oc->over_cap && oc->st.signal) {
        lil__shell_signal_name(oc->st.signal, sig);
        put(o, "signal", json_string(sig), &failed);
    }
    if (failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The integer JSON.stringify prints for a double, when it prints one. */
static bool js_integral(double d)
{
    return (d < 0 ? -d : d) <= JS_SAFE_INTEGER && d == (double)(long long)d;
}

/* Reals that JavaScript prints as integers become integers (in place). */
static void normalize_numbers(json_t *v, int depth)
{
    json_t *item;

    if (depth > NORMALIZE_DEPTH)
        return;
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++) {
        item = json_array_get(v, i);
        if (json_is_real(item) && js_integral(json_real_value(item)))
            json_array_set_new(v, i, json_integer((json_int_t)json_real_value(item)));
        else
            normalize_numbers(item, depth + 1);
    }
    for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
        item = json_object_iter_value(it);
        if (json_is_real(item) && js_integral(json_real_value(item)))
            json_object_iter_set_new(v, it,
                                     json_integer((json_int_t)json_real_value(item)));
        else
            normalize_numbers(item, depth + 1);
    }
}

/* JSON.parse(text): *out is the value, or NULL when the text is not JSON. */
static lil_status parse_like_node(const struct lil_env *env, struct lil_err *err,
                                  const char *text, size_t len, json_t **out)
{
    struct lil_err e = {0};
    lil_status rc;

    *out = NULL;
    if (len == 0)
        return LIL_OK; /* JSON.parse("") throws */
    rc = lil__json_parse(env, &e, LIL_E_INVAL, text, len, JSON_LIKE_NODE, NULL, out);
    if (rc == LIL_E_NOMEM) {
        lil__copyerr(err, &e);
        return rc;
    }
    if (rc != LIL_OK)
        return LIL_OK;
    if (json_is_real(*out) && js_integral(json_real_value(*out))) {
        json_t *n = json_integer((json_int_t)json_real_value(*out));
        json_decref(*out);
        *out = n;
    }
    normalize_numbers(*out, 0);
    return LIL_OK;
}

/* Exit 0: the JSON of the trimmed stdout, or {stdout: trimmed, code: 0}. */
static lil_status success_result(const struct lil_env *env, struct lil_err *err,
                                 const struct outcome *oc, json_t **out)
{
    struct lil_buf b;
    size_t start = 0, end;
    bool failed = false;
    lil_status rc = decode(env, &oc->out, &b);

    end = b.len;
    if (rc == LIL_OK && b.data) { /* NULL: no output at all */
        lil__js_trim((const char *)b.data, &start, &end);
        rc = parse_like_node(env, err, (const char *)b.data + start, end - start, out);
    }
    if (rc == LIL_OK && !*out) {
        *out = json_object();
        put(*out, "stdout", buf_string(&b, start, end), &failed);
        put(*out, "code", json_integer(0), &failed);
        if (failed) { /* out of memory: make_result says so */
            json_decref(*out);
            *out = NULL;
        }
    }
    lil__buf_free(&b);
    return rc;
}

static bool succeeded(const struct outcome *oc)
{
    return !oc->exec_errno && !oc->over_cap && !oc->timed_out && oc->st.signal == 0 &&
           oc->st.code == 0;
}

static lil_status make_result(const struct lil_env *env, struct lil_err *err,
                              const struct outcome *oc, json_t **out)
{
    struct lil_json_scope sc;
    lil_status rc = LIL_OK;

    lil__json_begin(&sc, env);
    if (succeeded(oc))
        rc = success_result(env, err, oc, out);
    else
        *out = failure_result(env, oc);
    if (lil__json_end(&sc) != LIL_OK || (rc == LIL_OK && !*out))
        rc = LIL_E_NOMEM;
    if (rc != LIL_OK) {
        json_decref(*out);
        *out = NULL;
        if (rc == LIL_E_NOMEM)
            lil__seterr(err, rc, 0, "out of memory building a shell step's result");
    }
    return rc;
}

static void fill_info(const struct outcome *oc, int64_t t0, struct lil_shell_info *info)
{
    if (!info)
        return;
    info->exec_errno = oc->exec_errno;
    info->exit_code = oc->exec_errno ? -1 : oc->st.code;
    info->signal = oc->st.signal;
    info->timed_out = oc->timed_out;
    info->over_cap = oc->over_cap;
    info->out_bytes = oc->out.total;
    info->err_bytes = oc->err.total;
    info->elapsed_ms = (lil__mono_ns() - t0) / NS_PER_MS;
}

lil_status lil__shell_run(const struct lil_env *env, struct lil_err *err,
                          const struct lil_shell_cmd *cmd,
                          const struct lil_shell_opts *opts,
                          struct lil_shell_info *info, json_t **out)
{
    struct outcome oc = {0};
    int64_t t0 = lil__mono_ns();
    lil_status rc;

    if (!out)
        return lil__seterr(err, LIL_E_INVAL, 0, "shell: out is NULL");
    *out = NULL;
    if (info)
        memset(info, 0, sizeof(*info));
    rc = check_cmd(err, cmd);
    if (rc == LIL_OK)
        rc = run_child(env, err, cmd, opts, &oc);
    if (rc == LIL_OK)
        rc = make_result(env, err, &oc, out);
    if (rc == LIL_OK)
        fill_info(&oc, t0, info);
    lil__proc_output_free(env, &oc.out);
    lil__proc_output_free(env, &oc.err);
    return rc;
}

/* ---- identity ------------------------------------------------------------------- */

static json_t *cmd_value(const struct lil_shell_cmd *cmd, bool *failed)
{
    json_t *args, *o;

    if (cmd->script)
        return json_string(cmd->script);
    args = json_array();
    for (size_t i = 0; i < cmd->n_args; i++)
        if (json_array_append_new(args, json_string(cmd->args[i])) != 0)
            *failed = true;
    o = json_object();
    put(o, "command", json_string(cmd->command), failed);
    put(o, "args", args, failed);
    return o;
}

lil_status lil__shell_identity(const struct lil_env *env, struct lil_err *err,
                               const struct lil_shell_cmd *cmd, struct lil_buf *out)
{
    struct lil_json_scope sc;
    bool failed = false;
    json_t *id;
    lil_status rc = check_cmd(err, cmd);

    if (rc != LIL_OK)
        return rc;
    lil__json_begin(&sc, env);
    id = json_object();
    put(id, "cmd", cmd_value(cmd, &failed), &failed);
    if (lil__json_end(&sc) != LIL_OK)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory building an identity");
    else if (failed)
        rc = lil__seterr(err, LIL_E_INVAL, 0, "shell: the command is not valid UTF-8");
    else
        rc = lil__json_canon(env, err, id, out);
    json_decref(id);
    return rc;
}
