"""Helpers for tests, benchmarks and chaos runs (public, as structlog's ``testing`` is: users' own tests need them).

- ``write_workspace``: a tiny self-contained MPCBench workspace, at a size chosen by the caller;
- ``BillingProxy``: an accounting proxy that bills what a provider would, and can SIGKILL a sweep between the
  provider's answer and the sweep's record;
- ``Scanner`` and ``random_keys``: made-up API keys and a search for them in any of the sim's shapes;
- ``full_disk_write``: an ``os.write`` whose writes to one file hit a full disk.
"""

from __future__ import annotations

from ._billing import Billed, BillingProxy
from ._disk import full_disk_write
from ._secrets import Scanner, random_keys
from ._workspace import write_workspace

__all__ = ["Billed", "BillingProxy", "Scanner", "full_disk_write", "random_keys", "write_workspace"]
