"""A tiny seeded random generator whose whole state is one integer (so it lives in the JSON state).

SplitMix64: fast, well distributed, and identical on every platform and Python
version, which the byte-identical log guarantee needs (``random.Random`` would
tie saved games to CPython's implementation details).
"""

from __future__ import annotations

_MASK = (1 << 64) - 1
# SplitMix64's constants (the step, then the two mixing multipliers); Board.roll runs
# next_u64 and below inline with them, for each die
GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB


def seed_state(seed: int | str) -> int:
    """Turn a user seed (int or text) into a generator state."""
    if isinstance(seed, str):
        value = 0
        for ch in seed.encode("utf-8"):
            value = (value * 131 + ch) & _MASK
        seed = value
    return (int(seed) * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) & _MASK


def next_u64(state: int) -> tuple[int, int]:
    """Return (new state, 64 random bits)."""
    state = (state + GAMMA) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * MIX1) & _MASK
    z = ((z ^ (z >> 27)) * MIX2) & _MASK
    return state, z ^ (z >> 31)


def below(state: int, n: int) -> tuple[int, int]:
    """Return (new state, uniform integer in [0, n)) by rejection sampling."""
    if n <= 1:
        return state, 0
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        state, x = next_u64(state)
        if x < limit:
            return state, x % n


def mix(state: int, salt: int) -> int:
    """The generator state after fresh randomness ``salt`` (64 bits) is stirred in.

    A game with a human seat and no --seed stirs in a salt drawn after each human decision
    (and logged with it), so no file or seed shows the dice to come before they are rolled.
    """
    return seed_state((state ^ salt) & _MASK)
