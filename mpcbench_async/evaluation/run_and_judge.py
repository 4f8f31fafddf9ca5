"""``python -m mpcbench_async.evaluation.run_and_judge`` (seed-compatible): same as ``mpcbench-async run-and-judge``."""

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["run-and-judge", *sys.argv[1:]]))
