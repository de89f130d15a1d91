"""saturate: a research agent on LangGraph that searches while results are new and stops when they repeat.

This directory is the import name. Its sub-packages are links to the folders at the repository root
(graph/, nodes/, sources/, state/), so that `saturate.graph.api` is a plain file path for Python, pyright,
editors and setuptools alike (pyproject.toml, [tool.setuptools]).
"""
