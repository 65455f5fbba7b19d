"""Stage 1, declare: the catalog's MCP tools → the exact Responses ``tools`` array.

Each tool becomes ``{"type": "function", "name": <alias>, "description", "parameters",
"strict"}``. The tool's ``inputSchema`` is the *rule*: it is kept as it was (arguments are
validated against it) and never modified; ``parameters`` is a copy.

Non-strict (the default) sends the inputSchema with only what the API demands changed:
``$schema`` removed, a missing top-level ``type`` set to ``"object"``, an object without
``properties`` given ``"properties": {}``. Strict converts that copy further (strict.py)
or, when it cannot, falls back to non-strict for that tool alone. Every change and every
fall-back is in the tool's :class:`DeclarationReport`; nothing is changed silently.

``declare="namespaces"`` groups each server's tools in one ``namespace`` tool
(``namespaces.py``), each under its bare MCP name. With ``structured`` (``--structured-output
auto``), a tool's ``outputSchema`` is declared as ``output_schema`` and its valid
``structuredContent`` is what the model reads (``feedback.py``), unless the schema only
wraps the text (``wraps_text``: one required string, as the file server's ``{content}``),
whose text is sent as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .alias import SEPARATOR, AliasChoice, alias_choices, name_choices, namespaced_alias
from .namespaces import DeclareMode, Namespace, namespace_description, namespace_tool
from .strict import SchemaChange, copy_json, json_pointer, json_type_name, to_strict

__all__ = [
    "Declaration",
    "DeclarationReport",
    "DeclarationSet",
    "declare_tool",
    "declare_tools",
    "normalize_parameters",
    "tool_description",
    "unusable_reason",
    "wraps_text",
]

_ALIAS_NOTES = {
    "mapped": "characters outside A-Z a-z 0-9 _ - replaced by _",
    "shortened": "cut to 64 characters, with a hash of the original names",
    "disambiguated": "hash added: another tool maps to the same name",
}


@dataclass(slots=True, kw_only=True, frozen=True)
class DeclarationReport:
    """What was done to one tool on its way to the model."""

    alias: str
    server: str
    tool: str
    strict_requested: bool
    strict: bool
    """What the declaration says (False after a fall-back)."""
    changes: tuple[SchemaChange, ...]
    """Changes to ``parameters``, with JSON pointers into the original inputSchema."""
    notes: tuple[str, ...] = ()
    """Name and description: how they were derived when not taken as they were."""
    fallback_reason: str | None = None

    def lines(self) -> list[str]:
        """The report as text lines: notes first, then one line per change."""
        return [*self.notes, *(str(change) for change in self.changes)]


@dataclass(slots=True, kw_only=True, frozen=True)
class Declaration:
    """One tool: where it comes from, its rule, and what the model is shown."""

    alias: str
    server: str
    tool: str
    """The original MCP tool name, sent unchanged in ``tools/call``."""
    rule: dict[str, Any]
    """The tool's original ``inputSchema`` (the very object from ``tools/list``)."""
    description: str | None
    annotations: dict[str, Any]
    function_tool: dict[str, Any]
    """The entry of the Responses ``tools`` array."""
    report: DeclarationReport
    output_schema: Any = None
    """The tool's ``outputSchema`` as listed (None: none); its results are checked against it."""
    namespace: str | None = None
    """The namespace it is declared in (``--declare namespaces``; None: flat)."""

    @property
    def strict(self) -> bool:
        return self.report.strict

    @property
    def structured(self) -> bool:
        """Declared with ``output_schema``: a valid ``structuredContent`` is sent as its JSON."""
        return "output_schema" in self.function_tool


