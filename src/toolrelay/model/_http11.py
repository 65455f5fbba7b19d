"""Internal: HTTP/1.1 framing for the lean model client (``http.py``), sans I/O.

The model client writes one kind of request (a POST with a ``Content-Length``) and reads
answers; h11 did both for it, and its general state machine, event objects and per-request
header validation were the largest single cost of a relay turn (bench/README.md). Here:

- ``RequestHead``: the request line and the fixed headers, validated and encoded once per
  (target, headers); each request adds only its ``Content-Length``;
- ``AnswerParser``: one answer at a time, fed the bytes as they arrive: the status line and
  headers (interim 1xx answers skipped by the caller), then the body as RFC 9112 frames it
  (sized, chunked with extensions and trailers, or delimited by the close), and whether
  the connection may carry another request.

The grammar is h11's (RFC 9110 tokens and field values, obsolete line folding unfolded,
LF accepted for CRLF). A value is never quoted in an error: header lines may carry secrets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..redaction import REDACTED
from ._http_failures import CLOSED_WITHOUT_ANSWER, ConnectionClosed, NotHttp, RequestRejected

__all__ = ["MAX_HEAD_BYTES", "AnswerHead", "AnswerParser", "RequestHead"]

MAX_HEAD_BYTES: Final = 64 * 1024
"""An answer's status line and headers above this are refused (h11 allowed 16 KiB)."""
_TOKEN: Final = r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
_VALUE: Final = r"(?:[\x21-\x7e\x80-\xff]+(?:[ \t]+[\x21-\x7e\x80-\xff]+)*)?"
# The request side checks bytes; the answer side latin-1 text (the same characters, decoded once).
_NAME_RE: Final = re.compile(_TOKEN.encode())
_VALUE_RE: Final = re.compile(_VALUE.encode())
_TARGET_RE: Final = re.compile(rb"[\x21-\x7e]+")
_HEADER_RE: Final = re.compile(r"(" + _TOKEN + r"):[ \t]*(" + _VALUE + r")[ \t]*")
_TRAILER_RE: Final = re.compile((r"(" + _TOKEN + r"):[ \t]*(" + _VALUE + r")[ \t]*").encode())
_STATUS_RE: Final = re.compile(r"HTTP/([0-9])\.([0-9]) ([0-9]{3})(?: [\t\x20-\x7e\x80-\xff]*)?")
_CHUNK_RE: Final = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*")
_BLANK_LINE: Final = re.compile(rb"\n\r?\n")
_FORBIDDEN: Final = "a request header has a name or value HTTP/1.1 forbids"
_WHITESPACE: Final = " \t"
_NO_BODY_STATUSES: Final = frozenset({204, 304})
_SIZED, _CHUNKED, _UNTIL_CLOSE = 0, 1, 2


class RequestHead:
    """A POST's request line and headers, encoded once; ``Content-Length`` added per request."""

    def __init__(self, path: str, host: str, headers: Sequence[tuple[str, str]]) -> None:
        lines = [b"POST " + _target(path) + b" HTTP/1.1", b"Host: " + _value(host)]
        lines += [_name(name) + b": " + _value(value) for name, value in headers]
        self._prefix = b"\r\n".join(lines) + b"\r\nContent-Length: "

    def request(self, content: bytes) -> bytes:
        """The whole request: head and ``content``, to be written in one piece."""
        return b"%s%d\r\n\r\n%s" % (self._prefix, len(content), content)


def _target(path: str) -> bytes:
    try:
        encoded = path.encode("ascii")
    except UnicodeEncodeError:
        raise RequestRejected("the URL's path has a character HTTP/1.1 forbids") from None
    if not _TARGET_RE.fullmatch(encoded):
        raise RequestRejected("the URL's path has a character HTTP/1.1 forbids")
    return encoded


def _name(name: str) -> bytes:
    try:
        encoded = name.encode("ascii")
    except UnicodeEncodeError:
        raise RequestRejected(_FORBIDDEN) from None
    if not _NAME_RE.fullmatch(encoded) or encoded.lower() in (b"content-length", b"transfer-encoding"):
        raise RequestRejected(_FORBIDDEN)
    return encoded


def _value(value: str) -> bytes:
    try:
        encoded = value.encode("ascii")
    except UnicodeEncodeError:
        raise RequestRejected(_FORBIDDEN) from None
    if not _VALUE_RE.fullmatch(encoded):
        raise RequestRejected(_FORBIDDEN)
    return encoded


@dataclass(slots=True)
class AnswerHead:
    """An answer's status line and headers."""

    status: int
    headers: dict[str, str]
    """Names lower-case; a repeated header's values joined with ", "."""
    keep_alive: bool
    """HTTP/1.1 without ``Connection: close``."""


