"""Tool definitions pinned on first use, and the offer chain's link that holds back a changed one.

The first time a server's tool is seen, its definition (``protocol/tool_digest.py``: name,
title, description, schemas, annotations) is pinned with its digest and the time, in one
file per server identity (the config entry's name and its command line or URL)::

    $XDG_STATE_HOME/toolrelay/pins/      (default ~/.local/state/toolrelay/pins/)
        notes-3f2a9b1c0d4e5f67.json      {"server", "target", "tools": {NAME: {digest, pinnedAt, definition}}}

written as the OAuth store writes (``client/state_files.py``: 0600 files, 0700 folders).
Per server, ``--pins`` or ``toolrelay.pins`` says what a listing is checked for:

- ``enforce`` (the default): new tools are pinned silently; a changed tool is withheld;
- ``strict``: a new tool is withheld too, until ``toolrelay pins approve``;
- ``warn``: a changed tool is offered, with a warning;
- ``off``: nothing is pinned or checked (the default for toolrelay's own built-in file
  server and in-process servers, whose definitions are toolrelay's or the caller's code).

A tool pinned but no longer listed is reported. ``PinCheck`` runs whenever the catalog is
rebuilt (start-up, ``tools/list_changed``, a restart), so a definition changed mid-run is
checked before the model is offered it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..client.config import BUILTIN_ORIGIN, ServerConfig
from ..client.state_files import state_directory, write_private
from ..errors import UsageError
from ..protocol.tool_digest import tool_definition, tool_digest
from .offer import ServerListing

__all__ = [
    "DEFAULT_PIN_MODE",
    "Pin",
    "PinCheck",
    "PinNotice",
    "PinStore",
    "annotation_flips",
    "changed_reason",
    "pin_mode",
]

DEFAULT_PIN_MODE: Final = "enforce"
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9.-]+")
FLAGGED_HINTS: Final = ("readOnlyHint", "destructiveHint")
"""Annotations whose change alters what runs without consent or early: called out loudly."""


def pin_mode(config: ServerConfig) -> str:
    """The server's pin mode: its ``pins`` setting, else the default (``off`` for toolrelay's
    built-in file server and in-process servers)."""
    if config.pins is not None:
        return config.pins
    return "off" if config.origin == BUILTIN_ORIGIN or config.transport == "inprocess" else DEFAULT_PIN_MODE


@dataclass(frozen=True, slots=True, kw_only=True)
class Pin:
    """One tool's pinned definition."""

    tool: str
    digest: str
    pinned_at: str
    """When it was pinned, ISO 8601 UTC (``2026-12-01T23:55:07Z``)."""
    definition: dict[str, Any]

    @property
    def date(self) -> str:
        return self.pinned_at[:10]

    def to_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "pinnedAt": self.pinned_at, "definition": self.definition}


