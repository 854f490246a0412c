"""``python -m hookguard``.

``python -m`` puts the current directory first on ``sys.path``. Run from the root of a checkout
under audit, a planted ``argparse.py`` or ``typing.py`` there would be imported instead of the
standard library. ``hookguard/__init__.py``, which runs first, drops that entry before any other
import (``sys.argv[0]`` is ``"-m"`` while the package is imported); ``sys`` and ``os`` are
loaded by the interpreter before ``sys.path`` is read. ``python -P`` (3.11+) or
``PYTHONSAFEPATH=1`` keep it out in the first place (see docs/security.md).
"""

import sys

from hookguard.cli import main

sys.exit(main())
