"""Tests of the proof tools: transcripts, verify, explain."""
