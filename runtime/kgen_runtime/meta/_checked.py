"""Which constructed models' schema-rule checks still hold, so enclosing models skip them.

``KubeModel.__init__`` checks the schema rules of the model and of every model nested in it.
Building an object bottom-up (``Deployment(spec=DeploymentSpec(template=...))``) would check
each nested model again at every enclosing level (O(depth x size)); instead a check that
finds a subtree clean *marks* its root with the current :data:`GENERATION`, and a later
check skips a nested model whose mark equals the generation still.

The mark is sound because every way a marked subtree can change moves the generation on
(:func:`changed`): assigning or deleting any model attribute, and handing out a model's
list or dict (a field read, ``model_fields_set``, iteration, ``model_copy``), which also
marks that model :data:`EXPOSED` for good — its containers may be changed later without a
hook, so it and every model holding it are checked each time. Models not made by
``__init__`` (decoded, ``model_construct``, deep copies) hold no mark and count as exposed:
their containers may be the caller's. Containers pydantic keeps as the caller passed them
(inside ``Any``-typed fields) leave their subtree unmarked for the same reason. Values
reached through ``__dict__`` bypass the hooks, as they bypass the copy-on-access marks
(:mod:`kgen_runtime.meta._cow`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXPOSED", "GENERATION", "changed", "current", "expose"]

#: The mark of a model whose containers were handed out: never skipped again.
EXPOSED = -1

#: The current generation, in a one-item list (the copy-on-access reads move it inline).
GENERATION = [0]


def current() -> int:
    """The generation now: a check records it before it reads anything."""
    return GENERATION[0]


def changed() -> None:
    """Something reachable from a marked model may have changed: every mark is stale."""
    GENERATION[0] += 1


def expose(model: Any) -> None:
    """``model`` handed out a container of its own (see the module docstring)."""
    object.__setattr__(model, "_kgen_checked", EXPOSED)
    GENERATION[0] += 1
