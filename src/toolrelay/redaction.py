"""Credentials never reach a record or a message: one redaction rule for all of toolrelay.

Config env and header values, ``${env:…}`` / ``${input:…}`` answers, API keys and tokens
are secrets. Where text that could carry one is shown or recorded (command lines, URLs,
server stderr, notices), every secret value is replaced by ``[redacted]``. Values shorter
than eight characters ("info", "3000", "true") are rarely secrets and would blank out
ordinary text, so they are left alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "redact", "worth_redacting"]

REDACTED: Final = "[redacted]"
MIN_SECRET_LENGTH: Final = 8


def worth_redacting(value: str) -> bool:
    return len(value) >= MIN_SECRET_LENGTH


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``[redacted]`` (longest first, so a
    secret that contains another is replaced whole)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if worth_redacting(secret) and secret in text:
            text = text.replace(secret, REDACTED)
    return text
