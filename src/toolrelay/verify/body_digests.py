"""Link 7, next input: each request body read is the one sent, byte for byte.

The writer records with every model request the SHA-256 of the exact bytes posted
(``body_sha256``) and, after a run's first request, the body as what changed since the
previous one (``transcript/delta.py``); the reader rebuilds the whole body. Here each
body, rebuilt or whole, is serialised as the clients post it and its digest compared: a
delta (or a whole body) edited after the run, a request line removed from the chain, or
a rebuilt body that is not what was sent, is named. A transcript written before digests
(or with ``request_bodies="full"``) has nothing to compare.
"""

from __future__ import annotations

from typing import Any

from ..events import ModelRequestEvent
from ..transcript.delta import DIGEST_FIELD, BodyDigests
from .evidence import seqs_of
from .facts import RunFacts
from .record import RunRecord
from .verdict import Finding

__all__ = ["check_body_digests"]


def check_body_digests(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """next_input: every recorded body serialises to the bytes its digest names (a finding
    only for the first that does not: when all hold, the context findings stand for them)."""
    requests = [event for event in run.of_kind(ModelRequestEvent.kind)
                if isinstance(event.get(DIGEST_FIELD), str)]
    digests = BodyDigests()
    for event in requests:
        body = event.get("body")
        if not isinstance(body, dict) or digests.digest(body) != event[DIGEST_FIELD]:
            return [_broken(event)]
    return []  # held: the context check's findings speak for the bodies


def _broken(event: dict[str, Any]) -> Finding:
    said = (f"request {event.get('turn')} (attempt {event.get('attempt')}): its body is not the one sent: "
            f"it does not serialise to the SHA-256 recorded with it ({str(event[DIGEST_FIELD])[:12]}…); "
            "the body, or a change recorded before it, was altered after the run")
    # no turn: the finding is the run's (explain would otherwise lay it on every call of the turn)
    return Finding(link="next_input", ok=False, check="body_digest", message=said, seqs=seqs_of(event))
