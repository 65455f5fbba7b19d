"""Server configs: the MCP config files users already have, read unchanged.

Accepted shapes (JSON or JSONC, comments and trailing commas allowed):

- Claude Desktop, Cursor, Claude Code, Inspector: ``{"mcpServers": {NAME: ENTRY}}``
- VS Code ``.vscode/mcp.json``: ``{"servers": {NAME: ENTRY}, "inputs": [...]}``

An entry is stdio (``command``, ``args``, ``env``, ``envFile``, ``cwd``) or Streamable
HTTP (``url``, ``headers``), chosen by ``type`` (``stdio``, ``http``,
``streamable-http``) or inferred from ``command`` / ``url``: the transport registry
(``transport_registry.py``) maps each ``type`` to its transport and the reader of its
fields (``config_entries.py``). Entries toolrelay cannot serve (``type: "sse"``,
``unix://`` / ``pipe://`` / ``ws://`` URLs) are skipped with a warning naming the
server; a file where every entry is unusable is a ConfigError.
Values are expanded as described in ``environment.py``. toolrelay's own settings live in
an optional ``"toolrelay"`` object inside an entry (other clients ignore it)::

    "toolrelay": {"timeout": 120, "requestTimeout": 30, "maxMessageBytes": 8388608, "maxSamplingPerCall": 32,
                  "allow": ["read_*"], "deny": ["write_file"], "roots": ["~/notes"],
                  "protocolVersion": "auto", "shutdownGrace": 2, "pins": "enforce"}

``roots`` are the directories the server is told about (``roots/list``): paths, ``~`` and
variables expanded, relative ones against the project folder. Roots are declared only
where the user names them (this key, or ``--root`` for every server of a run): without
either the roots capability is not declared, so a server keeps the directories it was
started with; ``false`` offers no roots, even with ``--root``. ``protocolVersion`` pins the MCP
revision for that server unless ``--protocol-version`` is given (the flag wins). An HTTP
entry may also say how to sign in to it with OAuth: ``"oauth": {"clientId",
"clientSecret", "scopes", "clientMetadataUrl"}`` (``client/auth/settings.py``). The
file's own top-level ``"toolrelay"`` object holds what is not a server's: ``"policy"``
(``config_toolrelay.py``).
"""

from __future__ import annotations

import fnmatch
import getpass
import logging
import math
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from ..errors import ConfigError
from ..events import EventStream, Notice
from ..protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.versions import MODERN_VERSIONS, SUPPORTED_VERSIONS
from ..redaction import redact_url, url_secrets
from . import jsonc
from .config_entries import EntrySkipped, json_kind, one_of
from .config_toolrelay import misplaced_keys, toolrelay_block
from .environment import ExpansionContext, expand, input_from_environment, input_variable_name, redact
from .host.requests import DEFAULT_MAX_SAMPLING_PER_CALL
from .server_logs import log_level_of
from .transport_registry import kind_for_entry, transport_kind

if TYPE_CHECKING:
    from .auth.settings import OAuthSettings
    from .transport import PeerFactory

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_CALL_TIME",
    "DEFAULT_REQUEST_TIMEOUT",
    "PIN_MODES",
    "LoadedConfig",
    "ServerConfig",
    "builtin_file_server",
    "config_policy",
    "load_config",
    "read_config",
    "with_cli_settings",
]

log = logging.getLogger("toolrelay.client")

DEFAULT_CALL_TIMEOUT: Final = 60.0
DEFAULT_REQUEST_TIMEOUT: Final = 30.0
DEFAULT_SHUTDOWN_GRACE: Final = 2.0
DEFAULT_MAX_CALL_TIME: Final = 600.0
BUILTIN_ORIGIN: Final = "built-in file server"
_OPTION_KEYS: Final = frozenset({
    "timeout", "requestTimeout", "maxMessageBytes", "allow", "deny", "roots", "protocolVersion", "isolate",
    "maxCallTime", "logLevel", "shutdownGrace", "maxSamplingPerCall", "pins", "alwaysLoad",
    "oauth",  # read with the URL (config_entries.py)
})
PROTOCOL_CHOICES: Final = ("auto", *sorted((*SUPPORTED_VERSIONS, *MODERN_VERSIONS)))
"""What ``--protocol-version`` and ``toolrelay.protocolVersion`` accept (``client/era_probe.py``):
``auto`` (the default) first, then the revisions oldest first (their names are dates)."""
PIN_MODES: Final = ("enforce", "strict", "warn", "off")  # --pins and toolrelay.pins (relay/pins.py)


def _empty_map() -> Mapping[str, str]:
    return MappingProxyType({})


Prompt = Callable[[str, bool], str]
"""Asks the user for a value: (question, is_password) → answer."""


@dataclass(frozen=True, kw_only=True, slots=True, repr=False)
class ServerConfig:
    """One MCP server toolrelay can connect to, with every value already expanded."""

    name: str
    transport: str
    """A transport of ``transport_registry.TRANSPORTS``: ``stdio``, ``http``, ``inprocess``."""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=_empty_map)
    """Only the variables the config names (plus its envFile), expanded."""
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=_empty_map)
    oauth: OAuthSettings | None = None
    """HTTP servers: the ``"toolrelay": {"oauth": {...}}`` block (``client/auth/settings.py``)."""
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    """Seconds a tools/call may go without an answer or progress (its idle limit)."""
    max_call_time: float = DEFAULT_MAX_CALL_TIME
    """Seconds a tools/call may take in all, however much progress it reports."""
    log_level: str | None = None
    """The level of log messages asked of the server (``logging/setLevel``); None: none asked."""
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    """Seconds for initialize, tools/list and ping."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    allow: tuple[str, ...] | None = None
    """Tool names (or fnmatch patterns) offered; None offers all."""
    deny: tuple[str, ...] = ()
    """Tool names (or patterns) never offered; deny wins over allow."""
    always_load: tuple[str, ...] = ()
    """Tool names (or patterns) declared up front under ``--tool-search`` (never deferred)."""
    roots: tuple[str, ...] | None = None
    """Absolute directories offered to the server as its roots; None: none named, so the
    roots capability is not declared (the server keeps its own directories)."""
    offer_roots: bool = True
    """False (``"roots": false``): the roots capability is not declared, whatever ``--root`` says."""
    max_sampling_per_call: int = DEFAULT_MAX_SAMPLING_PER_CALL
    """Sampling requests answered during one tools/call; the rest are refused (``maxSamplingPerCall``)."""
    secrets: frozenset[str] = frozenset()
    """Every env and header value, ${input:...} answer and credential in the URL (user
    info, secret-named query parameters): redacted, never recorded."""
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE
    """Seconds between closing stdin, SIGTERM and SIGKILL when a stdio server stops."""
    origin: str = ""
    """Where this entry came from, for messages: ``path: server 'NAME'``."""
    protocol_version: str | None = None
    """The MCP revision pinned for this server (``toolrelay.protocolVersion``), or None."""
    isolate: bool = False
    """``toolrelay.isolate``: in a batch, one instance of this server per task (not shared)."""
    pins: str | None = None
    """``toolrelay.pins`` or ``--pins`` (``PIN_MODES``); None: the default (``relay/pins.py``)."""
    peer_factory: PeerFactory | None = None
    """In-process servers: starts the server half of a session (``client/inprocess.py``)."""

    def __post_init__(self) -> None:
        transport_kind(self.transport, self.name)  # an unknown transport fails here, not at start
        values = {*self.env.values(), *self.headers.values()}
        if self.oauth is not None and self.oauth.client_secret is not None:
            values.add(self.oauth.client_secret)
        if self.url is not None:
            values |= url_secrets(self.url)
        object.__setattr__(self, "secrets", frozenset(self.secrets | values))

    def __repr__(self) -> str:  # args, env and headers may hold secrets: show the redacted target
        return f"ServerConfig(name={self.name!r}, transport={self.transport!r}, target={self.target!r})"

    @property
    def target(self) -> str:
        """The URL (without its credentials) or command line, with secret values redacted:
        safe to show and record."""
        if self.url is not None:
            return redact(redact_url(self.url), self.secrets)
        if self.command is not None:
            return redact(shlex.join([self.command, *self.args]), self.secrets)
        return "in-process"

    def allows(self, tool_name: str) -> bool:
        """Whether the allow/deny filters offer ``tool_name``."""
        if self.allow is None and not self.deny:  # no filters: the common case, on every call
            return True
        if any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in self.deny):
            return False
        return self.allow is None or any(fnmatch.fnmatchcase(tool_name, p) for p in self.allow)


@dataclass(slots=True, kw_only=True)
class LoadedConfig:
    """A config file's usable servers and the entries skipped (with the reason)."""

    servers: list[ServerConfig]
    skipped: list[str]
    notes: list[str] = field(default_factory=list)
    """Warnings about the file (an entry's ``deny`` outside its ``toolrelay`` block)."""
    policy: Any = None
    """The top-level ``"toolrelay": {"policy": ...}`` (rules, or a file's path), if any."""


