"""``python -m mpcbench_async.generator.world_state_generator --scenario-id X`` (seed-compatible).

Same as ``mpcbench-async generate world-state``; all its options are accepted.
"""

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["generate", "world-state", *sys.argv[1:]]))
