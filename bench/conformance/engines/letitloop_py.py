"""letitloop_py.py -- the workload with letitloop 0.7.0 as its README
shows it: ``@durable(goal_id, wal_dir)`` around the pipeline, each LLM
call a ``step``, each side effect a ``step`` inside ``atomic_marker``
("protect external API mutations against duplicate execution").  The
library offers no idempotency key and no uncertain state: a marker left
pending by a killed process is run again by the next one."""

import sys

import common
from letitloop import atomic_marker, durable, step


def main():
    common.parse_args(sys.argv)
    w = common.Workload()

    @durable(w.run, w.dir)
    def pipeline():
        prev, tags = "start", []
        for i in range(w.steps):
            if i % 2 == 0:
                prev = step(f"llm{i}", w.llm, i, prev)
                tags.append(prev)
            else:
                with atomic_marker(f"effect{i}") as should_execute:
                    if should_execute:
                        step(f"effect{i}", w.effect, i, prev)
        return tags

    common.done(pipeline())


if __name__ == "__main__":
    main()
