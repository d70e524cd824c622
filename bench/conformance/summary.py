"""summary.py -- the trials of one engine under one fault at one pipeline
length, reduced to the table's cells: each measure with its 95 %
confidence interval and the number of trials (stats.py)."""

import stats


def _ci(xs, digits=2):
    m, lo, hi = stats.mean_ci(xs)
    if m is None:
        return None
    r = lambda v: None if v is None else round(v, digits)  # noqa: E731
    return {"mean": r(m), "low": r(lo), "high": r(hi), "n": len(xs)}


def _q(xs, q):
    v, lo, hi = stats.quantile_ci(xs, q)
    r = lambda x: None if x is None else round(x, 1)  # noqa: E731
    return {"value": r(v), "low": r(lo), "high": r(hi), "n": len(xs)}


def cell(engine, fault, steps, trials, measures):
    """trials: Trial.out dicts; measures: analyze.trial dicts, same order."""
    n = len(trials)
    ok = sum(1 for m in measures if m["correct"])
    lo, hi = stats.wilson(ok, n)
    faults = sum(t["faults"] for t in trials)
    resume = [x for t in trials for x in t["resume_ms"]]
    per = lambda key: [m[key] for m in measures]  # noqa: E731
    tot = lambda key: sum(m[key] for m in measures)  # noqa: E731
    return {
        "engine": engine.name, "label": engine.label, "fault": fault, "steps": steps,
        "trials": n, "faults": faults,
        "faults_inside_step": sum(t["inside"] for t in trials),
        "faults_between_steps": sum(t["between"] for t in trials),
        "correct": ok, "correct_pct": round(100.0 * ok / n, 1) if n else None,
        "correct_ci_pct": [round(100 * lo, 1), round(100 * hi, 1)],
        "lost": tot("lost"), "lost_per_trial": _ci(per("lost")),
        "reexecuted": tot("reexecuted"), "reexecuted_per_trial": _ci(per("reexecuted")),
        "reexecuted_llm_calls": tot("reexecuted_llm"),
        "reexecuted_tokens": tot("reexecuted_tokens"),
        "wasted_llm_calls": tot("wasted_calls"),
        "wasted_tokens": tot("wasted_tokens"),
        "wasted_tokens_per_fault": round(tot("wasted_tokens") / faults, 1) if faults else None,
        "wasted_tokens_per_trial": _ci(per("wasted_tokens"), 1),
        "tokens": tot("tokens"),
        "duplicated": tot("duplicated"), "duplicated_per_trial": _ci(per("duplicated")),
        "repeated_requests": tot("repeated"),
        "uncertain": sum(t["uncertain"] for t in trials),
        "uncertain_assumed_done": sum(t["assumed"] for t in trials),
        "uncertain_retried": sum(t["retried"] for t in trials),
        "errors": sum(t["errors"] for t in trials),
        "repaired": sum(t["repaired"] for t in trials),
        "cut": {k: sum(t["cut"][k] for t in trials)
                for k in ("unsynced", "dropped", "torn", "garbled")},
        "resume_ms_p50": _q(resume, 0.5), "resume_ms_p99": _q(resume, 0.99),
        "notes": sorted({x for t in trials for x in t["notes"]}),
    }


def overhead(engine, steps, spans, floor_spans, disk_bytes):
    """Per-step overhead (ms) of the durable engine beside its floor, from
    rounds run one after the other, and disk bytes per step."""
    diffs = [(a - b) * 1e3 / steps for a, b in zip(spans, floor_spans)]
    return {
        "engine": engine.name, "label": engine.label, "steps": steps,
        "step_ms": _ci([s * 1e3 / steps for s in spans], 3),
        "floor_step_ms": _ci([s * 1e3 / steps for s in floor_spans], 3),
        "overhead_ms_per_step": _ci(diffs, 3),
        "disk_bytes_per_step": round(disk_bytes / steps) if disk_bytes is not None else None,
    }
