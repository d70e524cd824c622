"""report.py -- the conformance run as markdown (stdout) and JSON: the
machine and conditions, the command, one table of the faults per pipeline
length, and one of the cost without faults (docs/conformance.md explains
every column)."""

import json


def _ci(c, unit=""):
    if not c:
        return "--"
    if c.get("low") is None:
        return f"{c['mean']}{unit}"
    return f"{c['mean']}{unit} [{c['low']}, {c['high']}]"


def _q(c):
    if not c or c["value"] is None:
        return "--"
    lo = "?" if c["low"] is None else c["low"]
    hi = "?" if c["high"] is None else c["high"]
    return f"{c['value']} [{lo}, {hi}]"


FAULT_WORDS = {
    "sigkill": "SIGKILL",
    "powercut": "power cut (simulated)",
    "pgstop": "PostgreSQL stopped (immediate)",
    "sigstop": "SIGSTOP past the lease",
}

FAULT_HEAD = ("| engine | fault | trials | faults (in a step / between) | completed correctly "
              "| completed steps lost | completed steps re-executed (LLM calls, tokens) "
              "| tokens wasted per fault | effects applied twice (requests repeated) "
              "| uncertain surfaced (assumed done / retried) | resume p50 ms | resume p99 ms |")


def fault_row(c):
    return (f"| {c['label']} | {FAULT_WORDS.get(c['fault'], c['fault'])} | {c['trials']} "
            f"| {c['faults']} ({c['faults_inside_step']} / {c['faults_between_steps']}) "
            f"| {c['correct_pct']} % [{c['correct_ci_pct'][0]}, {c['correct_ci_pct'][1]}] "
            f"| {c['lost']} ({_ci(c['lost_per_trial'])} per trial) "
            f"| {c['reexecuted']} ({c['reexecuted_llm_calls']}, {c['reexecuted_tokens']}) "
            f"| {c['wasted_tokens_per_fault'] if c['wasted_tokens_per_fault'] is not None else '--'} "
            f"| {c['duplicated']} ({c['repeated_requests']}) "
            f"| {c['uncertain']} ({c['uncertain_assumed_done']} / {c['uncertain_retried']}) "
            f"| {_q(c['resume_ms_p50'])} | {_q(c['resume_ms_p99'])} |")


COST_HEAD = ("| engine | steps | ms per step | floor ms per step | overhead ms per step "
             "| disk bytes per step |")


def cost_row(o):
    disk = o["disk_bytes_per_step"]
    return (f"| {o['label']} | {o['steps']} | {_ci(o['step_ms'])} | {_ci(o['floor_step_ms'])} "
            f"| {_ci(o['overhead_ms_per_step'])} | {disk if disk is not None else '--'} |")


def markdown(result):
    m = result["machine"]
    out = [f"lil crash-conformance benchmark, {result['mode']} run, {m['date']}",
           "",
           f"machine: {m['cpu']}, {m['kernel']}, scratch on {m['filesystem']}; "
           f"flush (4 KiB + fdatasync) p50 {m['flush_ms_p50']} ms, p99 {m['flush_ms_p99']} ms; "
           f"load average {m['load_start']} at the start, {m.get('load_end', '?')} at the "
           f"end; Python {m['python']}",
           f"command: `{result['command']}`",
           f"workload: N steps, LLM calls (fake server, {result['llm_delay_ms']} ms) and side "
           f"effects (ledger, {result['ledger_delay_ms']} ms) alternating; up to "
           f"{result['faults_per_trial']} faults a trial, each at a uniformly random moment "
           "(one in four from the life's start, the others from its first request); 95 % "
           "confidence intervals in brackets", ""]
    for steps in result["steps"]:
        out += [f"### N = {steps}", "", FAULT_HEAD, "|" + "---|" * 12]
        out += [fault_row(c) for c in result["cells"] if c["steps"] == steps]
        out.append("")
    out += ["### Without faults", "", COST_HEAD, "|" + "---|" * 6]
    out += [cost_row(o) for o in result["costs"]]
    if result.get("skipped"):
        out += ["", "Not run:"] + [f"- {s}" for s in result["skipped"]]
    notes = [f"- {c['label']}, {FAULT_WORDS.get(c['fault'], c['fault'])}, N = {c['steps']}: "
             + "; ".join(c["notes"]) for c in result["cells"] if c["notes"]]
    notes += [f"- {c['label']}, {FAULT_WORDS.get(c['fault'], c['fault'])}, N = {c['steps']}: "
              f"{c['repaired']} journal(s) refused at open as damaged, repaired by the "
              "operator (lil check --repair)" for c in result["cells"] if c.get("repaired")]
    notes += [f"- {c['label']}, power cut (simulated), N = {c['steps']}: the cuts found "
              f"{c['cut']['unsynced']} write(s) no sync covered and dropped "
              f"{c['cut']['dropped']}, tore {c['cut']['torn']}, garbled "
              f"{c['cut']['garbled']}" for c in result["cells"] if c["fault"] == "powercut"]
    if notes:
        out += ["", "Notes:"] + notes
    return "\n".join(out) + "\n"


def write(result, json_path, md_path):
    if json_path:
        with open(json_path, "w") as f:
            json.dump(result, f, indent=1)
    text = markdown(result)
    if md_path:
        with open(md_path, "w") as f:
            f.write(text)
    return text
