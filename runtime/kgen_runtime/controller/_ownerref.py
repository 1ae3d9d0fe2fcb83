"""Owner references (apimachinery's ``metav1.NewControllerRef``/``GetControllerOf``).

An object has at most one *controller* reference: the owner whose controller manages it.
The garbage collector deletes children whose owners are gone; controllers use the controller
reference to map a child's events back to the owner's key and to claim children.
"""

from __future__ import annotations

from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import KubeObject, OwnerReference

__all__ = ["get_controller_of", "is_controlled_by", "new_controller_ref"]


def new_controller_ref(owner: KubeObject, gvk: GroupVersionKind) -> OwnerReference:
    """A controller reference to ``owner`` (of kind ``gvk``) to put on a child it creates.

    ``controller`` and ``blockOwnerDeletion`` are true, as in client-go. ``owner`` must have
    a name and a uid (it has been read from the server).

    Raises:
        ValueError: ``owner`` lacks ``metadata.name`` or ``metadata.uid``.
    """
    meta = owner.metadata
    if not meta.name or not meta.uid:
        raise ValueError(f"an owner needs a name and a uid, got {meta.name!r}/{meta.uid!r}")
    return OwnerReference(
        api_version=gvk.api_version,
        kind=gvk.kind,
        name=meta.name,
        uid=meta.uid,
        controller=True,
        block_owner_deletion=True,
    )


def get_controller_of(obj: KubeObject) -> OwnerReference | None:
    """A copy of ``obj``'s controller reference, or ``None`` if it has none.

    A copy because ``obj`` usually comes from an informer cache, which must not be changed.
    """
    ref = controller_ref_no_copy(obj)
    return None if ref is None else ref.deepcopy()


def controller_ref_no_copy(obj: KubeObject) -> OwnerReference | None:
    """``obj``'s own controller reference object (``GetControllerOfNoCopy``); read-only."""
    for ref in obj.metadata.owner_references or ():
        if ref.controller:
            return ref
    return None


def is_controlled_by(obj: KubeObject, owner: KubeObject) -> bool:
    """Whether ``obj``'s controller reference points at ``owner`` (compared by uid)."""
    ref = controller_ref_no_copy(obj)
    return ref is not None and bool(owner.metadata.uid) and ref.uid == owner.metadata.uid
