"""One exception tree for everything toolrelay raises.

    ToolrelayError                  exit_code
    ├── UsageError                  2   bad flags, unreadable config or input
    │   ├── ConfigError             2   a config file toolrelay cannot use
    │   └── BatchFolderInUse        2   another batch holds the --out folder (.pid: its process)
    ├── ProtocolError               3   the peer broke the protocol or answered a JSON-RPC error
    │   ├── RpcError                3   a JSON-RPC error response (code, message, data)
    │   │   ├── UnknownTool         3   a ToolService has no tool of that name (answered -32602)
    │   │   └── SamplingRefused     3   a sampling request refused or with no model (answered -1)
    │   ├── DecodeError             3   a received message is not valid JSON-RPC (code, message, id)
    │   └── VersionMismatch         3   no protocol version both sides speak
    ├── TransportError              3   the channel to a server failed
    │   ├── ServerExited            3   a stdio server exited or its pipe broke
    │   ├── RequestTimeout          3   no answer within the request's timeout
    │   │   └── MaxTimeExceeded     3   renewed by progress until its maximum time passed
    │   ├── MessageTooLarge         3   a message above the size cap
    │   ├── HttpStatusError         3   an MCP HTTP endpoint answered an error status
    │   └── NoServerAvailable       3   no configured server could be started (each one's why)
    ├── ModelError                  3   the model endpoint is unreachable or answered an error
    │   ├── ModelUnreachable        3   no complete answer: refused, reset, closed, DNS, TLS, not HTTP
    │   │   └── ModelTimeout        3   no connection or no complete answer within the timeout
    │   ├── ModelAnswerUnreadable   3   an answer too large, or in an encoding not decoded
    │   ├── ModelRequestUnsendable  3   a request HTTP/1.1 cannot carry (a forbidden header)
    │   ├── ModelFeatureUnsupported 3   the endpoint lacks a feature the request used (.feature)
    │   ├── ModelStreamCut          3   a streamed answer cut after it had said something (.assembled)
    │   └── ModelStreamInconsistent 3   a final response contradicting a call it streamed that had started
    └── RunInterrupted              130 Ctrl-C

Errors a model can act on (invalid arguments, unknown tools, tool errors) are not
exceptions: they are outcome values (see ``toolrelay.relay.stages.result``). Exceptions here
end a command or fail one request.

Internal exceptions never escape a public call (a name ``toolrelay`` exports, a core API
of docs/architecture.md, a CLI command): each is raised and caught inside its package,
where it becomes a value or an answer to the peer.

    server.http_rules.Refusal       an HTTP request refused: answered with its status and a JSON-RPC error
    files.failures.ToolFailure      one file tool call failed: an ``isError`` result
    files.globbing.GlobError        a search pattern that cannot be compiled: a ToolFailure
    files.reading.InvalidText       the bytes read are not UTF-8: a ToolFailure
    files.reading.TooLarge          a whole-file read above the byte cap: a ToolFailure
    files.reading.FileChanged       the file shrank while it was read: a ToolFailure
    client.jsonc.JsoncError         malformed JSONC: a ConfigError naming the file
    client.config_entries.EntrySkipped  a server entry toolrelay cannot serve: a notice, the entry left out
    protocol.json_depth.JsonTooDeep JSON nested deeper than the limit: a ValueError, read as malformed JSON
    protocol.sse.EventTooLarge      a server-sent event above the cap: a ModelAnswerUnreadable
    relay.stages.dialects.UnknownDialect  a model dialect without a reader: a failed run, a broken verify link
    cli.closed_stdout.StdoutClosed  stdout's reader went away: the command stops with 141, its servers stopped
    protocol.chat.ChatUnsupported   a request Chat Completions cannot express: a UsageError
    offline.searching.SearchFailure a scripted search without a tool_search tool: the stand-in's 400 answer
    functions.results.ToolError     raised by a function tool on purpose: an ``isError`` result, no traceback
    functions.context.ElicitationDeclined  a function tool's question declined: ``isError`` unless caught

Any other exception class is private: its name, or its module's name, starts with ``_``.
tests/test_errors.py holds every exception class in src/ to these rules.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = [
    "BatchFolderInUse",
    "ConfigError",
    "DecodeError",
    "HttpStatusError",
    "MaxTimeExceeded",
    "MessageTooLarge",
    "ModelAnswerUnreadable",
    "ModelError",
    "ModelFeatureUnsupported",
    "ModelRequestUnsendable",
    "ModelStreamCut",
    "ModelStreamInconsistent",
    "ModelTimeout",
    "ModelUnreachable",
    "NoServerAvailable",
    "ProtocolError",
    "RequestTimeout",
    "RpcError",
    "RunInterrupted",
    "SamplingRefused",
    "ServerExited",
    "ToolrelayError",
    "TransportError",
    "UnknownTool",
    "UsageError",
    "VersionMismatch",
    "os_reason",
    "unavailable_text",
]

_INVALID_PARAMS: Final = -32602  # JSON-RPC's code; protocol/ names it, and protocol/ imports this module


class ToolrelayError(Exception):
    """Base of every error toolrelay raises; ``exit_code`` is what the CLI exits with.

    When the error ended one request, ``mcp_id`` and ``request`` name it, so an outcome
    keeps the link between the model's call and the JSON-RPC id that was sent.
    """

    exit_code = 1
    mcp_id: int | str | None = None
    request: dict[str, Any] | None = None

    def for_request(self, mcp_id: int | str, request: dict[str, Any]) -> ToolrelayError:
        """A copy of this error naming one request (one failure may end many requests)."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.args = self.args
        clone.mcp_id = mcp_id
        clone.request = request
        return clone


