"""Events of a watched kind and the predicates that filter them (controller-runtime's
``event`` and ``predicate`` packages).

A builder's sources turn informer notifications into :class:`CreateEvent`,
:class:`UpdateEvent` and :class:`DeleteEvent` (and :class:`GenericEvent` for anything else
that wants a reconcile); a :class:`Predicate` decides, per event type, whether the event
reaches the event handler::

    only_spec_changes = GenerationChangedPredicate()
    labelled = LabelSelectorPredicate("app=nginx")
    builder.with_event_filter(only_spec_changes | LabelChangedPredicate())
    builder.owns(Deployment, predicates=[labelled & ~ResourceVersionChangedPredicate()])

Semantics, as controller-runtime's:

* a predicate answers ``True`` (let through) for every event type it does not care about;
* the ``...Changed`` predicates let creates, deletes and generic events through and filter
  updates only; an update that misses its old or new object is dropped (and logged);
* :func:`and_` is true when all are (and for none), :func:`or_` when any is (false for none),
  :func:`not_` negates each method. ``&``, ``|`` and ``~`` on predicates are the same.

Labels and annotations are compared as mappings, a missing mapping equal to an empty one
(Go's ``reflect.DeepEqual`` tells ``nil`` from an empty map; decoded JSON does not).
Objects are the cache's own: predicates only read them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kgen_runtime.cache import SelectorLike
from kgen_runtime.labels import as_selector

__all__ = [
    "AnnotationChangedPredicate",
    "CreateEvent",
    "DeleteEvent",
    "Funcs",
    "GenerationChangedPredicate",
    "GenericEvent",
    "LabelChangedPredicate",
    "LabelSelectorPredicate",
    "Predicate",
    "ResourceVersionChangedPredicate",
    "UpdateEvent",
    "and_",
    "new_predicate_funcs",
    "not_",
    "or_",
]

_log = logging.getLogger("kgen_runtime.controller.predicates")


@dataclass(frozen=True, slots=True)
class CreateEvent:
    """An object appeared in the cache (``event.CreateEvent``)."""

    object: Any


@dataclass(frozen=True, slots=True)
class UpdateEvent:
    """An object changed, or was resynced (``event.UpdateEvent``)."""

    object_old: Any
    object_new: Any


@dataclass(frozen=True, slots=True)
class DeleteEvent:
    """An object left the cache (``event.DeleteEvent``).

    ``delete_state_unknown``: the deletion was noticed only at a relist, so ``object`` is
    its last known, possibly stale, state.
    """

    object: Any
    delete_state_unknown: bool = False


@dataclass(frozen=True, slots=True)
class GenericEvent:
    """Anything else that asks for a reconcile of ``object`` (``event.GenericEvent``)."""

    object: Any


class Predicate:
    """Filters events before they reach an event handler (``predicate.Predicate``).

    The base class lets everything through; subclasses override the methods they filter.
    """

    def create(self, event: CreateEvent) -> bool:
        return True

    def update(self, event: UpdateEvent) -> bool:
        return True

    def delete(self, event: DeleteEvent) -> bool:
        return True

    def generic(self, event: GenericEvent) -> bool:
        return True

    def __and__(self, other: Predicate) -> Predicate:
        return and_(self, other)

    def __or__(self, other: Predicate) -> Predicate:
        return or_(self, other)

    def __invert__(self) -> Predicate:
        return not_(self)


class Funcs(Predicate):
    """A predicate from plain functions; a missing one lets its events through
    (``predicate.Funcs``)."""

    def __init__(
        self,
        *,
        create: Callable[[CreateEvent], bool] | None = None,
        update: Callable[[UpdateEvent], bool] | None = None,
        delete: Callable[[DeleteEvent], bool] | None = None,
        generic: Callable[[GenericEvent], bool] | None = None,
    ) -> None:
        self.create_func = create
        self.update_func = update
        self.delete_func = delete
        self.generic_func = generic

    def create(self, event: CreateEvent) -> bool:
        return self.create_func is None or self.create_func(event)

    def update(self, event: UpdateEvent) -> bool:
        return self.update_func is None or self.update_func(event)

    def delete(self, event: DeleteEvent) -> bool:
        return self.delete_func is None or self.delete_func(event)

    def generic(self, event: GenericEvent) -> bool:
        return self.generic_func is None or self.generic_func(event)


class _ObjectFilter(Predicate):
    """Asks ``keep(object)`` of every event (the new object of an update)."""

    def __init__(self, keep: Callable[[Any], bool]) -> None:
        self.keep = keep

    def create(self, event: CreateEvent) -> bool:
        return self.keep(event.object)

    def update(self, event: UpdateEvent) -> bool:
        return self.keep(event.object_new)

    def delete(self, event: DeleteEvent) -> bool:
        return self.keep(event.object)

    def generic(self, event: GenericEvent) -> bool:
        return self.keep(event.object)


def new_predicate_funcs(keep: Callable[[Any], bool]) -> Predicate:
    """A predicate asking ``keep(object)`` of every event (the new object of an update)
    (``predicate.NewPredicateFuncs``)."""
    return _ObjectFilter(keep)


class _UpdateComparing(Predicate):
    """Lets an update through when ``_changed(old, new)``; drops one missing an object."""

    def update(self, event: UpdateEvent) -> bool:
        if event.object_old is None or event.object_new is None:
            _log.error("%s: update event without an old or new object: %r",
                       type(self).__name__, event)
            return False
        return self._changed(event.object_old.metadata, event.object_new.metadata)

    def _changed(self, old: Any, new: Any) -> bool:
        raise NotImplementedError


class ResourceVersionChangedPredicate(_UpdateComparing):
    """Drops updates that did not change ``resourceVersion``: the informer's resyncs."""

    def _changed(self, old: Any, new: Any) -> bool:
        return bool(old.resource_version != new.resource_version)


