"""The hand-written argument checks accept exactly what each declared inputSchema accepts.

Random argument objects go to the real tool functions (in-process, over an empty root)
and to a JSON Schema validator; "Invalid arguments" must come back exactly when the
schema says no. (head and tail together are valid JSON Schema but refused by the tool.)
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolrelay.files import FileService, root_from_argument
from toolrelay.files.declarations import TOOLS
from toolrelay.files.tools import BOTH_HEAD_AND_TAIL
from toolrelay.server.app import CallContext

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False),
                     st.sampled_from([0.0, 2.0, 1e20, -0.0]), st.text(max_size=5))
VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3), st.dictionaries(st.text(max_size=3), _SCALARS,
                                                                                max_size=2))
KEYS = ["path", "paths", "head", "tail", "pattern", "excludePatterns", "heads"]
ARGUMENTS = st.dictionaries(
    st.sampled_from(KEYS), st.one_of(VALUES, st.lists(st.text(max_size=4), max_size=3)), max_size=4
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> FileService:
    return FileService([root_from_argument(str(tmp_path_factory.mktemp("arguments")))])


def outcome_text(service: FileService, name: str, arguments: dict[str, Any]) -> str:
    outcome = service.call(name, arguments, CallContext(client_roots=None))
    if inspect.isawaitable(outcome):
        async def settle() -> Any:
            return await outcome
        outcome = asyncio.run(settle())
    return str(outcome["content"][0]["text"])


@pytest.mark.parametrize("tool", TOOLS, ids=[tool["name"] for tool in TOOLS])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=ARGUMENTS)
def test_checks_match_the_schema(
    service: FileService, tool: dict[str, Any], arguments: dict[str, Any]
) -> None:
    schema_valid = jsonschema.Draft202012Validator(tool["inputSchema"]).is_valid(arguments)
    text = outcome_text(service, tool["name"], arguments)
    if schema_valid and {"head", "tail"} <= arguments.keys():
        assert text == BOTH_HEAD_AND_TAIL
    else:
        assert text.startswith("Invalid arguments: ") != schema_valid, (arguments, text)


def test_infinite_counts_are_refused(service: FileService) -> None:
    """JSON 1e999 parses to an infinite float: not an integer."""
    text = outcome_text(service, "read_text_file", {"path": "x", "head": float("inf")})
    assert text == 'Invalid arguments: "head" must be a non-negative integer, got Infinity'
