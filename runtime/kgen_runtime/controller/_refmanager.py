"""Adopting and releasing children by selector (``pkg/controller/controller_ref_manager.go``).

A controller owns the children its selector matches. :meth:`ControllerRefManager.claim_objects`
reconciles the owner references of the children its informer shows with the selector
(seed 001 §6):

==========================  ====================  =====================================
the child's controller ref  selector matches      outcome
==========================  ====================  =====================================
another owner               —                     ignored (not claimed)
this owner                  yes                   claimed
this owner                  no                    released (unless the owner is being
                                                  deleted), not claimed
none (orphan)               yes                   adopted and claimed, unless the owner
                                                  or the child is being deleted or they
                                                  are in different namespaces
none (orphan)               no                    ignored
==========================  ====================  =====================================

Adopting and releasing are JSON merge patches of ``metadata.ownerReferences`` that carry the
child's ``uid`` and ``resourceVersion``, so the server refuses them (409) if the child changed
or was replaced since the cache saw it; the controller then retries with a fresher cache.
(client-go sends strategic merge patches, which custom resources do not accept.) A child that
is gone (404) is skipped silently.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from kgen_runtime.controller._controllerutil.ownerref import (
    controller_ref_no_copy,
    new_controller_ref,
)
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.labels import Selector
from kgen_runtime.meta import KubeObject, OwnerReference
from kgen_runtime.rest import PatchBody, PatchType
from kgen_runtime.rest.errors import is_not_found
from kgen_runtime.util.errors import new_aggregate

__all__ = ["ControllerRefManager", "PatchClient", "recheck_deletion_timestamp"]

ObjT = TypeVar("ObjT", bound=KubeObject)


class PatchClient(Protocol):
    """The one verb the manager needs of a child's client (any ``ResourceClient`` has it)."""

    def patch(self, name: str, patch: PatchBody, *, patch_type: PatchType = "merge") -> Any:
        """Patch the object called ``name``; raise an ``ApiError`` on failure."""
        ...


def recheck_deletion_timestamp(
    owner: KubeObject, get_fresh: Callable[[], KubeObject]
) -> Callable[[], None]:
    """A ``can_adopt`` check reading the owner from the server (client-go's
    ``RecheckDeletionTimestamp``): adoption is refused if the owner was replaced (other uid)
    or is being deleted, which a stale cache would not show.
    """

    def check() -> None:
        fresh = get_fresh()
        meta = fresh.metadata
        if meta.uid != owner.metadata.uid:
            raise RuntimeError(
                f"original {meta.namespace}/{meta.name} is gone: got uid {meta.uid}, "
                f"wanted {owner.metadata.uid}"
            )
        if meta.deletion_timestamp is not None:
            raise RuntimeError(
                f"{meta.namespace}/{meta.name} has just been deleted at {meta.deletion_timestamp}"
            )

    return check


