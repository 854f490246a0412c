"""``python -m hookguard``.

``python -m`` puts the current directory first on ``sys.path``. Run from the root of a checkout
under audit, a planted ``argparse.py`` (or any other standard module's name) there would be
imported instead of the standard library. That entry is dropped before anything else is
imported; ``python -P`` (3.11+) or ``PYTHONSAFEPATH=1`` keep it out in the first place (see
docs/security.md). ``sys`` and ``os`` are loaded by the interpreter before ``sys.path`` is read.
"""

import os
import sys

_cwd = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", ".", _cwd)]

from hookguard.cli import main  # noqa: E402

sys.exit(main())
