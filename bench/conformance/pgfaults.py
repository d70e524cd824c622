"""pgfaults.py -- the PostgreSQL faults (placeholder)."""


def run(a, b, ctx, want, prepare_venvs):
    b.skipped.append("PostgreSQL faults: not yet")
