"""Runs exported for evaluation and training: ``toolrelay export TRANSCRIPT|BATCH_DIR``.

``export_rows(paths, format)`` reads each transcript (``verify.load_run``) and gives one row
per run (``rows.py``): ``chat`` (OpenAI chat ``messages``, assistant ``tool_calls`` paired
with their ``tool`` messages, and ``tools``), ``responses`` (the run's input items and its
output items), or ``evals`` (an OpenAI Evals ``{"item": ..., "sample": ...}`` row). Each row
carries the run id, the task id and empty ``reward`` / ``metrics`` slots; what an endpoint
said beside the answer (``logprobs``, ``prompt_token_ids``, ``token_ids``) is kept per turn.
``only_verified`` drops the runs whose transcript does not verify, each with why.

Layering: export/ reads records with verify/ and the chat mapping of protocol/; only cli/
imports it; itself it never imports relay/, client/ or model/, and it opens no connection.
"""

from __future__ import annotations

from .rows import FORMATS, Exported, Skipped, export_rows, transcripts_of

__all__ = ["FORMATS", "Exported", "Skipped", "export_rows", "transcripts_of"]
