"""``python -m toolrelay`` is the ``toolrelay`` command."""

from .cli.main import command

command()
