#!/usr/bin/env python3
"""schema_check.py -- every JSON document the tests see from lil, checked
against its schema in docs/schemas/ (JSON Schema draft 2020-12).

The one place that says which output has which schema (schema_of) and
validates it (check).  tests/loop/loopt.py calls check() for every lil
command a loop test runs; the C tests of tests/cli log each command and its
stdout (cli_util.c, $LIL_TEST_JSON_LOG) and the tests cli_json_log_check
and cli_json_schemas (tests/cli/CMakeLists.txt) run this file over that log:

    python3 schema_check.py LOGDIR      # every DIR/*.jsonl line checked

The validator is the `jsonschema` package from PyPI, installed by
scripts/pydeps.sh into build/pydeps/pyX.Y/ (nothing system-wide); a
missing validator is a failure that names the script, never a skip.
Prints `N documents checked` or each mismatch (the command, the path in
the document, the schema's complaint); exit status 1 on a mismatch.
"""

import json
import os
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMAS = os.path.join(ROOT, "docs", "schemas")
PYDEPS = os.environ.get("LIL_TEST_PYDEPS") or os.path.join(
    ROOT, "build", "pydeps", "py%d.%d" % sys.version_info[:2])

# The verbs whose --json output is a RunResult (docs/loops.md).
RESULT_VERBS = {"run", "step", "resume", "approve", "recover"}
_validators = {}


def _jsonschema():
    if PYDEPS not in sys.path:
        sys.path.insert(0, PYDEPS)
    try:
        import jsonschema  # noqa: PLC0415 -- from PYDEPS, found at first use
    except ImportError as e:
        raise AssertionError(
            f"the JSON Schema validator is not installed in {PYDEPS} ({e}): "
            "run scripts/pydeps.sh") from None
    if not os.path.abspath(jsonschema.__file__).startswith(os.path.abspath(PYDEPS) + os.sep):
        raise AssertionError(f"jsonschema comes from {jsonschema.__file__}, not from "
                             f"{PYDEPS}: run scripts/pydeps.sh")
    return jsonschema


def validator(name):
    """The validator of docs/schemas/NAME.schema.json."""
    if name not in _validators:
        js = _jsonschema()
        with open(os.path.join(SCHEMAS, name + ".schema.json"), encoding="utf-8") as f:
            schema = json.load(f)
        cls = js.Draft202012Validator
        cls.check_schema(schema)
        _validators[name] = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return _validators[name]


def _verb_and_flags(args):
    """(verb, set of flags) of a lil command line (without the binary)."""
    words = list(args)
    i = 0
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] == "--dir" else 1
    if i >= len(words):
        return None, set(words)
    rest = words[i + 1:]
    if "--" in rest:
        rest = rest[:rest.index("--")]
    flags = {w.split("=", 1)[0] for w in words[:i] + rest if w.startswith("--")}
    return words[i], flags


def schema_of(args):
    """The schema of the stdout of `lil ARGS`: (name, per_line), or None
    when that output has no schema (text, or a verb without one)."""
    verb, flags = _verb_and_flags(args)
    if verb == "log" and "--jsonl" in flags:
        return "log-event", True
    if verb == "worker" and "--json" in flags:
        return "worker-event", True
    if "--json" not in flags:
        return None
    if verb in RESULT_VERBS:
        return "run-result", False
    if verb in ("ls", "inspect", "doctor", "workers"):
        return verb, False
    return None


def problems(args, out):
    """What is wrong with `lil ARGS`'s stdout OUT against its schema: a list
    of texts, empty when it conforms (or has no schema, or is no JSON)."""
    which = schema_of(args)
    if which is None or not out.strip():
        return []
    name, per_line = which
    docs = out.splitlines() if per_line else [out]
    found = []
    for doc in docs:
        if not doc.strip():
            continue
        try:
            value = json.loads(doc)
        except ValueError:
            return []  # not JSON (a usage error's text, a truncated capture)
        for e in validator(name).iter_errors(value):
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            found.append(f"{name}.schema.json at {where}: {e.message}")
    return found


def check(args, out):
    """Raise AssertionError when `lil ARGS`'s stdout does not conform."""
    found = problems(args, out)
    if found:
        raise AssertionError("lil %s: output does not match its schema:\n  %s"
                             % (shlex.join(args), "\n  ".join(found[:10])))


def _renamed_key_passes(args, out):
    """The schemas are strict: the first document of OUT with its first key
    renamed must not match.  A list naming the key when it does."""
    name, per_line = schema_of(args)
    lines = [line for line in out.splitlines() if line.strip()]
    doc = (lines or [""])[0] if per_line else out
    try:
        value = json.loads(doc)
    except ValueError:
        return []
    if not isinstance(value, dict) or not value:
        return []
    key = next(iter(value))
    value[key + "_renamed"] = value.pop(key)
    if next(validator(name).iter_errors(value), None) is None:
        return [f"{name}.schema.json accepts key {key!r} renamed: not strict enough"]
    return []


def main(logdir):
    checked, bad = 0, 0
    for name in sorted(os.listdir(logdir)) if os.path.isdir(logdir) else []:
        with open(os.path.join(logdir, name), encoding="utf-8") as f:
            for line in f:
                entry = json.loads(line)
                args = shlex.split(entry["args"])
                if "out" not in entry or schema_of(args) is None:
                    continue
                checked += 1
                for p in problems(args, entry["out"]) + _renamed_key_passes(args, entry["out"]):
                    bad += 1
                    print(f"lil {entry['args']}\n  {p}")
    print(f"{checked} documents checked, {bad} mismatches")
    if checked == 0:
        print("no document to check: did the cli tests run with LIL_TEST_JSON_LOG?")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