def with_cli_settings(
    servers: list[ServerConfig], *, log_level: str | None = None, max_call_time: float | None = None,
    roots: Sequence[str | os.PathLike[str]] = (), max_sampling_per_call: int | None = None,
    pins: str | None = None,
) -> list[ServerConfig]:
    """``servers`` with what the command line says for all of them (``--server-log-level``,
    ``--call-max-time``, ``--root``, ``--max-sampling-per-call``, ``--pins``): the flag wins over each
    entry's ``toolrelay`` block. ``roots`` pass over a server whose entry says ``"roots":
    false`` and the built-in file server, whose root is the directory it serves."""
    given: dict[str, Any] = {"log_level": log_level, "max_call_time": max_call_time,
                             "max_sampling_per_call": max_sampling_per_call, "pins": pins}
    changes = {key: value for key, value in given.items() if value is not None}
    named = tuple(os.path.abspath(Path(root).expanduser()) for root in roots)
    keeps = [not named or not server.offer_roots or server.origin == BUILTIN_ORIGIN for server in servers]
    return [replace(server, **changes) if kept else replace(server, **changes, roots=named)
            for server, kept in zip(servers, keeps, strict=True)]


def builtin_file_server(root: Path) -> ServerConfig:
    """toolrelay's own read-only file server over ``root``, as the server named ``fs``."""
    return ServerConfig(
        name="fs",
        transport="stdio",
        command=sys.executable,
        args=("-m", "toolrelay", "files", str(root)),
        roots=(str(root),),  # its roots are the directory it serves: nothing narrower
        origin=BUILTIN_ORIGIN,
    )


def load_config(
    path: str | Path,
    *,
    events: EventStream | None = None,
    environ: Mapping[str, str] | None = None,
    prompt: Prompt | None = None,
) -> list[ServerConfig]:
    """The servers of a config file; skipped entries become warning Notices.

    Raises ConfigError (exit 2) naming the file and the entry for anything unusable.
    """
    loaded = read_config(path, environ=environ, prompt=prompt)
    for reason in (*loaded.notes, *loaded.skipped):
        if events is not None and events.active:
            events.emit(Notice(level="warning", text=reason))
        else:
            log.warning("%s", reason)
    return loaded.servers


def read_config(
    path: str | Path, *, environ: Mapping[str, str] | None = None, prompt: Prompt | None = None
) -> LoadedConfig:
    """Parse a config file into server configs and the list of skipped entries."""
    config_path = Path(path).expanduser()
    document = _read_document(config_path)
    entries = _server_entries(document, config_path)
    own = toolrelay_block(document, config_path)
    notes = [note for name, entry in entries.items()
             for note in misplaced_keys(entry, f"{config_path}: server {name!r}")]
    environment = dict(os.environ if environ is None else environ)
    inputs = _InputResolver(_declared_inputs(document, config_path), environment, prompt)
    context = ExpansionContext(
        environ=environment, workspace=_workspace_of(config_path), resolve_input=inputs
    )
    servers: list[ServerConfig] = []
    skipped: list[str] = []
    for name, entry in entries.items():
        where = f"{config_path}: server {name!r}"
        context.substituted.clear()  # ${input:...} answers are secrets of the entry using them
        try:
            server = _parse_entry(name, entry, context, where)
        except EntrySkipped as skip:
            skipped.append(f"{where} skipped: {skip}")
            continue
        servers.append(server)
    if not servers:
        raise ConfigError(f"{config_path}: no usable server: " + "; ".join(skipped))
    return LoadedConfig(servers=servers, skipped=skipped, notes=notes, policy=own.get("policy"))


def config_policy(path: str | Path) -> Any:
    """The config file's ``"toolrelay": {"policy": ...}`` (None without one), read alone."""
    config_path = Path(path).expanduser()
    return toolrelay_block(_read_document(config_path), config_path).get("policy")


