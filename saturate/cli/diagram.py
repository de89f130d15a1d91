"""``saturate graph``: the graph diagram (Mermaid, Graphviz DOT, SVG, PNG), drawn offline.

The drawing is ``saturate.views.diagram``; it compiles the graph (LangGraph) and, for PNG, imports
matplotlib, both when it draws.
"""

from __future__ import annotations

import argparse
import sys

from saturate.cli.output import EXIT_BAD_INPUT, say
from saturate.views import diagram


def cmd_graph(args: argparse.Namespace) -> int:
    if args.print_mermaid:
        say(diagram.mermaid(), end="")
        return 0
    try:
        paths = diagram.write_diagrams(args.out, args.name, tuple(args.formats or diagram.FORMATS), args.renderer)
    except diagram.RendererError as exc:
        say(f"saturate: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for p in paths:
        say(p)
    return 0
