#!/bin/sh
# fake-agent.sh PROMPT... -- a stand-in for a coding agent (harness cli),
# so that the examples run without a model.  It recognizes the examples'
# prompts, does the work, and prints {"result": "..."}.
for last; do :; done
case "$last" in
*greeting.txt*)
    mkdir -p work && echo "hello, world" >work/greeting.txt
    echo '{"result": "wrote work/greeting.txt"}' ;;
*haiku.txt*)
    mkdir -p work
    printf '%s\n' "the journal was synced again" \
        "power failed and the process died tonight" \
        "it replayed every single step" >work/haiku.txt
    echo '{"result": "wrote work/haiku.txt"}' ;;
*)
    echo '{"result": "nothing to do"}' ;;
esac