# -- the file ---------------------------------------------------------------------------


def _read_document(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"cannot read config {path}: No such file or directory") from None
    except IsADirectoryError:
        raise ConfigError(f"cannot read config {path}: it is a directory") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read config {path}: not UTF-8 text ({exc.reason})") from None
    try:
        document = jsonc.loads(text)
    except jsonc.JsoncError as exc:
        raise ConfigError(f"{path}: invalid JSON at {exc}") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level")
    return document


def _server_entries(document: dict[str, Any], path: Path) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    found = False
    for key in ("mcpServers", "servers"):  # everyone else / VS Code
        if key not in document:
            continue
        found = True
        block = document[key]
        if not isinstance(block, dict):
            raise ConfigError(f'{path}: "{key}" must be an object of servers by name')
        for name, entry in block.items():
            if name in entries:
                raise ConfigError(f"{path}: server {name!r} is defined twice")
            entries[name] = entry
    if not found:
        raise ConfigError(
            f'{path}: no servers: expected an "mcpServers" object (Claude Desktop, Cursor, '
            'Claude Code) or a "servers" object (VS Code)'
        )
    if not entries:
        raise ConfigError(f"{path}: defines no servers")
    return entries


def _workspace_of(path: Path) -> Path:
    """The project folder: the parent of .vscode/ or .cursor/, else the file's folder."""
    folder = path.resolve().parent
    return folder.parent if folder.name in (".vscode", ".cursor") else folder


# -- one entry --------------------------------------------------------------------------


def _parse_entry(name: str, entry: Any, context: ExpansionContext, where: str) -> ServerConfig:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected an object, got {json_kind(entry)}")
    if not name.strip():
        raise ConfigError(f"{where}: a server needs a non-empty name")
    if entry.get("disabled") is True:
        raise EntrySkipped("it is disabled in the config")
    kind = kind_for_entry(entry, where)
    assert kind.read_entry is not None  # only kinds with config types are found in files
    return ServerConfig(
        name=name,
        transport=kind.name,
        **kind.read_entry(entry, context, where),
        **_options(entry, context, where),
        secrets=frozenset(context.substituted),
        origin=where,
    )


def _options(entry: dict[str, Any], context: ExpansionContext, where: str) -> dict[str, Any]:
    """toolrelay's settings: the "toolrelay" object, plus Gemini's includeTools/excludeTools."""
    block = entry.get("toolrelay", {})
    if not isinstance(block, dict):
        raise ConfigError(f'{where}: "toolrelay" must be an object')
    unknown = sorted(set(block) - _OPTION_KEYS)
    if unknown:
        raise ConfigError(
            f'{where}: unknown key "toolrelay.{unknown[0]}" (known: {", ".join(sorted(_OPTION_KEYS))})'
        )
    options: dict[str, Any] = {}
    if "timeout" in block:
        options["call_timeout"] = _seconds(block["timeout"], f"{where}, toolrelay.timeout")
    if "maxCallTime" in block:
        options["max_call_time"] = _seconds(block["maxCallTime"], f"{where}, toolrelay.maxCallTime")
    if "logLevel" in block:
        options["log_level"] = log_level_of(block["logLevel"], f"{where}, toolrelay.logLevel")
    if "requestTimeout" in block:
        options["request_timeout"] = _seconds(block["requestTimeout"], f"{where}, toolrelay.requestTimeout")
    if "shutdownGrace" in block:  # a server that outlives its closed stdin (timers keep Node alive)
        options["shutdown_grace"] = _seconds(block["shutdownGrace"], f"{where}, toolrelay.shutdownGrace")
    if "maxMessageBytes" in block:
        options["max_message_bytes"] = _byte_count(block["maxMessageBytes"], where)
    if "maxSamplingPerCall" in block:
        capped = f"{where}, toolrelay.maxSamplingPerCall"
        options["max_sampling_per_call"] = _count(block["maxSamplingPerCall"], capped)
    for key, choices, field_name in (("protocolVersion", PROTOCOL_CHOICES, "protocol_version"),
                                     ("pins", PIN_MODES, "pins")):
        if key in block:
            options[field_name] = one_of(block[key], choices, f"{where}, toolrelay.{key}")
    allow = block.get("allow", entry.get("includeTools"))
    if allow is not None:
        options["allow"] = tuple(_plain_strings(allow, f"{where}, toolrelay.allow"))
    deny = block.get("deny", entry.get("excludeTools"))
    if deny is not None:
        options["deny"] = tuple(_plain_strings(deny, f"{where}, toolrelay.deny"))
    if "alwaysLoad" in block:
        options["always_load"] = tuple(_plain_strings(block["alwaysLoad"], f"{where}, toolrelay.alwaysLoad"))
    if "roots" in block:
        options.update(_roots(block["roots"], context, f"{where}, toolrelay.roots"))
    if "isolate" in block:
        if not isinstance(block["isolate"], bool):
            raise ConfigError(f"{where}, toolrelay.isolate: must be true or false, got {block['isolate']!r}")
        options["isolate"] = block["isolate"]
    return options