@dataclass(slots=True, kw_only=True, frozen=True)
class DeclarationSet:
    """Every declared tool, sorted by (server, tool), and the tools that could not be."""

    declarations: tuple[Declaration, ...]
    skipped: tuple[str, ...] = ()
    """Why a listed tool was left out (no name, duplicate name, inputSchema not an object)."""
    namespaces: tuple[Namespace, ...] = ()
    """``--declare namespaces``: one per server with declared tools, by server name."""

    def tools(self) -> list[dict[str, Any]]:
        """The Responses ``tools`` array: the function tools, or one namespace per server."""
        if not self.namespaces:
            return [declaration.function_tool for declaration in self.declarations]
        return [
            namespace_tool(space, (d.function_tool for d in self.declarations if d.server == space.server))
            for space in self.namespaces
        ]

    def by_alias(self) -> dict[str, Declaration]:
        return {declaration.alias: declaration for declaration in self.declarations}


def declare_tools(
    catalog: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    strict: bool | Mapping[str, bool] = False,
    declare: DeclareMode = "flat",
    descriptions: Mapping[str, str] | None = None,
    structured: bool = False,
) -> DeclarationSet:
    """Declare every (server name, MCP Tool object) pair; ``strict`` for all or per server.
    ``declare="namespaces"``: one namespace per server, described by ``descriptions`` (server
    → text); ``structured``: declare ``output_schema`` (see the module's notes)."""
    accepted: dict[tuple[str, str], Mapping[str, Any]] = {}
    skipped: list[str] = []
    for index, (server, tool) in enumerate(catalog):
        problem = unusable_reason(tool, server, accepted)
        if problem is None:
            accepted[(server, tool["name"])] = tool
        else:
            skipped.append(f"server '{server}': tool #{index + 1} skipped: {problem}")
    if declare == "namespaces":
        return _namespaced(accepted, skipped, strict, descriptions or {}, structured)
    choices = alias_choices(accepted)
    declarations = tuple(
        declare_tool(server, tool, choices[(server, name)], strict=_wants_strict(strict, server),
                     structured=structured)
        for (server, name), tool in sorted(accepted.items(), key=lambda entry: entry[0])
    )
    return DeclarationSet(declarations=declarations, skipped=tuple(skipped))


def _namespaced(
    accepted: Mapping[tuple[str, str], Mapping[str, Any]], skipped: list[str],
    strict: bool | Mapping[str, bool], descriptions: Mapping[str, str], structured: bool,
) -> DeclarationSet:
    """Each server's tools under bare names in the server's namespace."""
    servers = sorted({server for server, _ in accepted})
    spaces = name_choices(servers)
    declarations: list[Declaration] = []
    for server in servers:
        tools = {name: tool for (owner, name), tool in accepted.items() if owner == server}
        names = name_choices(tools)
        declarations.extend(
            declare_tool(server, tools[name], names[name], strict=_wants_strict(strict, server),
                         namespace=spaces[server].alias, structured=structured)
            for name in sorted(tools)
        )
    namespaces = tuple(
        Namespace(name=spaces[server].alias, server=server,
                  description=descriptions.get(server) or namespace_description(server, {}, None))
        for server in servers
    )
    return DeclarationSet(declarations=tuple(declarations), skipped=tuple(skipped), namespaces=namespaces)


def unusable_reason(tool: Any, server: str, accepted: Mapping[tuple[str, str], Any]) -> str | None:
    """Why ``tool`` cannot be declared beside the ``accepted`` ones (None: it can)."""
    if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str) or not tool["name"]:
        return 'no "name" string'
    if (server, tool["name"]) in accepted:
        return f"duplicate name '{tool['name']}' (the first one is used)"
    schema = tool.get("inputSchema", {})
    if not isinstance(schema, Mapping):
        return f"inputSchema of '{tool['name']}' is not an object (got {json_type_name(schema)})"
    return None


def _wants_strict(strict: bool | Mapping[str, bool], server: str) -> bool:
    if isinstance(strict, bool):
        return strict
    return bool(strict.get(server, False))


