"""Conversations: a run that goes on one user message at a time (``session.py``), saved to
go on in a later process (``saved.py``), one transcript for all of it (``record.py``), and
the synchronous form (``sync.py``).

Layering: beside ``runner``: it builds its parts with ``assembly`` as ``run_async`` does and
drives ``relay.loop.Relay`` turn after turn (``relay.continuation``); only cli/ and the
package's front door import it; it never imports cli/.
"""

from __future__ import annotations

from .session import Conversation
from .sync import SyncConversation

__all__ = ["Conversation", "SyncConversation"]
