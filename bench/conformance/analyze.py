"""analyze.py -- what one trial did to the outside world, from the records
of the fake LLM server and the ledger (servers.py) and the tags the
completed pipeline returned; nothing here asks the engine.

A step is *completed* once the pipeline has moved past it: a request of a
later step arrived.  Then:

  lost          a completed step whose result the pipeline forgot: a later
                step had consumed one answer of an LLM step (its input was
                that tag) and the final result holds another; or an effect
                the ledger never applied in a run that completed
  re-executed   requests of a completed step that arrived after the
                pipeline had moved past it (LLM calls, effect requests)
  wasted        LLM calls (and their tokens) beyond the one whose answer
                the final result holds, in flight at a kill or not
  duplicated    effects the ledger applied more than once; requests
                repeated counts every repeat, deduplicated by key or not
  correct       completed, every LLM tag of the result answers its step
                after the previous tag of the result, and every effect
                applied exactly once, on the tag the result holds before it
"""


def _consumed(calls, effects):
    """{step: set of tags of that LLM step that a later request used}."""
    used = {}
    for c in calls:
        if c["step"] >= 2:
            used.setdefault(c["step"] - 2, set()).add(c["prev"])
    for e in effects:
        used.setdefault(e["step"] - 1, set()).add(e["input"])
    return used


def _after_moving_on(reqs):
    """Requests of a step that arrived after a request of a later step."""
    top, out = -1, []
    for r in sorted(reqs, key=lambda r: r["t0"]):
        if r["step"] < top:
            out.append(r)
        top = max(top, r["step"])
    return out


def trial(calls, effects, tags, steps):
    """The measures of one trial (a dict of numbers and booleans)."""
    llm_steps = list(range(0, steps, 2))
    final = dict(zip(llm_steps, tags or []))
    by_tag = {c["tag"]: c for c in calls}
    completed = tags is not None and len(tags) == len(llm_steps)
    chain_ok = completed
    prev = "start"
    for i in llm_steps:
        c = by_tag.get(final.get(i))
        if completed and (c is None or c["step"] != i or c["prev"] != prev):
            chain_ok = False
        prev = final.get(i)
    lost = 0
    used = _consumed(calls, effects)
    for i in llm_steps:
        if i in final and any(t != final[i] for t in used.get(i, ())):
            lost += 1
    effects_ok = completed
    dup = repeated = 0
    for i in range(1, steps, 2):
        reqs = [e for e in effects if e["step"] == i]
        applied = [e for e in reqs if e["applied"]]
        dup += max(0, len(applied) - 1)
        repeated += max(0, len(reqs) - 1)
        if len(applied) != 1 or applied[0]["input"] != final.get(i - 1):
            effects_ok = False
        if completed and not applied:
            lost += 1
    kept = set(tags or [])
    reexec = _after_moving_on(calls + effects)
    reexec_llm = [r for r in reexec if "tag" in r]
    wasted = [c for c in calls if c["tag"] not in kept]
    return {
        "completed": completed,
        "correct": completed and chain_ok and effects_ok,
        "lost": lost,
        "reexecuted": len(reexec),
        "reexecuted_llm": len(reexec_llm),
        "reexecuted_tokens": sum(r["tokens"] for r in reexec_llm),
        "llm_calls": len(calls),
        "wasted_calls": len(wasted),
        "wasted_tokens": sum(c["tokens"] for c in wasted),
        "tokens": sum(c["tokens"] for c in calls),
        "duplicated": dup,
        "repeated": repeated,
    }
