"""Two 2026-07-28 hosts at once over HTTP, using the same JSON-RPC ids, are kept apart.

A 2026-07-28 HTTP host has no session; each POST and its answer is an exchange of its own,
recorded with its number (``proxy/exchanges.py``). Two hosts call a tool with id 1 each
and open a listen request with id 7 each, naming different resources: each gets its own
answer and its own resource's update, the transcript verifies, and copies in which an
answer or an update went to the other host's exchange are rejected. A transcript without
exchange numbers (as recorded before them) still verifies.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx2

from conftest import REPO
from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.rows import describe

from .proxy_helpers import (
    ECHO,
    broken_as,
    events,
    http_proxy,
    script_entry,
    verify,
    verify_tampered,
    write_config,
)

FEATURES = REPO / "tests" / "testkit" / "servers" / "conformance_features.py"
MODERN: Final = "2026-07-28"
WATCHED: Final = "toolrelay://a/test://watched-resource"
STATIC: Final = "toolrelay://a/test://static-text"
UPDATED: Final = "notifications/resources/updated"
META: Final = {"io.modelcontextprotocol/protocolVersion": MODERN,
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}


def _headers(method: str, **more: str) -> dict[str, str]:
    return {"accept": "application/json, text/event-stream", "content-type": "application/json",
            "mcp-protocol-version": MODERN, "mcp-method": method, **more}


def _messages(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.startswith("data: "):
            yield json.loads(line[len("data: "):])


def _call(url: str, text: str, answers: dict[str, Any]) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo__echo", "arguments": {"text": text}, "_meta": META}}
    with httpx2.Client(timeout=30) as client:
        headers = _headers("tools/call", **{"mcp-name": "echo__echo"})
        answers[text] = client.post(url, json=call, headers=headers).json()


def _listen(url: str, uri: str, heard: dict[str, list[dict[str, Any]]]) -> None:
    """A listen request of id 7 naming ``uri``: its stream up to the first update."""
    listen = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
              "params": {"notifications": {"resourceSubscriptions": [uri]}, "_meta": META}}
    got = heard.setdefault(uri, [])
    with httpx2.Client(timeout=30) as client, \
            client.stream("POST", url, json=listen, headers=_headers("subscriptions/listen")) as response:
        for message in _messages(response.iter_lines()):
            got.append(message)
            if message.get("method") == UPDATED:
                return


def _two_hosts(url: str) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    answers: dict[str, Any] = {}
    heard: dict[str, list[dict[str, Any]]] = {}
    threads = [threading.Thread(target=_call, args=(url, text, answers)) for text in ("from A", "from B")]
    threads += [threading.Thread(target=_listen, args=(url, uri, heard)) for uri in (WATCHED, STATIC)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers, heard


def test_two_2026_hosts_with_the_same_ids_are_paired_each_in_its_own_exchange(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"echo": script_entry(ECHO), "a": script_entry(FEATURES)})
    transcript = tmp_path / "proxy.jsonl"
    with http_proxy(config, transcript, "--protocol-version", "2025-11-25") as url:
        answers, heard = _two_hosts(url)
    for text, answer in answers.items():
        assert answer["id"] == 1 and "result" in answer, answer
        assert answer["result"]["content"] == [{"type": "text", "text": text}]
    for uri, got in heard.items():  # each listen request its own update, none of the other's
        assert [m["params"]["uri"] for m in got if m.get("method") == UPDATED] == [uri]
    recorded = events(transcript)
    calls = [e for e in recorded if e["kind"] == "proxy_host" and e["method"] == "tools/call"]
    assert len({e["exchange"] for e in calls}) == 2 and all(e["host"] == 0 for e in calls)
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.count("follows 1 resource(s), told 1 update(s) of them only") == 2
    assert checked.stdout.count("the answer is the one sent to the host") >= 2

    broken_as(verify_tampered(transcript, _swap_call_answers, tmp_path),
              "no message sent to the host on the wire is this answer")
    moved = verify_tampered(transcript, _update_to_the_other_listen, tmp_path)
    assert moved.returncode == 1, moved.stdout
    assert f"told resources/updated of {STATIC}, a URI it did not listen for" in moved.stdout
    assert "exchange" in moved.stdout

    old = verify_tampered(transcript, _without_exchanges, tmp_path)  # as recorded before exchanges
    assert old.returncode == 0, old.stdout

    run = load_run(transcript)  # explain and view tell the two requests of id 1 apart by exchange
    text = explain(run, check(run))
    blocks = [line for line in text.splitlines() if line.startswith("host request") and "host id 1 " in line]
    assert len({line.split("· exchange ")[1].split(" ")[0] for line in blocks}) == 2, text
    rows = [describe(event, 0.0) for event in recorded if event["kind"] in ("proxy_host", "proxy_wire")]
    shown = {badge.text for row in rows for badge in row.badges if badge.text.startswith("exchange ")}
    assert {f"exchange {e['exchange']}" for e in calls} <= shown


def _wire_answers(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["kind"] == "proxy_wire" and line["direction"] == "out"
            and (line["message"].get("result") or {}).get("content")]


def _swap_call_answers(lines: list[dict[str, Any]]) -> None:
    """As if each host had been sent the other's answer (both of id 1)."""
    first, second = _wire_answers(lines)
    first["message"], second["message"] = second["message"], first["message"]


def _update_to_the_other_listen(lines: list[dict[str, Any]]) -> None:
    """As if the static resource's update had gone to the other host's listen request (both id 7)."""
    wire = [line for line in lines if line["kind"] == "proxy_wire"]
    listens = [line for line in wire if line["message"].get("method") == "subscriptions/listen"]
    watching = next(line["exchange"] for line in listens
                    if line["message"]["params"]["notifications"]["resourceSubscriptions"] == [WATCHED])
    update = next(line for line in wire if line["message"].get("method") == UPDATED
                  and line["message"]["params"]["uri"] == STATIC)
    update["exchange"] = watching


def _without_exchanges(lines: list[dict[str, Any]]) -> None:
    for line in lines:
        line.pop("exchange", None)
