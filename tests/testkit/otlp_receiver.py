"""A real OTLP/HTTP receiver on loopback for the trace tests: ``oteltap`` (protobuf over
HTTP, 127.0.0.1 only), every span it is sent collected from the moment it listens.

    async with otlp_receiver() as receiver:
        ...  # a process exporting to receiver.endpoint
        spans = await receiver.spans_until(lambda spans: len(spans) >= 4)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from opentelemetry.proto.trace.v1.trace_pb2 import Span
from oteltap import OtelTapHttpProtobufReceiver, OtelTapHttpProtobufReceiverSettings

from testkit.everything_http import free_port

__all__ = ["Receiver", "otlp_receiver"]


@dataclass
class Receiver:
    endpoint: str
    """``OTEL_EXPORTER_OTLP_ENDPOINT`` for the exporting process."""
    received: list[Span] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def _add(self, span: Span) -> None:
        self.received.append(span)
        self._arrived.set()

    async def spans_until(self, enough: Callable[[list[Span]], bool], timeout: float = 20.0) -> list[Span]:
        """The spans received once ``enough`` says so (TimeoutError after ``timeout`` seconds)."""
        async with asyncio.timeout(timeout):
            while not enough(self.received):
                self._arrived.clear()
                await self._arrived.wait()
        return list(self.received)


@contextlib.asynccontextmanager
async def otlp_receiver() -> AsyncIterator[Receiver]:
    port = free_port()
    tap = OtelTapHttpProtobufReceiver(OtelTapHttpProtobufReceiverSettings(http_port=port))
    async with tap:
        receiver = Receiver(f"http://127.0.0.1:{port}")
        stream = tap.stream_traces()

        async def collect() -> None:
            async for span in stream:
                receiver._add(span)

        collector = asyncio.create_task(collect())
        await asyncio.sleep(0)  # the collector subscribes before anything can arrive
        try:
            yield receiver
        finally:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector
