/*
 * test_redact.c -- secret values kept out of texts and JSON values
 * (src/effects/redact.h): which names are secrets', the minimum length, the
 * longest value first, every occurrence, strings, numbers and object keys
 * at any depth of a JSON value, this process's environment, the buffer's cap,
 * and an allocation-failure sweep (LIL_E_NOMEM, nothing leaked).
 */
#include "t.h"

#include <stdlib.h>
#include <string.h>

#include "effects/redact.h"
#include "faults.h"

static lil_env *env(void)
{
    static lil_env *e;

    if (!e && lil_env_new(&e) != LIL_OK)
        abort();
    return e;
}

static const char *const vars[] = {
    "OPENAI_API_KEY=sk-abcdefgh",
    "github_token=ghp_0123456789",
    "MY_SECRET=sk-abcdefgh-longer", /* holds the API key's value */
    "DB_PASSWORD=hunter2",          /* 7 bytes: too short */
    "SMTP_PASSWD=mailpass123",
    "GCP_CREDENTIALS=cred-value-1",
    "OTHER_KEY=sk-abcdefgh", /* the same value twice: kept once */
    "PIN_TOKEN=12345678",    /* digits: also found in JSON numbers */
    "HOME=/home/someone-long",
    "PATH=/usr/bin:/bin",
    "BAD_TOKEN=\xff\xfe-not-utf8", /* not UTF-8: not redacted */
    "NO_EQUALS_TOKEN",
    NULL,
};

static char *redacted(const struct lil_redact *r, const char *text)
{
    struct lil_buf b;
    struct lil_err err = {0};
    char *s;

    lil__buf_init(&b, env(), 1 << 20);
    T_OK(lil__redact_text(r, &err, text, strlen(text), &b));
    s = strdup(b.data ? (const char *)b.data : "");
    lil__buf_free(&b);
    return s;
}

static void expect(const struct lil_redact *r, const char *text, const char *want)
{
    char *got = redacted(r, text);

    T_EQ_STR(got, want);
    free(got);
}