def declare_tool(
    server: str, tool: Mapping[str, Any], choice: AliasChoice, *, strict: bool,
    namespace: str | None = None, structured: bool = False,
) -> Declaration:
    """Declare one MCP tool under the alias chosen for it (``namespace``: the name chosen
    for it inside that namespace; its alias is then ``<namespace>.<name>``)."""
    rule = tool.get("inputSchema", {})
    parameters, changes = normalize_parameters(rule)
    fallback_reason: str | None = None
    if strict:
        conversion = to_strict(parameters)
        if conversion.parameters is not None:
            parameters, changes = conversion.parameters, changes + conversion.changes
        elif conversion.fallback is not None:
            fallback_reason = conversion.fallback_reason
            changes = (*changes, conversion.fallback)
    description, description_note = tool_description(tool)
    alias = choice.alias if namespace is None else namespaced_alias(namespace, choice.alias)
    function_tool: dict[str, Any] = {"type": "function", "name": choice.alias}
    if description is not None:
        function_tool["description"] = description
    function_tool["parameters"] = parameters
    function_tool["strict"] = strict and fallback_reason is None
    output_schema = tool.get("outputSchema")
    if structured and isinstance(output_schema, Mapping) and not wraps_text(output_schema):
        function_tool["output_schema"] = copy_json(output_schema)
    notes = _notes(server, tool["name"], AliasChoice(alias=alias, how=choice.how), description_note)
    report = DeclarationReport(
        alias=alias, server=server, tool=tool["name"], strict_requested=strict,
        strict=function_tool["strict"], changes=changes, notes=notes,
        fallback_reason=fallback_reason,
    )
    annotations = tool.get("annotations")
    return Declaration(
        alias=alias, server=server, tool=tool["name"], rule=rule, description=description,
        annotations=dict(annotations) if isinstance(annotations, Mapping) else {},
        function_tool=function_tool, report=report, output_schema=output_schema, namespace=namespace,
    )


def wraps_text(output_schema: Mapping[str, Any]) -> bool:
    """Whether an ``outputSchema`` only wraps the text: an object whose one required property
    is a string (the file server's ``{"content": text}``). Its JSON would say no more than
    the text, escaped, so the text is what the model reads."""
    required = output_schema.get("required")
    properties = output_schema.get("properties")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(properties, Mapping):
        return False
    only = properties.get(required[0])
    return isinstance(only, Mapping) and only.get("type") == "string"


def _notes(server: str, tool: str, choice: AliasChoice, description_note: str | None) -> tuple[str, ...]:
    notes: list[str] = []
    if choice.how != "exact":
        notes.append(f"name: {choice.alias} for {server}{SEPARATOR}{tool} ({_ALIAS_NOTES[choice.how]})")
    if description_note is not None:
        notes.append(description_note)
    return tuple(notes)


def normalize_parameters(input_schema: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[SchemaChange, ...]]:
    """A copy of ``input_schema`` with only what the API demands changed, and the changes."""
    parameters: dict[str, Any] = copy_json(input_schema)
    changes: list[SchemaChange] = []

    def changed(keyword: str, note: str) -> None:
        changes.append(SchemaChange(pointer=json_pointer("", keyword), note=note))

    if "$schema" in parameters:
        del parameters["$schema"]
        changed("$schema", "removed (the API does not take it)")
    if "type" not in parameters:
        parameters = {"type": "object", **parameters}
        changed("type", 'set to "object" (missing)')
    if parameters["type"] == "object" and "properties" not in parameters:
        parameters["properties"] = {}
        changed("properties", "added {} (object without properties)")
    return parameters, tuple(changes)


def tool_description(tool: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The description shown to the model, and a note when it is not the tool's own."""
    description = tool.get("description")
    if isinstance(description, str) and description:
        return description, None
    annotations = tool.get("annotations")
    annotation_title = annotations.get("title") if isinstance(annotations, Mapping) else None
    for source, text in (("title", tool.get("title")), ("annotations.title", annotation_title)):
        if isinstance(text, str) and text:
            return text, f"description: none given; the {source} is used"
    return None, "description: none given by the server (left out)"
