"""Seed-compatible entry point.

``python scripts/run_benchmarks.py --suite tariff --mode fixture`` = ``mpcbench-async tariff run``.
"""

import sys

from mpcbench_async.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["tariff", "run", *sys.argv[1:]]))
