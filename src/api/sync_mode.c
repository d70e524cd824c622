/*
 * sync_mode.c -- the public names of the sync modes (lil.h: lil_sync_name,
 * lil_sync_from_name), from the library's one table (base/settings/sync_mode.h).
 */
#include "base/settings/sync_mode.h"

#include <lil/lil.h>
#include <string.h>

const char *lil_sync_name(lil_sync sync)
{
    return lil__sync_name(sync);
}

lil_status lil_sync_from_name(const char *name, lil_sync *out)
{
    lil_sync s;

    if (!out)
        return LIL_E_INVAL;
    if (name && strcmp(name, lil__sync_name(LIL_SYNC_DEFAULT)) == 0) {
        *out = LIL_SYNC_DEFAULT;
        return LIL_OK;
    }
    if (!lil__sync_parse(name, &s))
        return LIL_E_INVAL;
    *out = s;
    return LIL_OK;
}
