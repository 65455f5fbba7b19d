"""Reading one server entry of a config file: the fields of each kind of entry.

An entry names a process to start (``command``, ``args``, ``env``, ``envFile``,
``cwd``) or an endpoint to reach (``url``, ``headers``, and ``toolrelay.oauth``). The transport registry says
which reader each transport uses; a reader returns ``ServerConfig`` fields, every value
expanded (``environment.py``), or raises ``ConfigError`` naming the entry, or
``EntrySkipped`` for an entry toolrelay cannot serve but other clients might.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..redaction import redact_url
from .environment import ExpansionContext, expand, parse_dotenv

__all__ = ["EntrySkipped", "json_kind", "one_of", "read_command_entry", "read_url_entry"]


class EntrySkipped(Exception):
    """An entry toolrelay cannot or should not serve; the message says why."""


def read_command_entry(entry: dict[str, Any], context: ExpansionContext, where: str) -> dict[str, Any]:
    """A server started as a process: command, args, env (plus envFile), cwd."""
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f'{where}: "command" must be a non-empty string')
    block = entry.get("toolrelay")
    if isinstance(block, dict) and "oauth" in block:
        raise ConfigError(f'{where}: "toolrelay.oauth" is for HTTP servers; a stdio server takes its '
                          'credentials from its environment')
    env = _env_file(entry, context, where)
    env.update(_string_map(entry, "env", context, where))
    cwd = entry.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            raise ConfigError(f'{where}: "cwd" must be a string')
        cwd = str(context.workspace / Path(expand(cwd, context, f"{where}, cwd")).expanduser())
    return {
        "command": expand(command, context, f"{where}, command"),
        "args": tuple(_string_list(entry, "args", context, where)),
        "env": MappingProxyType(env),
        "cwd": cwd,
    }


def _env_file(entry: dict[str, Any], context: ExpansionContext, where: str) -> dict[str, str]:
    raw = entry.get("envFile")
    if raw is None:
        return {}
    if not isinstance(raw, str):
        raise ConfigError(f'{where}: "envFile" must be a string')
    env_path = context.workspace / Path(expand(raw, context, f"{where}, envFile")).expanduser()
    try:
        text = env_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read envFile {env_path}: {exc.strerror or exc}") from None
    return parse_dotenv(text, f"{where}, envFile {env_path}")


def read_url_entry(entry: dict[str, Any], context: ExpansionContext, where: str) -> dict[str, Any]:
    """A Streamable HTTP endpoint: an http(s) url and its headers."""
    raw = entry.get("url")
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(f'{where}: "url" must be a non-empty string')
    url = expand(raw, context, f"{where}, url")
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("unix", "pipe", "ws", "wss"):
        raise EntrySkipped(
            f"{scheme}:// URLs are not supported (toolrelay speaks Streamable HTTP over http(s))"
        )
    if scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise ConfigError(f'{where}: "url" must be an http:// or https:// URL, got {redact_url(url)!r}')
    headers = _string_map(entry, "headers", context, where)
    _check_headers(headers, where)
    fields = {"url": url, "headers": MappingProxyType(headers)}
    return fields | _oauth(entry, context, where)


# RFC 9110 field-name characters; a value may hold anything but the bytes that end a line.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_LINE_ENDS = re.compile(r"[\r\n\0]")


def _check_headers(headers: dict[str, str], where: str) -> None:
    """Refuse a header that would split the request (CR, LF, NUL) or is no header name.

    The value is never quoted: headers carry credentials."""
    for name, value in headers.items():
        if not _HEADER_NAME.fullmatch(name):
            raise ConfigError(f'{where}: "headers" has {name!r}, which is not an HTTP header name')
        if _LINE_ENDS.search(value):
            raise ConfigError(f'{where}: "headers.{name}" holds a line break or NUL, which would split '
                              'the HTTP request (after any ${...} was expanded)')


def _oauth(entry: dict[str, Any], context: ExpansionContext, where: str) -> dict[str, Any]:
    """``"toolrelay": {"oauth": {...}}``: how to sign in to this server (HTTP servers only)."""
    block = entry.get("toolrelay")
    if not isinstance(block, dict) or "oauth" not in block:
        return {}
    from .auth.settings import read_oauth  # the auth package is imported only where it is used

    return {"oauth": read_oauth(block["oauth"], context, where)}


# -- value checks -----------------------------------------------------------------------


def _scalar_text(value: Any) -> str | None:
    """Strings, and numbers/booleans people write unquoted (``"PORT": 3000``), as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _string_list(entry: dict[str, Any], key: str, context: ExpansionContext, where: str) -> list[str]:
    raw = entry.get(key, [])
    if not isinstance(raw, list):
        raise ConfigError(f'{where}: "{key}" must be an array of strings')
    values = []
    for index, item in enumerate(raw):
        text = _scalar_text(item)
        if text is None:
            raise ConfigError(f'{where}: "{key}[{index}]" must be a string, got {json_kind(item)}')
        values.append(expand(text, context, f"{where}, {key}[{index}]"))
    return values


def _string_map(entry: dict[str, Any], key: str, context: ExpansionContext, where: str) -> dict[str, str]:
    raw = entry.get(key, {})
    if not isinstance(raw, dict):
        raise ConfigError(f'{where}: "{key}" must be an object of strings')
    values = {}
    for name, item in raw.items():
        text = _scalar_text(item)
        if text is None:
            raise ConfigError(f'{where}: "{key}.{name}" must be a string, got {json_kind(item)}')
        values[name] = expand(text, context, f"{where}, {key}.{name}")
    return values


def one_of(raw: Any, choices: tuple[str, ...], where: str) -> str:
    """``raw`` when it is one of ``choices``; else a ConfigError naming them."""
    if raw not in choices:
        raise ConfigError(f"{where}: must be one of {', '.join(choices)}, got {raw!r}")
    return str(raw)


def json_kind(value: Any) -> str:
    """How a JSON value is named in messages: ``an object``, ``a string``, ..."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
