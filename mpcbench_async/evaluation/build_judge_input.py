"""``python -m mpcbench_async.evaluation.build_judge_input`` (seed-compatible).

The same as ``mpcbench-async judge-input``.
"""

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["judge-input", *sys.argv[1:]]))
