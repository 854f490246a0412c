"""``python -m hookguard``."""

import sys

from hookguard.cli import main

sys.exit(main())
