"""The test servers and process helpers that tests/ and bench/ share: one place for every fake.

  servers/          the server scripts, run by path as subprocesses (stdio MCP servers,
                    the Streamable HTTP echo server, the bench's fake Responses endpoint)
  fake_http.py      ``FakeHttpServer``: a handler the test writes, on toolrelay's own HTTP
                    server in a thread, every request recorded; ``CannedEndpoint``
  mcp_http_stub.py  ``StubServer``: a Streamable HTTP MCP endpoint that misbehaves on request
  mcp_http.py       toolrelay's own MCP endpoint in-process (``McpHttpThread``) or as a process
  raw_http.py       ``RawServer``: exact bytes on a socket (resets, broken chunks, TLS)
  recorded_streams.py  ``ReplayEndpoint``: the real recorded streams of tests/data/streams over HTTP
  processes.py      spawn / kill a process and everything it started; the leftover check
  npm.py            npm packages installed atomically into .toolrelay-cache
  conformance.py    the MCP conformance suite: installed, run, its verdicts read
  everything.py     server-everything over stdio, or over HTTP (everything_http.py)
  netns.py          ``loopback_only()``: a private network namespace with only loopback

Tests import it as ``testkit`` (tests/ is on sys.path through tests/conftest.py); bench/
runs the scripts in ``servers/`` by path (``bench/common.py: TEST_SERVERS``).

It never imports a test module, a test folder's helpers or conftest: tests build on it,
not the other way round.
"""
