"""Whose a proxy's host task is: its host (the HTTP session number, None on stdio and for a
2026-07-28 host) and that host's era, as the ``proxy_task`` record says them.

Both a 2025 stdio host's task and a 2026-07-28 host's are recorded with ``host`` None; the
record's ``host_version`` (the revision the host spoke when it created the task) tells them
apart. A transcript older than it is read the old way: a task whose creating ``tools/call``
carried ``params.task`` is a 2025 host's (only a 2025 host asks for a task), else a
2026-07-28 host's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..protocol.versions import MODERN_VERSIONS
from .proxy_answers import Event

__all__ = ["MODERN_ERA", "OLD_ERA", "era_of", "owned_by", "owner_text", "task_era"]

OLD_ERA: Final = "2025"
"""The handshake revisions (a host with a session: 2025-06-18, 2025-11-25)."""
MODERN_ERA: Final = "2026-07-28"


def era_of(version: Any) -> str:
    """The era of a revision a host spoke."""
    return MODERN_ERA if version in MODERN_VERSIONS else OLD_ERA


def task_era(task: Event, host_in: Mapping[str, list[Event]]) -> str:
    """The era of the host that owns ``task``: recorded (``host_version``), else read off the
    ``tools/call`` that created it (older transcripts)."""
    if task.get("host_version") is not None:
        return era_of(task["host_version"])
    made = host_in.get(str(task.get("key")), [])
    params = (made[0].get("message") or {}).get("params") if made else None
    asked_task = isinstance(params, dict) and isinstance(params.get("task"), dict)
    return OLD_ERA if asked_task else MODERN_ERA


def owned_by(task: Event, received: Event, host_in: Mapping[str, list[Event]]) -> bool:
    """Whether the host request ``received`` comes from the host that owns ``task``: the same
    HTTP session (or none), in the same era."""
    return task.get("host") == received.get("host") and \
        task_era(task, host_in) == era_of(received.get("protocol_version"))


def owner_text(task: Event, host_in: Mapping[str, list[Event]]) -> str:
    """The owning host in words: ``a 2025 host`` / ``a 2026-07-28 host``, with its session."""
    session = f" (session {task.get('host')})" if task.get("host") is not None else ""
    return f"a {task_era(task, host_in)} host{session}"
