"""Where the tests find ../shared (the CRD corpus and its examples), found one way for all.

``$KGEN_SHARED_DIR``, else the ``shared`` folder beside the repository. Tests that need it
are skipped where it is missing, except in CI (``CI=true``): there a missing ``../shared``
would silently drop coverage, so importing a test module that needs it fails the run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["CORPUS", "EXAMPLES", "REPO", "SHARED", "requires_shared"]

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KGEN_SHARED_DIR", REPO.parent / "shared"))
CORPUS = SHARED / "crds"
EXAMPLES = CORPUS / "examples"


def requires_shared(path: Path) -> pytest.MarkDecorator:
    """Skip unless ``path`` exists; in CI, a missing ``path`` is an error right away."""
    if not path.exists() and os.environ.get("CI") == "true":
        raise RuntimeError(f"CI=true but {path} is missing: set KGEN_SHARED_DIR")
    return pytest.mark.skipif(not path.exists(), reason=f"{path} not found (set KGEN_SHARED_DIR)")
