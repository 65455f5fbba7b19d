"""``python -m toolrelay`` is the ``toolrelay`` command."""

import sys

from .cli.main import main

sys.exit(main())
