"""What a server process gets from toolrelay's environment, and ``${...}`` expansion.

A stdio server starts with a *minimal* environment: the variables a program needs to run
(PATH, HOME, locale, terminal, temp dir, time zone, ...) plus exactly the variables its
config entry names. Nothing else of toolrelay's own environment leaks into it, so an
``OPENAI_API_KEY`` or ``TOOLRELAY_TOKEN`` reaches a server only when the config says so.

Config values may use the interpolation dialects of the files users already have:
``${env:NAME}`` (Cursor, VS Code), ``${NAME}`` and ``${NAME:-default}`` (Claude Code),
``${userHome}``, ``${workspaceFolder}``, ``${workspaceFolderBasename}``, ``${/}`` and
``${pathSeparator}`` (VS Code), and ``${input:ID}`` (VS Code prompts; toolrelay reads
``TOOLRELAY_INPUT_<ID>`` from the environment, the id as written or upper-cased, else asks
on the terminal).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..errors import ConfigError
from ..redaction import redact, worth_redacting

__all__ = [
    "PASSED_THROUGH",
    "ExpansionContext",
    "child_environment",
    "expand",
    "input_from_environment",
    "input_variable_name",
    "parse_dotenv",
    "redact",
]

# Variables every program may need and none of which is a credential. Anything else
# reaches a server only when its config entry names it.
PASSED_THROUGH: Final = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LANGUAGE",
    "TMPDIR", "TEMP", "TMP", "TZ", "XDG_RUNTIME_DIR",
    # Windows equivalents, so the same rule works there
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE", "USERNAME",
    "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "HOMEDRIVE", "HOMEPATH",
})
PASSED_PREFIXES: Final = ("LC_",)

# ${input:ID}, ${env:NAME[:-default]}, ${NAME[:-default]}, ${userHome}, ${/}, ...
_VARIABLE: Final = re.compile(r"\$\{(?:(input|env):)?([A-Za-z0-9_./-]+)(?::-([^}]*))?\}")


def child_environment(named: Mapping[str, str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server process: the pass-through variables plus ``named``."""
    source = os.environ if base is None else base
    env = {
        key: value
        for key, value in source.items()
        if key.upper() in PASSED_THROUGH or key.startswith(PASSED_PREFIXES)
    }
    env.update(named)
    return env


def input_variable_name(input_id: str) -> str:
    """The environment variable named in messages for ``${input:ID}``: TOOLRELAY_INPUT_<ID>,
    upper case, other characters as ``_`` (``api-key`` → TOOLRELAY_INPUT_API_KEY)."""
    return "TOOLRELAY_INPUT_" + re.sub(r"[^A-Za-z0-9]", "_", input_id).upper()


def input_from_environment(input_id: str, environ: Mapping[str, str]) -> str | None:
    """The answer to ``${input:ID}`` from the environment: TOOLRELAY_INPUT_ plus the id as
    written (``TOOLRELAY_INPUT_apiKey``), else its upper-case name; None when neither is set."""
    for variable in ("TOOLRELAY_INPUT_" + input_id, input_variable_name(input_id)):
        if variable in environ:
            return environ[variable]
    return None


InputResolver = Callable[[str], str]
"""Given an input id, its value (or ConfigError); see config.py for the VS Code rules."""


@dataclass(slots=True, kw_only=True)
class ExpansionContext:
    """Where ``${...}`` values come from while one config file is loaded."""

    environ: Mapping[str, str]
    workspace: Path
    """The project folder of the config file (the parent of .vscode/ or .cursor/)."""
    resolve_input: InputResolver | None = None
    substituted: set[str] = field(default_factory=set)
    """Values that came from the environment or ``${input:...}``: treated as secrets."""

    def builtin(self, name: str) -> str | None:
        values = {
            "userHome": str(Path.home()),
            "workspaceFolder": str(self.workspace),
            "workspaceFolderBasename": self.workspace.name,
            "/": os.sep,
            "pathSeparator": os.sep,
        }
        return values.get(name)


def expand(text: str, context: ExpansionContext, where: str) -> str:
    """Replace every ``${...}`` in ``text``; ``where`` names the place for error messages."""
    if "${" not in text:
        return text

    def substitute(match: re.Match[str]) -> str:
        kind, name, default = match.group(1), match.group(2), match.group(3)
        if kind == "input":
            return _input_value(name, context, where)
        if kind is None:
            value = context.builtin(name)
            if value is not None:
                return value
        value = context.environ.get(name)
        if value is not None:
            if worth_redacting(value):  # e.g. a token passed as "--token ${env:TOKEN}"
                context.substituted.add(value)
            return value
        if default is not None:
            return default
        raise ConfigError(
            f"{where}: variable {name} is not set (from {match.group(0)}); "
            f"set it in the environment or write ${{{name}:-default}}"
        )

    return _VARIABLE.sub(substitute, text)


def _input_value(input_id: str, context: ExpansionContext, where: str) -> str:
    if context.resolve_input is None:
        raise ConfigError(f"{where}: ${{input:{input_id}}} cannot be answered here")
    try:
        value = context.resolve_input(input_id)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if worth_redacting(value):
        context.substituted.add(value)
    return value


def parse_dotenv(text: str, where: str) -> dict[str, str]:
    """The variables of a dotenv file, read as python-dotenv reads them (``KEY=value``,
    ``#`` comments, ``export``, quotes, escapes in double quotes). ``${...}`` stays as
    written, as in VS Code's envFile; a name without ``=`` sets nothing. A statement
    python-dotenv cannot parse (an unclosed quote, say) is a ConfigError naming its line."""
    from dotenv import dotenv_values  # only a config naming an env file needs it
    from dotenv.parser import parse_stream

    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            problem = _unparsable(binding.original.string)
            raise ConfigError(f"{where}, line {binding.original.line}: {problem}")
    values = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


def _unparsable(statement: str) -> str:
    shown = statement.strip()[:60]
    value = statement.partition("=")[2].lstrip()
    quote = value[:1]
    if quote in ("'", '"') and not re.search(rf"(?<!\\){quote}", value.splitlines()[0][1:]):
        kind = "single" if quote == "'" else "double"
        return f"expected KEY=value, got {shown!r} (the {kind} quote is not closed)"
    return f"expected KEY=value, got {shown!r}"
