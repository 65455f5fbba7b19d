"""The relay: one tool call's way from the model's output to an MCP server and back, one
module per stage (docs/architecture.md maps each stage to its module):

    declare → request → parse → route → call → result → feedback → next request

``loop`` runs the turns and their stop conditions; ``catalog``, ``dispatch``, ``call``,
``resource_tool``, ``offer``, ``offered``, ``sampling`` and ``streaming`` do the I/O. The
stages other than the call itself are pure functions of their inputs and live in
``relay.stages`` (which imports nothing that does I/O), so verify/ and view/ re-run them on
a recorded run, reaching the relay only through it.

Layering: relay/ may import client/ and model/ (below it), protocol/ and the bottom modules
(errors, events, redaction, loopback); never runner, cli/, server/, files/, the offline
stand-in, transcript/, verify/ or view/.
"""
