"""The preamble every task transcript starts with, encoded once per batch: each fresh
transcript holds the bytes writing its records makes, with its own run id and its own
secrets redacted, also after the preamble grew; a resumed one writes them itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolrelay.batches.records import SharedPreamble
from toolrelay.events import ServerStarting
from toolrelay.transcript.writer import TranscriptWriter

KEYS = ("sk-task-one-0123456789", "sk-task-two-0123456789")


def starting(seq: int, server: str) -> dict[str, Any]:
    event = ServerStarting(server=server, connection=1, transport="stdio",
                           target=f"python {server}.py --keys {' '.join(KEYS)}")
    event.seq, event.time = seq, 1_700_000_000.0 + seq
    return event.to_record()


def transcript(path: Path, run_id: str, secret: str, records: list[dict[str, Any]],
               shared: SharedPreamble | None) -> str:
    writer = TranscriptWriter(path, run_id, [secret], first_seq=1)
    if shared is None or not shared.begin(writer):
        for record in records:
            writer.write_record(dict(record))
    writer.close()
    return path.read_text(encoding="utf-8")


def test_each_fresh_transcript_holds_what_writing_the_records_makes(tmp_path: Path) -> None:
    records = [starting(1, "echo")]
    shared = SharedPreamble(records)
    for number, (run_id, secret) in enumerate([("run-1", KEYS[0]), ("run-2", KEYS[1]), ("run-3", KEYS[0])]):
        if number == 2:
            records.append(starting(2, "fs"))  # a server started before the first task did
        started = transcript(tmp_path / f"started-{number}.jsonl", run_id, secret, records, shared)
        plain = transcript(tmp_path / f"plain-{number}.jsonl", run_id, secret, records, None)
        assert started == plain
        assert f'"run": "{run_id}"' in started and secret not in started and "[redacted]" in started
    assert started.count("\n") == 2


def test_a_writer_with_lines_of_its_own_writes_the_records_itself(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "t.jsonl", "run-1", first_seq=1)
    writer.write_record(starting(1, "echo"))
    assert not SharedPreamble([starting(1, "echo")]).begin(writer)
    writer.close()
    resumed = TranscriptWriter(tmp_path / "t.jsonl", "run-1", append=True, first_seq=2)
    assert not SharedPreamble([starting(1, "echo")]).begin(resumed)  # its lines go on from seq 2
    resumed.close()
