"""The JSONL transcript of a run: ``writer.TranscriptWriter`` records every event as one
flushed line (credentials redacted), ``reader.read_transcript`` reads the lines back.

Layering: transcript/ imports only the bottom modules (events, errors, redaction); never
relay/, client/, model/, server/, files/, runner, cli/, verify/ or view/ (runner writes
transcripts, verify/ reads them).
"""
