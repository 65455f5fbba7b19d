"""Tests of the hardened MCP file server (``toolrelay files``)."""
