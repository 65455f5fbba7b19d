"""Helpers for the HTTP client tests: raw loopback servers that write exact bytes, and a
throwaway certificate authority for TLS.

``RawServer`` runs in the test's own event loop (asyncio.start_server on 127.0.0.1); each
test gives it a handler that reads requests and writes answers byte for byte, so every
case (chunked, close-delimited, a reset mid-answer, a stale keep-alive connection) is
exactly what the test says. It counts accepted connections and closes every one on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import shutil
import socket
import ssl
import struct
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import require_or_skip


@dataclass
class Received:
    """One request as it arrived."""

    head: bytes
    """Request line and header lines, CRLF-separated, without the blank line."""
    body: bytes

    @property
    def request_line(self) -> str:
        return self.head.split(b"\r\n", 1)[0].decode()

    @property
    def headers(self) -> dict[str, str]:
        lines = self.head.decode("latin-1").split("\r\n")[1:]
        return {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}


async def read_request(reader: asyncio.StreamReader) -> Received | None:
    """The next request on a connection, or None when the client closed it."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    received = Received(head[:-4], b"")
    received.body = await reader.readexactly(int(received.headers.get("content-length", "0")))
    return received


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    """A sized answer: status line, Content-Length, ``headers`` ("Name: value"), body."""
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP reset (SO_LINGER 0) instead of a FIN."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "RawServer"], Awaitable[None]]


@dataclass
class RawServer:
    """A loopback server running ``handler`` on every connection; ``async with`` it."""

    handler: Handler
    tls: ssl.SSLContext | None = None
    accepts: int = 0
    requests: list[Received] = field(default_factory=list)
    client_closes: int = 0
    """Connections on which the client closed first (the server read EOF)."""
    alpn_seen: list[str | None] = field(default_factory=list)
    """The ALPN protocol of each TLS connection."""
    port: int = 0
    _closed: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def base_url(self, scheme: str = "http", host: str = "127.0.0.1") -> str:
        return f"{scheme}://{host}:{self.port}/v1"

    async def next_request(self, reader: asyncio.StreamReader) -> Received | None:
        """Read and record the next request; None (and counted) when the client closed."""
        received = await read_request(reader)
        if received is None:
            self.client_closes += 1
            self._closed.set()
        else:
            self.requests.append(received)
        return received

    async def client_closed(self, count: int, seconds: float = 5.0) -> None:
        """Wait until the client has closed ``count`` connections (the server read EOF)."""
        async with asyncio.timeout(seconds):
            while self.client_closes < count:
                self._closed.clear()
                await self._closed.wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepts += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        tls = writer.get_extra_info("ssl_object")
        if tls is not None:
            self.alpn_seen.append(tls.selected_alpn_protocol())
        try:
            await self.handler(reader, writer, self)
        except (ConnectionError, ssl.SSLError):
            pass
        except asyncio.CancelledError:  # __aexit__ ends the handlers; end quietly (a cancelled
            pass  # handler task makes Python 3.11's start_server log a spurious error)
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


# -- a throwaway certificate authority ----------------------------------------------------------


@dataclass
class LocalCA:
    """A CA certificate file to trust, and a server context whose certificate it signed
    (for ``localhost`` and 127.0.0.1)."""

    ca_file: Path
    cert_file: Path
    key_file: Path
    sni_seen: list[str | None] = field(default_factory=list)
    """The server name (SNI) each handshake with ``server_context`` carried."""

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        context.set_alpn_protocols(["http/1.1"])
        context.sni_callback = lambda _sock, name, _context: self.sni_seen.append(name)
        return context


def make_local_ca(directory: Path) -> LocalCA:
    """With the ``cryptography`` package, else the ``openssl`` CLI, else skip."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        if shutil.which("openssl") is None:
            require_or_skip("neither the cryptography package nor the openssl CLI is available")
        return _openssl_ca(directory)
    return _cryptography_ca(directory)


def _cryptography_ca(directory: Path) -> LocalCA:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolrelay test CA")])

    def builder(subject: x509.Name, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(hours=1))
                .not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                               critical=False))

    signs_certificates = x509.KeyUsage(digital_signature=False, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       key_cert_sign=True, crl_sign=True, encipher_only=False,
                                       decipher_only=False)
    ca = (builder(ca_name, ca_key)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(signs_certificates, critical=True)
          .sign(ca_key, hashes.SHA256()))
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    leaf = (builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]), leaf_key)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    local = LocalCA(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    local.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    local.cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    local.key_file.write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM,
                                                      serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
    return local


def _openssl_ca(directory: Path) -> LocalCA:
    local = LocalCA(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    ca_key, request, extensions = directory / "ca.key", directory / "server.csr", directory / "ext.cnf"
    extensions.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    commands = [
        ["openssl", "req", "-x509", *ec, "-keyout", ca_key, "-out", local.ca_file, "-days", "1",
         "-subj", "/CN=toolrelay test CA"],
        ["openssl", "req", "-new", *ec, "-keyout", local.key_file, "-out", request, "-subj", "/CN=localhost"],
        ["openssl", "x509", "-req", "-in", request, "-CA", local.ca_file, "-CAkey", ca_key, "-CAcreateserial",
         "-out", local.cert_file, "-days", "1", "-extfile", extensions],
    ]
    for command in commands:
        done = subprocess.run([str(part) for part in command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            require_or_skip(f"openssl could not make a test certificate: {done.stderr.strip()[:200]}")
    return local
