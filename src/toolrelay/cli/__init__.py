"""The command line: one module per verb (``files``, ``tools``, ``call``, ``run``, ``demo``,
``verify``, ``explain``, ``view``); ``main`` dispatches to them and maps every
``ToolrelayError`` to the one exit-code table.

The top layer (cli → runner → relay → client | model → protocol): cli/ may import any
package, and is never imported by one (only ``toolrelay.__main__`` imports it). Terminal
I/O belongs here (progress lines, prompts); the layers below take callbacks instead.
"""
