"""The nodes: a public module is exactly one node, ``(state, runtime) -> partial state update``.

The algorithms that read and judge text are the public library ``nodes/reading/`` (no node, no model call, no
LangGraph in it); the private modules here are the plumbing the nodes share (``_model``: model calls,
``_deadline``, ``_budget``, ``_search``, ``_answer``, ``_judge``...); the multi-source nodes live in
``nodes/multi/``. No node imports another node.
"""
