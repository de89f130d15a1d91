"""The reading library: the algorithms that read and judge text, with no node, no model call and no LangGraph
in them (an import-linter contract in pyproject.toml).

- ``question``: what a task asks (its kind, its sentences, stems); ``entities``: the names in a text;
  ``places``: what a place or language name is; ``salience``: how much a passage is about the task;
  ``vocabulary``: the words the accepted rounds have seen (novelty by words).
- ``chain`` and ``slots``: a multi-hop question's hops and the slot each answer fills.
- ``extractive``: the answer read off the passages; ``stance``: whether a passage supports or refutes a claim;
  ``verdict``: True/False/Invalid from the weighed stances and its extractive proof; ``tiers``: how much a
  domain's word weighs; ``actors``: who a multi-source session's records name.

The nodes (``saturate.nodes``) call these; the model-call side of a judgement is ``nodes/_judge.py``.
"""
