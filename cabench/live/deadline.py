"""A wall-time deadline for a whole HTTP attempt, not for each read.

httpx's timeouts bound each socket operation: a reply that trickles one byte
every half second never times out. :func:`deadline_transport` gives httpx a
transport whose sockets bound every connect, read and write by the time left
until the calling thread's deadline (set with :func:`deadline`), and raise the
matching timeout once it has passed, on new and on kept-alive connections alike.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpcore
import httpx

_local = threading.local()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation of this thread inside the block ends by ``seconds`` from now."""
    previous = getattr(_local, "end", None)
    _local.end = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.end = previous


def _left(timeout: float | None, exc: type[Exception]) -> float | None:
    """``timeout`` shortened to the time left before this thread's deadline; ``exc`` once it has passed."""
    end = getattr(_local, "end", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise exc("the attempt's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.SyncBackend):
    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(super().connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                           socket_options))


def deadline_transport(limits: httpx.Limits) -> httpx.HTTPTransport:
    """An httpx transport whose connections honour :func:`deadline`."""
    transport = httpx.HTTPTransport(limits=limits)
    pool = transport._pool  # noqa: SLF001 - httpx builds its connection pool here and offers no backend option
    if not hasattr(pool, "_network_backend"):
        raise RuntimeError("this httpx version keeps its connection pool elsewhere; pin httpx to a tested version")
    pool._network_backend = _Backend()  # noqa: SLF001
    return transport
