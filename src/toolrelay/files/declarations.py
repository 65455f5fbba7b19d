"""The file service's tool declarations (rules only: they never hold a call's value).

Names, argument names and meanings follow the reference server
(@modelcontextprotocol/server-filesystem) so a host can swap one for the other. Every tool
is read-only (``readOnlyHint: true``, ``openWorldHint: false``), declares an
``inputSchema`` that ``arguments.py`` enforces exactly (unknown arguments are refused, so
``additionalProperties: false``), and an ``outputSchema`` for its structured content.
"""

from __future__ import annotations

import copy
from typing import Final

from ..protocol.jsonrpc import JSONObject

__all__ = ["OUTPUT_SCHEMA", "TOOLS", "declarations"]

OUTPUT_SCHEMA: Final[JSONObject] = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "truncated": {"type": "boolean", "description": "Present (true) when the byte limit cut the text"},
    },
    "required": ["content"],
    "additionalProperties": False,
}

_ANNOTATIONS: Final[JSONObject] = {"readOnlyHint": True, "openWorldHint": False}
_WITHIN = "Only works within allowed directories."
_PATH: Final[JSONObject] = {
    "type": "string",
    "description": "Absolute, ~-relative, or relative to an allowed directory",
}


def _object(properties: JSONObject, required: list[str]) -> JSONObject:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _tool(name: str, title: str, description: str, input_schema: JSONObject) -> JSONObject:
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": input_schema,
        "outputSchema": OUTPUT_SCHEMA,
        "annotations": {"title": title, **_ANNOTATIONS},
    }


def _count(what: str) -> JSONObject:
    return {"type": "integer", "minimum": 0, "description": f"If provided, returns only the {what}"}


TOOLS: Final[list[JSONObject]] = [
    _tool(
        "read_text_file", "Read Text File",
        "Read the contents of a text file (UTF-8). Use 'head' to read only the first N lines "
        "(exactly what `head -n N` prints) or 'tail' for the last N lines (exactly what `tail -n N` "
        "prints); not both. A whole-file read above the server's byte limit is refused: use head or "
        f"tail then. {_WITHIN}",
        _object({
            "path": _PATH,
            "head": _count("first N lines of the file, like head -n N"),
            "tail": _count("last N lines of the file, like tail -n N"),
        }, ["path"]),
    ),
    _tool(
        "read_multiple_files", "Read Multiple Files",
        "Read several text files in one call. Each file's content is returned with its path as a "
        "reference; a failed read is reported for that file and does not stop the others. "
        f"The files share one byte limit. {_WITHIN}",
        _object({"paths": {"type": "array", "items": _PATH, "minItems": 1,
                           "description": "Paths of the files to read"}}, ["paths"]),
    ),
    _tool(
        "list_directory", "List Directory",
        "List the entries of a directory, one per line, sorted by name, each prefixed [DIR] or [FILE] "
        f"(a symbolic link is listed as [FILE] and never followed). {_WITHIN}",
        _object({"path": _PATH}, ["path"]),
    ),
    _tool(
        "get_file_info", "Get File Info",
        "Metadata of a file or directory: size, times (ISO 8601, UTC), type and permissions, "
        f"without reading the content. {_WITHIN}",
        _object({"path": _PATH}, ["path"]),
    ),
    _tool(
        "search_files", "Search Files",
        "Recursively search a directory for files and directories whose path relative to it matches a "
        "glob pattern: '*.ext' matches in the directory itself, '**/*.ext' at any depth. Returns full "
        f"paths, one per line. Symbolic links are not followed. {_WITHIN}",
        _object({
            "path": _PATH,
            "pattern": {"type": "string", "description": "Glob pattern (*, **, ?, [...], {a,b})"},
            "excludePatterns": {"type": "array", "items": {"type": "string"},
                                "description": "Glob patterns of relative paths to skip"},
        }, ["path", "pattern"]),
    ),
    _tool(
        "list_allowed_directories", "List Allowed Directories",
        "The directories this server may read (subdirectories included). When the client declares "
        "roots, these are the client's roots that lie inside the server's own.",
        _object({}, []),
    ),
]


def declarations() -> list[JSONObject]:
    """A fresh copy of the declarations (callers may not alter the service's own)."""
    return copy.deepcopy(TOOLS)