class GenerationChangedPredicate(_UpdateComparing):
    """Drops updates that did not change ``metadata.generation``: with a status
    subresource, status-only and metadata-only writes (and resyncs)."""

    def _changed(self, old: Any, new: Any) -> bool:
        return bool(old.generation != new.generation)


class LabelChangedPredicate(_UpdateComparing):
    """Lets through only the updates that changed ``metadata.labels``."""

    def _changed(self, old: Any, new: Any) -> bool:
        return _mapping(old.labels) != _mapping(new.labels)


class AnnotationChangedPredicate(_UpdateComparing):
    """Lets through only the updates that changed ``metadata.annotations``."""

    def _changed(self, old: Any, new: Any) -> bool:
        return _mapping(old.annotations) != _mapping(new.annotations)


class LabelSelectorPredicate(_ObjectFilter):
    """Lets through the events of objects whose labels match ``selector`` (the new object
    of an update) (``predicate.LabelSelectorPredicate``).

    Raises:
        SelectorError: ``selector`` is text that does not parse.
    """

    def __init__(self, selector: SelectorLike | Mapping[str, str]) -> None:
        self.selector = as_selector(selector)
        super().__init__(lambda obj: self.selector.matches(obj.metadata.labels or {}))


def _mapping(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return value or {}


class _All(Predicate):
    def __init__(self, predicates: tuple[Predicate, ...]) -> None:
        self.predicates = predicates

    def create(self, event: CreateEvent) -> bool:
        return all(p.create(event) for p in self.predicates)

    def update(self, event: UpdateEvent) -> bool:
        return all(p.update(event) for p in self.predicates)

    def delete(self, event: DeleteEvent) -> bool:
        return all(p.delete(event) for p in self.predicates)

    def generic(self, event: GenericEvent) -> bool:
        return all(p.generic(event) for p in self.predicates)


class _Any(Predicate):
    def __init__(self, predicates: tuple[Predicate, ...]) -> None:
        self.predicates = predicates

    def create(self, event: CreateEvent) -> bool:
        return any(p.create(event) for p in self.predicates)

    def update(self, event: UpdateEvent) -> bool:
        return any(p.update(event) for p in self.predicates)

    def delete(self, event: DeleteEvent) -> bool:
        return any(p.delete(event) for p in self.predicates)

    def generic(self, event: GenericEvent) -> bool:
        return any(p.generic(event) for p in self.predicates)


class _Not(Predicate):
    def __init__(self, predicate: Predicate) -> None:
        self.predicate = predicate

    def create(self, event: CreateEvent) -> bool:
        return not self.predicate.create(event)

    def update(self, event: UpdateEvent) -> bool:
        return not self.predicate.update(event)

    def delete(self, event: DeleteEvent) -> bool:
        return not self.predicate.delete(event)

    def generic(self, event: GenericEvent) -> bool:
        return not self.predicate.generic(event)


def and_(*predicates: Predicate) -> Predicate:
    """True for an event when every predicate is (``predicate.And``); true for none."""
    return _All(predicates)


def or_(*predicates: Predicate) -> Predicate:
    """True for an event when any predicate is (``predicate.Or``); false for none."""
    return _Any(predicates)


def not_(predicate: Predicate) -> Predicate:
    """The opposite of ``predicate`` for every event type (``predicate.Not``)."""
    return _Not(predicate)
