"""bench_python.py --dir DIR --steps N -- the Python package's side of the
python benchmark (bench_python.c runs it and prints the rows).

The workload is the C benchmarks': a step named "s" whose result is 200
bytes (here a 200-character str, journaled as 202 bytes of JSON), so its
identities are "s", "s#2", ...; sync=off, so that the figure is the
package's and lil's own cost, not the disk's.

Prints one JSON object:
  fresh_cpu_us, fresh_wall_us   per new step: the calling thread's CPU time,
                                and the median of 8 batch means of wall time
  replay_steps_per_s            reopen the run (a new workflow call) and
                                replay its N steps: N / (the whole call's
                                CPU time); replay_wall_steps_per_s: N / its
                                wall time
  replay_loop_steps_per_s       the replay loop alone (without the open), CPU
"""

import argparse
import json
import os
import statistics
import sys
import time

import lil

PAYLOAD = "p" * 200


class _Stop(Exception):
    """Ends the replayed workflow before it completes."""


def payload():
    return PAYLOAD


def fresh(dir_, n):
    """CPU and wall µs per new step."""
    batches = 8
    size = max(1, n // batches)

    @lil.durable(goal_id="py-fresh", dir=dir_, sync="off")
    def wf():
        walls = []
        c0 = time.thread_time_ns()
        for _ in range(batches):
            t0 = time.perf_counter_ns()
            for _ in range(size):
                lil.step("s", payload)
            walls.append((time.perf_counter_ns() - t0) / size / 1e3)
        return (time.thread_time_ns() - c0) / (batches * size) / 1e3, statistics.median(walls)

    return wf()


def replay(dir_, n):
    """Steps per second replaying n steps: CPU and wall with the open, CPU of
    the loop alone."""
    out = {}

    @lil.durable(goal_id="py-replay", dir=dir_, sync="off")
    def wf():
        c0 = time.thread_time()
        for _ in range(n):
            lil.step("s", payload)
        out["loop"] = time.thread_time() - c0
        raise _Stop  # not completed: the next call replays

    for _ in range(2):  # the first call runs the steps, the second replays them
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            wf()
        except _Stop:
            pass
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    return n / cpu, n / wall, n / out["loop"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--steps", type=int, default=200000)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    cpu_us, wall_us = fresh(a.dir, a.steps)
    rate, wall_rate, loop_rate = replay(a.dir, a.steps)
    print(json.dumps({"fresh_cpu_us": cpu_us, "fresh_wall_us": wall_us,
                      "replay_steps_per_s": rate, "replay_wall_steps_per_s": wall_rate,
                      "replay_loop_steps_per_s": loop_rate,
                      "steps": a.steps, "python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
