"""Puts examples/foo-crd on ``sys.path`` so the tests import ``foo_api`` and
``foo_controller`` as ``main.py`` does.

With examples/foo-crd on the path, this directory is a portion of the top-level namespace
package ``tests``; the repository root is added too (as ``python -m pytest`` does), so that
``tests`` still includes the repository's own tests (their helpers import ``tests.util``).
"""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1]
ROOT = EXAMPLE.parents[1]
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from tests._webhooks import module_certs  # noqa: E402 (needs the repository root on the path)

__all__ = ["module_certs"]
