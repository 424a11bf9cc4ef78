"""`python -m clients.cli`: the same as the `rummy` command."""

import sys

from .main import main

sys.exit(main())
