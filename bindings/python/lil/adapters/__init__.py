"""Adapters that make agent frameworks resume through lil (docs/adapters.md)."""
