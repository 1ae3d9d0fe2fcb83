"""Where a reflector gets its data: client-go's ``ListerWatcher`` and ``ListWatch``.

A :class:`ListerWatcher` lists a collection (one page per call) and opens a watch on it. Any
typed or dynamic client scoped to a resource (and optionally a namespace) is one already;
:class:`ListWatch` adds the informer's fixed options (label/field selectors, a tweak function)
to every call, or adapts two plain functions. A ``ListWatch`` of a client also passes on
``keep``, the client's filter on wire documents, for a wrapper that wants only some objects
built (:class:`~kgen_runtime.sharding.OwnerShardedListWatch`), and asks it for lazily built
objects (what an informer caches: :mod:`kgen_runtime.meta._lazy`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from kgen_runtime.meta import WireEventFilter, WireFilter
from kgen_runtime.rest.client import ResourceClient
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.watch import Watcher

__all__ = ["ListMetaLike", "ListWatch", "ListerWatcher", "ObjectList", "TweakListOptions"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class ListMetaLike(Protocol):
    """What a reflector reads of a list's ``metadata`` (``ListMeta``)."""

    @property
    def resource_version(self) -> str | None: ...

    @property
    def continue_(self) -> str | None: ...


class ObjectList(Protocol[T_co]):
    """A page of a list: ``KubeList[T]`` or any object shaped like it."""

    @property
    def metadata(self) -> ListMetaLike | None: ...

    @property
    def items(self) -> Sequence[T_co]: ...


class ListerWatcher(Protocol[T_co]):
    """List one page and open a watch (client-go's ``ListerWatcher``).

    Errors are the ``kgen_runtime.rest.errors`` types (``GoneError`` for 410/Expired) or
    ``ConnectionError``/``TimeoutError``; both methods may be called from any thread.
    """

    def list(self, options: ListOptions) -> ObjectList[T_co]: ...

    def watch(self, options: ListOptions) -> Watcher[T_co]: ...


TweakListOptions = Callable[[ListOptions], ListOptions]
"""Adjusts the options of every list and watch (e.g. to add a label selector)."""


class ListWatch(Generic[T]):
    """A :class:`ListerWatcher` from a client (or two functions) plus fixed options.

    ``label_selector``/``field_selector`` and then ``tweak`` are applied to the options of
    every call, overriding what the reflector passed for those fields. With ``accepts_keep``
    (what :meth:`from_client` sets for a ``ResourceClient``) both functions take ``keep``
    and ``list``/``watch`` pass it on (see ``ResourceClient.list`` and ``.watch``).
    """

    def __init__(
        self,
        list_func: Callable[[ListOptions], ObjectList[T]],
        watch_func: Callable[[ListOptions], Watcher[T]],
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak: TweakListOptions | None = None,
        accepts_keep: bool = False,
    ) -> None:
        self._list = list_func
        self._watch = watch_func
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._tweak = tweak
        self.accepts_keep = accepts_keep

    @classmethod
    def from_client(
        cls,
        client: Any,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak: TweakListOptions | None = None,
    ) -> ListWatch[Any]:
        """Adapt a client with ``list(options)`` and ``watch(options)`` methods (which take
        ``keep`` too if it is a ``ResourceClient``).

        A ``ResourceClient``'s objects are listed and watched with ``lazy=True``: they stay
        their wire documents until first touched (:mod:`kgen_runtime.meta._lazy`), so a
        cache pays for building only the objects something reads.
        """
        typed = isinstance(client, ResourceClient)
        return ListWatch(
            functools.partial(client.list, lazy=True) if typed else client.list,
            functools.partial(client.watch, lazy=True) if typed else client.watch,
            label_selector=label_selector,
            field_selector=field_selector,
            tweak=tweak,
            accepts_keep=typed,
        )

    def list(self, options: ListOptions, *,
             keep: WireFilter | None = None) -> ObjectList[T]:
        """One page; ``keep`` (only if :attr:`accepts_keep`) leaves the objects it rejects
        unbuilt."""
        if keep is None:
            return self._list(self._options(options))
        keeping: Callable[..., ObjectList[T]] = self._list  # takes keep too (accepts_keep)
        return keeping(self._options(options), keep=keep)

    def watch(self, options: ListOptions, *,
              keep: WireEventFilter | None = None) -> Watcher[T]:
        """A watch; ``keep`` (only if :attr:`accepts_keep`) skips the events it rejects
        unbuilt."""
        if keep is None:
            return self._watch(self._options(options))
        keeping: Callable[..., Watcher[T]] = self._watch  # takes keep too (accepts_keep)
        return keeping(self._options(options), keep=keep)

    def _options(self, options: ListOptions) -> ListOptions:
        return selected(options, self._label_selector, self._field_selector, self._tweak)


def selected(
    options: ListOptions,
    label_selector: str | None,
    field_selector: str | None,
    tweak: TweakListOptions | None,
) -> ListOptions:
    """``options`` with a list-watch's fixed selectors, then its tweak, applied."""
    changes: dict[str, Any] = {}
    if label_selector is not None:
        changes["label_selector"] = label_selector
    if field_selector is not None:
        changes["field_selector"] = field_selector
    if changes:
        options = dataclasses.replace(options, **changes)
    return tweak(options) if tweak is not None else options
