/*
 * srcmap.c -- the offset map of a scalar (srcmap.h): a second scan of the
 * scalar's source bytes that follows libyaml's scanner
 * (yaml_parser_scan_plain_scalar, _flow_scalar, _block_scalar) and checks
 * every byte it produces against the value libyaml gave.
 *
 * Flow styles (plain, single- and double-quoted): blanks before a line
 * break are dropped, a line break followed by n >= 1 empty lines gives n
 * "\n", a lone one gives " ", the next line's leading blanks are skipped;
 * double quotes decode escapes and an escaped line break gives only the
 * "\n" of the empty lines after it.  Block styles: the header (| or >,
 * chomping and indentation indicators, a comment), then lines at the
 * block's indentation (given, or that of the first non-empty line); > folds
 * a line break between two lines that do not start with a blank.
 *
 * Work is linear in the scalar's bytes (a run of blanks or breaks is read
 * at most twice).
 */
#include "loopspec/srcmap.h"

#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/utf8.h"

struct scan {
    const struct lil_env *env;
    const struct lil_srcmap_in *in;
    const char *t;
    size_t lim;            /* the scan stops here (bytes) */
    struct lil_pos cur;    /* the next source byte */
    struct lil_pos after;  /* just past the last source that gave value bytes */
    size_t vlen;           /* value bytes produced so far */
    struct lil_srcspan *v; /* the map */
    size_t n, cap;
    bool bad, nomem;
};

/* ------------------------------------------------------------------------ */
/* Characters                                                               */

static size_t char_len(const char *s, size_t n)
{
    uint32_t cp;
    size_t k = lil__utf8_decode((const unsigned char *)s, n, &cp);

    return k ? k : 1;
}

size_t lil__srcmap_chars(const char *s, size_t n)
{
    size_t chars = 0;

    for (size_t i = 0; i < n; i += char_len(s + i, n - i))
        chars++;
    return chars;
}

/* The byte k bytes ahead, or -1 at the scan's limit. */
static int peek(const struct scan *sc, size_t k)
{
    size_t at = sc->cur.offset + k;

    return at < sc->lim ? (unsigned char)sc->t[at] : -1;
}

static bool at_end(const struct scan *sc)
{
    return sc->cur.offset >= sc->lim;
}

static bool is_blank(const struct scan *sc)
{
    int c = peek(sc, 0);

    return c == ' ' || c == '\t';
}

/* Bytes of the line break at the cursor (CR LF, LF, CR), or 0. */
static size_t break_len(const struct scan *sc)
{
    int c = peek(sc, 0);

    if (c == '\r')
        return peek(sc, 1) == '\n' ? 2 : 1;
    return c == '\n';
}

/* Move over one character; lines are counted at LF. */
static void step(struct scan *sc)
{
    size_t off = sc->cur.offset;

    if (off >= sc->lim)
        return;
    if (sc->t[off] == '\n') {
        sc->cur.line++;
        sc->cur.col = 1;
        sc->cur.offset++;
        return;
    }
    sc->cur.offset += char_len(sc->t + off, sc->in->len - off);
    sc->cur.col++;
}

static void skip_break(struct scan *sc)
{
    for (size_t k = break_len(sc); k > 0; k--)
        step(sc);
}

static unsigned col0(const struct scan *sc)
{
    return sc->cur.col - 1;
}

/* ------------------------------------------------------------------------ */
/* The map                                                                  */

static void push(struct scan *sc, struct lil_pos at, bool verbatim)
{
    struct lil_srcspan *v =
        lil__grow(sc->env, sc->v, &sc->cap, sc->n, sizeof(*sc->v), 16);

    if (!v) {
        sc->nomem = sc->bad = true;
        return;
    }
    sc->v = v;
    v[sc->n].val = sc->vlen;
    v[sc->n].pos = at;
    v[sc->n].verbatim = verbatim;
    sc->n++;
}

/* Value bytes b[0..k) come from `at`: they must be the value's next bytes. */
static void emit(struct scan *sc, const char *b, size_t k, struct lil_pos at,
                 bool verbatim)
{
    const struct lil_srcspan *last = sc->n ? &sc->v[sc->n - 1] : NULL;

    if (sc->bad)
        return;
    if (k > sc->in->value_len - sc->vlen ||
        memcmp(sc->in->value + sc->vlen, b, k) != 0) {
        sc->bad = true;
        return;
    }
    if (!(verbatim && last && last->verbatim && last->pos.line == at.line &&
          last->pos.offset + (sc->vlen - last->val) == at.offset))
        push(sc, at, verbatim);
    sc->vlen += k;
}

