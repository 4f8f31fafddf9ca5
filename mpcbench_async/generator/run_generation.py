"""``python -m mpcbench_async.generator.run_generation --scenario-id X`` (seed-compatible).

Same as ``mpcbench-async generate sources``: the six sources (and the world state
first if it is missing); all its options are accepted.
"""

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["generate", "sources", *sys.argv[1:]]))
