"""The consistent hash ring: one owner per hash, and ~1/N of the space moves per change."""

from __future__ import annotations

import random

import pytest

from kgen_runtime.sharding import HASH_SPACE, HashRange, HashRing, merge, ring_token


def names(rng: random.Random, count: int) -> list[str]:
    return [f"replica-{rng.getrandbits(40):010x}" for _ in range(count)]


def share(ranges: tuple[HashRange, ...]) -> int:
    return sum(r.end - r.start for r in ranges)


def moved(before: HashRing, after: HashRing) -> int:
    """How much of the space changes owner between the two rings."""
    total = 0
    for member in before.members | after.members:
        old, new = before.ranges_of(member), after.ranges_of(member)
        kept = share(old) + share(new) - share(merge(old + new))  # |old ∩ new|
        total += share(old) - kept
    return total


@pytest.mark.parametrize("seed", range(20))
def test_every_hash_has_exactly_one_owner(seed: int) -> None:
    rng = random.Random(seed)
    ring = HashRing(names(rng, rng.randint(1, 12)))
    everything = [r for member in sorted(ring.members) for r in ring.ranges_of(member)]
    assert merge(everything) == (HashRange(0, HASH_SPACE),)
    assert sum(map(share, (ring.ranges_of(m) for m in ring.members))) == HASH_SPACE  # disjoint
    for digest in [0, HASH_SPACE - 1, *(rng.getrandbits(64) for _ in range(200))]:
        owner = ring.owner_of(digest)
        assert owner is not None and any(digest in r for r in ring.ranges_of(owner))
    for member in ring.members:  # range edges agree with owner_of
        for r in ring.ranges_of(member):
            assert ring.owner_of(r.start) == member and ring.owner_of(r.end - 1) == member


@pytest.mark.parametrize("seed", range(20))
def test_adding_or_removing_one_member_moves_about_one_nth(seed: int) -> None:
    rng = random.Random(1000 + seed)
    count = rng.randint(2, 10)
    members = names(rng, count + 1)
    small, large = HashRing(members[:count]), HashRing(members)
    newcomer = members[count]
    # Only the newcomer gains: what moves is exactly its share, and no one else's ranges move.
    assert moved(small, large) == share(large.ranges_of(newcomer))
    for member in members[:count]:
        assert merge(large.ranges_of(member) + small.ranges_of(member)) == small.ranges_of(member)
    # 64 virtual nodes keep a member's share within a factor of ~1.6 of 1/N.
    fraction = moved(small, large) / HASH_SPACE
    assert 0.6 / (count + 1) <= fraction <= 1.6 / (count + 1), (count, fraction)
    assert moved(large, small) == moved(small, large)


def test_shares_are_balanced_over_many_members() -> None:
    rng = random.Random(7)
    ring = HashRing(names(rng, 16))
    shares = [share(ring.ranges_of(m)) / HASH_SPACE * 16 for m in ring.members]
    assert min(shares) >= 0.5 and max(shares) <= 1.6, shares


def test_an_empty_ring_owns_nothing_and_bad_input_is_refused() -> None:
    ring = HashRing([])
    assert ring.owner_of(5) is None and ring.ranges_of("a") == ()
    assert HashRing(["a"]).ranges_of("a") == (HashRange(0, HASH_SPACE),)
    with pytest.raises(ValueError, match="non-empty name"):
        HashRing(["a", ""])
    with pytest.raises(ValueError, match="at least one virtual node"):
        HashRing(["a"], virtual_nodes=0)
    with pytest.raises(ValueError, match=r"outside \[0, 2\*\*64\)"):
        HashRing(["a"]).owner_of(HASH_SPACE)


def test_tokens_are_stable_blake2b() -> None:
    # The assignment must agree across replicas and versions: pin one token.
    assert ring_token("a", 0) == 0xCDEB6F235E51D651  # blake2b(b"a/0", digest_size=8)
    assert HashRing(["a", "b"]).owner_of(ring_token("b", 3)) == "b"
