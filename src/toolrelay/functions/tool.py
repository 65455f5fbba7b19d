"""``FunctionTool``: a Python function with its MCP declaration; ``tool`` and ``tools_server``.

    @toolrelay.tool(read_only=True)
    def get_weather(city: str, unit: Literal["C", "F"] = "C") -> Weather:
        '''The weather now in a city.

        Args:
            city: The city's name.
        '''

The declaration is built once, when the function is declared: a type that cannot be
described is a ``TypeError`` then, never at call time. The function stays callable as
before (``get_weather("Oslo")``).
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import sys
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, overload

from .context import ToolContext
from .docstrings import parse_docstring
from .schema import NO_VALUE, SchemaBuilder, object_like
from .sources import ToolSource, ToolsServer

__all__ = [
    "DEFAULT_SERVER", "FunctionTool", "ToolSource", "ToolsServer", "as_tool", "tool", "tools_server",
]

DEFAULT_SERVER: Final = "py"
"""The in-process server that serves a run's plain functions (``tools=[f, g]``)."""
_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_UNSTRUCTURED: Final = (str, bytes, bytearray, type(None), None, Any, NO_VALUE)
RESULT_KEY: Final = "result"
"""A return value that is not an object is ``structuredContent: {"result": value}``."""


@dataclass(frozen=True)
class Parameter:
    name: str
    hint: Any


class FunctionTool:
    """A function declared as a tool: call it as the function; ``declaration()`` is its
    MCP tool (name, description, inputSchema, outputSchema, annotations)."""

    def __init__(
        self, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None,
        read_only: bool = False, destructive: bool | None = None, idempotent: bool | None = None,
        title: str | None = None, localns: Mapping[str, Any] | None = None,
    ) -> None:
        """``localns``: the names a hint may use beyond the function's module (the locals of
        the code that declared it: ``tool`` passes them)."""
        if isinstance(fn, FunctionTool):
            fn = fn.fn
        if not callable(fn):
            raise TypeError(f"toolrelay.tool needs a function, not {type(fn).__name__}")
        self.fn: Callable[..., Any] = fn
        self.name: str = name or str(getattr(fn, "__name__", ""))
        if not _NAME.match(self.name):
            raise ValueError(f"tool name {self.name!r}: 1 to 128 of A-Z a-z 0-9 _ . - (pass name=)")
        self.is_async = inspect.iscoroutinefunction(fn)
        self.read_only = read_only
        self._declared = {"name": name, "description": description, "read_only": read_only,
                          "destructive": destructive, "idempotent": idempotent, "title": title}
        hints = _hints(fn, localns)
        docs = parse_docstring(fn.__doc__)
        self.description = description if description is not None else docs.description
        self.context_param: str | None = None
        self.parameters: list[Parameter] = []
        self.input_schema = self._input_schema(inspect.signature(fn), hints, docs.params)
        self.returns = hints.get("return", NO_VALUE)
        self.output_schema, self.wraps_result = _output_schema(self.name, self.returns)
        self.annotations = _annotations(read_only, destructive, idempotent, title)
        functools.update_wrapper(self, fn)

    def _input_schema(self, signature: inspect.Signature, hints: dict[str, Any],
                      described: dict[str, str]) -> dict[str, Any]:
        """The parameters' schema (and ``parameters``, ``context_param`` on the way)."""
        builder = SchemaBuilder()
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in signature.parameters.values():
            hint = hints.get(param.name, Any)
            if _is_context(hint):
                self.context_param = param.name
                continue
            schema = self._parameter_schema(builder, param, hint)
            if param.name in described and "description" not in schema:
                schema["description"] = described[param.name]
            if param.default is param.empty:
                required.append(param.name)
            elif (default := _json_default(param.default)) is not NO_VALUE:
                schema["default"] = default
            properties[param.name] = schema
            self.parameters.append(Parameter(param.name, hint))
        declared: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            declared["required"] = required
        declared["additionalProperties"] = False
        if builder.defs:
            declared["$defs"] = dict(builder.defs)
        return declared

    def _parameter_schema(self, builder: SchemaBuilder, param: inspect.Parameter,
                          hint: Any) -> dict[str, Any]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {self.name}: *{param.name} / **{param.name} cannot be declared; "
                            "name each parameter")
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"tool {self.name}: positional-only parameter {param.name} cannot be "
                            "given by name")
        try:
            return builder.schema(hint)
        except TypeError as exc:
            raise TypeError(f"tool {self.name}, parameter {param.name}: {exc}") from None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<toolrelay function tool {self.name}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by reference (a Ray worker imports it): as the module's name for it when
        it is the decorated function, else as its function and the same options."""
        module, qualname = getattr(self.fn, "__module__", None), getattr(self.fn, "__qualname__", "")
        if module and _lookup(module, qualname) is self:
            return (_lookup, (module, qualname))
        return (_redeclared, (self.fn, self._declared))

    def declaration(self) -> dict[str, Any]:
        declared: dict[str, Any] = {"name": self.name, "description": self.description,
                                    "inputSchema": self.input_schema}
        if self.output_schema is not None:
            declared["outputSchema"] = self.output_schema
        declared["annotations"] = dict(self.annotations)
        return declared




@overload
def tool(fn: Callable[..., Any], /, *, name: str | None = None, description: str | None = None,
         read_only: bool = False, destructive: bool | None = None, idempotent: bool | None = None,
         title: str | None = None) -> FunctionTool: ...
@overload
def tool(fn: None = None, /, *, name: str | None = None, description: str | None = None,
         read_only: bool = False, destructive: bool | None = None, idempotent: bool | None = None,
         title: str | None = None) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def tool(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None, description: str | None = None,
    read_only: bool = False, destructive: bool | None = None, idempotent: bool | None = None,
    title: str | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Declare a sync or async function as a tool: ``@toolrelay.tool``,
    ``@toolrelay.tool(read_only=True)`` or ``toolrelay.tool(fn, name=...)``. The input schema
    comes from the signature and hints, the descriptions from the docstring; a tool not
    ``read_only`` asks for consent, like any MCP tool not marked read-only."""

    def declare(function: Callable[..., Any], localns: Mapping[str, Any] | None = None) -> FunctionTool:
        return FunctionTool(function, name=name, description=description, read_only=read_only,
                            destructive=destructive, idempotent=idempotent, title=title,
                            localns=localns if localns is not None else sys._getframe(1).f_locals)

    return declare if fn is None else declare(fn, sys._getframe(1).f_locals)


