"""Running a call's ``CallHook``s (``relay.stages.context``): the first refusal wins, and every
hook that was asked before the call is told how it ended.

A hook is the application's code: one that raises refuses the call (a failure is never
taken for consent), and one that raises after the call is reported as a warning; neither
ends the run.
"""

from __future__ import annotations

from ..events import EventStream, Notice
from .stages.context import CallContext, Refusal
from .stages.parse import FunctionCall
from .stages.result import CallOutcome

__all__ = ["after_call", "before_call"]


async def before_call(call: FunctionCall, context: CallContext) -> Refusal | str | None:
    """The first hook's refusal (a ``Refusal`` when the hook named itself), or None when
    every hook lets the call go on."""
    for hook in context.hooks:
        method = getattr(hook, "before_call", None)
        if method is None:
            continue
        try:
            refusal = await method(call, context)
        except Exception as exc:  # the hook's own failure: the call does not run unchecked
            return f"a call hook ({_name(hook)}) failed: {exc}"
        if isinstance(refusal, Refusal):
            return refusal
        if refusal is not None:
            return str(refusal)
    return None


async def after_call(
    call: FunctionCall, context: CallContext, outcome: CallOutcome, events: EventStream
) -> None:
    """Tell every hook how the call ended; a hook that fails is a warning, not the call's end."""
    for hook in context.hooks:
        method = getattr(hook, "after_call", None)
        if method is None:
            continue
        try:
            await method(call, context, outcome)
        except Exception as exc:
            text = f"a call hook ({_name(hook)}) failed after call {call.call_id or call.alias}: {exc}"
            events.emit(Notice(level="warning", text=text))


def _name(hook: object) -> str:
    return type(hook).__name__
