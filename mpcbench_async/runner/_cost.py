"""The one way a sum of call costs is written for people: an unknown price shows as ``unknown``, never as $0."""

from __future__ import annotations

__all__ = ["cost_text"]


def cost_text(cost_usd: float, *, calls: int, unpriced: int) -> str:
    """``1.2345``; ``unknown`` when every one of ``calls`` had no known price; ``1.2345 + unknown`` when some had.

    ``cost_usd`` sums the priced calls only, so with unpriced calls it is a lower bound, and says so.
    """
    if unpriced and unpriced >= calls:
        return "unknown"
    return f"{cost_usd:.4f} + unknown" if unpriced else f"{cost_usd:.4f}"
