"""The nodes: a public module is exactly one node, ``(state, runtime) -> partial state update``.

Shared helpers are private modules (``_salience``, ``_search``, ``_answer``...); the
multi-source nodes live in ``nodes/multi/``. No node imports another node.
"""
