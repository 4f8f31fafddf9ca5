"""Spending limits: reserve a call's worst case before it is sent, settle on the reply.

Why reserve: checking only what was *spent* lets every call already in flight land
on top of the limit (256 concurrent calls × a long reply each). The client
reserves each call's worst case — estimated prompt tokens at the input rate plus
``max_tokens`` at the output rate — before dispatch, refuses the call when the
reservation would pass a limit (``BudgetExceeded``), and replaces the reservation
with the real cost when the reply arrives (or drops it when the call failed). So
spending passes a limit only by what the reply cost above its reservation, which
happens only when the prompt estimate fell short.

Limits: one for the whole run (``limit_usd``) and any per model
(``model_limits``; ``Budget.from_config`` takes ``budget_usd`` of each model from
model_config.json). A model whose price is unknown, or whose calls have no output
cap, cannot be bounded: reserving for it is a ``ConfigError`` saying what to set.
Every method is synchronous (no ``await`` between check and update), so concurrent
calls on one event loop cannot both take the last dollar; a lock covers threads.

Unsettled calls: a call sent whose reply was never recorded — in flight when an
earlier process was killed (its intent is in the call ledger, ``_ledger``), or
cancelled in flight in this one (``keep``) — may have been billed, so it counts as
spent at its worst case (``add_unsettled``); ``unsettled_calls`` and
``unsettled_usd`` say how much of ``spent_usd`` is such bounds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import msgspec

from .._exceptions import BudgetExceeded, ConfigError
from ._config import ModelConfig, Prices

__all__ = ["Budget", "BudgetExceeded", "Reservation", "worst_case_usd"]


def worst_case_usd(prices: Prices | None, prompt_tokens: int, max_output_tokens: int) -> float | None:
    """The most one call can cost (what a budget reserves), ``None`` when nothing bounds it.

    Unbounded: no known price, or no output cap (``max_output_tokens`` 0) on a model whose output is priced.
    """
    if prices is None or (max_output_tokens <= 0 and max(prices.output_per_1m, prices.reasoning_per_1m or 0.0) > 0):
        return None
    return prices.worst_case(prompt_tokens, max_output_tokens)


class Reservation(msgspec.Struct, kw_only=True):
    """One call's hold on the budget until it settles."""

    model: str
    amount_usd: float
    open: bool = True


class _Account(msgspec.Struct, kw_only=True):
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    open: int = 0  # reservations in flight (at 0, reserved_usd is reset to an exact 0.0)
    calls: int = 0
    refused: int = 0
    unsettled: int = 0  # calls counted at their worst case: sent, reply never recorded
    unsettled_usd: float = 0.0


