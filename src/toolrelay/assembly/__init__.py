"""What a run is built from, in one place (between ``runner`` / ``batches`` and ``relay``).

- ``options``: ``RunOptions``, the one vocabulary of a run (library, CLI, batch);
- ``parts``: ``Assembly``, which builds a run's parts from it (endpoint, clients, host,
  catalog, relay, secrets) for ``run``, ``run_async``, ``run_stream`` and every batch task;
- ``catalogs``: the servers and the one place a ``Catalog`` is built (also ``connect``);
- ``option_names``: keywords given for ``RunOptions`` checked by name (``run``, ``Conversation``);
- ``single_run``: ``assemble_run``, the one sequence that builds a run's relay from an
  ``Assembly`` (transcript, host, catalog, tracing, relay), for ``run_async`` and
  ``Conversation`` alike.

Only this package constructs a ``Relay`` or a ``Catalog`` (a test walks ``src/`` for it).
Nothing is imported here, so that ``assembly.catalogs`` stays light for the CLI's verbs.

Layering: below ``runner``, ``conversation`` and ``batches``, above relay/; it imports relay/,
client/, model/, offline/, transcript/ and the bottom modules, never runner, conversation/,
batches/, cli/, verify/, view/ or demo.
"""
