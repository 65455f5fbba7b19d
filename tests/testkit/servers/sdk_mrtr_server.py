"""An official-SDK server (mcp 2.x ``MCPServer``, stdio, both eras) whose tool ``survey``
elicits a form and samples the client's model through resolvers: in 2026-07-28 the SDK
answers ``input_required`` and resumes on the retry; in 2025 it sends the requests mid-call.

Run:  python sdk_mrtr_server.py
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Elicit, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("sdk-mrtr", log_level="WARNING")


class Colour(BaseModel):
    colour: str = "blue"


def ask_colour() -> Elicit[Colour]:
    return Elicit("Favourite colour?", Colour)


def ask_model() -> Sample:
    hello = SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))
    return Sample([hello], max_tokens=20)


@server.tool(description="Ask the user a colour and the model a greeting.", structured_output=False)
def survey(colour: Annotated[Colour, Resolve(ask_colour)],
           reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    said = reply.content.text if isinstance(reply.content, TextContent) else "?"
    return f"colour {colour.colour}; the model said {said}"


if __name__ == "__main__":
    server.run("stdio")
