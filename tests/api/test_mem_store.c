/*
 * test_mem_store.c -- the in-memory store ("mem:NAME") through lil.h: what
 * only it has.  Its runs stay for the life of the process (a store opened
 * again under the same name finds them, replayed; another name is another
 * store), a second writable open of a run is refused while the first holds
 * it, it lists, exports and imports runs, and it has no queue.  The rest of
 * the API suite runs against it too (mem_test_*, LIL_TEST_STORE=mem).
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "t.h"

static const char spec_text[] = "loopspec: \"0.1\"\n"
                                "id: q\n"
                                "pattern: react\n"
                                "state:\n"
                                "  vars:\n"
                                "    n: {type: int, init: 0}\n"
                                "body:\n"
                                "  - id: bump\n"
                                "    kind: shell\n"
                                "    cmd: \"true\"\n"
                                "    on_done:\n"
                                "      incr: n\n"
                                "terminate:\n"
                                "  signal: state-predicate\n"
                                "  until: \"${state.n >= 1}\"\n"
                                "caps:\n"
                                "  max_iterations: 3\n";

static int count_run(void *ud, const char *run_id)
{
    (void)run_id;
    (*(int *)ud)++;
    return 0;
}

static int runs_in(lil_store *st)
{
    int n = 0;

    return lil_store_foreach_run(st, count_run, &n) == LIL_OK ? n : -1;
}

/* A name no other test case of this process uses. */
static const char *where(const char *name)
{
    static char buf[2][256];
    static int next;
    char *b = buf[next++ % 2];

    snprintf(b, sizeof(buf[0]), "mem:%s/%s", t_tmpdir(), name);
    return b;
}

T_TEST(runs_outlive_the_store_handle)
{
    struct fn_ctx c = {.result = "R", .result_len = 1};
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_bytes out = {0};
    int never = 0;

    T_OK(lil_store_open(NULL, where("a"), &st));
    T_OK(lil_run_open(st, "r", NULL, &run));
    T_OK(lil_step(run, "s", fn_generic, &c, NULL));
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_OK(lil_store_open(NULL, where("a"), &st));
    T_EQ_I64(runs_in(st), 1);
    T_OK(lil_run_open(st, "r", NULL, &run));
    T_OK(lil_step(run, "s", fn_never, &never, &out)); /* replayed */
    T_EQ_MEM(out.data, out.len, "R", 1);
    T_EQ_I64(never, 0);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    T_OK(lil_store_open(NULL, where("b"), &st)); /* another name: empty */
    T_EQ_I64(runs_in(st), 0);
    lil_store_close(st);
}

T_TEST(a_held_run_is_locked_to_a_second_writer)
{
    lil_store *st = NULL;
    lil_run *run = NULL, *second = NULL;

    T_OK(lil_store_open(NULL, where("a"), &st));
    T_OK(lil_run_open(st, "r", NULL, &run));
    T_EQ_I64(lil_run_open(st, "r", NULL, &second), LIL_E_LOCKED);
    T_CHECK(second == NULL);
    T_OK(lil_run_close(run));
    T_OK(lil_run_open(st, "r", NULL, &second));
    T_OK(lil_run_close(second));
    lil_store_close(st);
}

static int collect(void *ud, const void *data, size_t len)
{
    lil_bytes *b = ud;
    unsigned char *p = realloc(b->data, b->len + len);

    if (!p)
        return 1;
    memcpy(p + b->len, data, len);
    b->data = p;
    b->len += len;
    return 0;
}

T_TEST(runs_move_in_and_out_and_there_is_no_queue)
{
    struct fn_ctx c = {.result = "R", .result_len = 1};
    lil_store *st = NULL, *dir = u_store("files");
    lil_run *run = NULL;
    lil_bytes image = {0};
    lil_check_report rep;
    lil_spec *spec = NULL;
    char *id = NULL;

    T_REQUIRE(dir);
    T_OK(lil_spec_parse(NULL, "q.yaml", spec_text, strlen(spec_text), NULL, &spec));
    T_REQUIRE(spec && lil_spec_ok(spec));
    T_OK(lil_store_open(NULL, where("a"), &st));
    T_OK(lil_run_open(st, "r", NULL, &run));
    T_OK(lil_step(run, "s", fn_generic, &c, NULL));
    T_OK(lil_run_close(run));
    memset(&rep, 0, sizeof(rep));
    rep.struct_size = sizeof(rep);
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_CHECK(rep.intact);
    T_OK(lil_run_export(st, "r", collect, &image));
    T_OK(lil_run_import(dir, image.data, image.len, "copied", &id));
    T_EQ_STR(id, "copied");
    T_EQ_I64(lil_loop_submit(st, spec, NULL, NULL), LIL_E_INVAL);
    T_CONTAINS(lil_errmsg(), "keeps no queue");
    lil_spec_free(spec);
    free(image.data);
    lil_free(id);
    lil_store_close(dir);
    lil_store_close(st);
}

T_MAIN()
