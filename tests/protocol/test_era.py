"""The 2026-07-28 envelope: reading and checking a request's ``_meta`` and headers, and
the results a server builds."""

from __future__ import annotations

import base64

import pytest

from toolrelay.errors import RpcError
from toolrelay.protocol import request_envelope
from toolrelay.protocol.versions import LATEST_MODERN_VERSION, MODERN_VERSIONS, SUPPORTED_VERSIONS

META = request_envelope.request_meta("2026-07-28", {"roots": {}}, "probe", "1.0")


def headers(**values: str) -> dict[str, str]:
    base = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "read_text_file"}
    base.update({key.replace("_", "-"): value for key, value in values.items()})
    return base


def test_modern_versions_are_apart_from_the_handshake_ones() -> None:
    assert MODERN_VERSIONS == ("2026-07-28",) and LATEST_MODERN_VERSION == "2026-07-28"
    assert not set(MODERN_VERSIONS) & set(SUPPORTED_VERSIONS)


def test_a_full_envelope_is_read() -> None:
    envelope = request_envelope.read_envelope("tools/list", {"_meta": META})
    assert envelope.protocol_version == "2026-07-28"
    assert envelope.declares("roots") and not envelope.declares("sampling")
    assert envelope.client_info == {"name": "probe", "version": "1.0"}
    assert request_envelope.has_envelope({"_meta": META})
    assert not request_envelope.has_envelope({"_meta": {"progressToken": 1}})


@pytest.mark.parametrize("params", [
    None, {}, {"_meta": []}, {"_meta": {request_envelope.CLIENT_CAPABILITIES_KEY: {}}},
    {"_meta": {request_envelope.PROTOCOL_VERSION_KEY: "2026-07-28"}},
    {"_meta": {request_envelope.PROTOCOL_VERSION_KEY: 2026, request_envelope.CLIENT_CAPABILITIES_KEY: {}}},
    {"_meta": {request_envelope.PROTOCOL_VERSION_KEY: "2026-07-28",
               request_envelope.CLIENT_CAPABILITIES_KEY: "all"}},
])
def test_a_missing_or_malformed_envelope_is_invalid_params(params: dict[str, object] | None) -> None:
    with pytest.raises(RpcError) as caught:
        request_envelope.read_envelope("tools/list", params)
    assert caught.value.code == -32602
    assert request_envelope.http_status(caught.value.code) == 400


def test_client_info_is_optional() -> None:
    meta = {request_envelope.PROTOCOL_VERSION_KEY: "2026-07-28", request_envelope.CLIENT_CAPABILITIES_KEY: {}}
    assert request_envelope.read_envelope("server/discover", {"_meta": meta}).client_info is None


def test_an_unserved_version_names_the_served_ones() -> None:
    with pytest.raises(RpcError) as caught:
        request_envelope.read_envelope(
            "tools/list", {"_meta": {**META, request_envelope.PROTOCOL_VERSION_KEY: "2099-01-01"}})
    assert caught.value.code == request_envelope.UNSUPPORTED_VERSION == -32022
    assert caught.value.data == {"supported": ["2026-07-28"], "requested": "2099-01-01"}


@pytest.mark.parametrize("sent", [
    headers(mcp_protocol_version="2025-11-25"), headers(mcp_method="tools/list"),
    headers(mcp_name="write_file"), {"mcp-method": "tools/call", "mcp-name": "read_text_file"},
])
def test_headers_that_disagree_with_the_body_are_a_mismatch(sent: dict[str, str]) -> None:
    params = {"name": "read_text_file", "_meta": META}
    with pytest.raises(RpcError) as caught:
        request_envelope.read_envelope("tools/call", params, header=sent.get)
    assert caught.value.code == request_envelope.HEADER_MISMATCH == -32020


def test_the_header_check_comes_before_the_version_check() -> None:
    params = {"name": "read_text_file", "_meta": {**META, request_envelope.PROTOCOL_VERSION_KEY: "v999"}}
    with pytest.raises(RpcError) as caught:
        request_envelope.read_envelope("tools/call", params, header=headers().get)
    assert caught.value.code == -32020


def test_a_base64_name_header_matches_a_non_ascii_name() -> None:
    name = "lire_fichier_é"
    wrapped = "=?base64?" + base64.b64encode(name.encode()).decode() + "?="
    params = {"name": name, "_meta": META}
    request_envelope.read_envelope("tools/call", params, header=headers(mcp_name=wrapped).get)
    assert request_envelope.decode_header_value("=?base64?not base64?=") is None


def test_results_say_complete_and_who_answered() -> None:
    info = {"name": "toolrelay-files", "version": "1"}
    listed = request_envelope.complete({"tools": []}, info, cacheable=True)
    assert listed == {"tools": [], "resultType": "complete",
                      "_meta": {request_envelope.SERVER_INFO_KEY: info},
                      "ttlMs": 0, "cacheScope": "private"}
    called = request_envelope.complete({"content": [], "_meta": {"x": 1}}, info)
    assert called["_meta"] == {"x": 1, request_envelope.SERVER_INFO_KEY: info} and "ttlMs" not in called


def test_discover_lists_the_modern_versions() -> None:
    assert request_envelope.discover_result({"tools": {}}, "use it") == {
        "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "instructions": "use it"}
    assert request_envelope.http_status(-32601) == 404 and request_envelope.http_status(-32603) == 200