class UsageError(ToolrelayError):
    """The user asked for something that cannot work: bad flags, input or config."""

    exit_code = 2


class ConfigError(UsageError):
    """A server configuration file is unreadable, malformed or names something unsupported."""


class BatchFolderInUse(UsageError):
    """Another batch runs in the batch folder now (it holds the folder's lock); ``pid`` is
    that process's, when it could be read."""

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class ProtocolError(ToolrelayError):
    """The peer broke the MCP / JSON-RPC protocol."""

    exit_code = 3


class RpcError(ProtocolError):
    """A JSON-RPC error response: the peer understood the request and refused it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.rpc_message = message
        self.data = data


class UnknownTool(RpcError):
    """Raised by a ToolService for a tool name it does not offer; the server answers it as
    the JSON-RPC error -32602 (Invalid params), as MCP prescribes."""

    def __init__(self, name: str) -> None:
        super().__init__(_INVALID_PARAMS, f"Unknown tool: {name}")
        self.name = name


class SamplingRefused(RpcError):
    """A server's ``sampling/createMessage`` refused by the user or the policy, or with no
    model to answer it: answered with the spec's user-rejected error, -1."""

    def __init__(self, message: str) -> None:
        super().__init__(-1, message)


class DecodeError(ProtocolError):
    """A received message that is not valid MCP JSON-RPC.

    ``code`` and ``message`` are what the receiver answers with; ``id`` is the request id
    when one could be read (so the error can be paired), else None.
    """

    def __init__(self, code: int, message: str, id: int | str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id


class VersionMismatch(ProtocolError):
    """The server answered ``initialize`` with a protocol version we do not speak."""


class TransportError(ToolrelayError):
    """The channel to a server failed before an answer arrived."""

    exit_code = 3


class ServerExited(TransportError):
    """A stdio server exited (or closed its pipes); carries its last stderr lines."""

    def __init__(self, server: str, returncode: int | None, stderr_tail: str = "") -> None:
        code = "unknown" if returncode is None else str(returncode)
        detail = f": {stderr_tail}" if stderr_tail else ""
        super().__init__(f"server {server} exited (code {code}){detail}")
        self.server = server
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class RequestTimeout(TransportError):
    """A request got no answer within its timeout; a cancellation was sent."""


class MaxTimeExceeded(RequestTimeout):
    """A request kept being renewed (progress) until its maximum time passed."""


class MessageTooLarge(TransportError):
    """A message exceeded the configured size cap and was refused."""


class HttpStatusError(TransportError):
    """An MCP Streamable HTTP endpoint answered with an error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def unavailable_text(server: str, error: BaseException) -> str:
    """How a server that could not be started is reported, wherever it is."""
    return f"server {server} unavailable: {error}"


class NoServerAvailable(TransportError):
    """No configured server could be started; ``unavailable`` holds each one's error."""

    def __init__(self, unavailable: Mapping[str, ToolrelayError]) -> None:
        lines = [unavailable_text(name, error) for name, error in unavailable.items()]
        said = lines[0] if len(lines) == 1 else "no server is available:\n  " + "\n  ".join(lines)
        super().__init__(said)
        self.unavailable = dict(unavailable)


class ModelError(ToolrelayError):
    """The model endpoint could not be reached, or answered with an HTTP error."""

    exit_code = 3

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ModelUnreachable(ModelError):
    """No complete answer came from the model endpoint; the client retries the request.

    ``reason`` says what happened in a few words ("connection refused"), for the notice
    of each retry; the message names the endpoint too."""

    def __init__(self, message: str, status: int | None = None, *, reason: str = "") -> None:
        super().__init__(message, status)
        self.reason = reason or message


class ModelTimeout(ModelUnreachable):
    """No connection, or no complete answer, within the timeout."""


class ModelAnswerUnreadable(ModelError):
    """An answer arrived that cannot be read: too large, or in an encoding not decoded."""


class ModelRequestUnsendable(ModelError):
    """The request cannot be sent as HTTP/1.1: a header has a name or value HTTP forbids."""


class ModelFeatureUnsupported(ModelError):
    """The endpoint rejected a feature of the request (previous_response_id, strict, ...).

    ``feature`` names it (``"stream"``, ``"previous_response_id"``, ``"strict"``, ...), so a
    caller can turn that one feature off and ask again; None when it is not known."""

    def __init__(self, message: str, status: int | None = None, *, feature: str | None = None) -> None:
        super().__init__(message, status)
        self.feature = feature


class ModelStreamCut(ModelError):
    """A streamed answer ended without its terminal event after it had said something (text
    shown, an item closed): it is not asked again blindly, as calls may have run.

    ``assembled`` is what the stream said until the cut (a ``protocol.stream.Assembled``)."""

    def __init__(self, message: str, *, assembled: Any = None) -> None:
        super().__init__(message, 200)
        self.assembled = assembled


class ModelStreamInconsistent(ModelError):
    """A streamed answer's final response (``response.completed``) says a call that had
    started as its item closed is another call (another name or other arguments under the
    same call_id): the early result is not that call's, so nothing is fed back and the call
    the final response names is not run. ``call_id`` names the call."""

    def __init__(self, message: str, *, call_id: str) -> None:
        super().__init__(message, 200)
        self.call_id = call_id


class RunInterrupted(ToolrelayError):
    """The user pressed Ctrl-C."""

    exit_code = 130


def os_reason(exc: OSError) -> str:
    """Why a file could not be written, in words: a file standing where a folder must be
    is named, since "File exists" / "Not a directory" leave the user guessing which one."""
    if isinstance(exc, FileExistsError) or exc.errno == errno.ENOTDIR:
        blocker = _file_in_the_way(exc.filename)
        return f"{blocker} is a file, not a folder" if blocker else "a file is in the way of a folder"
    return exc.strerror or str(exc)


def _file_in_the_way(filename: object) -> Path | None:
    if not isinstance(filename, str | os.PathLike):
        return None
    path = Path(filename)
    return next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
