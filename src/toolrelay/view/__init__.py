"""The HTML trace of a run (``toolrelay view``).

    trace = build_trace(run.events, verify(run), source="run.jsonl")   # the diagram data
    write_html(trace, Path("run.html"))                                # one self-contained page

``rows`` turns each recorded event into an arrow or a note, ``layout`` arranges them into
the setup, the turns and the call frames, ``render`` writes the page (``trace.html``,
``trace.css`` and ``trace.js`` inlined, the data as inert JSON).

Layering: view/ draws what verify/ found and imports only verify/, relay/'s feedback
markers, events, errors and gc_pause; never client/, model/, server/, files/, the offline stand-in,
runner, cli/ or transcript/ (verify/ loads the run).
"""

from .build import body_of, build_trace
from .model import Trace
from .render import render_html, write_html

__all__ = ["Trace", "body_of", "build_trace", "render_html", "write_html"]
