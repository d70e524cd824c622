"""crash_worker.py STORE SIDE GOAL SYNC NSTEPS -- the workload test_crash.py kills.

A workflow of NSTEPS steps; every eighth is a side-effect step (lil.effect).
The side file gets one line per event, each with a single O_APPEND write:

    begin PID DONE      this attempt starts; the journal held DONE completed steps
    run PID I           plain step I's function ran
    erun PID I          side-effect step I's function started
    effect PID I        ... and did its side effect
    end PID             the workflow returned (its result is printed as JSON)

Exit status: 0 done, 3 the workflow is uncertain (a side-effect step was
killed: the test resolves it), 1 anything else.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lil  # noqa: E402

from helpers import append_line  # noqa: E402

STORE, SIDE, GOAL, SYNC, N = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
PID = os.getpid()


def step_fn(i):
    append_line(SIDE, f"run {PID} {i}")
    time.sleep(0.002)
    return {"i": i, "pid": PID}


def effect_fn(i):
    append_line(SIDE, f"erun {PID} {i}")
    time.sleep(0.001)
    append_line(SIDE, f"effect {PID} {i}")
    time.sleep(0.001)
    return {"i": i, "pid": PID}


@lil.durable(goal_id=GOAL, dir=STORE, sync=SYNC)
def workflow():
    out = []
    for i in range(N):
        if i % 8 == 7:
            out.append(lil.effect(f"e{i}", effect_fn, i))
        else:
            out.append(lil.step(f"s{i}", step_fn, i))
    return out


def main():
    st = lil.status(GOAL, dir=STORE)
    append_line(SIDE, f"begin {PID} {st.steps_done if st else 0}")
    try:
        result = workflow()
    except lil.UncertainStepError as e:
        print(e, file=sys.stderr)
        return 3
    append_line(SIDE, f"end {PID}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
