"""``python -m saturate.cli`` runs the ``saturate`` command."""

import sys

from saturate.cli import main

sys.exit(main())
