"""lil.adapters -- lil under agent frameworks (docs/adapters.md).

Each adapter is a module of its own, imported by name
(``from lil.adapters.langgraph import LilSaver``), and is the only part of
the package that imports its framework: ``import lil`` needs none of them.
"""
