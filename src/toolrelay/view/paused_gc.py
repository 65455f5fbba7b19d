"""No cyclic garbage collection while the page is built (``transcript.reader.paused_gc``'s
twin: view/ does not import transcript/).

A 10,000-call run makes a few hundred thousand rows, badges and page records, each a
container; every automatic collection walks all of them again. Paused, ``toolrelay view``
of such a run took ~3 s less CPU (of ~9). The trace holds no cycles (rows, groups and
records point down only), so nothing is lost; collection resumes afterwards.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Collection off inside; on resuming, what piled up in the youngest generation is moved
    to the oldest (``freeze`` then ``unfreeze``), so the first young collection after does
    not walk it all only to promote it. A process that froze objects itself keeps them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
