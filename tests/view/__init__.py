"""Tests of the HTML trace view (``toolrelay view``)."""
