"""Seed-compatible: ``python scripts/compare_benchmarks.py --baseline A.json --current B.json`` = ``tariff compare``."""

import sys

from mpcbench_async.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["tariff", "compare", *sys.argv[1:]]))