def pin_of(tool: Mapping[str, Any], now: str) -> Pin:
    """A new pin of ``tool`` as listed, pinned at ``now``."""
    return Pin(tool=str(tool["name"]), digest=tool_digest(tool), pinned_at=now,
               definition=tool_definition(tool))


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class PinStore:
    """The pin files of every server identity (``root``: the folder holding them)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else state_directory() / "pins"

    def path(self, config: ServerConfig) -> Path:
        """The server's pin file: its name, then a hash of its name and command line or URL."""
        identity = f"{config.name}\n{config.target}".encode()
        readable = _UNSAFE.sub("_", config.name).strip("_")[:60] or "server"
        return self.root / f"{readable}-{hashlib.sha256(identity).hexdigest()[:16]}.json"

    def load(self, config: ServerConfig) -> dict[str, Pin]:
        """The server's pins by tool name ({} when none); a file that cannot be read is an
        error, never taken as no pins (that would pin whatever the server lists now)."""
        path = self.path(config)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return {name: _pin(name, entry) for name, entry in document["tools"].items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a pin file"
            raise UsageError(f"cannot read the pins of server {config.name} in {path}: {why}; move it "
                             f"away or run: toolrelay pins forget {config.name}") from None

    def save(self, config: ServerConfig, pins: Mapping[str, Pin]) -> Path:
        """Write the server's pins (replacing its file); none left removes the file."""
        path = self.path(config)
        if not pins:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return path
        document = {"server": config.name, "target": config.target,
                    "tools": {name: pins[name].to_json() for name in sorted(pins)}}
        write_private(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                      private_from=self.root.parent, what=f"the pins of server {config.name}")
        return path


def _pin(name: str, entry: Mapping[str, Any]) -> Pin:
    definition = entry["definition"]
    if not isinstance(definition, dict) or not isinstance(entry["digest"], str):
        raise ValueError(name)
    return Pin(tool=name, digest=entry["digest"], pinned_at=str(entry["pinnedAt"]), definition=definition)


def annotation_flips(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """``readOnlyHint`` / ``destructiveHint`` changes, each as ``readOnlyHint false → true``."""
    was, now = _annotations(before), _annotations(after)
    found = []
    for hint in FLAGGED_HINTS:
        old, new = was.get(hint), now.get(hint)
        if old != new:
            found.append(f"{hint} {_hint_text(old)} → {_hint_text(new)}")
    return found


def _annotations(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    found = tool.get("annotations")
    return found if isinstance(found, Mapping) else {}


def _hint_text(value: Any) -> str:
    return "unset" if value is None else json.dumps(value)


def changed_reason(pin: Pin, tool: Mapping[str, Any]) -> str:
    """The withheld reason of a changed tool, its flipped hints named."""
    flips = annotation_flips(pin.definition, tool)
    return f"definition changed since pinned on {pin.date}" + (f" ({'; '.join(flips)})" if flips else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class PinNotice:
    """What a pin check has to tell: ``level`` (``info`` / ``warning``), the server, the text."""

    level: str
    server: str
    text: str


@dataclass(slots=True)
class PinCheck:
    """The offer chain's pin link: each listing checked against (and added to) its pins."""

    store: PinStore = field(default_factory=PinStore)
    clock: Callable[[], str] = utc_now
    _pins: dict[Path, dict[str, Pin]] = field(default_factory=dict)
    _told: set[tuple[str, ...]] = field(default_factory=set)
    _notices: list[PinNotice] = field(default_factory=list)

    def load(self, servers: Sequence[ServerConfig]) -> None:
        """Read the pins of ``servers`` now, before any starts (an unreadable file is a usage
        error then, not once the servers run); later checks use what was read and added."""
        for server in servers:
            if pin_mode(server) != "off":
                self._pins[self.store.path(server)] = self.store.load(server)

    def withhold(self, listing: ServerListing) -> Mapping[str, str]:
        mode = pin_mode(listing.config)
        if mode == "off":
            return {}
        path = self.store.path(listing.config)
        if path not in self._pins:
            self._pins[path] = self.store.load(listing.config)
        pins = self._pins[path]
        withheld: dict[str, str] = {}
        added: dict[str, Pin] = {}
        for tool in listing.tools:
            name = str(tool["name"])
            pin = pins.get(name)
            if pin is None:
                if mode == "strict":
                    withheld[name] = "new tool, not pinned yet (pins: strict)"
                    self._tell("warning", listing.server, name, "new", _new_text(listing.server, name))
                else:
                    added[name] = pin_of(tool, self.clock())
            elif pin.digest != tool_digest(tool):
                self._changed(mode, listing.server, pin, tool, withheld)
        if added:
            if pins:  # on a server's first use, its tools are pinned without a word
                self._pinned(listing.server, sorted(added))
            pins = self._pins[path] = {**pins, **added}
            try:
                self.store.save(listing.config, pins)
            except UsageError as exc:  # kept for this run; a later one pins them again
                self._tell("warning", listing.server, "", "unsaved", str(exc))
        listed = {str(tool["name"]) for tool in listing.tools}
        for name in sorted(set(pins) - listed):
            self._tell("warning", listing.server, name, "gone", f"server {listing.server}: tool "
                       f"{name} (pinned on {pins[name].date}) is no longer listed")
        return withheld

    def take_notices(self) -> list[PinNotice]:
        """What the checks since the last call have to tell (each thing told once)."""
        found, self._notices = self._notices, []
        return found

    def _changed(self, mode: str, server: str, pin: Pin, tool: Mapping[str, Any],
                 withheld: dict[str, str]) -> None:
        reason = changed_reason(pin, tool)
        hint = (f"see: toolrelay pins diff {server} {pin.tool}; "
                f"approve: toolrelay pins approve {server} {pin.tool}")
        if mode == "warn":
            text = f"server {server}: tool {pin.tool}'s {reason}; offered anyway (pins: warn); {hint}"
        else:
            withheld[pin.tool] = reason
            text = f"server {server}: tool {pin.tool} is not offered: {reason}; {hint}"
        self._tell("warning", server, pin.tool, tool_digest(tool), text)

    def _pinned(self, server: str, names: Sequence[str]) -> None:
        text = f"server {server}: new tool(s) pinned: {', '.join(names)}"
        self._notices.append(PinNotice(level="info", server=server, text=text))

    def _tell(self, level: str, server: str, tool: str, what: str, text: str) -> None:
        if (server, tool, what) not in self._told:
            self._told.add((server, tool, what))
            self._notices.append(PinNotice(level=level, server=server, text=text))


def _new_text(server: str, tool: str) -> str:
    return (f"server {server}: tool {tool} is not offered: new tool, not pinned yet (pins: strict); "
            f"approve: toolrelay pins approve {server} {tool}")
