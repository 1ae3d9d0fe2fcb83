"""Kubernetes resource quantities (``1Gi``, ``500m``, ``1e3``) as exact decimals.

The parsing rules of apimachinery's ``resource.ParseQuantity``: a signed decimal number and
an optional suffix, binary (``Ki`` … ``Ei``), decimal SI (``n`` … ``E``) or a decimal
exponent (``e3``/``E3``). Used by the CEL ``quantity`` library.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["parse_quantity"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE]?)")


def parse_quantity(text: str) -> Decimal:
    """The value of a quantity string; ``ValueError`` when it is not one."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}")
    number, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        raise ValueError(f"invalid quantity {text!r}") from None
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return value.scaleb(int(suffix[1:]))
    return value * _DECIMAL[suffix]
