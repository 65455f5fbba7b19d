"""A request's timeout renewed (progress from the other side): it runs as long as it is
renewed within its timeout, never past its maximum time, and the request cut by the
maximum says so, with the cancellation the other side receives giving that reason."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolrelay.protocol import jsonrpc
from toolrelay.protocol.jsonrpc import JSONObject
from toolrelay.protocol.peer import MaxTimeExceeded, Peer


def test_renewal_keeps_a_request_alive_until_its_maximum() -> None:
    sent: list[JSONObject] = []

    def send(message: JSONObject) -> None:
        sent.append(json.loads(jsonrpc.encode(message)))

    async def scenario() -> tuple[str, str]:
        peer = Peer(send)
        params = {"name": "slow", "_meta": {"progressToken": "t-1"}}
        kept = asyncio.ensure_future(peer.call("tools/call", params, timeout=0.2, max_time=5))
        cut = asyncio.ensure_future(peer.call("tools/call", {"name": "endless"}, timeout=0.2, max_time=0.5))
        await asyncio.sleep(0)
        kept_id, cut_id = sent[0]["id"], sent[1]["id"]
        assert peer.pending_with_token("t-1") == kept_id and peer.pending_with_token("t-9") is None
        for _ in range(6):  # 0.6 s in all, renewed every 0.1 s: longer than the 0.2 s timeout
            await asyncio.sleep(0.1)
            peer.renew(kept_id)
            peer.renew(cut_id)
        peer.receive(jsonrpc.decode(jsonrpc.encode(jsonrpc.response(kept_id, {"content": []}))))
        assert (await kept).result == {"content": []}
        with pytest.raises(MaxTimeExceeded) as failed:
            await cut
        [cancelled] = [m for m in sent if m.get("method") == "notifications/cancelled"]
        return str(failed.value), cancelled["params"]["reason"]

    said, reason = asyncio.run(scenario())
    assert said.endswith("was still running after its maximum of 0.5 s (a cancellation was sent)")
    assert reason == "ran past its maximum of 0.5 s"
