"""``python -m saturate.graph.bench.perf [--json] [--quick] [--only FIGURE] [--profile NAME]``."""

import sys

from saturate.graph.bench.perf import main

sys.exit(main())
