"""Tests of `toolrelay demo` and the seed's standalone checks."""
