"""What a ring member on a thread and one on a task share, none of it I/O: the sans-I/O
:class:`~kgen_runtime.sharding.ShardCoordinator`, the holds read on the driver's clock, and
reporting their changes to ``on_ranges_changed``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from kgen_runtime.sharding._coordinator import ShardCoordinator
from kgen_runtime.shardranges import HashRange
from kgen_runtime.util.runtime import handle_crash

__all__ = ["MemberBase", "RangesCallback"]

_log = logging.getLogger("kgen_runtime.sharding")

RangesCallback = Callable[[tuple[HashRange, ...]], None]
"""Called with the ranges a member holds whenever they change."""


class MemberBase:
    """What the thread and the asyncio member share: the coordinator, the holds read on the
    driver's clock, and reporting their changes."""

    def __init__(
        self,
        ring: str,
        identity: str,
        now: Callable[[], float],
        on_ranges_changed: RangesCallback | None,
        lease_duration: float,
        renew_period: float,
        wall_now: Callable[[], datetime],
    ) -> None:
        self.coordinator = ShardCoordinator(ring, identity, lease_duration=lease_duration,
                                            renew_period=renew_period, wall_now=wall_now)
        self.on_ranges_changed = on_ranges_changed
        self._now = now
        self._reported: tuple[HashRange, ...] = ()

    def ranges(self) -> tuple[HashRange, ...]:
        """The ranges held now."""
        return self.coordinator.ranges(self._now())

    def begin(self, digest: int) -> bool:
        """Whether a reconcile over ``digest`` may start now; if so, call ``end`` after."""
        return self.coordinator.begin(digest, self._now())

    def _report(self) -> None:
        held = self.ranges()
        if held == self._reported:
            return
        self._reported = held
        _log.info("%s/%s: holds %d ranges", self.coordinator.ring, self.coordinator.identity,
                  len(held))
        if self.on_ranges_changed is not None:
            with handle_crash():
                self.on_ranges_changed(held)
