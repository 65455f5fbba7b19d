"""An answer's ``Content-Encoding`` undone: whole (``decode_content``) or as it streams
(``StreamDecoder``), with the decoded size capped either way.

toolrelay asks for no encoding (it sends no ``Accept-Encoding``); some servers compress
anyway, so gzip and deflate (zlib-wrapped or raw) are decoded; any other coding is
refused. A small gzip body can expand a thousandfold, so the cap counts decoded bytes.
"""

from __future__ import annotations

import zlib
from typing import Final

from ._http_failures import AnswerRejected

__all__ = ["StreamDecoder", "decode_content", "size_text"]

_GZIP_OR_ZLIB: Final = 47  # zlib detects the gzip or zlib header itself
_RESTART_WINDOW: Final = 64 * 1024
"""Bytes kept from a deflate stream's start, in case it turns out to be raw deflate."""


def size_text(count: int) -> str:
    """``64 MiB``, or an exact byte count."""
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count % mib == 0 else f"{count} bytes"


def _codings(encoding: str | None) -> list[str]:
    """The codings to undo, last applied first; raises for one toolrelay does not decode."""
    codings = [c.strip().lower() for c in (encoding or "").split(",")]
    found = []
    for coding in reversed(codings):
        if coding in ("gzip", "x-gzip", "deflate"):
            found.append(coding)
        elif coding not in ("identity", ""):
            raise AnswerRejected(f"the answer is encoded with {coding!r}, which toolrelay does not decode")
    return found


def decode_content(body: bytes, encoding: str | None, cap: int) -> bytes:
    """``body`` with its ``Content-Encoding`` (gzip, deflate; applied in order) undone."""
    for coding in _codings(encoding):
        body = _inflate(body, coding, cap)
    return body


def _inflate(body: bytes, coding: str, cap: int) -> bytes:
    # gzip or zlib wrapper detected from the header (47); "deflate" is sometimes sent raw (-15)
    for wbits in (_GZIP_OR_ZLIB,) if coding != "deflate" else (_GZIP_OR_ZLIB, -zlib.MAX_WBITS):
        inflater = zlib.decompressobj(wbits)
        try:
            data = inflater.decompress(body, cap + 1)
        except zlib.error:
            continue
        if len(data) > cap:
            raise AnswerRejected(f"the answer is larger than {size_text(cap)} once decompressed")
        return data
    raise AnswerRejected(f"the answer says it is {coding}-encoded but does not decompress")


class StreamDecoder:
    """Undoes one gzip / deflate coding piece by piece (a streamed answer); the identity
    when the answer is not encoded. Counts the decoded bytes against ``cap``."""

    def __init__(self, encoding: str | None, cap: int) -> None:
        codings = _codings(encoding)
        if len(codings) > 1:
            raise AnswerRejected(f"the streamed answer is encoded twice ({encoding}), which toolrelay "
                                 "does not decode")
        self._coding = codings[0] if codings else None
        self._inflater = zlib.decompressobj(_GZIP_OR_ZLIB) if self._coding else None
        self._raw_tried = False
        self._start = b""
        """What was fed before any output: a raw deflate restart needs it again."""
        self._cap = cap
        self._size = 0

    def feed(self, data: bytes) -> bytes:
        if self._inflater is None:
            return data
        if not self._size and len(self._start) < _RESTART_WINDOW:
            self._start += data
        try:
            decoded = self._inflater.decompress(data)
        except zlib.error:
            decoded = self._raw_deflate()
        self._size += len(decoded)
        if self._size > self._cap:
            raise AnswerRejected(f"the answer is larger than {size_text(self._cap)} once decompressed")
        return decoded

    def _raw_deflate(self) -> bytes:
        """A "deflate" stream sent without its zlib wrapper: restart raw, once, from the start."""
        if self._coding != "deflate" or self._raw_tried or self._size or len(self._start) >= _RESTART_WINDOW:
            raise AnswerRejected(f"the answer says it is {self._coding}-encoded but does not decompress")
        self._raw_tried = True
        self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            return self._inflater.decompress(self._start)
        except zlib.error:
            raise AnswerRejected("the answer says it is deflate-encoded but does not decompress") from None
