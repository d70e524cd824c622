"""common.py -- the workload every Python adapter runs, and how an adapter
talks to the benchmark (standard library only: it is imported by the
python of each engine's venv).

The pipeline has N steps (CONF_STEPS).  Step i is an LLM call when i is
even and a side effect when i is odd:

  LLM call i     POST CONF_LLM_URL/chat/completions, prompt
                 "run R step i after T" (T: the tag of the previous LLM
                 answer, "start" first); the answer's tag is the step's
                 result
  side effect i  POST CONF_LEDGER_URL/effects {"run", "step", "input": T},
                 with an Idempotency-Key header when the engine offers one

An adapter runs as ``python ENGINE.py run`` and ends in one of four ways:
exit 0 after printing ``RESULT {"tags": [...]}`` (the tags of the LLM
steps, in order, as the completed pipeline holds them); exit 3 after
printing ``UNCERTAIN <identity>`` lines (an engine that surfaces effects
whose outcome is unknown, instead of running them again); exit 4 after
printing ``DAMAGED`` (lil after a power cut: the journal's open refused it
as damaged, the operator repairs it); anything else is a failure and the
benchmark starts it again.  ``python ENGINE.py resolve
IDENTITY retry|assume_done [RESULT_JSON]`` records the operator's decision
(engines that surface uncertain effects).

Environment: CONF_LLM_URL, CONF_LEDGER_URL, CONF_RUN (the pipeline's id,
one per trial), CONF_STEPS, CONF_DIR (the engine's state: a directory, or a
PostgreSQL URL where the engine takes one).
"""

import json
import os
import sys
import urllib.request

EXIT_UNCERTAIN = 3
EXIT_DAMAGED = 4


class Workload:
    def __init__(self):
        env = os.environ
        self.llm_url = env["CONF_LLM_URL"]
        self.ledger_url = env["CONF_LEDGER_URL"]
        self.run = env["CONF_RUN"]
        self.steps = int(env["CONF_STEPS"])
        self.dir = env["CONF_DIR"]

    def _post(self, url, obj, headers=None):
        req = urllib.request.Request(url, data=json.dumps(obj).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              **(headers or {})})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def llm(self, i, prev):
        """LLM step i after tag prev: the answer's tag."""
        ans = self._post(f"{self.llm_url}/chat/completions", {
            "model": "conformance", "max_tokens": 200,
            "messages": [{"role": "user", "content": f"run {self.run} step {i} after {prev}"}]})
        return json.loads(ans["choices"][0]["message"]["content"])["tag"]

    def effect(self, i, prev, key=None):
        """Side effect i on input prev: the ledger's receipt."""
        ans = self._post(f"{self.ledger_url}/effects",
                         {"run": self.run, "step": i, "input": prev},
                         {"Idempotency-Key": key} if key else None)
        return ans["receipt"]


def done(tags):
    print("RESULT " + json.dumps({"tags": tags}), flush=True)
    sys.exit(0)


def uncertain(identities):
    for ident in identities:
        print(f"UNCERTAIN {ident}", flush=True)
    sys.exit(EXIT_UNCERTAIN)


def damaged():
    """The journal's open refused it as damaged (a power cut can leave one):
    the operator repairs it (lil check --repair)."""
    print("DAMAGED", flush=True)
    sys.exit(EXIT_DAMAGED)


def parse_args(argv):
    """('run',) or ('resolve', identity, how, result or None)."""
    if len(argv) >= 2 and argv[1] == "run":
        return ("run",)
    if len(argv) >= 4 and argv[1] == "resolve":
        return ("resolve", argv[2], argv[3], json.loads(argv[4]) if len(argv) > 4 else None)
    sys.exit(f"usage: {argv[0]} run | resolve IDENTITY retry|assume_done [RESULT_JSON]")
