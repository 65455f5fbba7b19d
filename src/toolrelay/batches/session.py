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

import contextlib
import hashlib
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from ..assembly.options import EXTRA_BODY, RunOptions, check_api, settings_of, task_key
from ..assembly.parts import BATCH_WORDING, Assembly, check_options
from ..assembly.request_file import loop_names
from ..errors import ModelError, ToolrelayError, UsageError
from ..events import Event, EventStream, ServerReady, ServerStarting
from ..model import ResponsesClient
from ..relay.catalog import Catalog
from ..relay.loop import Relay, RunResult
from ..relay.run_events import for_task
from ..relay.stages.context import CallHook
from .endpoints import no_endpoint_error
from .records import SharedPreamble, TaskTranscript, UsageTally, recorded_result, uncertain_result
from .results import TRANSCRIPTS, TaskResult
from .resume import TaskState, read_state
from .routing import TaskRouter
from .sampling import SAMPLING, check_task_seed
from .tasks import TaskSpec, names_its_endpoint

if TYPE_CHECKING:  # the otel extra is imported only when the batch is traced
    from ..otel.batch_spans import BatchTrace

__all__ = ["TRANSCRIPTS", "BatchSession", "family_cache_key", "transcript_path"]

_LIMIT_OVERRIDES: Final = ("max_turns", "max_tool_calls", "timeout")


def transcript_path(out: Path, task_id: str) -> Path:
    return out / TRANSCRIPTS / f"{task_id}.jsonl"


def family_cache_key(batch: str, opts: RunOptions) -> str:
    """A task's default ``prompt_cache_key``: the batch's name and the task's family, the
    settings that make its requests' prefix (model and instructions), e.g.
    ``nightly/gpt-4.1-3fa2b1c0``: the tasks of one family share the endpoint's prompt cache."""
    shaped = hashlib.sha256(f"{opts.model}\n{opts.instructions or ''}".encode()).hexdigest()[:8]
    return f"{batch}/{opts.model}-{shaped}"


