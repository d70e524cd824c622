/*
 * sync_mode.h -- the one table of the sync modes' names: "full", "normal",
 * "off" (and "default" for LIL_SYNC_DEFAULT, which is no mode of its own).
 *
 * Every place that prints or reads a sync mode uses it: the store's
 * LIL_SYNC setting, the log line of an open, the PostgreSQL store's
 * columns, and -- through lil_sync_name and lil_sync_from_name (lil.h) --
 * the CLI's --sync and the Python binding's sync=.
 */
#ifndef LIL_BASE_SYNC_MODE_H
#define LIL_BASE_SYNC_MODE_H

#include <lil/lil.h>
#include <stdbool.h>

/* "full", "normal", "off", "default"; NULL for a value outside the enum. */
const char *lil__sync_name(lil_sync sync);

/* The mode named name ("full", "normal" or "off"; not "default"): true and
 * *out set, else false. */
bool lil__sync_parse(const char *name, lil_sync *out);

#endif
