"""registry.py -- the engines of the conformance benchmark: how each one is
started, where its state lives, how its answer is read, and how the
operator decides an effect it reports as uncertain.

Every engine runs the same workload (engines/common.py).  An engine is
a row of the tables; a setting that changes what a crash can do is a row
of its own (LangGraph's durability).  The peers' Python comes from a venv
that scripts/pyenv.sh makes from a pinned requirements file; lil's
Python package is the checkout's, with the module built beside the
benchmark.
"""

import json
import os
import sys
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = os.path.join(HERE, "engines")
SPEC = os.path.join(ENGINES, "lil_loop.yaml")


@dataclass
class Ctx:
    """Where things are: the checkout, the build, the scratch directory,
    the servers, and the python of each requirements file."""
    root: str
    build: str
    scratch: str
    llm_url: str = ""
    ledger_url: str = ""
    pythons: dict = field(default_factory=dict)
    pg_url: str = ""

    @property
    def lil(self):
        return os.path.join(self.build, "cli", "lil")

    @property
    def lil_c(self):
        return os.path.join(self.build, "bench", "conformance", "conf_lil_c")


@dataclass
class Engine:
    name: str  # the row's key
    label: str  # the row's words
    config: str  # how it is configured (docs/conformance.md repeats it)
    lang: str  # "python" (plain is the floor) or "c" (lil_c --plain is)
    venv: str = ""  # requirements file (relative to the checkout), or "" for python3
    script: str = ""  # engines/<script> for Python adapters
    surfaces_uncertain: bool = False
    recover_runs: bool = False  # the decision is itself a life (lil recover)
    store: str = "dir"  # "dir", "sqlite" (a URL to a file) or "pg"
    extra_env: dict = field(default_factory=dict)
    cost: bool = True  # a row of the table without faults
    pg_db: str = ""  # the database of a "pg" store, when not the server's default

    # -- how a life starts ---------------------------------------------------
    def state(self, ctx, run):
        """CONF_DIR of one trial's pipeline."""
        if self.store == "pg":
            return ctx.pg_url.replace(":///postgres?", f":///{self.pg_db}?") if self.pg_db \
                else ctx.pg_url
        d = os.path.join(ctx.scratch, self.name, run)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        return f"sqlite:///{d}.sqlite" if self.store == "sqlite" else d

    def env(self, ctx, run, steps):
        e = dict(os.environ, CONF_LLM_URL=ctx.llm_url, CONF_LEDGER_URL=ctx.ledger_url,
                 CONF_RUN=run, CONF_STEPS=str(steps), CONF_DIR=self.state(ctx, run),
                 LIL_LLM_BASE_URL=ctx.llm_url, LIL_LLM_MODEL="conformance",
                 LIL_AGENT_MAX_TOKENS="200", PYTHONDONTWRITEBYTECODE="1",
                 PYTHONPATH=os.path.join(ctx.root, "bindings", "python"),
                 LIL_PYTHON_EXT_DIR=os.path.join(ctx.build, "bindings", "python", "lil"),
                 **self.extra_env)
        for k in ("LIL_DIR", "LIL_SYNC", "OPENAI_API_KEY", "LIL_LLM_API_KEY"):
            e.pop(k, None)
        if isinstance(self, LoopEngine):
            e["LIL_DIR"] = e["CONF_DIR"]
        return e

    def python(self, ctx):
        return ctx.pythons.get(self.venv, sys.executable) if self.venv else sys.executable

    def run_argv(self, ctx, run, steps):
        if self.script:
            return [self.python(ctx), os.path.join(ENGINES, self.script), "run"]
        raise NotImplementedError

    # -- the operator --------------------------------------------------------
    def step_of(self, ident):
        """The pipeline's step an uncertain identity names."""
        return int(ident.rsplit("effect", 1)[1]) if "effect" in ident else -1

    def assumed(self, receipt):
        """The result an assume-done records, from the ledger's receipt."""
        return json.dumps(receipt)

    def resolve_argv(self, ctx, run, steps, ident, how, receipt):
        args = [self.python(ctx), os.path.join(ENGINES, self.script), "resolve", ident, how]
        return args + ([self.assumed(receipt)] if how == "assume_done" else [])

    # -- power cuts (lil's faces) ---------------------------------------------
    def pclog(self, ctx, run):
        """The power-cut log of one trial's pipeline (lil_c cut reads it)."""
        return os.path.join(ctx.scratch, self.name, run + ".pclog")

    def repair_argv(self, ctx, run):
        """The operator's repair of a journal the open refused as damaged."""
        return [ctx.lil, "--dir", self.state(ctx, run), "check", run, "--repair"]

    # -- the answer ----------------------------------------------------------
    def parse(self, code, out):
        """("done", tags) | ("uncertain", [identities]) | ("damaged", None)
        | ("error", text)."""
        lines = out.splitlines()
        res = [ln[7:] for ln in lines if ln.startswith("RESULT ")]
        unc = [ln[10:] for ln in lines if ln.startswith("UNCERTAIN ")]
        if code == 0 and res:
            return ("done", json.loads(res[-1])["tags"])
        if code == 3 and unc:
            return ("uncertain", unc)
        if code == 4 and "DAMAGED" in lines:
            return ("damaged", None)
        return ("error", f"exit {code}")


