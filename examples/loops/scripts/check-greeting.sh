#!/bin/sh
# check-greeting.sh FILE -- exit 0 when FILE holds exactly "hello, world".
# Prints nothing: the loop reads the exit code ($.code).
[ "$(cat "$1" 2>/dev/null)" = "hello, world" ]
