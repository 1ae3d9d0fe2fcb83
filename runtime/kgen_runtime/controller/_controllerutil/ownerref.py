"""Owner references (apimachinery's ``metav1.NewControllerRef``/``GetControllerOf``).

An object has at most one *controller* reference: the owner whose controller manages it.
The garbage collector deletes children whose owners are gone; controllers use the controller
reference to map a child's events back to the owner's key and to claim children.

:func:`set_controller_reference` and :func:`set_owner_reference` are controller-runtime's
``controllerutil`` setters: they add (or replace) the reference on an object you are about
to write, refusing a second controller with :class:`AlreadyOwnedError`.
"""

from __future__ import annotations

from kgen_runtime.groupversion import GroupVersion, GroupVersionKind
from kgen_runtime.meta import KubeObject, OwnerReference
from kgen_runtime.scheme import Scheme

__all__ = [
    "AlreadyOwnedError",
    "get_controller_of",
    "is_controlled_by",
    "new_controller_ref",
    "set_controller_reference",
    "set_owner_reference",
]


class AlreadyOwnedError(ValueError):
    """The object already has a controller other than the one being set
    (``controllerutil.AlreadyOwnedError``).

    Attributes:
        object: The object that was to be controlled (unchanged).
        owner: Its existing controller reference.
    """

    def __init__(self, obj: KubeObject, owner: OwnerReference) -> None:
        meta = obj.metadata
        super().__init__(f"Object {meta.namespace or ''}/{meta.name} is already owned by "
                         f"another {owner.kind} controller {owner.name}")
        self.object = obj
        self.owner = owner


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


def set_controller_reference(owner: KubeObject, obj: KubeObject, scheme: Scheme) -> None:
    """Make ``owner`` (of the kind ``scheme`` gives its class) ``obj``'s controller.

    Adds a controller reference with ``blockOwnerDeletion``, or replaces a reference to
    the same owner (same group, kind and name). Changes ``obj`` in place: use your own
    copy, never a cached object.

    Raises:
        AlreadyOwnedError: ``obj`` is controlled by another object (``obj`` unchanged).
        ValueError: the owner is namespaced and ``obj`` is cluster-scoped or in another
            namespace, or the owner lacks a name or uid.
    """
    ref = new_controller_ref(owner, _validated_kind(owner, obj, scheme))
    existing = controller_ref_no_copy(obj)
    if existing is not None and not _same_object(existing, ref):
        raise AlreadyOwnedError(obj, existing)
    _upsert(obj, ref)


def set_owner_reference(owner: KubeObject, obj: KubeObject, scheme: Scheme) -> None:
    """Add a (non-controller) reference to ``owner`` to ``obj``, or replace the one to the
    same owner. Changes ``obj`` in place; errors as :func:`set_controller_reference`
    (never :class:`AlreadyOwnedError`)."""
    gvk = _validated_kind(owner, obj, scheme)
    meta = owner.metadata
    if not meta.name or not meta.uid:
        raise ValueError(f"an owner needs a name and a uid, got {meta.name!r}/{meta.uid!r}")
    _upsert(obj, OwnerReference(api_version=gvk.api_version, kind=gvk.kind, name=meta.name,
                                uid=meta.uid))


def _validated_kind(owner: KubeObject, obj: KubeObject, scheme: Scheme) -> GroupVersionKind:
    owner_namespace = owner.metadata.namespace or ""
    namespace = obj.metadata.namespace or ""
    if owner_namespace and not namespace:
        raise ValueError("cluster-scoped resource must not have a namespace-scoped owner, "
                         f"owner's namespace {owner_namespace}")
    if owner_namespace and owner_namespace != namespace:
        raise ValueError("cross-namespace owner references are disallowed, owner's namespace "
                         f"{owner_namespace}, obj's namespace {namespace}")
    return scheme.object_kind(owner)


def _same_object(a: OwnerReference, b: OwnerReference) -> bool:
    """controller-runtime's ``referSameObject``: same group, kind and name."""
    try:
        groups = (GroupVersion.parse(a.api_version or "").group,
                  GroupVersion.parse(b.api_version or "").group)
    except ValueError:
        return False
    return groups[0] == groups[1] and a.kind == b.kind and a.name == b.name


def _upsert(obj: KubeObject, ref: OwnerReference) -> None:
    refs = list(obj.metadata.owner_references or ())
    for index, existing in enumerate(refs):
        if _same_object(existing, ref):
            refs[index] = ref
            break
    else:
        refs.append(ref)
    obj.metadata.owner_references = refs
