"""The packet engine's random streams (crates/engine/src/rng.rs), in Python, so
that other engines (the ns-2 export) draw exactly the same start times.
xoshiro256** seeded by splitmix64; stream (seed, kind, index)."""

from __future__ import annotations

_M = (1 << 64) - 1
FLOW_START = 1


def _splitmix64(x: int) -> tuple[int, int]:
    x = (x + 0x9E3779B97F4A7C15) & _M
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return x, z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & _M


class Rng:
    def __init__(self, s: list[int]):
        self.s = s

    @classmethod
    def stream(cls, seed: int, kind: int, index: int) -> "Rng":
        x = (seed ^ ((kind * 0xA24BAED4963EE407) & _M) ^ ((index * 0x9FB21C651E98DF25) & _M)) & _M
        s = []
        for _ in range(4):
            x, v = _splitmix64(x)
            s.append(v)
        return cls(s)

    def next_u64(self) -> int:
        s = self.s
        result = (_rotl((s[1] * 5) & _M, 7) * 9) & _M
        t = (s[1] << 17) & _M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform(self) -> float:
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))
