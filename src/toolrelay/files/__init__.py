"""The hardened, read-only MCP file service behind ``toolrelay files``.

``FileService(roots, limits=Limits(...))`` is a ``ToolService`` for ``serve_stdio`` /
``serve_http``; ``root_from_argument(path)`` checks a command-line ROOT.

Modules: ``sandbox`` (path confinement and checked opens), ``roots`` (command-line roots
narrowed by the client's), ``reading`` (head/tail/whole, byte cap, UTF-8), ``directories``
(listing and search walk), ``globbing`` (search patterns), ``arguments`` (argument
checks), ``tools`` (one function per tool), ``declarations`` (their schemas),
``results`` (result shapes), ``failures`` (tool error messages), ``service``.

Layering: files/ runs on server/ and imports only server/, protocol/ and the bottom modules
(errors, _version, ...); never client/, relay/, model/, the offline stand-in, runner, cli/,
transcript/, verify/ or view/.
"""

from __future__ import annotations

from .roots import root_from_argument
from .sandbox import Root
from .service import FileService
from .tools import DEFAULT_MAX_RESULT_BYTES, Limits

__all__ = ["DEFAULT_MAX_RESULT_BYTES", "FileService", "Limits", "Root", "root_from_argument"]
