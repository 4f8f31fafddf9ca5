"""``python -m mpcbench_async`` runs the command-line interface (``cli.run``: ``main``, then a quick exit)."""

from .cli import run

run()
