"""Field declaration helper shared by the hand-written meta/v1 types."""

from __future__ import annotations

from typing import Any

from pydantic import Field

__all__ = ["wire"]


def wire(name: str) -> Any:
    """An optional field whose wire (JSON) name is ``name``; the Python name stays snake_case.

    Separate validation/serialisation aliases (rather than ``alias=``) keep the snake_case
    attribute as the constructor keyword for type checkers, exactly as generated models do.
    """
    return Field(default=None, validation_alias=name, serialization_alias=name)
