"""lil_py.py -- the workload with lil's Python package (docs/python.md):
one ``@lil.durable`` goal per pipeline at the default sync ("full"), each
LLM call a ``lil.step``, each side effect a ``lil.effect`` that sends the
step's idempotency key (``lil.current_step().idempotency_key``).  An
effect whose outcome is unknown after a crash makes the goal uncertain:
the adapter names it (exit 3) and ``resolve`` records the operator's
decision with ``lil.resolve``.  A journal the open refuses as damaged
(after a simulated power cut) is reported (exit 4) for the operator's
``lil check --repair``."""

import sys

import common
import lil


def pipeline(w):
    def send(i, prev):
        return w.effect(i, prev, lil.current_step().idempotency_key)

    @lil.durable(goal_id=w.run, dir=w.dir)
    def run():
        prev, tags = "start", []
        for i in range(w.steps):
            if i % 2 == 0:
                prev = lil.step(f"llm{i}", w.llm, i, prev)
                tags.append(prev)
            else:
                lil.effect(f"effect{i}", send, i, prev)
        return tags

    return run


def life(args, w):
    if args[0] == "resolve":
        _, ident, how, result = args
        lil.resolve(w.run, ident, how, result=result, dir=w.dir, actor="conformance",
                    reason="the operator looked the effect up in the ledger")
        return
    try:
        tags = pipeline(w)()
    except lil.UncertainStepError:
        common.uncertain(lil.status(w.run, dir=w.dir).uncertain)
    common.done(tags)


def main():
    args = common.parse_args(sys.argv)
    try:
        life(args, common.Workload())
    except lil.CorruptJournalError:
        common.damaged()


if __name__ == "__main__":
    main()
