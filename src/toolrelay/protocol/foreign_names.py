"""Wire names of the other formats toolrelay speaks (Chat Completions, OpenAI Evals rows)
that are spelled like a Responses type.

``protocol/responses.py`` spells the Responses vocabulary once, and tests/test_vocabulary.py
flags its type names written anywhere else; these are not Responses types, so they are
named here, the one other module that scan leaves out.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CHAT_FUNCTION_CALL", "CHAT_REASONING", "CHAT_REFUSAL", "EVALS_OUTPUT_TEXT"]

CHAT_FUNCTION_CALL: Final = "function_call"
"""A chat message's (deprecated) single call field, and the ``finish_reason`` it gives."""
CHAT_REASONING: Final = "reasoning"
"""The request field the chat mapping turns into ``reasoning_effort``."""
CHAT_REFUSAL: Final = "refusal"
"""A chat message's (and delta's) refusal text field."""
EVALS_OUTPUT_TEXT: Final = "output_text"
"""An OpenAI Evals row's ``sample`` field holding the answer text."""