def _roots(raw: Any, context: ExpansionContext, where: str) -> dict[str, Any]:
    """``"roots": [paths]`` (expanded, made absolute against the project folder) or ``false``."""
    if raw is False:
        return {"offer_roots": False}
    if not isinstance(raw, list) or not all(isinstance(item, str) and item.strip() for item in raw):
        raise ConfigError(f"{where}: must be an array of directory paths, or false to offer no roots")
    paths = []
    for index, item in enumerate(raw):
        path = Path(expand(item, context, f"{where}[{index}]")).expanduser()
        paths.append(os.path.normpath(context.workspace / path))
    return {"roots": tuple(paths)}


# -- value checks -----------------------------------------------------------------------


def _plain_strings(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfigError(f"{where}: must be an array of tool names")
    return list(raw)


def _seconds(raw: Any, where: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or raw <= 0:
        raise ConfigError(f"{where}: must be a positive number of seconds, got {raw!r}")
    return float(raw)


def _count(raw: Any, where: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ConfigError(f"{where}: must be a whole number of at least 1, got {raw!r}")
    return raw


def _byte_count(raw: Any, where: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1024:
        raise ConfigError(f"{where}, toolrelay.maxMessageBytes: must be an integer ≥ 1024, got {raw!r}")
    return raw


# -- ${input:ID} ------------------------------------------------------------------------


def _declared_inputs(document: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    raw = document.get("inputs", [])
    if not isinstance(raw, list):
        raise ConfigError(f'{path}: "inputs" must be an array')
    declared = {}
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ConfigError(f'{path}: every entry of "inputs" needs a string "id"')
        declared[item["id"]] = item
    return declared


def _terminal_prompt(question: str, password: bool) -> str:
    if password:
        return getpass.getpass(question)
    sys.stderr.write(question)
    sys.stderr.flush()
    return input()


class _InputResolver:
    """Answers ``${input:ID}``: TOOLRELAY_INPUT_<ID>, a terminal prompt, the default."""

    def __init__(
        self, declared: dict[str, dict[str, Any]], environ: Mapping[str, str], prompt: Prompt | None
    ) -> None:
        self._declared = declared
        self._environ = environ
        self._prompt = prompt
        self._answers: dict[str, str] = {}

    def __call__(self, input_id: str) -> str:
        if input_id not in self._answers:
            self._answers[input_id] = self._resolve(input_id)
        return self._answers[input_id]

    def _resolve(self, input_id: str) -> str:
        variable = input_variable_name(input_id)
        answer = input_from_environment(input_id, self._environ)
        if answer is not None:
            return answer
        spec = self._declared.get(input_id, {})
        default = spec.get("default")
        prompt = self._prompt or (_terminal_prompt if sys.stdin.isatty() else None)
        if prompt is not None:
            answer = prompt(_question(input_id, spec), spec.get("password") is True)
            if answer or not isinstance(default, str):
                return answer
        if isinstance(default, str):
            return default
        raise ConfigError(
            f"${{input:{input_id}}} needs a value: set {variable} in the environment "
            "or run toolrelay on a terminal to be asked"
        )


def _question(input_id: str, spec: dict[str, Any]) -> str:
    text = str(spec.get("description") or input_id)
    options = spec.get("options")
    if isinstance(options, list) and options:
        text += f" ({' / '.join(str(o) for o in options)})"
    default = spec.get("default")
    if isinstance(default, str) and not spec.get("password"):
        text += f" [{default}]"
    return f"{text}: "
