"""``python -m saturate.bench.perf [--json] [--quick] [--only FIGURE] [--profile NAME]``."""

import sys

from saturate.bench.perf import main

sys.exit(main())