class BatchSession:
    """Servers and model endpoints opened once; ``run_task`` runs one task on them."""

    def __init__(self, options: RunOptions, out: Path, *, trace: BatchTrace | None = None) -> None:
        check_options(options, endpoint=False)  # the batch's own endpoint: opened in __aenter__
        self.options = options
        self.out = out
        self.router = TaskRouter()
        self.shared = EventStream()
        self.shared.subscribe(self.router)
        self._preamble = SharedPreamble(self.router.preamble)
        """The preamble every task transcript starts with, its lines encoded once."""
        self.trace = trace
        """The tasks' spans (``otel/batch_spans.py``; None: not traced)."""
        self._server_events: list[Event] = []
        """The shared servers' start-up events (their transport, revision: each task's spans)."""
        if trace is not None:
            self.shared.subscribe(self._server_started)
        self._stack = contextlib.AsyncExitStack()
        self.parts = Assembly(options, self._stack, events=self.shared, wording=BATCH_WORDING)
        """Builds what the tasks share (servers, endpoints, clients) and each task's relay."""
        self.options = self.parts.options  # with the config's policy, if it names one
        self._isolated = [server for server in self.parts.servers if server.isolate]
        """Servers started once per task (``toolrelay.isolate``); the others are shared."""
        # what servers ask during a task: sampling goes to the batch's model (a client of its
        # own, opened when a server first samples, so its requests are not a task's turns),
        # elicitations to the batch's policy; a batch never prompts
        self._host = self.parts.host(self.parts.sample)
        shared = [server for server in self.parts.servers if not server.isolate]
        self.catalog = self.parts.catalog(shared, self._host)
        self._no_endpoint: str | None = None
        """Why the batch has no endpoint of its own (None: it has one)."""
        self._plain_options: RunOptions | None = None
        """``options_for`` a task with no overrides (most of them): the same for every one."""
        self._secrets_of: dict[int, list[str]] = {}

    async def __aenter__(self) -> BatchSession:
        try:
            await self._stack.enter_async_context(self.catalog)
            await self._own_client()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def _own_client(self) -> None:
        """Open the batch's own endpoint, so that a problem shows before any task; a batch
        without one (no key, no URL) runs the tasks that name their own (``endpoints``)."""
        try:
            await self.parts.client()
        except UsageError as exc:
            self._no_endpoint = str(exc)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    def options_for(self, spec: TaskSpec) -> RunOptions:
        """The batch's run options with the task's overrides."""
        if not spec.overrides:
            if self._plain_options is None:
                self._plain_options = self._overridden(spec.id, {})
            return self._plain_options
        return self._overridden(spec.id, dict(spec.overrides))

    def _overridden(self, task_id: str, given: dict[str, Any]) -> RunOptions:
        limits = {key: given.pop(key) for key in _LIMIT_OVERRIDES if key in given}
        sampling: dict[str, Any] = {key: given.pop(key) for key in SAMPLING if key in given}
        settings = given.pop("request_settings", None)
        if settings:  # over the batch's: its sampling fields are the task's own
            sampling |= {key: settings[key] for key in SAMPLING if key in settings}
            rest = {key: value for key, value in settings.items() if key not in SAMPLING}
            given["extra_body"] = {**loop_names(self.options.extra_body, EXTRA_BODY), **rest}
        if "api_key_env" in given:
            given["api_key"] = task_key(task_id, given.pop("api_key_env"), self.options.environ)
        opts = replace(self.options, **given, **sampling) if given or sampling else self.options
        check_task_seed(sampling, opts.api, task_id)
        if opts.extra_body:  # said in the task's words (its api may not be the batch's)
            settings_of(opts, f"task {task_id}: the request settings (--request-settings and the task's)")
        if opts.prompt_cache_key is None:
            opts = replace(opts, prompt_cache_key=family_cache_key(self.out.name, opts))
        check_api(opts)
        return replace(opts, limits=replace(opts.limits, **limits)) if limits else opts

    def _secrets(self, client: ResponsesClient | None) -> list[str]:
        """What the transcripts of tasks on ``client`` never show (worked out once per client:
        the clients, like the servers, are the session's)."""
        key = id(client)  # None, or a client ``parts`` keeps open as long as the session
        found = self._secrets_of.get(key)
        if found is None:
            endpoint = client.endpoint if client is not None else None
            found = self._secrets_of[key] = self.parts.secrets(endpoint)
        return found

    def _read_only(self, alias: str) -> bool:
        route = self.catalog.route(alias)
        return route is not None and route.read_only

    def _transcript(
        self, path: Path, state: TaskState | None, client: ResponsesClient | None
    ) -> TaskTranscript:
        secrets = self._secrets(client)
        return TaskTranscript(path, uuid.uuid4().hex[:12], state=state, preamble=self._preamble,
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
            client = await self.parts.client(opts)
        except ToolrelayError as exc:
            if state is None:
                self._transcript(path, None, None).close()
            error = str(exc)
            if self._no_endpoint is not None and not names_its_endpoint(spec.overrides):
                error = no_endpoint_error(spec, self._no_endpoint)
            return self._ended(spec, None, started, error=error)
        stream = EventStream(flood=None)
        usage = UsageTally(state.usage if state is not None else {})
        stream.subscribe(usage)
        transcript = self._transcript(path, state, client)
        stream.subscribe(transcript)
        relay: Relay | None = None
        try:
            with self._traced(spec, path if state is not None else None, client, stream) as tracing:
                async with self._task_catalog(opts, stream) as catalog:
                    told = for_task(spec.id, opts.on_event) if opts.on_event is not None else None
                    relay = self.parts.relay(catalog, client, opts, events=stream, listener=told,
                                             tracing=tracing)
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

    def _server_started(self, event: Event) -> None:
        if isinstance(event, ServerStarting | ServerReady):
            self._server_events.append(event)

    @contextlib.contextmanager
    def _traced(self, spec: TaskSpec, resumed: Path | None, client: ResponsesClient,
                stream: EventStream) -> Iterator[CallHook | None]:
        """The task's tracing hook while it runs (None when the batch is not traced); a
        resumed task's spans link to its transcript's earlier ones."""
        if self.trace is None:
            yield None
            return
        tracing = self.trace.task(spec.id, transcript=resumed, catalog=self.catalog,
                                  secrets=self._secrets(client), servers=self._server_events)
        with tracing.listen(stream):
            yield tracing

    @contextlib.asynccontextmanager
    async def _task_catalog(self, opts: RunOptions, stream: EventStream) -> AsyncIterator[Catalog]:
        """The shared catalog, or (with isolated servers) one of the task's own that starts
        them for this task only, recorded in its transcript, beside the shared ones."""
        if not self._isolated:
            yield self.catalog
            return
        own = self.parts.catalog(self._isolated, self._host, events=stream, opts=opts, shared=self.catalog)
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
            cost=None if result is None else result.cost.get("total"),
            error=error if error is not None else (None if status == "completed" else _reason(result)),
            transcript=f"{TRANSCRIPTS}/{spec.id}.jsonl",
        )


def _reason(result: Any) -> str | None:
    return getattr(result, "reason", None)
