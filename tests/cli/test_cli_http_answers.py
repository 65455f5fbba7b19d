"""What the CLI says of an HTTP server that is not what the config says it is: a web server
answering a page where an MCP endpoint answers JSON (one line; the page goes to the log
file), and a header HTTP forbids (its value never shown)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import config, toolrelay

from testkit.fake_http import FakeHttpServer, HttpRequest, HttpResponder

PAGE = (b"<!DOCTYPE HTML>\n<html>\n  <body>\n    <h1>Error response</h1>\n    <p>Error code: 501</p>\n"
        b"  </body>\n</html>\n")
VERBS = {
    "tools": ("tools",),
    "call": ("call", "web__echo", "{}"),
    "run": ("run", "say hi", "--model", "offline"),
}


class WebServer(FakeHttpServer):
    """A web server (``python -m http.server`` says 501 to a POST): every request gets
    ``status`` and an HTML page."""

    def __init__(self) -> None:
        super().__init__(self._page, name="web-page")
        self.status = 501

    async def _page(self, request: HttpRequest, http: HttpResponder) -> None:
        await http.send(self.status, [("content-type", "text/html;charset=utf-8")], PAGE)


@pytest.fixture(scope="module")
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


def _cli(tmp_path: Path, verb: str, entry: dict[str, object]) -> tuple[int, str, Path]:
    mcp = config(tmp_path / "mcp.json", web=entry)
    logs = tmp_path / "logs"
    done = toolrelay(*VERBS[verb], "--config", str(mcp), cwd=tmp_path, env={"TOOLRELAY_LOG_DIR": str(logs)})
    return done.returncode, done.stderr, logs / "web.log"


@pytest.mark.parametrize("verb", VERBS)
def test_a_web_page_is_said_in_one_line_and_kept_in_the_log(
    tmp_path: Path, web: WebServer, verb: str
) -> None:
    web.status = 501
    url = f"{web.origin}/mcp"
    status, stderr, log = _cli(tmp_path, verb, {"url": url})
    assert status == 3
    assert stderr == (f"toolrelay {verb}: error: server web unavailable: server web at {url} is not an MCP "
                      f"endpoint (HTTP 501, text/html); its answer is kept in {log}\n")
    kept = log.read_text(encoding="utf-8")
    assert f"HTTP 501 Not Implemented (text/html) to initialize request 2 from {url}:\n" in kept
    assert PAGE.decode() in kept


KEPT = "; its answer is kept in {log}"


@pytest.mark.parametrize(
    ("answer", "said"),
    [(200, "server web at {url} is not an MCP endpoint (HTTP 200, text/html)" + KEPT),
     (502, "server web answered HTTP 502 Bad Gateway to initialize request 2 with a web page" + KEPT),
     (401, "server web answered HTTP 401 Unauthorized to initialize request 2 with a web page" + KEPT
      + " (check the server's headers in the config, or sign in first with `toolrelay auth login web "
        "--config {config}`)")],
)
def test_what_a_page_says_depends_on_its_status(
    tmp_path: Path, web: WebServer, answer: int, said: str
) -> None:
    """A gateway's error page or a sign-in page stands for an endpoint that may be MCP, behind it."""
    web.status = answer
    url = f"{web.origin}/mcp"
    status, stderr, log = _cli(tmp_path, "tools", {"url": url})
    assert status == 3
    said = said.format(url=url, log=log, config=tmp_path / "mcp.json")
    assert stderr == f"toolrelay tools: error: server web unavailable: {said}\n"


def test_a_header_value_http_forbids_is_never_shown(tmp_path: Path, web: WebServer) -> None:
    web.status = 501
    url = f"{web.origin}/mcp"
    entry = {"url": url, "headers": {"X-Api-Key": "${env:WEB_KEY}"}}
    mcp = config(tmp_path / "mcp.json", web=entry)
    done = toolrelay("tools", "--config", str(mcp), cwd=tmp_path, env={"WEB_KEY": "k3y-0123456789\r\n"})
    assert done.returncode == 2  # refused with the config, before anything is sent
    assert done.stderr == (f"toolrelay tools: error: {mcp}: server 'web': \"headers.X-Api-Key\" holds a line "
                           "break or NUL, which would split the HTTP request (after any ${...} was "
                           "expanded)\n")
    assert "k3y-0123456789" not in done.stderr