class AnswerParser:
    """Reads one answer after another from the bytes ``feed`` is given (see the module docstring)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._framing = _SIZED
        self._remaining = 0
        """Sized: body bytes still to come. Chunked: bytes left in the current chunk."""
        self._chunk_state = 0  # chunked: 0 size line, 1 data, 2 the CRLF after data, 3 trailers
        self.ended = False
        """The current answer's body was read to its end."""
        self.keep_alive = False

    @property
    def pending(self) -> bool:
        """Bytes received beyond what has been parsed."""
        return bool(self._buffer)

    def feed(self, data: bytes) -> None:
        self._buffer = self._buffer + data if self._buffer else data

    def head(self) -> AnswerHead | None:
        """The next answer head, once its blank line has arrived; None until then. Sets up
        the body's framing (a 1xx head has no body: the caller reads the next head)."""
        found = _BLANK_LINE.search(self._buffer)
        if found is None:
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise _malformed(f"the answer's headers are larger than {MAX_HEAD_BYTES // 1024} KiB")
            if not b"HTTP/".startswith(self._buffer[:5]):  # SSH, TLS, garbage: no need to wait
                raise _malformed(f"illegal status line: {REDACTED}")
            return None
        raw, self._buffer = self._buffer[: found.start()], self._buffer[found.end():]
        text = raw.decode("latin-1").removesuffix("\r")  # once: every header value is latin-1 text
        # CRLF lines (the usual case) split at once; a bare LF ends a line too, as in h11
        lines = text.split("\r\n") if "\n" not in text.replace("\r\n", "") else [
            line.removesuffix("\r") for line in text.split("\n")]
        matched = _STATUS_RE.fullmatch(lines[0])
        if matched is None:
            raise _malformed(f"illegal status line: {REDACTED}")
        status = int(matched.group(3))
        headers = _headers(lines[1:])
        connection = headers.get("connection")
        self.keep_alive = matched.group(1, 2) == ("1", "1") and (
            connection is None or "close" not in _tokens(headers, "connection"))
        self._frame(status, headers)
        return AnswerHead(status, headers, self.keep_alive)

    def _frame(self, status: int, headers: dict[str, str]) -> None:
        self.ended, self._chunk_state = False, 0
        if status < 200 or status in _NO_BODY_STATUSES:
            self._framing, self._remaining, self.ended = _SIZED, 0, True
        elif "transfer-encoding" in headers:
            if _tokens(headers, "transfer-encoding") != ["chunked"]:
                raise _malformed("Transfer-Encoding other than chunked")
            self._framing, self._remaining = _CHUNKED, 0
        elif (length := headers.get("content-length")) is not None:
            if not (length.isdigit() and length.isascii()):  # repeated (joined by ", "), or not a number
                lengths = set(_tokens(headers, "content-length"))
                if len(lengths) != 1 or not (length := lengths.pop()).isdigit() or not length.isascii():
                    raise _malformed("bad Content-Length")
            if len(length) > 19:
                raise _malformed("bad Content-Length")
            self._framing, self._remaining = _SIZED, int(length)
            self.ended = self._remaining == 0
        else:
            self._framing, self.keep_alive = _UNTIL_CLOSE, False

    def body(self) -> bytes:
        """The body bytes that have arrived (b"" when none); ``ended`` once it is complete."""
        if self.ended:
            return b""
        if self._framing == _SIZED:
            data = self._buffer[: self._remaining]
            self._buffer = self._buffer[len(data):]
            self._remaining -= len(data)
            self.ended = self._remaining == 0
            return data
        if self._framing == _UNTIL_CLOSE:
            data, self._buffer = self._buffer, b""
            return data
        return self._chunks()

    def end_of_input(self) -> bytes:
        """The connection ended: the rest of a close-delimited body (then ``ended``), else
        ``ConnectionClosed``, as the answer is incomplete."""
        if self._framing != _UNTIL_CLOSE or self.ended:
            raise ConnectionClosed(CLOSED_WITHOUT_ANSWER)
        data, self._buffer, self.ended = self._buffer, b"", True
        return data

    def next_answer(self) -> None:
        """Ready for the answer to the next request on the connection."""
        self._framing, self._remaining, self._chunk_state, self.ended = _SIZED, 0, 0, False

    def _chunks(self) -> bytes:
        pieces: list[bytes] = []
        buffer = self._buffer
        while True:
            if self._chunk_state == 1:  # chunk data
                piece = buffer[: self._remaining]
                if not piece:
                    break
                pieces.append(piece)
                buffer = buffer[len(piece):]
                self._remaining -= len(piece)
                if self._remaining:
                    break
                self._chunk_state = 2
                continue
            end = buffer.find(b"\n")
            if end < 0:
                if len(buffer) > MAX_HEAD_BYTES:
                    raise _malformed("a chunk header or trailer line is too long")
                break
            line, buffer = buffer[:end].removesuffix(b"\r"), buffer[end + 1:]
            if self._chunk_state == 2:  # the CRLF after a chunk's data
                if line:
                    raise _malformed("malformed chunk footer")
                self._chunk_state = 0
            elif self._chunk_state == 0:  # a chunk's size line
                matched = _CHUNK_RE.fullmatch(line)
                if matched is None:
                    raise _malformed("illegal chunk header")
                self._remaining = int(matched.group(1), 16)
                self._chunk_state = 1 if self._remaining else 3
            elif not line:  # the blank line after the trailers: the end
                self.ended = True
                break
            elif line[:1] not in (b" ", b"\t") and _TRAILER_RE.fullmatch(line) is None:
                raise _malformed(f"illegal header line: {REDACTED}")
        self._buffer = buffer
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _malformed(what: str) -> NotHttp:
    return NotHttp(f"the answer is not valid HTTP/1.1 ({what})")


def _headers(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    last = ""
    for line in lines:
        matched = _HEADER_RE.fullmatch(line)
        if matched is None:
            if line[:1] not in (" ", "\t"):
                raise _malformed(f"illegal header line: {REDACTED}")
            if not last:  # obsolete line folding: part of the value before, if there is one
                raise _malformed("continuation line at start of headers")
            headers[last] = f"{headers[last]} {line.strip(_WHITESPACE)}".rstrip()
            continue
        name, value = matched.groups()
        name = name.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
        last = name
    return headers


def _tokens(headers: dict[str, str], name: str) -> list[str]:
    return [token.strip().lower() for token in headers.get(name, "").split(",") if token.strip()]
