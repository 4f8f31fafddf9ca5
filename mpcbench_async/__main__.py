"""``python -m mpcbench_async`` runs the command-line interface."""

from .cli import main

raise SystemExit(main())
