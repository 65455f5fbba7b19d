"""As a library: a run signs in only where the code says how (``signing_in``), and keeps
its grants where the policy says."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from testkit.oauth_servers import OAuthServers
from toolrelay.client.auth.policy import SignInPolicy, signing_in
from toolrelay.client.config import ServerConfig
from toolrelay.errors import NoServerAvailable
from toolrelay.relay.catalog import Catalog


async def _aliases(url: str) -> tuple[list[str], dict[str, str]]:
    async with Catalog([ServerConfig(name="notes", transport="http", url=url)]) as catalog:
        return [route.alias for route in catalog.routes], {k: str(v) for k, v in catalog.unavailable.items()}


def test_a_library_run_signs_in_headless_inside_signing_in(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        with pytest.raises(NoServerAvailable) as caught:
            asyncio.run(_aliases(servers.mcp_url))
        assert "server notes needs an OAuth sign-in" in str(caught.value)
        with signing_in(SignInPolicy(mode="headless", store=tmp_path / "grants")):
            aliases, unavailable = asyncio.run(_aliases(servers.mcp_url))
        assert "notes__echo" in aliases and unavailable == {}
        assert len(list((tmp_path / "grants").rglob("*.json"))) == 1
