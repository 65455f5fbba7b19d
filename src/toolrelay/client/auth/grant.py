"""A grant: what signing in to one server at one authorization server left behind (the
client toolrelay is there, the tokens, the scopes asked for), and its form on disk."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .tokens import Client, Tokens, bearer_token_ok

__all__ = ["Grant", "grant_from_json"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """One server's sign-in at one authorization server."""

    server: str
    """The server's canonical URL: what grants are looked up by."""
    resource: str
    """The resource indicator its tokens were asked for (RFC 8707)."""
    issuer: str
    token_endpoint: str
    client: Client
    tokens: Tokens
    scopes: tuple[str, ...]
    """The scopes asked for (the server may have granted fewer: ``tokens.scope``)."""
    signed_in_at: float

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["scopes"] = list(self.scopes)
        return record

    def __repr__(self) -> str:  # tokens and the client secret never show
        return f"Grant(server={self.server!r}, issuer={self.issuer!r}, scopes={self.scopes!r})"


def grant_from_json(record: Any) -> Grant | None:
    """The grant a stored record holds; None for a record this version cannot read (or whose
    access token is not one a Bearer header can carry)."""
    try:
        client = Client(**record["client"])
        tokens = Tokens(**record["tokens"])
        fields = {key: record[key] for key in ("server", "resource", "issuer", "token_endpoint")}
        if not all(isinstance(value, str) for value in fields.values()):
            return None
        if not isinstance(tokens.access_token, str) or not bearer_token_ok(tokens.access_token):
            return None  # a token no header can carry (a file edited by hand, or an older version's)
        return Grant(**fields, client=client, tokens=tokens, scopes=tuple(record["scopes"]),
                     signed_in_at=float(record["signed_in_at"]))
    except (KeyError, TypeError, ValueError):
        return None