class CEngine(Engine):
    """lil from C (engines/lil_c.c); the C floor with plain=True."""

    def __init__(self, *a, plain=False, face="run", powercut=False, **kw):
        super().__init__(*a, **kw)
        self.plain, self.face, self.powercut = plain, face, powercut

    def _pc(self, ctx, run):
        return ["--powercut", self.pclog(ctx, run)] if self.powercut else []

    def run_argv(self, ctx, run, steps):
        if self.face == "loop":
            return [ctx.lil_c, "loop", SPEC] + self._pc(ctx, run)
        return [ctx.lil_c, "run"] + (["--plain"] if self.plain else []) + self._pc(ctx, run)

    def step_of(self, ident):
        if self.face == "loop":
            return LoopEngine.step_of(self, ident)
        return super().step_of(ident)

    def assumed(self, receipt):
        return LoopEngine.assumed(self, receipt) if self.face == "loop" else receipt

    def resolve_argv(self, ctx, run, steps, ident, how, receipt):
        tail = [self.assumed(receipt)] if how == "assume_done" else []
        if self.face == "loop":
            return [ctx.lil_c, "loop-recover", SPEC, how] + tail + self._pc(ctx, run)
        return [ctx.lil_c, "resolve", ident, how] + tail + self._pc(ctx, run)


class PyPowercutEngine(Engine):
    """lil from Python with the module python_powercut.cmake builds: every
    store it opens logs its writes for the power cut (CONF_POWERCUT_LOG);
    the package's sources are the checkout's."""

    @staticmethod
    def module_dir(ctx):
        return os.path.join(ctx.build, "bench", "conformance", "pypc", "lil")

    def env(self, ctx, run, steps):
        e = super().env(ctx, run, steps)
        e["LIL_PYTHON_EXT_DIR"] = self.module_dir(ctx)
        e["CONF_POWERCUT_LOG"] = self.pclog(ctx, run)
        return e


class LoopEngine(Engine):
    """lil as a LoopSpec loop: `lil run` of engines/lil_loop.yaml."""

    def inputs(self, ctx, run, steps):
        return ["--run-id", run, "--input", f"run={run}", "--input", f"steps={steps}",
                "--input", f"ledger={ctx.ledger_url}"]

    def run_argv(self, ctx, run, steps):
        return [ctx.lil, "--json", "run", SPEC] + self.inputs(ctx, run, steps)

    def step_of(self, ident):
        kind, it = ident.split(":")
        return 2 * int(it) + (0 if kind == "agent" else 1)

    def assumed(self, receipt):
        return json.dumps({"applied": True, "receipt": receipt})

    def resolve_argv(self, ctx, run, steps, ident, how, receipt):
        how_args = (["--assume-done", "--result-json", self.assumed(receipt)]
                    if how == "assume_done" else ["--retry"])
        return [ctx.lil, "--json", "recover", SPEC, "--run-id", run] + how_args + [
            "--reason", "the operator looked the effect up in the ledger",
            "--actor", "conformance"]

    def parse(self, code, out):
        try:
            res = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return ("error", f"exit {code}")
        if res.get("status") == "completed":
            return ("done", res["state"]["tags"])
        if res.get("status") == "uncertain" and res.get("uncertain"):
            u = res["uncertain"]
            return ("uncertain", [f"{u['kind']}:{u['iteration']}"])
        return ("error", f"exit {code}: {res.get('status')} {res.get('reason', '')}")


