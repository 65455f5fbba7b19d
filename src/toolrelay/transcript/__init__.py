"""The JSONL transcript of a run: ``writer.TranscriptWriter`` records every event as one
line, on disk as the run goes (credentials redacted; a streamed answer's events flushed
together, within ``writer.FLUSH_INTERVAL``), ``reader.read_transcript`` reads them back.
``preamble.EncodedPreamble`` holds lines many transcripts start with (a batch's shared
servers' start-up records), encoded once.

Layering: transcript/ imports only the bottom modules (events, errors, redaction); never
relay/, client/, model/, server/, files/, runner, cli/, verify/ or view/ (runner writes
transcripts, verify/ reads them).
"""
