#!/usr/bin/env python3
"""make_loopfold_corpus.py LIL OUTDIR -- the seeds of fuzz_loopfold.c: loop
runs of the target's own spec (loop id "fz") made by the real `lil`
binary, read back with `lil log --jsonl` and written one record per line
in the target's input form (S step, F failed step, E effect with its
request and result, U effect without an outcome, R resolution, D/X the
run's end).  A few more seeds hold the control records a run writes when
it pauses, parks or is asked to stop.  Run it after a change of the loop
records (docs/loops.md, "Records"), then re-add the fuzzer's finds."""

import json
import os
import subprocess
import sys
import tempfile

SPEC = """loopspec: "0.1"
id: fz
pattern: react
state:
  vars:
    n: {type: int, init: 0}
    s: {type: string, init: ""}
body:
  - id: think
    kind: agent
    harness: internal
    prompt: noop
    on_done:
      incr: n
terminate:
  signal: state-predicate
  until: "${state.n >= %d}"
caps:
  max_iterations: 6
  budget: {tokens: 100000}
  no_progress: {fingerprint: "${state.s}", max_repeats: 5}
"""


def lines_of(lil, store, run_id):
    out = subprocess.run([lil, "--dir", store, "log", run_id, "--jsonl"], check=True,
                         capture_output=True, text=True).stdout
    lines, intents = [], {}
    for rec in map(json.loads, out.splitlines()):
        t, key, payload = rec["type"], rec["key"], rec.get("payload", "")
        if t == "intent":
            intents[key] = rec.get("note", "")
            lines.append(("U", key, intents[key]))
        elif t == "step" and key in intents:
            lines.remove(("U", key, intents[key]))
            lines.append(("E", key, intents.pop(key), payload))
        elif t == "step":
            lines.append(("S", key, payload))
        elif t == "step-failed":
            lines.append(("F", key, payload))
        elif t == "resolve":
            lines.append(("R", key, json.loads(payload).get("action", "retry")))
        elif t == "run-done":
            lines.append(("D" + payload,))
        elif t == "run-failed":
            lines.append(("X" + payload,))
    return "".join(f[0] + "\t".join(f[1:]) + "\n" if len(f) > 1 else f[0] + "\n"
                   for f in lines)


def main():
    lil, outdir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        for until in (1, 3):
            spec = os.path.join(tmp, "fz-%d.yaml" % until)
            with open(spec, "w") as f:
                f.write(SPEC % until)
            run_id = "seed%d" % until
            subprocess.run([lil, "--dir", store, "run", spec, "--run-id", run_id,
                            "--sync", "off"], capture_output=True, check=False)
            text = lines_of(lil, store, run_id)
            with open(os.path.join(outdir, "v-completed-%d" % until), "w") as f:
                f.write(text)
            # the same run cut before its end, and with its last effect
            # left without an outcome
            cut = [ln for ln in text.splitlines(True) if not ln.startswith(("D", "X"))]
            with open(os.path.join(outdir, "v-cut-%d" % until), "w") as f:
                f.writelines(cut)
            eff = [i for i, ln in enumerate(cut) if ln.startswith("E")]
            if eff:
                name, req = cut[eff[-1]][1:].split("\t")[:2]
                with open(os.path.join(outdir, "v-uncertain-%d" % until), "w") as f:
                    f.writelines(cut[:eff[-1]] + ["U%s\t%s\n" % (name, req)])
                with open(os.path.join(outdir, "v-resolved-%d" % until), "w") as f:
                    f.writelines(cut[:eff[-1]] + ["U%s\t%s\n" % (name, req),
                                                  "R%s\tassume-done\n" % name])
        start = [ln for ln in open(os.path.join(outdir, "v-cut-1")) if ln.startswith("Sloop")]
        controls = {
            "v-paused": 'Spause.1\t{"iteration":0,"seq":0,"step":"think","ask":"go?",'
                        '"strategy":"single","digest":"d","why":"w"}\n',
            "v-parked": 'Sparked.1\t{"iteration":0,"wakeAt":1}\n',
            "v-stop": 'Sstop_requested.1\t{"request":{"version":1,"runId":"fz",'
                      '"requestedAt":1,"actor":"a","reason":"r"}}\n',
            "v-cap": 'Scap.1\t{"reason":"token-budget","action":"breakpoint","iteration":0}\n'
                     'Scap_cleared.2\t{"reason":"token-budget","atIteration":0,"at":1,'
                     '"actor":"a","why":"w"}\n',
            "v-reserve": 'Sreserve.1\t{"slot":"0.0","tokens":10,"usd":0,"limit":10}\n',
        }
        for name, text in controls.items():
            with open(os.path.join(outdir, name), "w") as f:
                f.writelines(start + [text])


if __name__ == "__main__":
    main()