class Budget:
    """Spending limits for one run, shared by every call of an ``LLMClient(budget=...)``."""

    def __init__(self, limit_usd: float | None = None, *,
                 model_limits: Mapping[str, float] | Callable[[str], float | None] | None = None) -> None:
        if limit_usd is not None and limit_usd <= 0:
            raise ValueError(f"a budget limit must be positive, got {limit_usd}")
        self.limit_usd = limit_usd
        self._model_limit: Callable[[str], float | None] = (
            dict(model_limits).get if isinstance(model_limits, Mapping) else model_limits or (lambda _name: None))
        self._total = _Account()
        self._models: dict[str, _Account] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: ModelConfig, limit_usd: float | None = None) -> Budget:
        """A budget with ``limit_usd`` for the run and each model's ``budget_usd`` from the config."""
        return cls(limit_usd, model_limits=lambda name: config.settings_for(name).budget_usd)

    @property
    def spent_usd(self) -> float:
        return self._total.spent_usd

    @property
    def reserved_usd(self) -> float:
        return self._total.reserved_usd

    def spent_by_model(self) -> dict[str, float]:
        return {name: account.spent_usd for name, account in self._models.items()}

    def add_spent(self, model: str, cost_usd: float) -> None:
        """Count ``cost_usd`` already spent on ``model`` (by earlier runs into the same output) against the limits."""
        with self._lock:
            for acct in (self._total, self._models.setdefault(model, _Account())):
                acct.spent_usd += cost_usd

    def add_unsettled(self, model: str, worst_usd: float) -> None:
        """Count a call of ``model`` an earlier run sent and never settled (reply unrecorded) at its worst case."""
        with self._lock:
            for acct in (self._total, self._models.setdefault(model, _Account())):
                acct.spent_usd += worst_usd
                acct.unsettled += 1
                acct.unsettled_usd += worst_usd

    @property
    def unsettled_calls(self) -> int:
        """Calls counted in ``spent_usd`` at their worst case, their replies never recorded."""
        return self._total.unsettled

    @property
    def unsettled_usd(self) -> float:
        """The part of ``spent_usd`` that is unsettled calls' worst case."""
        return self._total.unsettled_usd

    def unsettled_by_model(self) -> dict[str, tuple[int, float]]:
        """Per model: its unsettled calls and their worst case."""
        return {name: (acct.unsettled, acct.unsettled_usd) for name, acct in self._models.items() if acct.unsettled}

    def refused(self) -> int:
        """Calls refused so far."""
        return self._total.refused

    def reserve(self, model: str, prices: Prices | None, prompt_tokens: int, max_output_tokens: int, *,
                where: str = "model_config.json") -> Reservation:
        """Hold the worst case of one call of ``model``, or raise ``BudgetExceeded`` (``ConfigError`` if unbounded)."""
        if prices is None:
            raise ConfigError(f"model {model!r} has no known price, so a budget cannot bound its calls: set "
                              f"models.{model}.prices (input_per_1m, output_per_1m) in {where}")
        amount = worst_case_usd(prices, prompt_tokens, max_output_tokens)
        if amount is None:
            raise ConfigError(f"model {model!r} has no output cap, so a budget cannot bound its calls: set "
                              f"models.{model}.params.max_tokens in {where}")
        with self._lock:
            account = self._models.setdefault(model, _Account())
            for scope, acct, limit in (("the run", self._total, self.limit_usd),
                                       (f"model {model!r}", account, self._model_limit(model))):
                if limit is not None and acct.spent_usd + acct.reserved_usd + amount > limit:
                    self._total.refused += 1
                    account.refused += 1
                    raise BudgetExceeded(
                        f"budget reached: ${acct.spent_usd:.4f} of ${limit:.4f} spent for {scope} "
                        f"(${acct.reserved_usd:.4f} more reserved by calls in flight); a call to model {model!r} "
                        f"may cost up to ${amount:.4f}", model=model, spent_usd=acct.spent_usd, limit_usd=limit,
                        scope=scope)
            for acct in (self._total, account):
                acct.reserved_usd += amount
                acct.open += 1
        return Reservation(model=model, amount_usd=amount)

    def settle(self, reservation: Reservation, cost_usd: float) -> None:
        """Replace the reservation with what the call cost."""
        self._close(reservation, cost_usd)

    def release(self, reservation: Reservation) -> None:
        """Drop the reservation of a call that failed (a failed call is not billed)."""
        self._close(reservation, None)

    def keep(self, reservation: Reservation) -> None:
        """The call was sent and will never be settled (cancelled in flight): its worst case stays spent."""
        self._close(reservation, reservation.amount_usd, unsettled=True)

    def _close(self, reservation: Reservation, cost_usd: float | None, *, unsettled: bool = False) -> None:
        with self._lock:
            if not reservation.open:
                return
            reservation.open = False
            for acct in (self._total, self._models[reservation.model]):
                acct.open -= 1
                acct.reserved_usd = acct.reserved_usd - reservation.amount_usd if acct.open else 0.0
                if cost_usd is not None:
                    acct.spent_usd += cost_usd
                    acct.calls += 1
                if unsettled:
                    acct.unsettled += 1
                    acct.unsettled_usd += reservation.amount_usd
