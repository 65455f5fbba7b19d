"""What the tasks of one batch process share, and one task run on it.

``BatchSession`` starts the MCP servers once (one ``Catalog``) and opens each model
endpoint once (the stand-in for each script a task names, or the hosted endpoint), with
one ``ResponsesClient`` each: its HTTP connections, and its back-off after a 429 or an
overload, are shared by every task (``model.client``). ``run_task`` runs one task as
``toolrelay run`` would, with the task's overrides, writing its transcript to
``OUT/transcripts/<id>.jsonl``: the servers' start-up records first (``routing``), then
the run. The local engine runs many at once on one session; a Ray actor holds one.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from ..client.config import with_cli_settings
from ..client.host import Host, Sampler, SamplingRequest, declining, refusing_approval
from ..errors import ModelError, ToolrelayError
from ..events import EventStream
from ..model import ModelEndpoint, ResponsesClient
from ..offline import OfflineModel
from ..protocol.jsonrpc import JSONObject
from ..redaction import url_secrets
from ..relay.catalog import Catalog, servers_from
from ..relay.consent import refusing
from ..relay.loop import Relay, RunResult
from ..runner import (
    OFFLINE_MODEL,
    RunOptions,
    check_options,
    hosted_endpoint,
    model_sampler,
    request_settings,
)
from .records import TaskTranscript, UsageTally, recorded_result, uncertain_result
from .results import TRANSCRIPTS, TaskResult
from .resume import TaskState, read_state
from .routing import TaskRouter
from .tasks import TaskSpec

__all__ = ["TRANSCRIPTS", "BatchSession", "transcript_path"]

CONSENT_HINT: Final = "run the batch with --yes (yes=True) to approve tools that are not read-only"
SAMPLING_HINT: Final = "run the batch with --yes (approve_sampling=) to let servers sample the model"
ELICIT_HINT: Final = "run the batch with --elicit defaults (elicit=) to accept forms' defaults"
_LIMIT_OVERRIDES: Final = ("max_turns", "max_tool_calls", "timeout")


def transcript_path(out: Path, task_id: str) -> Path:
    return out / TRANSCRIPTS / f"{task_id}.jsonl"


class BatchSession:
    """Servers and model endpoints opened once; ``run_task`` runs one task on them."""

    def __init__(self, options: RunOptions, out: Path) -> None:
        check_options(options)
        self.options = options
        self.out = out
        self.router = TaskRouter()
        self.shared = EventStream()
        self.shared.subscribe(self.router)
        self._servers = with_cli_settings(servers_from(options.config, events=self.shared),
                                          log_level=options.server_log_level,
                                          max_call_time=options.call_max_time, roots=options.roots,
                                          max_sampling_per_call=options.max_sampling_per_call)
        self._isolated = [server for server in self._servers if server.isolate]
        """Servers started once per task (``toolrelay.isolate``); the others are shared."""
        # what servers ask during a task: sampling goes to the batch's model (a client of its
        # own, so its requests are not a task's turns), elicitations to the batch's policy;
        # a batch never prompts
        self._host = Host(
            sampler=self._sample,
            approve_sampling=options.approve_sampling or refusing_approval(SAMPLING_HINT),
            elicitor=options.elicit or declining(ELICIT_HINT),
        )
        shared = [server for server in self._servers if not server.isolate]
        self.catalog = Catalog(shared, events=self.shared, strict=options.strict, declare=options.declare,
                               structured_output=options.structured_output,
                               protocol_version=options.protocol_version, host=self._host,
                               expose_resources=options.expose_resources, filters=options.filters)
        self._stack = contextlib.AsyncExitStack()
        self._clients: dict[tuple[bool, str | None], ResponsesClient] = {}
        self._opening = asyncio.Lock()
        self._sampler: Sampler | None = None
        self._sampler_opening = asyncio.Lock()

    async def __aenter__(self) -> BatchSession:
        try:
            await self._stack.enter_async_context(self.catalog)
            await self._client(self.options)  # the batch's own endpoint: a problem shows before any task
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    async def _client(self, opts: RunOptions) -> ResponsesClient:
        """The client of the endpoint ``opts`` name (opened on first use, then shared)."""
        offline = opts.model == OFFLINE_MODEL
        key = (offline, str(opts.script) if offline and opts.script is not None else None)
        async with self._opening:
            if key not in self._clients:
                if offline:
                    model = self._stack.enter_context(OfflineModel(opts.script))
                    endpoint = ModelEndpoint(base_url=model.base_url)
                else:
                    endpoint = hosted_endpoint(opts)
                client = ResponsesClient(endpoint, events=self.shared)
                self._clients[key] = await self._stack.enter_async_context(client)
        return self._clients[key]

    async def _sample(self, request: SamplingRequest) -> JSONObject:
        """A server's sampling request, answered with the batch's model (opened on first use)."""
        async with self._sampler_opening:
            if self._sampler is None:
                self._sampler = await model_sampler(self._stack, self.options)
        return await self._sampler(request)

    def options_for(self, spec: TaskSpec) -> RunOptions:
        """The batch's run options with the task's overrides."""
        given = dict(spec.overrides)
        limits = {key: given.pop(key) for key in _LIMIT_OVERRIDES if key in given}
        opts = replace(self.options, **given)
        return replace(opts, limits=replace(opts.limits, **limits)) if limits else opts

    def _read_only(self, alias: str) -> bool:
        route = self.catalog.route(alias)
        return route is not None and route.read_only

    def _transcript(
        self, path: Path, state: TaskState | None, client: ResponsesClient | None
    ) -> TaskTranscript:
        secrets = [s for server in self._servers for s in server.secrets]
        if client is not None:
            secrets += [client.endpoint.api_key] if client.endpoint.api_key else []
            secrets += url_secrets(client.endpoint.base_url)
        return TaskTranscript(path, uuid.uuid4().hex[:12], state=state, preamble=self.router.preamble,
                              secrets=secrets)

    async def run_task(self, spec: TaskSpec) -> TaskResult:
        """Run one task to its end, its transcript written as it goes (a run its transcript
        shows stopped goes on from there: ``resume``); never raises for what ends the
        task (the result says it), only for an interruption."""
        started = time.perf_counter()
        path = transcript_path(self.out, spec.id)
        state = read_state(path, self._read_only) if path.exists() else None
        if state is not None and state.ended is not None:
            return recorded_result(spec, state)  # it had ended: only its result line was lost
        try:
            opts = self.options_for(spec)
            client = await self._client(opts)
        except ToolrelayError as exc:
            if state is None:
                self._transcript(path, None, None).close()
            return self._ended(spec, None, started, error=str(exc))
        stream = EventStream(flood=None)
        usage = UsageTally(state.usage if state is not None else {})
        stream.subscribe(usage)
        transcript = self._transcript(path, state, client)
        stream.subscribe(transcript)
        relay: Relay | None = None
        try:
            async with self._task_catalog(opts, stream) as catalog:
                instructions = catalog.server_instructions() if opts.server_instructions else None
                relay = Relay(
                    catalog, client, request_settings(opts, instructions), events=stream, limits=opts.limits,
                    strict=opts.strict, approve=opts.approve or refusing(CONSENT_HINT), endpoint=client.url,
                    hooks=opts.hooks,
                )
                if state is not None and state.uncertain:
                    return uncertain_result(spec, state, stream, relay, started)
                with self.router.task(stream):
                    result = await relay.run(state.task if state else spec.task, run_id=transcript.run_id,
                                             resume=state.point if state else None)
        except (ModelError, ToolrelayError) as exc:
            error = "; ".join([str(exc), *getattr(exc, "__notes__", ())])
            ended = relay.result if relay is not None else None
            return self._ended(spec, ended, started, error=error, usage=usage.totals)
        finally:
            transcript.close()
        return self._ended(spec, result, started, usage=usage.totals)

    @contextlib.asynccontextmanager
    async def _task_catalog(self, opts: RunOptions, stream: EventStream) -> AsyncIterator[Catalog]:
        """The shared catalog, or (with isolated servers) one of the task's own that starts
        them for this task only, recorded in its transcript, beside the shared ones."""
        if not self._isolated:
            yield self.catalog
            return
        own = Catalog(self._isolated, events=stream, strict=opts.strict, declare=opts.declare,
                      structured_output=opts.structured_output,
                      protocol_version=opts.protocol_version, host=self._host, shared=self.catalog,
                      expose_resources=opts.expose_resources, filters=opts.filters)
        async with own:
            yield own

    def _ended(
        self, spec: TaskSpec, result: RunResult | None, started: float, *,
        error: str | None = None, usage: dict[str, int] | None = None,
    ) -> TaskResult:
        status = "error" if error is not None or result is None else result.status
        answer = None if result is None else result.final_text if result.refusal is None else result.refusal
        return TaskResult(
            id=spec.id, status=status, answer=answer,
            turns=0 if result is None else result.turns,
            calls=0 if result is None else len(result.calls),
            failed_calls=0 if result is None else result.failed_calls,
            usage=dict(usage or {}), duration=time.perf_counter() - started,
            error=error if error is not None else (None if status == "completed" else _reason(result)),
            transcript=f"{TRANSCRIPTS}/{spec.id}.jsonl",
        )


def _reason(result: Any) -> str | None:
    return getattr(result, "reason", None)
