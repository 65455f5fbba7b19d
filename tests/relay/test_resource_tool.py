"""The --expose-resources reader's pure parts: what the model reads for a resource's
contents, and the reader's name beside the server's own tools."""

from __future__ import annotations

from toolrelay.events import EventStream, Notice
from toolrelay.relay.resource_tool import ResourceTools
from toolrelay.relay.stages.resource_reading import contents_result


def texts(contents: list[dict[str, object]]) -> list[object]:
    return [block["text"] for block in contents_result(contents)["content"]]


def test_text_is_given_as_text_and_a_blob_only_by_its_type_and_size() -> None:
    contents: list[dict[str, object]] = [
        {"uri": "a://text", "text": "hello"},
        {"uri": "a://png", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
        {"uri": "a://odd", "blob": "not base64!"},
        {"uri": "a://none"},
    ]
    assert texts(contents) == [
        "hello",
        "[binary resource a://png: image/png, 8 bytes]",
        "[binary resource a://odd: unknown type, 11 characters of data that is not base64]",
        "[binary resource a://none: unknown type, no data]",
    ]


def test_a_resource_without_contents_says_so() -> None:
    assert texts([]) == ["(the resource has no contents)"]


def test_the_reader_steps_aside_for_the_servers_own_tools_and_says_so_once() -> None:
    said: list[str] = []
    events = EventStream()
    events.subscribe(lambda event: said.append(event.text) if isinstance(event, Notice) else None)
    readers = ResourceTools({}, events)
    readers._listed = {"docs": ([{"uri": "d://1", "name": "one"}, {"uri": "d://2", "name": "n" * 500}], []),
                       "x" * 70: ([{"uri": "x://1"}], [])}
    taken = ["docs__read_resource", "docs__read_resource_2"]
    routes = readers.routes(taken)
    assert [r.alias for r in routes] == ["docs__read_resource_3", "x" * 49 + "__read_resource"]
    assert all(r.reads_resources and r.read_only for r in routes)
    assert "d://1 (one); d://2 (" + "n" * 152 + "…." in routes[0].description  # a name cut to 160
    readers.routes(taken)
    assert said == ["server docs has a tool named like the resource reader docs__read_resource: its "
                    "resources are read with docs__read_resource_3 instead"]
