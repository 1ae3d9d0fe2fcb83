"""Feature gates (k8s.io/component-base ``featuregate``): named on/off switches with a maturity.

A component declares its features once, lets operators override them with
``--feature-gates=A=true,B=false`` and asks :meth:`FeatureGate.enabled` at the branch points::

    GATES = FeatureGate({"FastResync": FeatureSpec(default=False, pre_release=PreRelease.ALPHA)})
    GATES.set(args.feature_gates)       # FeatureGateError on unknown or locked features
    if GATES.enabled("FastResync"): ...

Thread-safe: writes build new maps under a lock and swap them in, so :meth:`FeatureGate.enabled`
takes no lock.
"""

from __future__ import annotations

import difflib
import enum
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["FeatureGate", "FeatureGateError", "FeatureSpec", "PreRelease"]

_log = logging.getLogger("kgen_runtime.featuregate")

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
"""The spellings Go's ``strconv.ParseBool`` accepts."""


class PreRelease(enum.Enum):
    """A feature's maturity."""

    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True)
class FeatureSpec:
    """How a feature is declared.

    Attributes:
        default: Whether it is on when nobody sets it.
        pre_release: Its maturity; setting a GA or deprecated feature logs a warning.
        lock_to_default: It can no longer be set to anything but ``default``.
    """

    default: bool
    pre_release: PreRelease = PreRelease.ALPHA
    lock_to_default: bool = False


class FeatureGateError(ValueError):
    """A feature-gate declaration or setting was rejected; the message lists every problem."""


_ALL_OF_MATURITY = {"AllAlpha": PreRelease.ALPHA, "AllBeta": PreRelease.BETA}
"""client-go's special features, known to every gate; their specs are in ``__init__``."""


class FeatureGate:
    """Known features and the values set for them (client-go's ``MutableFeatureGate``).

    Like client-go, every gate knows two special features: ``AllAlpha`` and ``AllBeta`` set
    every alpha (beta) feature that is not locked and has no value of its own yet; a value
    given for a feature in the same call wins over them.
    """

    def __init__(self, features: Mapping[str, FeatureSpec] | None = None) -> None:
        """Create a gate knowing ``features`` (more can be added with :meth:`add`)."""
        self._lock = threading.Lock()
        self._known: Mapping[str, FeatureSpec] = {
            name: FeatureSpec(default=False, pre_release=maturity)
            for name, maturity in _ALL_OF_MATURITY.items()
        }
        self._enabled: Mapping[str, bool] = {}
        if features:
            self.add(features)

    def add(self, features: Mapping[str, FeatureSpec]) -> None:
        """Declare ``features``; re-declaring one with the same spec is a no-op.

        Raises:
            FeatureGateError: a feature is already declared with a different spec (nothing is
                added then).
        """
        with self._lock:
            clashes = [
                f"feature gate {name!r} with different spec already exists"
                for name, spec in features.items()
                if name in self._known and self._known[name] != spec
            ]
            if clashes:
                raise FeatureGateError("; ".join(clashes))
            self._known = {**self._known, **features}

    def set(self, value: str) -> None:
        """Apply a ``--feature-gates`` value: ``"A=true,B=false"`` (spaces and empty items are
        ignored; values as Go's ``strconv.ParseBool``).

        All or nothing: on any problem nothing changes.

        Raises:
            FeatureGateError: listing every malformed item, unknown feature and locked feature.
        """
        values: dict[str, bool] = {}
        problems: list[str] = []
        for part in value.split(","):
            if not part.strip():
                continue
            name, sep, raw = part.partition("=")
            name, raw = name.strip(), raw.strip()
            if not sep:
                problems.append(f"missing bool value for {name}")
            elif raw in _TRUE or raw in _FALSE:
                values[name] = raw in _TRUE
            else:
                problems.append(f"invalid value of {name}={raw}, want true or false")
        self._set(values, problems)

    def set_from_map(self, values: Mapping[str, bool]) -> None:
        """Set several features at once; all or nothing, as :meth:`set`."""
        self._set(values, [])

    def enabled(self, name: str) -> bool:
        """Return whether feature ``name`` is on (its set value, else its default).

        Raises:
            FeatureGateError: ``name`` was never declared (a programming error).
        """
        value = self._enabled.get(name)
        if value is not None:
            return value
        spec = self._known.get(name)
        if spec is None:
            raise FeatureGateError(f"feature {name!r} is not registered in the feature gate")
        return spec.default

    def known_features(self) -> list[str]:
        """Describe the settable pre-GA features, sorted, for ``--help`` text."""
        return sorted(
            f"{name}=true|false ({spec.pre_release.value} - default={str(spec.default).lower()})"
            for name, spec in self._known.items()
            if spec.pre_release in (PreRelease.ALPHA, PreRelease.BETA)
        )

    def _set(self, values: Mapping[str, bool], problems: list[str]) -> None:
        with self._lock:
            known = self._known
            for name, value in values.items():
                spec = known.get(name)
                if spec is None:
                    problems.append(f"unrecognized feature gate: {name}{_suggest(name, known)}")
                elif spec.lock_to_default and value != spec.default:
                    problems.append(
                        f"cannot set feature gate {name} to {str(value).lower()}, feature is "
                        f"locked to {str(spec.default).lower()}"
                    )
            if problems:
                raise FeatureGateError("; ".join(problems))
            self._enabled = {**self._enabled, **_expand_specials(values, known, self._enabled)}
        for name, value in values.items():
            maturity = known[name].pre_release
            if maturity in (PreRelease.GA, PreRelease.DEPRECATED):
                _log.warning(
                    "Setting %s feature gate %s=%s. It will be removed in a future release.",
                    "GA" if maturity is PreRelease.GA else "deprecated", name, value,
                )


def _expand_specials(
    values: Mapping[str, bool], known: Mapping[str, FeatureSpec], enabled: Mapping[str, bool]
) -> dict[str, bool]:
    """``values`` plus what its ``AllAlpha``/``AllBeta`` imply for features without a value."""
    expanded = dict(values)
    for special, maturity in _ALL_OF_MATURITY.items():
        if special not in values:
            continue
        for name, spec in known.items():
            settable = spec.pre_release is maturity and not spec.lock_to_default
            if settable and name not in enabled and name not in values:
                expanded[name] = values[special]
    return expanded


def _suggest(name: str, known: Mapping[str, FeatureSpec]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""
