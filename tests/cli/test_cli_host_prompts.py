"""The terminal prompts for what servers ask (cli/elicitation.py, cli/consent.py): what the
user is shown, and what their answers send back."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from toolrelay.cli.consent import terminal_sampling_approver
from toolrelay.cli.elicitation import elicitor_for, terminal_elicitor
from toolrelay.client.host import ElicitationAnswer, ElicitationRequest, SamplingRequest, form_fields

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "your full name"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
        "news": {"type": "boolean", "default": False},
    },
    "required": ["name"],
}


def form(call_id: str | None = "call_1") -> ElicitationRequest:
    return ElicitationRequest(server="ev", call_id=call_id, mode="form", message="Sign up, please.",
                              fields=form_fields(FORM))


def url(address: str) -> ElicitationRequest:
    return ElicitationRequest(server="ev", call_id=None, mode="url", message="Sign in.", url=address,
                              elicitation_id="el-1")


def elicit(answers: str, request: ElicitationRequest) -> tuple[ElicitationAnswer, str]:
    shown = io.StringIO()
    answer = asyncio.run(terminal_elicitor(io.StringIO(answers), shown)(request))
    return answer, shown.getvalue()


def test_a_form_is_asked_field_by_field_and_empty_answers_take_the_defaults() -> None:
    answer, shown = elicit("y\nAda\n\n2\ny\n", form())
    assert answer.action == "accept"
    assert answer.content == {"name": "Ada", "age": 30, "plan": "pro", "news": True}
    assert "Server ev asks for input (during call call_1):\n  Sign up, please.\n" in shown
    assert "  Name — your full name\n" in shown
    assert "  name (required): " in shown
    assert "  age (integer 0..150, default 30): " in shown
    assert "    1) free\n    2) pro\n" in shown and "  plan (a number, default free): " in shown
    assert "  news (y/n, default no): " in shown


def test_a_value_that_does_not_fit_is_asked_again_and_required_fields_insist() -> None:
    answer, shown = elicit("y\n\nAda\n200\n41\n\n\n", form())
    assert answer.content == {"name": "Ada", "age": 41, "plan": "free", "news": False}
    assert "    required\n" in shown
    assert shown.count("  age (integer 0..150, default 30): ") == 2


@pytest.mark.parametrize(("answers", "action"),
                         [("n\n", "decline"), ("c\n", "cancel"), ("y\nAda\n", "cancel")])
def test_no_declines_and_c_or_end_of_input_cancels(answers: str, action: str) -> None:
    answer, _ = elicit(answers, form())
    assert (answer.action, answer.content) == (action, None)


def test_a_url_is_shown_whole_with_its_domain_and_never_opened_without_open() -> None:
    answer, shown = elicit("y\n", url("https://auth.example.com/login?x=1"))
    assert answer.action == "accept"
    assert "  https://auth.example.com/login?x=1\n  domain: auth.example.com\n" in shown
    assert "open it in your browser yourself (toolrelay opens URLs only with --open)" in shown


def test_a_punycode_domain_is_flagged_and_no_declines() -> None:
    answer, shown = elicit("n\n", url("https://xn--pple-43d.com/"))
    assert answer.action == "decline"
    assert "warning: the domain is written in Punycode (xn--...): it may imitate another name" in shown


def test_without_a_terminal_ask_declines_naming_the_option() -> None:
    answer = asyncio.run(elicitor_for(None, open_urls=False, interactive=False)(form()))
    assert answer.action == "decline"
    assert answer.note == ("server ev asked for input ('Sign up, please.'); declined: no terminal to ask on; "
                           "rerun with --elicit defaults to accept forms' defaults")


def sampling(**fields: Any) -> SamplingRequest:
    messages = [{"role": "user", "content": {"type": "text", "text": "Summarize: MCP."}}]
    return SamplingRequest(server="ev", call_id="call_2", messages=messages, max_tokens=100,
                           system_prompt="Be brief.", **fields)


@pytest.mark.parametrize(("answer", "verdict"), [("y\n", None), ("yes\n", None), ("\n", "the user declined")])
def test_a_sampling_request_shows_the_server_and_the_whole_prompt(answer: str, verdict: str | None) -> None:
    shown = io.StringIO()
    approve = terminal_sampling_approver(io.StringIO(answer), shown)
    assert asyncio.run(approve(sampling())) == verdict
    assert shown.getvalue() == (
        "\nServer ev asks the model for a message (sampling, up to 100 tokens, during call call_2):\n"
        "  [system] Be brief.\n  [user] Summarize: MCP.\nSend it to the model? [y/N] "
    )
