/*
 * sync_mode.c -- the sync modes' names (sync_mode.h).
 */
#include "base/settings/sync_mode.h"

#include <stddef.h>
#include <string.h>

static const char *const names[] = {
    [LIL_SYNC_DEFAULT] = "default",
    [LIL_SYNC_FULL] = "full",
    [LIL_SYNC_NORMAL] = "normal",
    [LIL_SYNC_OFF] = "off",
};

#define NNAMES (sizeof(names) / sizeof(names[0]))

const char *lil__sync_name(lil_sync sync)
{
    return (unsigned)sync < NNAMES ? names[sync] : NULL;
}

bool lil__sync_parse(const char *name, lil_sync *out)
{
    for (size_t i = 0; name && i < NNAMES; i++)
        if (i != LIL_SYNC_DEFAULT && strcmp(name, names[i]) == 0) {
            *out = (lil_sync)i;
            return true;
        }
    return false;
}
