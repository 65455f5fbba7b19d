"""The relay's pure stages: what one tool call is at each step, computed from values alone.

declare (``alias``, ``strict``, ``optional_nulls``, ``declare``, ``namespaces``), request
(``request``, ``instructions``), parse (``parse``, ``arguments``, ``dialects``, ``usage``),
route (``route``, ``consent``, ``context``), the meaning of an answer (``outcomes``,
``resource_reading``, ``output_check``, ``result``), feedback (``feedback``, ``endings``),
and toolrelay's own tool search (``tool_search``). Each is a function of its arguments:
the live run calls them, and ``verify/`` and ``view/`` call the same ones on a recorded run
(they import the relay only through this package).

This package never imports client/, model/, the offline stand-in, transcript/, the server
side, or any relay module outside it (the loop, the catalog, dispatch, the call's I/O): a
test over the import graph and the "pure-stages" contract in pyproject.toml keep it so.
"""