T_TEST(secret_names)
{
    static const char *const yes[] = {
        "OPENAI_API_KEY",  "api_key",  "KEYRING",
        "MONKEY",          "GH_TOKEN", "Secret",
        "DB_PASSWORD",     "passwd",   "AWS_SHARED_CREDENTIALS_FILE",
        "LIL_JOURNAL_KEY",
    };
    static const char *const no[] = {"PATH", "HOME", "KE_Y", "TOKE",
                                     "PASS", "CRED", ""};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        T_CHECK(lil__redact_name_is_secret(yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        T_CHECK(!lil__redact_name_is_secret(no[i], strlen(no[i])));
    /* Only the name counts, not what follows it. */
    T_CHECK(!lil__redact_name_is_secret("X_KEY", 2));
}

T_TEST(text)
{
    struct lil_redact *r = NULL;
    struct lil_err err = {0};

    T_OK(lil__redact_new(env(), &err, vars, &r));
    T_REQUIRE(r);
    T_EQ_I64(lil__redact_count(r), 6);
    expect(r, "", "");
    expect(r, "nothing to hide", "nothing to hide");
    expect(r, "curl -H 'Authorization: Bearer sk-abcdefgh' x",
           "curl -H 'Authorization: Bearer [redacted]' x");
    /* The longest value that starts first wins. */
    expect(r, "sk-abcdefgh-longer!", "[redacted]!");
    expect(r, "sk-abcdefgh-long", "[redacted]-long");
    /* Every occurrence, at the ends, side by side. */
    expect(r, "ghp_0123456789ghp_0123456789 and mailpass123",
           "[redacted][redacted] and [redacted]");
    expect(r, "cred-value-1", "[redacted]");
    /* Too short, not a secret's name, not UTF-8: left alone. */
    expect(r, "hunter2 /home/someone-long", "hunter2 /home/someone-long");
    expect(r, "sk-abcdefg", "sk-abcdefg");
    lil__redact_free(r);
    lil__redact_free(NULL);
}

/* One value the caller holds (an API key): any length, every occurrence,
 * even where it is a part of "[redacted]" itself. */
static void expect_value(const char *value, const char *text, const char *want)
{
    struct lil_buf b;
    struct lil_err err = {0};

    lil__buf_init(&b, env(), SIZE_MAX);
    T_OK(lil__redact_value(&err, value, strlen(value), text, strlen(text), &b));
    T_EQ_STR(b.data ? (const char *)b.data : "", want);
    lil__buf_free(&b);
}

T_TEST(one_value)
{
    expect_value("k1", "k1 and k1k1.", "[redacted] and [redacted][redacted].");
    expect_value("red", "red", "[redacted]");
    expect_value("", "unchanged", "unchanged");
    expect_value("sk-x", "", "");
}

static void expect_json(const char *in, const char *want)
{
    struct lil_redact *r = NULL;
    struct lil_err err = {0};
    struct lil_buf b;
    json_t *v = NULL;

    T_OK(lil__redact_new(env(), &err, vars, &r));
    T_OK(lil__json_parse(env(), &err, LIL_E_INVAL, in, strlen(in), JSON_DECODE_ANY,
                         NULL, &v));
    T_OK(lil__redact_json(r, &err, &v));
    lil__buf_init(&b, env(), 1 << 20);
    T_OK(lil__json_canon(env(), &err, v, &b));
    T_EQ_STR((const char *)b.data, want);
    lil__buf_free(&b);
    json_decref(v);
    lil__redact_free(r);
}

T_TEST(json_strings)
{
    expect_json("{\"a\":[\"x sk-abcdefgh\",1,{\"t\":\"ghp_0123456789\"}],"
                "\"n\":null,\"s\":\"plain\"}",
                "{\"a\":[\"x [redacted]\",1,{\"t\":\"[redacted]\"}],\"n\":null,"
                "\"s\":\"plain\"}");
    expect_json("\"mailpass123\"", "\"[redacted]\"");
    expect_json("[]", "[]");
}

/* A key that holds a secret is renamed; renamed keys that would meet (with
 * each other or with a key already there) are told apart by #2, #3. */
T_TEST(json_keys)
{
    expect_json("{\"sk-abcdefgh\":1,\"n\":null}", "{\"[redacted]\":1,\"n\":null}");
    expect_json("{\"x\":{\"user ghp_0123456789\":\"ok\"}}",
                "{\"x\":{\"user [redacted]\":\"ok\"}}");
    expect_json("{\"[redacted]\":0,\"cred-value-1\":1,\"mailpass123\":2}",
                "{\"[redacted]\":0,\"[redacted]#2\":1,\"[redacted]#3\":2}");
    /* the value under a renamed key is redacted too */
    expect_json("{\"sk-abcdefgh\":\"sk-abcdefgh\"}", "{\"[redacted]\":\"[redacted]\"}");
}

/* A secret of digits read as a number: the number becomes "[redacted]", at
 * the top too; numbers that do not hold it stay numbers. */
T_TEST(json_numbers)
{
    expect_json("12345678", "\"[redacted]\"");
    expect_json("[12345678,1234567,9123456789,-12345678,12345678.5,1.5]",
                "[\"[redacted]\",1234567,\"[redacted]\",\"[redacted]\",\"[redacted]\","
                "1.5]");
    expect_json("{\"pin\":12345678,\"12345678\":true}",
                "{\"[redacted]\":true,\"pin\":\"[redacted]\"}");
}

T_TEST(this_process_environment)
{
    struct lil_buf b;
    struct lil_err err = {0};
    const char text[] = "token=lil-test-value-42;";

    setenv("LIL_TEST_REDACT_TOKEN", "lil-test-value-42", 1);
    lil__buf_init(&b, env(), 1 << 20);
    T_OK(lil__redact_env_values(env(), &err, NULL, text, strlen(text), &b));
    T_EQ_STR((const char *)b.data, "token=[redacted];");
    lil__buf_free(&b);
    unsetenv("LIL_TEST_REDACT_TOKEN");
}

T_TEST(cap)
{
    struct lil_redact *r = NULL;
    struct lil_err err = {0};
    struct lil_buf b;

    T_OK(lil__redact_new(env(), &err, vars, &r));
    lil__buf_init(&b, env(), 12);
    T_OK(lil__buf_add(&b, "ab", 2));
    /* "[redacted]" grows the text past the cap: out keeps what it had. */
    T_EQ_I64(lil__redact_text(r, &err, "x ghp_0123456789", 16, &b), LIL_E_TOOBIG);
    T_EQ_STR((const char *)b.data, "ab");
    T_CONTAINS(err.msg, "limit");
    lil__buf_free(&b);
    lil__redact_free(r);
}

/* Allocation k fails in turn: LIL_E_NOMEM or the fault-free result, and
 * nothing left live. */
T_TEST(allocation_failures)
{
    static const char in[] =
        "[\"ghp_0123456789\",{\"k\":\"a mailpass123 b\",\"sk-abcdefgh\":12345678}]";
    static const char want[] =
        "[\"[redacted]\",{\"[redacted]\":\"[redacted]\",\"k\":\"a [redacted] b\"}]";
    unsigned long k;

    for (k = 1; k < 100000; k++) {
        struct t_alloc a = {0};
        lil_env *e = NULL;
        struct lil_redact *r = NULL;
        struct lil_err err = {0};
        struct lil_buf b;
        json_t *v = NULL;
        lil_status rc;

        T_REQUIRE(lil_env_new(&e) == LIL_OK && t_alloc_install(e, &a) == LIL_OK);
        T_OK(lil__json_parse(e, &err, LIL_E_INVAL, in, strlen(in), 0, NULL, &v));
        lil__buf_init(&b, e, 1 << 20);
        a.fail_at = a.calls + k;
        rc = lil__redact_new(e, &err, vars, &r);
        if (rc == LIL_OK)
            rc = lil__redact_json(r, &err, &v);
        if (rc == LIL_OK)
            rc = lil__redact_text(r, &err, "x ghp_0123456789", 16, &b);
        a.fail_at = 0;
        T_EQ_I64(rc, a.failed ? LIL_E_NOMEM : LIL_OK);
        if (rc == LIL_OK) {
            T_EQ_STR((const char *)b.data, "x [redacted]");
            lil__buf_reset(&b);
            T_OK(lil__json_canon(e, &err, v, &b));
            T_EQ_STR((const char *)b.data, want);
        }
        lil__buf_free(&b);
        json_decref(v);
        lil__redact_free(r);
        lil_env_free(e);
        T_EQ_I64(a.live, 0);
        if (!a.failed)
            break;
    }
    T_CHECK(k > 5);
}

T_MAIN()
