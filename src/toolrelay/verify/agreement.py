"""For a demo folder: the attachment files agree with the folder's transcript.

The link checks already ran on the files themselves (load put each file in place of the
event it projects); this adds where a file departs from the transcript, and compares the
two bundles with what the same builders derive from the files. A departure is reported on
the link its JSON path belongs to (an id → correlation, arguments → parse or routing, an
output → feedback, tools → next_input, else the file's own stage).
"""

from __future__ import annotations

import re
from typing import Final

from . import attachments
from .jsonpath import first_difference
from .record import RunRecord
from .verdict import Finding

__all__ = ["check_agreement", "link_of"]

_FILE_LINK: Final = {
    "request": "next_input",
    "response": "model_response",
    "mcp_request": "routing",
    "mcp_response": "server_check",
}
"""An attachment file's role (its name without ``_N.json``) → the link a departure breaks."""
_SECTION_LINK: Final = {
    "declarations": "next_input",
    "declaration": "next_input",
    "rounds": "next_input",
    "mcp": "server_check",
    "mcp_request": "routing",
    "mcp_response": "server_check",
    "links": "correlation",
    "call": "parse",
    "route": "routing",
    "feedback": "feedback",
}
"""A bundle's top-level key → the link a departure there breaks (file roles and bundle keys
are the attachments' names: some are spelled like event kinds, but none is one)."""
_ID_KEY: Final = re.compile(r"(?:^|\.)(id|call_id|mcp_id|previous_response_id|requestId)$")


def link_of(role: str, path: str) -> str:
    """The link a difference at ``path`` in a file of ``role`` belongs to. A message file's
    content was already checked link by link, so its departure is reported on its own stage;
    a bundle's is placed by what the path names (an id, arguments, an output, tools)."""
    if role in _FILE_LINK:
        return _FILE_LINK[role]
    if _ID_KEY.search(path):
        return "correlation"
    if "arguments" in path:
        return "routing" if path.startswith("mcp") else "parse"
    if path.startswith("feedback") or re.search(r"\.input\[\d+\]\.output", path):
        return "feedback"
    if path.startswith("tools") or ".tools" in path:
        return "next_input"
    section = re.split(r"[.\[]", path, maxsplit=1)[0]
    return _SECTION_LINK.get(section, "next_input")


def _role(name: str) -> str:
    """``response_2.json`` and ``response_2.sse`` → ``response``."""
    return re.sub(r"(_\d+)?\.(json|sse)$", "", name)


def check_agreement(run: RunRecord) -> list[Finding]:
    """Where the folder's files depart from its transcript (empty for a transcript file).
    The two bundles are checked where the message files are (a ``streamed/`` folder holds
    only its stream files)."""
    if not run.files and not run.stream_texts:
        return []
    findings = [
        _differs(link_of(_role(name), path),
                 f"{name} differs from the transcript's event (seq {seq}) at {path}", (seq,) if seq else ())
        for name, path, seq in run.file_differences
    ]
    derived_bundles = attachments.bundles(run) if run.files else {}
    for name, derived in derived_bundles.items():
        if name not in run.files:
            findings.append(_differs("next_input", f"the folder has no {name}"))
            continue
        path = first_difference(derived, run.files[name])
        if path is not None:
            findings.append(_differs(link_of(name, path),
                                     f"{name} is not what the run's messages give (differs at {path})"))
    if not findings:
        checked = sorted(n for n in run.files if attachments.is_attachment(n) or n in derived_bundles)
        message = f"{len(checked) + len(run.stream_texts)} message file(s) agree with transcript.jsonl"
        findings.append(Finding(link="next_input", ok=True, check="files_agree", message=message))
    return findings


def _differs(link: str, message: str, seqs: tuple[int, ...] = ()) -> Finding:
    return Finding(link=link, ok=False, check="files_agree", message=message, seqs=seqs)
