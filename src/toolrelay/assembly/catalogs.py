"""The servers a run names, and the one place a ``Catalog`` is built.

Light on purpose: ``toolrelay tools``, ``call``, ``resources``, ``prompts`` and ``auth``
build their catalog here without importing the model client or the stand-in (their
start-up time matters). A feature every catalog gets (a filter of the offer chain, say)
goes into ``catalog_of``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..client.config import ServerConfig, with_cli_settings
from ..client.host import Host
from ..events import EventStream
from ..relay.catalog import Catalog, ConfigSource, StructuredOutput, servers_from
from ..relay.offer import ToolFilter
from ..relay.stages.deferred import ToolSearchMode
from ..relay.stages.namespaces import DeclareMode

if TYPE_CHECKING:
    from ..functions.sources import ToolSource

__all__ = ["catalog_of", "configured_servers", "connect"]


def configured_servers(
    config: ConfigSource, *, events: EventStream, log_level: str | None = None,
    max_call_time: float | None = None, roots: Sequence[str | os.PathLike[str]] = (),
    max_sampling_per_call: int | None = None, pins: str | None = None,
) -> list[ServerConfig]:
    """The servers ``config`` names (checked, with its notices on ``events``), with what the
    command line says for all of them (``client.config.with_cli_settings``)."""
    return with_cli_settings(servers_from(config, events=events), log_level=log_level,
                             max_call_time=max_call_time, roots=roots,
                             max_sampling_per_call=max_sampling_per_call, pins=pins)


def catalog_of(
    servers: Sequence[ServerConfig], *, events: EventStream, strict: bool = False,
    protocol_version: str | None = None, host: Host | None = None, shared: Catalog | None = None,
    expose_resources: bool = False, filters: Sequence[ToolFilter] = (), log_dir: Path | None = None,
    declare: DeclareMode = "flat", structured_output: StructuredOutput = "auto",
    tool_search: ToolSearchMode = "off", always_load: Sequence[str] = (),
) -> Catalog:
    """The catalog of ``servers`` (not yet open: ``async with``); the keywords are ``Catalog``'s."""
    return Catalog(servers, events=events, strict=strict, protocol_version=protocol_version, host=host,
                   shared=shared, expose_resources=expose_resources, filters=filters, log_dir=log_dir,
                   declare=declare, structured_output=structured_output, tool_search=tool_search,
                   always_load=always_load)


def connect(
    config: ConfigSource = None,
    *,
    events: EventStream | None = None,
    strict: bool = False,
    protocol_version: str | None = None,
    log_dir: Path | None = None,
    host: Host | None = None,
    filters: Sequence[ToolFilter] = (),
    declare: DeclareMode = "flat",
    structured_output: StructuredOutput = "auto",
    tools: Sequence[ToolSource] = (),
) -> Catalog:
    """A catalog over ``config`` (a config file, server configs, or None for the built-in
    file server on the current directory); use it as ``async with connect(...) as catalog``.
    ``host`` answers what the servers ask (sampling, elicitation; default: refused, declined);
    ``filters`` withhold listed tools from the model (``toolrelay.ToolFilter``); ``declare`` and
    ``structured_output`` as for ``Catalog``; ``tools``: Python functions served beside them,
    as ``RunOptions.tools`` are (``functions/``)."""
    stream = events or EventStream()
    servers = servers_from(config, events=stream)
    if tools:  # imported only when there are some
        from ..functions.servers import function_servers

        servers += function_servers(tools, [server.name for server in servers])
    return catalog_of(servers, events=stream, strict=strict,
                      protocol_version=protocol_version, log_dir=log_dir, host=host, filters=filters,
                      declare=declare, structured_output=structured_output)
