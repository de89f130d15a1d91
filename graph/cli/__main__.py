"""``python -m saturate.graph.cli`` runs the ``saturate`` command."""

import sys

from saturate.graph.cli import main

sys.exit(main())
