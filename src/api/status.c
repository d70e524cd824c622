/*
 * status.c -- the public calls that need no handle: a status's text and
 * name, the library's version, the calling thread's last error, and
 * lil_free for the blocks the library hands out.  The tables live below
 * (base/err.c, base/alloc.c).
 */
#include <lil/lil.h>

#include "base/alloc.h"
#include "base/err.h"

const char *lil_strerror(lil_status s)
{
    return lil__status_text(s);
}

const char *lil_status_name(lil_status s)
{
    return lil__status_name(s);
}

const char *lil_version(void)
{
    return LIL_VERSION;
}

const char *lil_errmsg(void)
{
    return lil__thread_errmsg();
}

void lil_free(void *p)
{
    lil__export_free(p);
}
