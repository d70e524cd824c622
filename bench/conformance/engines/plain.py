"""plain.py -- the workload in plain Python, without durability: the floor.
A restart runs the whole pipeline again from its first step."""

import sys

import common


def main():
    common.parse_args(sys.argv)
    w = common.Workload()
    prev, tags = "start", []
    for i in range(w.steps):
        if i % 2 == 0:
            prev = w.llm(i, prev)
            tags.append(prev)
        else:
            w.effect(i, prev)
    common.done(tags)


if __name__ == "__main__":
    main()
