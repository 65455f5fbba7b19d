"""One row per run, in the format asked for (see the package docstring)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..protocol.chat import DIALECT as CHAT_DIALECT
from ..protocol.chat import assistant_message, chat_messages, chat_request
from ..protocol.foreign_names import EVALS_OUTPUT_TEXT
from ..verify import RunRecord, load_run, verify
from ..verify.record import ModelRound

__all__ = ["FORMATS", "Exported", "Skipped", "export_rows", "transcripts_of"]

FORMATS: Final = ("chat", "responses", "evals")
_TURN_EXTRAS: Final = ("logprobs", "prompt_token_ids", "token_ids", "prompt_logprobs")
"""What an endpoint may say beside an answer (vLLM and others): kept per turn, as said."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A run left out: its transcript, and why."""

    path: Path
    why: str


@dataclass(slots=True)
class Exported:
    rows: list[dict[str, Any]]
    skipped: list[Skipped]


def transcripts_of(path: Path) -> list[Path]:
    """A transcript, or every transcript of a batch folder (``transcripts/*.jsonl``)."""
    if path.is_dir():
        folder = path / "transcripts" if (path / "transcripts").is_dir() else path
        return sorted(folder.glob("*.jsonl"))
    return [path]


def export_rows(paths: Iterable[Path], format: str, *, only_verified: bool = False,
                task_ids: bool = False) -> Exported:
    """The rows of the runs at ``paths`` (``task_ids``: each file's name is its task id)."""
    exported = Exported(rows=[], skipped=[])
    for path in paths:
        run = load_run(path)
        if only_verified:
            verdict = verify(run)
            if not verdict.ok:
                broken = verdict.broken
                why = f"{broken.link}: {broken.message}" if broken is not None else "it does not verify"
                exported.skipped.append(Skipped(path, why))
                continue
        exported.rows.append(_row(run, format, path.stem if task_ids else None))
    return exported


def _row(run: RunRecord, format: str, task_id: str | None) -> dict[str, Any]:
    head = {"run_id": run.run_id, "task_id": task_id}
    tail: dict[str, Any] = {"reward": None, "metrics": {}}
    last = _last_answered(run)
    items = [*last.body.get("input", []), *last.output()] if last is not None else []
    if format == "responses":
        first = run.rounds[0].body.get("input", []) if run.rounds else []
        return {**head, "instructions": last.body.get("instructions") if last else None,
                "input": first, "output": items[len(first):],
                "tools": last.body.get("tools", []) if last else [], "turns": _turns(run), **tail}
    messages = _messages(last, items)
    if format == "evals":
        task = run.run_start.get("task") if run.run_start else None
        final = run.run_end.get("final_text") if run.run_end else None
        return {"item": {**head, "input": task}, "sample": {EVALS_OUTPUT_TEXT: final, "trajectory": messages},
                **tail}
    tools = chat_request({"tools": last.body["tools"]})["tools"] if last and "tools" in last.body else []
    return {**head, "messages": messages, "tools": tools, "turns": _turns(run), **tail}


def _last_answered(run: RunRecord) -> ModelRound | None:
    answered = [r for r in run.rounds if r.answer is not None]
    return answered[-1] if answered else None


def _messages(last: ModelRound | None, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run as chat messages: the recorded ones for a chat run, else the items said so."""
    if last is None:
        return []
    if last.dialect == CHAT_DIALECT:
        answer = last.answer or {}
        choice = (answer.get("choices") or [{}])[0]
        return [*last.raw_body.get("messages", []), choice.get("message") or assistant_message(last.output())]
    instructions = last.body.get("instructions")
    system = [{"role": "system", "content": instructions}] if isinstance(instructions, str) else []
    return [*system, *chat_messages(items)]


def _turns(run: RunRecord) -> list[dict[str, Any]]:
    """Per answered turn: its usage and what the endpoint said beside the answer."""
    return list(_each_turn(run))


def _each_turn(run: RunRecord) -> Iterator[dict[str, Any]]:
    for current in run.rounds:
        answer = current.answer
        if answer is None:
            continue
        said: dict[str, Any] = {"turn": current.turn, "usage": answer.get("usage")}
        choices = answer.get("choices")
        sources = [answer, *(choices[:1] if isinstance(choices, list) else [])]
        for source in sources:
            if isinstance(source, dict):
                said.update({key: source[key] for key in _TURN_EXTRAS if source.get(key) is not None})
        yield said