def as_tool(source: Callable[..., Any]) -> FunctionTool:
    return source if isinstance(source, FunctionTool) else FunctionTool(source)


def tools_server(name: str, tools: Iterable[Callable[..., Any]], *, instructions: str | None = None,
                 **options: Any) -> ToolsServer:
    """A named in-process MCP server of ``tools`` for ``tools=[...]`` (several groups, or a
    name other than ``py``); ``options``: ``ServerConfig`` fields such as ``call_timeout``."""
    declared = tuple(as_tool(fn) for fn in tools)
    _check_unique(name, declared)
    return ToolsServer(name, declared, instructions, dict(options))


def grouped(sources: Sequence[ToolSource]) -> list[ToolsServer]:
    """``tools=``'s servers: the plain functions together as ``py``, then each group."""
    plain = [as_tool(source) for source in sources if not isinstance(source, ToolsServer)]
    groups = [source for source in sources if isinstance(source, ToolsServer)]
    if plain:
        _check_unique(DEFAULT_SERVER, plain)
        groups.insert(0, ToolsServer(DEFAULT_SERVER, tuple(plain)))
    names = [group.name for group in groups]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"two servers named {', '.join(twice)} (give tools_server another name)")
    return groups


def _check_unique(server: str, tools: Sequence[FunctionTool]) -> None:
    names = [t.name for t in tools]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"server {server}: two tools named {', '.join(twice)} (pass name= to one)")


def _lookup(module: str, qualname: str) -> Any:
    found: Any = sys.modules.get(module)
    if found is None:
        import importlib

        found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found


def _redeclared(fn: Callable[..., Any], options: dict[str, Any]) -> FunctionTool:
    return FunctionTool(fn, **options)


def _hints(fn: Callable[..., Any], localns: Mapping[str, Any] | None) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, localns=dict(localns) if localns else None, include_extras=True)
    except NameError as exc:
        raise TypeError(f"tool {getattr(fn, '__name__', fn)!r}: a hint names {exc.name!r}, which is not "
                        "defined where the function is (define the types at module level)") from None


def _is_context(hint: Any) -> bool:
    return hint is ToolContext or (isinstance(hint, type) and issubclass(hint, ToolContext))


def _json_default(value: Any) -> Any:
    from .convert import to_json

    try:
        converted = to_json(value)
        json.dumps(converted)
    except (TypeError, ValueError):
        return NO_VALUE  # a default JSON cannot say: the parameter is optional all the same
    return converted


def _output_schema(name: str, returns: Any) -> tuple[dict[str, Any] | None, bool]:
    """The ``outputSchema`` of a return hint, and whether the value is wrapped as ``result``."""
    inner = typing.get_args(returns)[0] if typing.get_origin(returns) is typing.Annotated else returns
    if inner in _UNSTRUCTURED or _is_content_hint(inner):
        return None, False
    try:
        schema = SchemaBuilder()
        described = schema.schema(returns)
    except TypeError:
        return None, False  # an undescribed return: its value is still sent, as text
    if described == {}:
        return None, False
    if not object_like(described):
        described = {"type": "object", "properties": {RESULT_KEY: described}, "required": [RESULT_KEY]}
        wrapped = True
    else:
        wrapped = False
    if schema.defs:
        described["$defs"] = dict(schema.defs)
    return described, wrapped


def _is_content_hint(hint: Any) -> bool:
    from .results import Content

    origin = typing.get_origin(hint)
    candidates = typing.get_args(hint) if origin is not None else (hint,)
    return any(isinstance(c, type) and issubclass(c, Content) for c in candidates)


def _annotations(read_only: bool, destructive: bool | None, idempotent: bool | None,
                 title: str | None) -> dict[str, Any]:
    annotations: dict[str, Any] = {"readOnlyHint": read_only}
    if title is not None:
        annotations["title"] = title
    if destructive is not None:
        annotations["destructiveHint"] = destructive
    if idempotent is not None:
        annotations["idempotentHint"] = idempotent
    return annotations
