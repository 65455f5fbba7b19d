"""What a function returns or raises, as the MCP result its server sends; arguments checked
against the schema before the function runs."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from typing import Any

import pytest

import toolrelay
from toolrelay.functions.servers import check_importable
from toolrelay.functions.service import FunctionService
from toolrelay.functions.tool import FunctionTool
from toolrelay.server.app import CallContext

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


class Mood(enum.Enum):
    GOOD = "good"


@dataclasses.dataclass
class Row:
    name: str
    mood: Mood


def call(fn: Any, arguments: dict[str, Any] | None = None, **declare: Any) -> dict[str, Any]:
    declared = fn if isinstance(fn, FunctionTool) else toolrelay.tool(fn, **declare)
    service = FunctionService("py", [declared])
    outcome = service.call(declared.name, arguments or {}, CallContext(None))
    if isinstance(outcome, dict):
        return outcome
    return asyncio.run(_settle(outcome))


async def _settle(pending: Any) -> dict[str, Any]:
    result: dict[str, Any] = await pending
    return result


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def returns(value: Any) -> Any:
    def fn() -> Any:
        return value
    return fn


@pytest.mark.parametrize(("value", "result"), [
    ("hello", {"content": [text("hello")]}),
    (None, {"content": []}),
    ({"a": 1}, {"content": [text('{"a": 1}')], "structuredContent": {"a": 1}}),
    ([1, 2], {"content": [text("[1, 2]")], "structuredContent": {"result": [1, 2]}}),
    (Row("x", Mood.GOOD), {"content": [text('{"name": "x", "mood": "good"}')],
                           "structuredContent": {"name": "x", "mood": "good"}}),
    (PNG, {"content": [{"type": "image", "data": "iVBORw0KGgoAAAAAAAAAAA==", "mimeType": "image/png"}]}),
    (b"\x00\x01", {"content": [{"type": "resource", "resource": {
        "uri": "blob:result", "mimeType": "application/octet-stream", "blob": "AAE="}}]}),
    ([toolrelay.Content.text("see"), toolrelay.Content.image(PNG), "and this"],
     {"content": [text("see"), {"type": "image", "data": "iVBORw0KGgoAAAAAAAAAAA==", "mimeType": "image/png"},
                  text("and this")]}),
    (toolrelay.Content.resource_link("file:///a.txt", "a.txt", mime_type="text/plain"),
     {"content": [{"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt",
                   "mimeType": "text/plain"}]}),
    (object(), {"content": [text("the function returned a value JSON cannot carry "
                                 "(object is not JSON data)")], "isError": True}),
])
def test_each_return_value_has_its_result(value: Any, result: dict[str, Any]) -> None:
    assert call(returns(value)) == result


def test_a_hinted_scalar_is_wrapped_as_its_output_schema_says() -> None:
    def count() -> int:
        return 3

    assert call(count)["structuredContent"] == {"result": 3}


def test_arguments_are_checked_before_the_function_runs_and_then_made_the_hinted_values() -> None:
    ran: list[Any] = []

    async def take(row: Row, times: tuple[int, int], ratio: float = 1.0) -> str:
        ran.append((row, times, ratio))
        return "ok"

    refused = call(take, {"row": {"name": "x", "mood": "bad"}, "times": [1, 2]})
    said = "invalid arguments for take: row/mood: 'bad' is not one of ['good']"
    assert refused == {"content": [text(said)], "isError": True}
    missing = call(take, {"times": [1, 2]})
    assert missing["content"] == [text("invalid arguments for take: 'row' is a required property")]
    assert ran == []
    assert call(take, {"row": {"name": "x", "mood": "good"}, "times": [1, 2], "ratio": 2}) == {
        "content": [text("ok")]}
    assert ran == [(Row("x", Mood.GOOD), (1, 2), 2.0)]
    assert isinstance(ran[0][2], float)


def test_an_exception_is_a_tool_error_with_its_message_and_no_traceback_for_other_hosts() -> None:
    def broken() -> str:
        raise KeyError("missing")

    result = FunctionService("py", [toolrelay.tool(broken)]).call("broken", {}, CallContext(None))
    assert result == {"content": [text("KeyError: 'missing'")], "isError": True}


def test_on_ray_only_importable_functions_are_served() -> None:
    def local() -> str:
        return ""

    from tools_module import get_weather, plain_add

    check_importable([get_weather, plain_add])  # module-level: fine
    with pytest.raises(toolrelay.ToolrelayError) as failed:
        check_importable([local])
    assert str(failed.value) == (
        "tools=: function local is defined inside a function (or is a lambda); on --engine ray every worker "
        "imports the functions by module path: define it at the top level of an importable module (or run "
        "the batch with the local engine)")


def test_a_pydantic_model_argument_and_return_value() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Order(pydantic.BaseModel):
        item: str
        count: int = 1

    got: list[Any] = []

    def place(order: Order) -> Order:
        got.append(order)
        return order.model_copy(update={"count": order.count + 1})

    result = call(FunctionTool(place, localns={"Order": Order}), {"order": {"item": "tea"}})
    assert got == [Order(item="tea")]
    assert result == {"content": [text('{"item": "tea", "count": 2}')],
                      "structuredContent": {"item": "tea", "count": 2}}
