"""Helpers for the HTTP client tests: a throwaway certificate authority for TLS.

The raw loopback servers they answer with are ``testkit.raw_http.RawServer``.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import ssl
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from conftest import require_or_skip

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
