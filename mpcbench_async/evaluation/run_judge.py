"""``python -m mpcbench_async.evaluation.run_judge`` (seed-compatible): same as ``mpcbench-async judge``."""

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["judge", *sys.argv[1:]]))