LETITLOOP = "bindings/python/requirements/letitloop.txt"
LANGGRAPH = "bindings/python/requirements/langgraph.txt"
DBOS = "bench/conformance/requirements/dbos.txt"
SYNC_FULL = "sync=full (the default): every step fdatasync'd before it returns"


def all_engines():
    """Every engine, in the tables' order."""
    return [
        Engine("plain", "plain Python (no durability, the floor)",
               "nothing is kept: a restart runs the pipeline from its first step",
               "python", script="plain.py"),
        CEngine("lil-c", "lil from C", SYNC_FULL + "; effects through lil_effect, "
                "Idempotency-Key from lil_call_idempotency_key", "c",
                surfaces_uncertain=True),
        Engine("lil-py", "lil from Python (@lil.durable)", SYNC_FULL + "; effects through "
               "lil.effect, Idempotency-Key from lil.current_step()", "python",
               script="lil_py.py", surfaces_uncertain=True),
        LoopEngine("lil-loop", "lil as a LoopSpec loop (lil run)", SYNC_FULL + "; the LLM "
                   "call an agent step (harness llm), the effect an http step: both "
                   "effects of the journal", "c", surfaces_uncertain=True,
                   recover_runs=True),
        Engine("letitloop", "letitloop 0.7.0", "its defaults: a WAL fsync'd at every step; "
               "effects inside atomic_marker, as its README shows", "python",
               venv=LETITLOOP, script="letitloop_py.py"),
        Engine("dbos", "DBOS 3.4.0 (SQLite system database)", "its defaults: "
               "system_database_url sqlite:///FILE (SQLite's rollback journal, "
               "synchronous=FULL); effects send workflow_id-step_id as Idempotency-Key",
               "python", venv=DBOS, script="dbos_py.py", store="sqlite"),
        Engine("langgraph", "LangGraph 1.2.22 + SqliteSaver, durability=async",
               "LangGraph's default durability (async: a checkpoint is written while the "
               "next step runs); SqliteSaver.setup() (WAL, synchronous=FULL)", "python",
               venv=LANGGRAPH, script="langgraph_py.py"),
        Engine("langgraph-sync", "LangGraph 1.2.22 + SqliteSaver, durability=sync",
               "the stricter setting: each checkpoint written before the next step "
               "starts", "python", venv=LANGGRAPH, script="langgraph_py.py",
               extra_env={"CONF_DURABILITY": "sync"}),
    ]


def floors():
    return {
        "python": Engine("plain", "plain Python", "", "python", script="plain.py"),
        "c": CEngine("plain-c", "plain C (libcurl)", "", "c", plain=True),
    }


def powercut_engines():
    """The faces a power cut can be simulated under: lil's system calls
    through the test harness's table, in a process of the benchmark's (C,
    the loop runner) or in a module built for it (Python)."""
    return [
        CEngine("lil-c-powercut", "lil from C", SYNC_FULL, "c", surfaces_uncertain=True,
                powercut=True, cost=False),
        PyPowercutEngine("lil-py-powercut", "lil from Python (@lil.durable)", SYNC_FULL,
                         "python", script="lil_py.py", surfaces_uncertain=True, cost=False),
        CEngine("lil-loop-powercut", "lil's loop runner in-process (what lil run calls)",
                SYNC_FULL, "c", surfaces_uncertain=True, recover_runs=True, face="loop",
                powercut=True, cost=False),
    ]


def pg_engines():
    """The engines that can keep their state in PostgreSQL."""
    return [
        CEngine("lil-c-pg", "lil from C, PostgreSQL store", SYNC_FULL + " (commits wait "
                "for the server's WAL flush)", "c", surfaces_uncertain=True, store="pg"),
        Engine("dbos-pg", "DBOS 3.4.0 (PostgreSQL system database)",
               "its defaults on PostgreSQL", "python", venv=DBOS, script="dbos_py.py",
               store="pg", pg_db="dbos_conformance"),
    ]


def worker_engine():
    """The loop face queued on PostgreSQL and run by `lil worker`
    (pgfaults.py); its rounds without faults are `lil run` on that store."""
    return LoopEngine("lil-worker", "lil as a LoopSpec loop, lil worker on PostgreSQL",
                      SYNC_FULL + "; lease 1 s (LIL_PG_LEASE_MS)", "c",
                      surfaces_uncertain=True, recover_runs=True, store="pg")