/* The character at the cursor stands for itself. */
static void copy_char(struct scan *sc)
{
    struct lil_pos at = sc->cur;

    step(sc);
    emit(sc, sc->t + at.offset, sc->cur.offset - at.offset, at, true);
    sc->after = sc->cur;
}

/* ------------------------------------------------------------------------ */
/* Flow styles: plain, single- and double-quoted                            */

/* Skip blanks and line breaks; with put, each break gives "\n".  Returns
 * the number of breaks. */
static size_t flow_breaks(struct scan *sc, bool put)
{
    size_t k = 0;

    for (;;) {
        while (is_blank(sc))
            step(sc);
        if (!break_len(sc) || sc->bad)
            return k;
        if (put)
            emit(sc, "\n", 1, sc->cur, false);
        skip_break(sc);
        k++;
    }
}

/* At a line break: a lone one folds to " ", else the empty lines after it
 * give one "\n" each. */
static void fold(struct scan *sc)
{
    struct lil_pos brk = sc->cur, rest;

    skip_break(sc);
    rest = sc->cur;
    if (flow_breaks(sc, false) == 0) {
        emit(sc, " ", 1, brk, false);
        return;
    }
    sc->cur = rest;
    flow_breaks(sc, true);
}

/* Blanks: kept unless a line break follows. */
static void blanks(struct scan *sc)
{
    struct lil_pos from = sc->cur;

    while (is_blank(sc))
        step(sc);
    if (break_len(sc))
        return;
    sc->cur = from;
    while (is_blank(sc))
        copy_char(sc);
}

static size_t put_utf8(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* ndig hex digits at the cursor as a number (moving over them); false if
 * one is not a hex digit. */
static bool read_hex(struct scan *sc, unsigned ndig, uint32_t *out)
{
    uint32_t v = 0;

    for (unsigned i = 0; i < ndig; i++) {
        int c = peek(sc, 0);
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;

        if (d < 0)
            return false;
        v = v * 16 + (uint32_t)d;
        step(sc);
    }
    *out = v;
    return true;
}

/* \uD83D\uDE00 (JSON's surrogate pair, read from the file as written): the
 * low half after a high one. */
static uint32_t low_surrogate(struct scan *sc, uint32_t hi)
{
    struct lil_pos back = sc->cur;
    uint32_t lo;

    if (hi < 0xd800 || hi > 0xdbff || peek(sc, 0) != '\\' || peek(sc, 1) != 'u')
        return hi;
    step(sc);
    step(sc);
    if (!read_hex(sc, 4, &lo) || lo < 0xdc00 || lo > 0xdfff) {
        sc->cur = back;
        return hi;
    }
    return 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
}

/* The bytes of a one-letter escape (\n, \t, ...); NULL if c is none. */
static const char *simple_escape(int c, size_t *n)
{
    static const struct {
        char c;
        const char *s;
        size_t n;
    } tab[] = {{'0', "\0", 1},
               {'a', "\a", 1},
               {'b', "\b", 1},
               {'t', "\t", 1},
               {'\t', "\t", 1},
               {'n', "\n", 1},
               {'v', "\v", 1},
               {'f', "\f", 1},
               {'r', "\r", 1},
               {'e', "\x1b", 1},
               {' ', " ", 1},
               {'"', "\"", 1},
               {'/', "/", 1},
               {'\\', "\\", 1},
               {'N', "\xc2\x85", 2},
               {'_', "\xc2\xa0", 2},
               {'L', "\xe2\x80\xa8", 3},
               {'P', "\xe2\x80\xa9", 3}};

    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (tab[i].c == c) {
            *n = tab[i].n;
            return tab[i].s;
        }
    }
    return NULL;
}

