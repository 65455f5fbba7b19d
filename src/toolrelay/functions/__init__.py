"""Python functions as MCP tools: ``@toolrelay.tool``, ``toolrelay.tools_server``, and the
in-process server that runs them (so their calls keep MCP ids, and are recorded and
verified like every other call).

- ``tool``: ``FunctionTool`` (a function with its declaration), ``tool``, ``tools_server``;
- ``schema`` / ``docstrings``: the declaration from the signature, hints and docstring;
- ``convert``: JSON arguments to the hinted Python values;
- ``results``: what a function returns (or raises) as an MCP ``CallToolResult``;
- ``context``: ``ToolContext``, the optional parameter for progress, logs, ids, questions;
- ``service``: ``FunctionService``, a ``server.app.ToolService`` over the functions;
- ``servers``: the in-process server configs of a run's ``tools=`` and the hook that
  tells them each call's call_id.

Nothing is imported here: ``import toolrelay`` must not pay for it.

Layering: above ``inprocess_servers`` and ``relay``, below ``assembly`` (the CLI's
``serve`` serves the same ``FunctionService`` over stdio or Streamable HTTP); it never
imports assembly, runner, batches, cli, verify or view.
"""
