"""``python -m saturate`` runs the ``saturate`` command (as ``python -m saturate.cli`` does)."""

import sys

from saturate.cli import main

sys.exit(main())