/* A backslash in a double-quoted scalar. */
static void escape(struct scan *sc)
{
    struct lil_pos at = sc->cur;
    int c = peek(sc, 1);
    unsigned ndig = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    char buf[4];
    const char *s;
    size_t n = 0;
    uint32_t cp;

    step(sc);
    if (break_len(sc)) { /* an escaped line break: only the empty lines count */
        skip_break(sc);
        flow_breaks(sc, true);
        return;
    }
    s = simple_escape(c, &n);
    step(sc);
    if (!s && (!ndig || !read_hex(sc, ndig, &cp) || cp > 0x10ffff)) {
        sc->bad = true;
        return;
    }
    if (!s) {
        cp = ndig == 4 ? low_surrogate(sc, cp) : cp;
        n = put_utf8(cp, buf);
        s = buf;
    }
    emit(sc, s, n, at, false);
    sc->after = sc->cur;
}

/* One unit of content that is not a blank or a line break. */
static void flow_unit(struct scan *sc)
{
    struct lil_pos at = sc->cur;

    if (sc->in->style == LIL_SCALAR_DOUBLE && peek(sc, 0) == '\\') {
        escape(sc);
    } else if (sc->in->style == LIL_SCALAR_SINGLE && peek(sc, 0) == '\'' &&
               peek(sc, 1) == '\'') {
        step(sc);
        step(sc);
        emit(sc, "'", 1, at, true);
        sc->after = sc->cur;
    } else {
        copy_char(sc);
    }
}

static void scan_flow(struct scan *sc)
{
    while (!sc->bad && !at_end(sc)) {
        if (is_blank(sc))
            blanks(sc);
        else if (break_len(sc))
            fold(sc);
        else
            flow_unit(sc);
    }
}

/* A quoted scalar: its content lies between the quote at the cursor and the
 * one that ends the scalar. */
static void scan_quoted(struct scan *sc, char quote)
{
    size_t end = sc->in->end;

    if (peek(sc, 0) != quote || end < sc->cur.offset + 2 || end > sc->in->len ||
        sc->t[end - 1] != quote) {
        sc->bad = true;
        return;
    }
    step(sc);
    sc->after = sc->cur;
    sc->lim = end - 1;
    scan_flow(sc);
}

/* ------------------------------------------------------------------------ */
/* Block styles: | and >                                                    */

struct block {
    bool literal;
    int chomp;       /* -1 strip, 0 clip, 1 keep */
    unsigned indent; /* 0 until known */
    bool lead;       /* a line break ends the last line read */
    struct lil_pos lead_at;
    size_t ntrail; /* empty lines read since */
    struct lil_pos trail_from;
};

/* Indentation and empty lines (libyaml's scan_block_scalar_breaks): the
 * empty lines are counted, and remembered from where they start. */
static void block_breaks(struct scan *sc, struct block *b)
{
    unsigned max = 0;
    int parent = sc->in->parent_indent;

    b->trail_from = sc->cur;
    b->ntrail = 0;
    for (;;) {
        while ((!b->indent || col0(sc) < b->indent) && peek(sc, 0) == ' ')
            step(sc);
        if (col0(sc) > max)
            max = col0(sc);
        if (!break_len(sc))
            break;
        b->ntrail++;
        skip_break(sc);
    }
    if (!b->indent) {
        b->indent = max;
        if ((int)b->indent < parent + 1)
            b->indent = (unsigned)(parent + 1);
        if (b->indent < 1)
            b->indent = 1;
    }
}

/* The empty lines counted by block_breaks, as "\n" each. */
static void put_trailing(struct scan *sc, struct block *b)
{
    struct lil_pos back = sc->cur;

    sc->cur = b->trail_from;
    for (size_t i = 0; i < b->ntrail && !sc->bad; i++) {
        while (peek(sc, 0) == ' ')
            step(sc);
        emit(sc, "\n", 1, sc->cur, false);
        skip_break(sc);
    }
    sc->cur = back;
    b->ntrail = 0;
}

/* | or >, then chomping and indentation indicators, blanks, a comment and
 * the line break. */
static void block_header(struct scan *sc, struct block *b)
{
    unsigned incr = 0;
    int parent = sc->in->parent_indent;

    b->literal = peek(sc, 0) == '|';
    step(sc);
    for (int i = 0; i < 2; i++) {
        int c = peek(sc, 0);

        if (c == '+' || c == '-')
            b->chomp = c == '+' ? 1 : -1;
        else if (c >= '1' && c <= '9')
            incr = (unsigned)(c - '0');
        else
            break;
        step(sc);
    }
    while (is_blank(sc))
        step(sc);
    if (peek(sc, 0) == '#') {
        while (!at_end(sc) && !break_len(sc))
            step(sc);
    }
    if (!at_end(sc) && !break_len(sc))
        sc->bad = true;
    skip_break(sc);
    if (incr)
        b->indent = parent >= 0 ? (unsigned)parent + incr : incr;
}

