"""A bounded in-memory channel: anyio's memory object stream, step for step, at a fraction of its Python calls.

The worker pool and the pipeline pass every unit and every record through two channels, so each unit paid four
of anyio's sends and receives: ~14 Python calls each (``anyio.lowlevel.checkpoint`` asks sniffio which library
runs, then ``asyncio.sleep(0)``; a wait builds an ``anyio.Event`` over an ``asyncio.Event``) — a quarter of the
engine's calls per unit. This is the same algorithm as ``anyio.streams.memory`` (4.x) on asyncio: a send and
a receive each yield to the loop once first (a bare ``yield``, what ``asyncio.sleep(0)`` does), then hand the
item over at once if they can, else wait on a bare future that the other side completes. Same yields, same
wake-up order (futures are completed, and their tasks woken, in the order anyio sets its events), same errors
(anyio's ``EndOfStream``, ``ClosedResourceError``, ``BrokenResourceError``, ``WouldBlock``): the order units
start in and records are written does not change (``tests/runtime/test_channel.py`` runs both side by side).

Asyncio only, like the rest of the runtime (the signal watcher and the ledger use the asyncio loop).
"""

from __future__ import annotations

import asyncio
import types
from collections import OrderedDict, deque
from collections.abc import Generator
from typing import Any, Generic, Self, TypeVar

from anyio import BrokenResourceError, ClosedResourceError, EndOfStream, WouldBlock
from anyio.abc import ObjectReceiveStream, ObjectSendStream

__all__ = ["Receiver", "Sender", "channel"]

T = TypeVar("T")

_MISSING: Any = object()


@types.coroutine
def _yield() -> Generator[None, None, None]:
    """One trip through the event loop, as ``asyncio.sleep(0)`` (a cancelled task gets its ``CancelledError`` here)."""
    yield


class _State(Generic[T]):
    __slots__ = ("buffer", "max_size", "receivers", "senders", "waiting_receivers", "waiting_senders")

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.buffer: deque[T] = deque()
        self.senders = 0
        self.receivers = 0
        # a waiting receiver's future gets the item as its result; a waiting sender's future is completed once taken
        self.waiting_receivers: OrderedDict[asyncio.Future[T], None] = OrderedDict()
        self.waiting_senders: OrderedDict[asyncio.Future[None], T] = OrderedDict()


def _wake(waiter: asyncio.Future[Any], value: Any = None) -> None:
    if not waiter.done():
        waiter.set_result(value)


class _End(Generic[T]):
    """What both ends share: the channel's state, whether this end is closed, the futures its own tasks wait on."""

    _side: str  # the state's count of open ends of this kind: "senders" or "receivers"

    def __init__(self, state: _State[T]) -> None:
        self._state = state
        self._closed = False
        self._waiters: set[asyncio.Future[Any]] = set()
        setattr(state, self._side, getattr(state, self._side) + 1)

    def clone(self) -> Self:
        """Another end of this kind (the channel ends for the other side once every one of them is closed)."""
        if self._closed:
            raise ClosedResourceError
        return type(self)(self._state)

    def close(self) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Receiver(_End[T], ObjectReceiveStream[T]):
    """The receiving end."""

    _side = "receivers"

    def receive_nowait(self) -> T:
        if self._closed:
            raise ClosedResourceError
        state = self._state
        if state.waiting_senders:  # take the next waiting sender's item into the buffer, and let it go
            sent, item = state.waiting_senders.popitem(last=False)
            state.buffer.append(item)
            _wake(sent)
        if state.buffer:
            return state.buffer.popleft()
        if not state.senders:
            raise EndOfStream
        raise WouldBlock

    async def receive(self) -> T:
        await _yield()
        try:
            return self.receive_nowait()
        except WouldBlock:
            waiter: asyncio.Future[T] = asyncio.get_running_loop().create_future()
            self._waiters.add(waiter)
            self._state.waiting_receivers[waiter] = None
            try:
                item = await waiter
            finally:
                self._state.waiting_receivers.pop(waiter, None)
                self._waiters.discard(waiter)
            if item is _MISSING:
                if self._closed:
                    raise ClosedResourceError from None
                raise EndOfStream from None
            return item

    def __aiter__(self) -> Receiver[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        state = self._state
        state.receivers -= 1
        if not state.receivers:
            for sent in list(state.waiting_senders):
                _wake(sent)
        for waiter in self._waiters:
            state.waiting_receivers.pop(waiter, None)
            _wake(waiter, _MISSING)
        self._waiters = set()


class Sender(_End[T], ObjectSendStream[T]):
    """The sending end."""

    _side = "senders"

    def send_nowait(self, item: T) -> None:
        if self._closed:
            raise ClosedResourceError
        state = self._state
        if not state.receivers:
            raise BrokenResourceError
        while state.waiting_receivers:  # the first waiting receiver not being cancelled takes it
            waiter, _ = state.waiting_receivers.popitem(last=False)
            if not waiter.done():
                waiter.set_result(item)
                return
        if len(state.buffer) < state.max_size:
            state.buffer.append(item)
        else:
            raise WouldBlock

    async def send(self, item: T) -> None:
        await _yield()
        try:
            self.send_nowait(item)
        except WouldBlock:
            sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.add(sent)
            self._state.waiting_senders[sent] = item
            try:
                await sent
            finally:
                not_taken = sent in self._state.waiting_senders
                if not_taken:
                    del self._state.waiting_senders[sent]
                withdrawn = self._closed and sent in self._waiters
                self._waiters.discard(sent)
            if not_taken:
                raise BrokenResourceError from None
            if withdrawn:
                raise ClosedResourceError from None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        state = self._state
        state.senders -= 1
        if not state.senders:
            waiting = list(state.waiting_receivers)
            state.waiting_receivers.clear()
            for waiter in waiting:
                _wake(waiter, _MISSING)
        withdrawn = set()
        for sent in self._waiters:
            if sent in state.waiting_senders:
                del state.waiting_senders[sent]
                withdrawn.add(sent)
            _wake(sent)
        self._waiters = withdrawn  # a future left here was never taken: its send raises ClosedResourceError


class channel(Generic[T]):  # noqa: N801 - used as anyio's create_memory_object_stream is: channel[int].open(8)
    """``channel[T].open(max_size)``: the two ends of a channel holding up to ``max_size`` items of type ``T``."""

    @staticmethod
    def open(max_size: int) -> tuple[Sender[T], Receiver[T]]:
        state: _State[T] = _State(max_size)
        return Sender(state), Receiver(state)
