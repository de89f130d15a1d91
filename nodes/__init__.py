"""The nodes: a public module is exactly one node, ``(state, runtime) -> partial state update``.

The algorithms that read and judge text are the public library ``nodes/reading/`` (no node, no model call, no
LangGraph in it); the private modules here are the plumbing the nodes share (``_model``: model calls,
``_deadline``, ``_budget``, ``_search``, ``_answer``, ``_judge``...); the multi-source nodes live in
``nodes/multi/``. No node imports another node.
"""

# One name per module: this folder is the sub-package `saturate.nodes` (saturate/nodes links here). Imported as
# `nodes` it would be a second copy of every module in it, with its own classes and caches: refused here, and by
# ruff's banned-api rule before anything runs (pyproject.toml).
if __name__ != "saturate.nodes":
    raise ImportError(f"import saturate.nodes, not {__name__} (docs/layout.md: one name per module)")
