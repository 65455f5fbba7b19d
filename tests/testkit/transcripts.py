"""A transcript's events as tests read them: every model request's body whole.

The writer records a request after a run's first as what changed (``transcript/delta.py``);
``read_transcript`` rebuilds the bodies. Each event here is its own copy (the rebuilt
bodies share their items), so a test that edits one event edits nothing else.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from toolrelay.transcript.reader import read_transcript

__all__ = ["transcript_events"]


def transcript_events(path: Path) -> list[dict[str, Any]]:
    """The events of the transcript at ``path``, bodies whole, none sharing a value."""
    return [copy.deepcopy(event) for event in read_transcript(path).events]
