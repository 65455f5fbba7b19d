"""Every transport the client speaks, one line each: config ``type`` → transport class.

A line names the transport (``ServerConfig.transport``, and the ``transport`` of
``server_starting`` events), the class that implements ``transport.ClientTransport``
(imported on first use: httpx2 alone costs ~50 ms to import), the ``type`` strings a
config file may use for it and the reader of its entry's fields (none for transports
built in code, such as in-process servers). Config validation and the connection both
look transports up here, so adding one is a module and a line below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from ..errors import ConfigError
from .config_entries import EntrySkipped, read_command_entry, read_url_entry
from .environment import ExpansionContext

if TYPE_CHECKING:
    from .transport import ClientTransport

__all__ = ["TRANSPORTS", "TransportKind", "kind_for_entry", "transport_kind"]

EntryReader = Callable[[dict[str, Any], ExpansionContext, str], dict[str, Any]]
TransportFactory = Callable[..., "ClientTransport"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportKind:
    """One transport: its name, its class, and how a config file asks for it."""

    name: str
    implementation: str
    """``.module:Class`` inside ``toolrelay.client``; called as ``Class(config, log_dir=...)``."""
    config_types: tuple[str, ...] = ()
    """The ``type`` values a config entry may give; empty: not available from files."""
    inferred_from: str | None = None
    """The entry key that means this transport when ``type`` is absent (``command``)."""
    described: str = ""
    """How messages name a server of this kind: ``a stdio server``."""
    not_json_rpc: str = "sent something that is not JSON-RPC"
    """How a notice says the server sent what is not a message, and where: ``printed
    something that is not JSON-RPC on stdout``."""
    read_entry: EntryReader | None = None
    """Reads the entry's fields (``config_entries.py``); needed when ``config_types`` is set."""

    def create(self, config: object, *, log_dir: Path | None) -> ClientTransport:
        """A transport for ``config``, a ``config.ServerConfig`` (not open yet); typed
        ``object`` because config.py looks transports up here, not the other way round."""
        module, _, attribute = self.implementation.partition(":")
        factory = cast(TransportFactory, getattr(import_module(module, __package__), attribute))
        return factory(config, log_dir=log_dir)


TRANSPORTS: Final = (
    TransportKind(name="stdio", implementation=".stdio:StdioTransport", config_types=("stdio",),
                  inferred_from="command", described="a stdio server", read_entry=read_command_entry,
                  not_json_rpc="printed something that is not JSON-RPC on stdout"),
    TransportKind(name="http", implementation=".http:HttpTransport",
                  config_types=("http", "streamable-http", "streamable_http", "streamableHttp"),
                  inferred_from="url", described="an HTTP server", read_entry=read_url_entry,
                  not_json_rpc="sent something that is not JSON-RPC in an HTTP response"),
    TransportKind(name="inprocess", implementation=".inprocess:InProcessTransport"),
)

# Types other clients use that toolrelay deliberately does not speak, with what to do instead.
_REFUSED_TYPES: Final = {
    "sse": 'type "sse" (the deprecated HTTP+SSE transport) is not supported; '
           'use the server\'s Streamable HTTP endpoint with "type": "http"',
}
_BY_NAME: Final = {kind.name: kind for kind in TRANSPORTS}
_BY_TYPE: Final = {t: kind for kind in TRANSPORTS for t in kind.config_types}
_FROM_FILES: Final = tuple(kind for kind in TRANSPORTS if kind.config_types)


def transport_kind(name: str, server: str) -> TransportKind:
    """The transport named ``name``; ConfigError naming every known one if there is none."""
    kind = _BY_NAME.get(name)
    if kind is None:
        spoken = _spoken(k.name for k in TRANSPORTS)
        raise ConfigError(f"server {server!r}: transport type {name!r} is not supported "
                          f"(toolrelay speaks {spoken})")
    return kind


def kind_for_entry(entry: dict[str, Any], where: str) -> TransportKind:
    """The transport a config entry asks for, by ``type`` or by its keys.

    ConfigError for an entry that cannot be read; EntrySkipped for a type toolrelay does
    not speak (other clients reading the same file may)."""
    requested = entry.get("type", entry.get("transport"))
    if requested is None:
        return _inferred(entry, where)
    kind = _BY_TYPE.get(requested) if isinstance(requested, str) else None
    if kind is not None:
        return kind
    if isinstance(requested, str) and requested in _REFUSED_TYPES:
        raise EntrySkipped(_REFUSED_TYPES[requested])
    raise EntrySkipped(f"transport type {requested!r} is not supported "
                       f"(toolrelay speaks {_spoken(k.name for k in _FROM_FILES)})")


def _inferred(entry: dict[str, Any], where: str) -> TransportKind:
    candidates = [kind for kind in _FROM_FILES if kind.inferred_from in entry]
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        keys = " and ".join(f'"{kind.inferred_from}"' for kind in candidates)
        types = " or ".join(f'"{kind.name}"' for kind in candidates)
        raise ConfigError(f'{where}: has both {keys}; add "type": {types}')
    needs = " or ".join(f'"{kind.inferred_from}" ({kind.described})' for kind in _FROM_FILES)
    raise ConfigError(f"{where}: needs {needs}")


def _spoken(names: Iterable[str]) -> str:
    """``stdio and http``; ``stdio, http and inprocess``."""
    *first, last = names
    return f"{', '.join(first)} and {last}" if first else last
