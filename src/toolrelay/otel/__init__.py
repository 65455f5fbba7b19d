"""OpenTelemetry for toolrelay (the ``otel`` extra): a run as one trace by the GenAI and
MCP semantic conventions (``invoke_agent toolrelay``, ``chat {model}``, ``execute_tool
{tool}``), W3C trace context carried to every server in ``params._meta`` (SEP-414), the
file server's ``tools/call`` SERVER spans, and the exporters ``--otel`` / ``--otel-file``
set up.

It plugs into the run from outside the pipeline: a ``CallHook`` for the call spans and an
``EventStream`` subscriber for the run and model spans (``run_spans.py``); the file
server's spans wrap its ``ToolService`` (``server_spans.py``). Nothing here is imported
unless tracing is asked for (start-up time); the CLI and the runner import it lazily, and
it never imports ``cli/``, ``runner.py`` or anything above them.
"""
