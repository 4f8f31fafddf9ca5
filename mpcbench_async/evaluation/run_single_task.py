"""``python -m mpcbench_async.evaluation.run_single_task`` (seed-compatible): same as ``mpcbench-async run-task``."""

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["run-task", *sys.argv[1:]]))
