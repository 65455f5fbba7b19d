"""The relay: one tool call's way from the model's output to an MCP server and back, one
module per stage (docs/architecture.md maps each stage to its module):

    declare → request → parse → route → call → result → feedback → next request

``loop`` runs the turns and their stop conditions. The stages other than the call itself
are pure functions of their inputs, so verify/ re-runs them on a recorded run.

Layering: relay/ may import client/ and model/ (below it), protocol/ and the bottom modules
(errors, events, redaction, loopback); never runner, cli/, server/, files/, the offline
stand-in, transcript/, verify/ or view/.
"""
