/*
 * test_http_noload.c -- the http effect when libcurl cannot be loaded.
 * This executable links its own copy of src/effects/curl_dl.c built to look
 * for a soname that does not exist (CMakeLists.txt), in place of the
 * library's: every request is then LIL_E_IO naming the library, and what
 * needs no network (check, identity, redaction) still works.
 */
#include <string.h>

#include "base/buf.h"
#include "effects/effect_http.h"
#include "json/json.h"
#include "t.h"

T_TEST(missing_libcurl_is_a_clear_io_error)
{
    json_t *req = json_loads("{\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/\","
                             "\"headers\":{\"Authorization\":\"x\"}}",
                             0, NULL);
    lil_env *env = NULL;
    struct lil_err err;
    struct lil_buf id;
    json_t *out = NULL;

    T_REQUIRE(req && lil_env_new(&env) == LIL_OK);
    for (int i = 0; i < 2; i++) { /* the same answer every time */
        T_EQ_I64(lil__http_perform(env, &err, req, NULL, &out), LIL_E_IO);
        T_CHECK(out == NULL);
        T_CONTAINS(err.msg, "cannot load libcurl-none-such.so.4 (libcurl), needed for "
                            "http effects: ");
        T_CONTAINS(err.msg, "libcurl-none-such.so.4: cannot open shared object file");
    }
    lil__buf_init(&id, env, 1000);
    T_EQ_I64(lil__http_identity(env, &err, req, NULL, 0, &id), LIL_OK);
    T_CONTAINS((const char *)id.data, "\"Authorization\":\"sha256:");
    lil__buf_free(&id);
    json_decref(req);
    lil_env_free(env);
}

T_MAIN()
