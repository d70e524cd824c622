"""langgraph_py.py -- the workload as a LangGraph graph with
langgraph-checkpoint-sqlite's ``SqliteSaver`` (a file database, set up by
``SqliteSaver.setup()``): two nodes, ``think`` (the LLM call) and ``act``
(the side effect), alternating through a conditional edge until the
pipeline's N steps are done; one thread per pipeline.  A restart asks the
saver for the thread's state and, when it has one, resumes with
``invoke(None, config)``, as LangGraph's durable-execution docs show.
Durability: CONF_DURABILITY, "async" (LangGraph's default: a checkpoint is
written while the next step runs) or "sync" (written before it).
LangGraph offers no idempotency key and no uncertain state."""

import os
import sqlite3
import sys
from typing import TypedDict

import common
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    i: int
    prev: str
    tags: list


def build(w):
    def think(s):
        tag = w.llm(s["i"], s["prev"])
        return {"i": s["i"] + 1, "prev": tag, "tags": s["tags"] + [tag]}

    def act(s):
        w.effect(s["i"], s["prev"])
        return {"i": s["i"] + 1}

    def route(s):
        if s["i"] >= w.steps:
            return END
        return "think" if s["i"] % 2 == 0 else "act"

    g = StateGraph(State)
    g.add_node("think", think)
    g.add_node("act", act)
    g.add_edge(START, "think")
    g.add_conditional_edges("think", route)
    g.add_conditional_edges("act", route)
    return g


def main():
    common.parse_args(sys.argv)
    w = common.Workload()
    os.makedirs(w.dir, exist_ok=True)
    conn = sqlite3.connect(os.path.join(w.dir, "checkpoints.sqlite"), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    graph = build(w).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": w.run}, "recursion_limit": w.steps + 10}
    durability = os.environ.get("CONF_DURABILITY", "async")
    snap = graph.get_state(config)
    if not snap.values:
        out = graph.invoke({"i": 0, "prev": "start", "tags": []}, config, durability=durability)
    elif snap.next:
        out = graph.invoke(None, config, durability=durability)
    else:
        out = snap.values
    conn.close()
    common.done(out["tags"])


if __name__ == "__main__":
    main()
