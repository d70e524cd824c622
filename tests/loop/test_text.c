/*
 * test_text.c -- bytes read as Node reads UTF-8 (src/effects/text.h): valid
 * text unchanged, one U+FFFD per maximal ill-formed subpart (the WHATWG
 * decoder's rule, which Node follows), and the cut of a sequence left
 * incomplete by an output cap.
 */
#include "t.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "effects/text.h"

/* One env for the whole file (released at exit). */
static lil_env *env(void)
{
    static lil_env *e;

    if (!e && lil_env_new(&e) != LIL_OK)
        abort();
    return e;
}

#define R "\xEF\xBF\xBD" /* U+FFFD */

struct vec {
    const char *in;
    size_t len; /* 0: strlen */
    const char *want;
    size_t want_len;
};

static void check(const char *in, size_t len, const char *want, size_t want_len)
{
    struct lil_buf b;

    lil__buf_init(&b, env(), 1 << 20);
    T_OK(lil__text_from_utf8(&b, in, len));
    T_EQ_MEM(b.data ? (const char *)b.data : "", b.len, want, want_len);
    lil__buf_free(&b);
}

T_TEST(valid_text_is_kept)
{
    check("", 0, "", 0);
    check("hello\n", 6, "hello\n", 6);
    check("a\0b", 3, "a\0b", 3);                     /* NUL bytes too */
    check("\xEF\xBB\xBF{}", 5, "\xEF\xBB\xBF{}", 5); /* a BOM stays */
    check("\xE2\x82\xAC \xF0\x9F\x98\x80", 8, "\xE2\x82\xAC \xF0\x9F\x98\x80", 8);
    check("\xF4\x8F\xBF\xBF", 4, "\xF4\x8F\xBF\xBF", 4); /* U+10FFFF */
}

T_TEST(maximal_subparts)
{
    static const struct vec v[] = {
        {"\x80", 0, R, 0},
        {"\xBF\x80", 0, R R, 0},
        {"\xC0\x80", 0, R R, 0}, /* C0, C1 never lead */
        {"\xC1\xBF", 0, R R, 0},
        {"\xC3", 0, R, 0}, /* cut at the end */
        {"\xC3\x28", 0, R "(", 0},
        {"\xE0\x80\x80", 0, R R R, 0}, /* overlong: E0 wants A0..BF */
        {"\xE0\xA0", 0, R, 0},         /* a valid start, cut */
        {"\xE0\xA0\x41", 0, R "A", 0},
        {"\xED\xA0\x80", 0, R R R, 0}, /* a surrogate: ED wants 80..9F */
        {"\xED\x9F\xBF", 0, "\xED\x9F\xBF", 0},
        {"\xF0\x9F\x98", 0, R, 0}, /* one U+FFFD for the three */
        {"\xF0\x9F\x98"
         "A",
         0, R "A", 0},
        {"\xF0\x80\x80\x80", 0, R R R R, 0}, /* F0 wants 90..BF */
        {"\xF4\x90\x80\x80", 0, R R R R, 0}, /* past U+10FFFF */
        {"\xF5\x80", 0, R R, 0},
        {"\xFF", 0, R, 0},
        {"\xE1\x80\xE2\x82\xAC", 0, R "\xE2\x82\xAC", 0},
        {"a\xFF"
         "b\xC3\xA9",
         0, "a" R "b\xC3\xA9", 0},
    };

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        check(v[i].in, strlen(v[i].in), v[i].want, strlen(v[i].want));
}

T_TEST(appends_and_respects_the_cap)
{
    struct lil_buf b;

    lil__buf_init(&b, env(), 8);
    T_OK(lil__buf_add(&b, "ab", 2));
    T_OK(lil__text_from_utf8(&b, "\xFF", 1));
    T_EQ_STR((const char *)b.data, "ab" R);
    /* 3 more bytes would fit, 6 do not: the buffer keeps what it had. */
    T_EQ_I64(lil__text_from_utf8(&b, "\xFF\xFF", 2), LIL_E_TOOBIG);
    T_EQ_STR((const char *)b.data, "ab" R);
    T_EQ_I64(b.len, 5);
    lil__buf_free(&b);
}

T_TEST(cut_partial)
{
    T_EQ_I64(lil__text_cut_partial("", 0), 0);
    T_EQ_I64(lil__text_cut_partial("abc", 3), 3);
    T_EQ_I64(lil__text_cut_partial("abc\xC3", 4), 3);
    T_EQ_I64(lil__text_cut_partial("abc\xC3\xA9", 5), 5);
    T_EQ_I64(lil__text_cut_partial("abc\xE2\x82", 5), 3);
    T_EQ_I64(lil__text_cut_partial("abc\xE2", 4), 3);
    T_EQ_I64(lil__text_cut_partial("abc\xE2\x82\xAC", 6), 6);
    T_EQ_I64(lil__text_cut_partial("abc\xF0\x9F\x98", 6), 3);
    T_EQ_I64(lil__text_cut_partial("\xF0\x9F\x98\x80", 4), 4);
    T_EQ_I64(lil__text_cut_partial("\xC3", 1), 0);
    /* Not a valid start: kept, and decoded to U+FFFD like any bad byte. */
    T_EQ_I64(lil__text_cut_partial("abc\x80", 4), 4);
    T_EQ_I64(lil__text_cut_partial("ab\xED\xA0", 4), 4);
    T_EQ_I64(lil__text_cut_partial("ab\xFF", 3), 3);
    T_EQ_I64(lil__text_cut_partial("\x80\x80\x80", 3), 3);
}

T_MAIN()