/* One line at the block's indentation, and the line break before it. */
static void block_line(struct scan *sc, struct block *b, bool *leading_blank)
{
    bool trailing_blank = is_blank(sc);

    if (!b->literal && b->lead && !*leading_blank && !trailing_blank) {
        if (b->ntrail == 0)
            emit(sc, " ", 1, b->lead_at, false);
    } else if (b->lead) {
        emit(sc, "\n", 1, b->lead_at, false);
    }
    b->lead = false;
    put_trailing(sc, b);
    *leading_blank = is_blank(sc);
    while (!sc->bad && !at_end(sc) && !break_len(sc))
        copy_char(sc);
    if (break_len(sc)) {
        b->lead = true;
        b->lead_at = sc->cur;
        skip_break(sc);
    }
    block_breaks(sc, b);
}

static void scan_block(struct scan *sc)
{
    struct block b = {false, 0, 0, false, {0, 0, 0}, 0, {0, 0, 0}};
    bool leading_blank = false;

    sc->lim = sc->in->len;
    if (peek(sc, 0) != '|' && peek(sc, 0) != '>') {
        sc->bad = true;
        return;
    }
    block_header(sc, &b);
    sc->after = sc->cur;
    block_breaks(sc, &b);
    while (!sc->bad && !at_end(sc) && col0(sc) == b.indent)
        block_line(sc, &b, &leading_blank);
    if (b.chomp != -1 && b.lead)
        emit(sc, "\n", 1, b.lead_at, false);
    if (b.chomp == 1)
        put_trailing(sc, &b);
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */

/* A tag before the scalar (!!str "x"): skip it and the blanks after it. */
static void skip_tag(struct scan *sc)
{
    if (peek(sc, 0) != '!')
        return;
    while (!at_end(sc) && !is_blank(sc) && !break_len(sc))
        step(sc);
    while (is_blank(sc))
        step(sc);
}

static void scan(struct scan *sc)
{
    skip_tag(sc);
    sc->after = sc->cur;
    switch (sc->in->style) {
    case LIL_SCALAR_PLAIN:
        scan_flow(sc);
        break;
    case LIL_SCALAR_SINGLE:
        scan_quoted(sc, '\'');
        break;
    case LIL_SCALAR_DOUBLE:
        scan_quoted(sc, '"');
        break;
    default:
        scan_block(sc);
        break;
    }
}

lil_status lil__srcmap_build(const struct lil_env *env, const struct lil_srcmap_in *in,
                             struct lil_srcspan **out, size_t *n)
{
    struct scan sc;

    *out = NULL;
    *n = 0;
    memset(&sc, 0, sizeof(sc));
    sc.env = env;
    sc.in = in;
    sc.t = in->text;
    sc.lim = in->end < in->len ? in->end : in->len;
    sc.cur = in->at;
    sc.cur.offset = in->start;
    if (in->start <= sc.lim && in->at.line > 0)
        scan(&sc);
    else
        sc.bad = true;
    if (!sc.bad && sc.vlen == in->value_len)
        push(&sc, sc.after, false); /* the sentinel */
    else
        sc.bad = true;
    if (sc.bad) {
        lil__free(env, sc.v);
        return sc.nomem ? LIL_E_NOMEM : LIL_OK;
    }
    *out = sc.v;
    *n = sc.n;
    return LIL_OK;
}

struct lil_pos lil__srcmap_pos(const struct lil_srcspan *map, size_t n,
                               const char *value, size_t off)
{
    size_t lo = 0, hi = n;
    struct lil_pos p;

    while (hi - lo > 1) { /* the last span that starts at or before off */
        size_t mid = lo + (hi - lo) / 2;

        if (map[mid].val <= off)
            lo = mid;
        else
            hi = mid;
    }
    p = map[lo].pos;
    if (map[lo].verbatim && off > map[lo].val) {
        p.col += (unsigned)lil__srcmap_chars(value + map[lo].val, off - map[lo].val);
        p.offset += off - map[lo].val;
    }
    return p;
}
