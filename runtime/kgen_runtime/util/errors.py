"""Error aggregation (apimachinery's ``util/errors``), as a Python ``ExceptionGroup``.

Collect the errors of several independent steps and raise them as one::

    errs = [check(x) for x in things]          # each an Exception or None
    if (agg := new_aggregate(errs)) is not None:
        raise agg

An :class:`Aggregate` is an ``ExceptionGroup``, so callers can use ``except*`` or
``split``/``subgroup``; ``ConflictError in agg`` asks whether any contained error (at any depth)
is a ``ConflictError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Self

__all__ = ["Aggregate", "new_aggregate"]


class Aggregate(ExceptionGroup[Exception]):
    """Several errors as one (client-go's ``Aggregate``); immutable like any exception.

    Nested aggregates are flattened into this one. ``str()`` is the single error's message, or
    the distinct messages in order as ``[a, b]`` (duplicates listed once).
    """

    def __new__(cls, errors: Sequence[Exception]) -> Self:
        """Build from ``errors`` (non-empty; nested :class:`Aggregate` s are flattened)."""
        flat = list(_flatten(errors))
        return super().__new__(cls, _message(flat), flat)

    def __init__(self, errors: Sequence[Exception]) -> None:
        """See :meth:`__new__` (the group is built there)."""
        super().__init__(self.message, self.exceptions)

    def __str__(self) -> str:
        """Return the aggregated message without ExceptionGroup's sub-exception count."""
        return self.message

    def __contains__(self, target: object) -> bool:
        """Whether a contained error (at any depth) is an instance of ``target`` when it is an
        exception type, or is ``target`` itself when it is an exception."""
        if isinstance(target, type) and issubclass(target, BaseException):
            return any(_matches(err, lambda e: isinstance(e, target)) for err in self.exceptions)
        return any(_matches(err, lambda e: e is target) for err in self.exceptions)

    def __reduce__(self) -> tuple[type[Aggregate], tuple[list[Exception]]]:
        """Pickle by the contained errors (the constructor's one argument)."""
        return Aggregate, (list(self.exceptions),)

    def derive(self, excs: Sequence[Exception]) -> Aggregate:  # type: ignore[override]
        """Rebuild as an :class:`Aggregate` (used by ``split``, ``subgroup`` and ``except*``)."""
        return Aggregate(excs)


def new_aggregate(errors: Iterable[Exception | None]) -> Aggregate | None:
    """Aggregate ``errors`` leaving out ``None``; return ``None`` when nothing is left."""
    present = [err for err in errors if err is not None]
    return Aggregate(present) if present else None


def _flatten(errors: Iterable[Exception]) -> Iterator[Exception]:
    for err in errors:
        if isinstance(err, Aggregate):
            yield from err.exceptions
        else:
            yield err


def _message(errors: Sequence[Exception]) -> str:
    if len(errors) == 1:
        return str(errors[0])
    messages = list(dict.fromkeys(str(err) for err in errors))
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _matches(err: BaseException, predicate: Callable[[BaseException], bool]) -> bool:
    if predicate(err):
        return True
    if isinstance(err, BaseExceptionGroup):
        return any(_matches(inner, predicate) for inner in err.exceptions)
    return False
