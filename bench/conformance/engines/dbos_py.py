"""dbos_py.py -- the workload with DBOS Transact (Python) as its docs show
it: a ``@DBOS.workflow()`` whose LLM calls and side effects are
``@DBOS.step()`` functions, started under ``SetWorkflowID`` (the
pipeline's id: DBOS's idempotency key for a workflow), its checkpoints in
the system database CONF_DIR names (``sqlite:///...``, the default kind,
or ``postgresql://...``).  ``DBOS.launch()`` recovers a workflow a killed
process left pending; the side effect sends ``DBOS.workflow_id`` and
``DBOS.step_id`` as its idempotency key.  DBOS has no uncertain state: a
step in flight at a crash runs again."""

import sys

import common
from dbos import DBOS, SetWorkflowID

W = common.Workload()
DBOS(config={"name": "conformance", "system_database_url": W.dir})


@DBOS.step()
def llm(i, prev):
    return W.llm(i, prev)


@DBOS.step()
def effect(i, prev):
    return W.effect(i, prev, f"{DBOS.workflow_id}-{DBOS.step_id}")


@DBOS.workflow()
def pipeline(steps):
    prev, tags = "start", []
    for i in range(steps):
        if i % 2 == 0:
            prev = llm(i, prev)
            tags.append(prev)
        else:
            effect(i, prev)
    return tags


def main():
    common.parse_args(sys.argv)
    DBOS.launch()
    with SetWorkflowID(W.run):
        handle = DBOS.start_workflow(pipeline, W.steps)
    tags = handle.get_result()
    DBOS.destroy()
    common.done(tags)


if __name__ == "__main__":
    main()
