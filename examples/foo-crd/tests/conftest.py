"""Puts examples/foo-crd on ``sys.path`` so the tests import ``foo_api`` and
``foo_controller`` as ``main.py`` does."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1]
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))
