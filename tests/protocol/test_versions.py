"""Protocol revision negotiation: the server's choice and the client's check."""

from __future__ import annotations

import pytest

from toolrelay.errors import VersionMismatch
from toolrelay.protocol.versions import (
    DEFAULT_VERSION,
    LATEST_VERSION,
    SUPPORTED_VERSIONS,
    accept_server_version,
    choose_server_version,
)


def test_revisions_newest_first_and_defaults() -> None:
    assert SUPPORTED_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert sorted(SUPPORTED_VERSIONS, reverse=True) == list(SUPPORTED_VERSIONS)
    assert (LATEST_VERSION, DEFAULT_VERSION) == ("2025-11-25", "auto")  # the default probes


@pytest.mark.parametrize("asked", SUPPORTED_VERSIONS)
def test_server_answers_with_the_clients_revision_when_it_speaks_it(asked: str) -> None:
    assert choose_server_version(asked) == asked


@pytest.mark.parametrize("asked", ["2026-07-28", "2024-10-07", "", "latest", None, 20250618, ["2025-06-18"]])
def test_server_offers_its_latest_otherwise(asked: object) -> None:
    assert choose_server_version(asked) == LATEST_VERSION


@pytest.mark.parametrize("answered", SUPPORTED_VERSIONS)
def test_client_accepts_any_revision_it_speaks(answered: str) -> None:
    assert accept_server_version("fs", LATEST_VERSION, answered) == answered


@pytest.mark.parametrize(("answered", "shown"), [("2026-07-28", "'2026-07-28'"), (None, "None"), (3, "3")])
def test_client_refuses_other_revisions_naming_both(answered: object, shown: str) -> None:
    with pytest.raises(VersionMismatch) as caught:
        accept_server_version("fs", "2025-06-18", answered)
    assert str(caught.value) == (
        f"server fs answered protocol version {shown} to our '2025-06-18'; "
        "toolrelay speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 (choose one with --protocol-version)"
    )
    assert caught.value.exit_code == 3