class ControllerRefManager:
    """Claims the children of one owner object (see the module docstring).

    Args:
        owner: The controller's object, as the cache has it (read, never modified).
        owner_gvk: Its kind, for the controller references written on adopted children.
        selector: Which children the owner wants.
        client_for: The children's client for a namespace (``""`` for cluster-scoped
            children), e.g. a generated ``clientset.apps_v1.deployments``.
        can_adopt: Called once, before the first adoption; raising refuses every adoption
            of this manager with that error (see :func:`recheck_deletion_timestamp`).

    A manager is made per sync and used by one thread; ``can_adopt`` runs at most once even
    if several threads adopt.
    """

    def __init__(
        self,
        owner: KubeObject,
        owner_gvk: GroupVersionKind,
        selector: Selector,
        client_for: Callable[[str], PatchClient],
        *,
        can_adopt: Callable[[], None] | None = None,
    ) -> None:
        self.owner = owner
        self.owner_gvk = owner_gvk
        self.selector = selector
        self._client_for = client_for
        self._can_adopt = can_adopt
        self._can_adopt_lock = threading.Lock()
        self._can_adopt_done = False
        self._can_adopt_error: Exception | None = None

    def claim_objects(
        self, objects: Iterable[ObjT], *filters: Callable[[ObjT], bool]
    ) -> list[ObjT]:
        """Claim each of ``objects``; return those this owner now controls, in order.

        A child matches when the selector matches its labels and every filter accepts it.

        Raises:
            Aggregate: of the errors of failed adoptions/releases, after trying every child
                (the caller requeues; the claimed list is incomplete then).
        """
        claimed: list[ObjT] = []
        errors: list[Exception] = []
        for obj in objects:

            def match(child: ObjT = obj) -> bool:
                return self.selector.matches(child.metadata.labels) and all(
                    f(child) for f in filters
                )

            try:
                if self.claim_object(obj, match):
                    claimed.append(obj)
            except Exception as err:
                errors.append(err)
        aggregate = new_aggregate(errors)
        if aggregate is not None:
            raise aggregate
        return claimed

    def claim_object(self, obj: KubeObject, match: Callable[[], bool]) -> bool:
        """Claim one child (client-go's ``ClaimObject``); ``match()`` says if it is wanted.

        Returns whether this owner controls ``obj`` afterwards. Raises the adoption or
        release error (a 404 is not an error: the child is gone, so not claimed).
        """
        ref = controller_ref_no_copy(obj)
        owner_meta = self.owner.metadata
        if ref is not None:
            if ref.uid != owner_meta.uid:
                return False
            if match():
                return True
            if owner_meta.deletion_timestamp is None:
                self._ignoring_not_found(self.release, obj)
            return False
        if owner_meta.deletion_timestamp is not None or not match():
            return False
        if obj.metadata.deletion_timestamp is not None:
            return False
        if owner_meta.namespace and owner_meta.namespace != obj.metadata.namespace:
            return False
        return self._ignoring_not_found(self.adopt, obj)

    def adopt(self, obj: KubeObject) -> None:
        """Make this owner ``obj``'s controller (after the ``can_adopt`` check)."""
        self._check_can_adopt()
        refs = [r for r in obj.metadata.owner_references or () if r.uid != self.owner.metadata.uid]
        refs.append(new_controller_ref(self.owner, self.owner_gvk))
        self._patch_owner_references(obj, refs)

    def release(self, obj: KubeObject) -> None:
        """Remove this owner's references from ``obj``."""
        uid = self.owner.metadata.uid
        refs = [r for r in obj.metadata.owner_references or () if r.uid != uid]
        self._patch_owner_references(obj, refs)

    def _check_can_adopt(self) -> None:
        with self._can_adopt_lock:
            if not self._can_adopt_done:
                self._can_adopt_done = True
                if self._can_adopt is not None:
                    try:
                        self._can_adopt()
                    except Exception as err:
                        self._can_adopt_error = err
            error = self._can_adopt_error
        if error is not None:
            meta = self.owner.metadata
            raise RuntimeError(
                f"can't adopt objects for {self.owner_gvk.kind} {meta.namespace}/{meta.name}: "
                f"{error}"
            ) from error

    def _patch_owner_references(self, obj: KubeObject, refs: list[OwnerReference]) -> None:
        meta = obj.metadata
        patch_meta: dict[str, Any] = {
            "uid": meta.uid,
            "ownerReferences": [r.model_dump() for r in refs] or None,
        }
        if meta.resource_version:
            patch_meta["resourceVersion"] = meta.resource_version
        self._client_for(meta.namespace or "").patch(
            meta.name or "", {"metadata": patch_meta}, patch_type="merge"
        )

    @staticmethod
    def _ignoring_not_found(action: Callable[[KubeObject], None], obj: KubeObject) -> bool:
        """Run ``action(obj)``; True if done, False if the object is gone."""
        try:
            action(obj)
        except Exception as err:
            if is_not_found(err):
                return False
            raise
        return True
