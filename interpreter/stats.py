"""Small statistics for `ludus simulate` and `ludus compare`, in pure Python.

- :func:`wilson` — the Wilson score interval of a proportion (95 % by default);
- :func:`two_proportion_z` — the pooled two-proportion z-test (two-sided) for rates;
- :func:`welch_t` — Welch's unequal-variance t-test (two-sided) for means, with the
  Welch–Satterthwaite degrees of freedom and the exact Student t distribution
  (through the regularised incomplete beta function, so small samples are right too);
- :class:`Summary` — count, mean, variance (Welford), min and max of a stream of numbers.

The normal distribution uses :func:`math.erfc`; the t distribution's tail is
``I_x(df/2, 1/2)`` with ``x = df / (df + t²)``, the incomplete beta computed by its
continued fraction (modified Lentz), accurate to about 1e-12.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

ALPHA = 0.05
Z95 = 1.959963984540054  # the 97.5 % quantile of the standard normal


# ------------------------------------------------------------------ distributions
def normal_cdf(x: float) -> float:
    """P(Z <= x) for a standard normal Z."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_two_sided(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (Numerical Recipes' betacf, Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be in [0, 1], not {x}")
    if x in (0.0, 1.0):
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_two_sided(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t distribution with ``df`` (> 0, not necessarily whole) degrees of freedom."""
    if math.isinf(df):
        return normal_two_sided(t)
    return betainc(df / 2.0, 0.5, df / (df + t * t))


# ------------------------------------------------------------------ intervals and tests
def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (successes may be fractional).

    Returns (0, 1) when n is 0: nothing is known.
    """
    if n <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, successes / n))
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    # The interval always holds p; at p = 0 or 1 rounding could leave it a hair outside
    # (a plot's error bar would then be negative).
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


@dataclass(frozen=True)
class Outcome:
    """A two-sided test of 'no difference': the statistic, its p-value, and the degrees of freedom (t only)."""

    statistic: float
    p: float
    df: float | None = None

    def significant(self, alpha: float = ALPHA) -> bool:
        return self.p < alpha


def two_proportion_z(x1: float, n1: int, x2: float, n2: int) -> Outcome | None:
    """Pooled two-proportion z-test of x1/n1 against x2/n2; None when a sample is empty.

    When both rates are 0 (or both 1) the samples cannot differ: z = 0, p = 1.
    """
    if n1 <= 0 or n2 <= 0:
        return None
    p1, p2 = x1 / n1, x2 / n2
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2))
    if se == 0.0:
        return Outcome(0.0, 1.0)
    z = (p1 - p2) / se
    return Outcome(z, normal_two_sided(z))


def welch_t(m1: float, v1: float, n1: int, m2: float, v2: float, n2: int) -> Outcome | None:
    """Welch's t-test of two means, from each sample's mean, (n-1) variance and size.

    None when a sample has fewer than 2 values. When both variances are 0 the
    difference is certain: p = 1 for equal means, p = 0 otherwise.
    """
    if n1 < 2 or n2 < 2:
        return None
    s1, s2 = v1 / n1, v2 / n2
    se2 = s1 + s2
    if se2 == 0.0:
        return Outcome(0.0 if m1 == m2 else math.copysign(math.inf, m1 - m2), 1.0 if m1 == m2 else 0.0)
    t = (m1 - m2) / math.sqrt(se2)
    df = se2 * se2 / (s1 * s1 / (n1 - 1) + s2 * s2 / (n2 - 1))
    return Outcome(t, t_two_sided(t, df), df)


def welch_t_samples(a: Iterable[float], b: Iterable[float]) -> Outcome | None:
    """Welch's t-test of two samples given as numbers."""
    sa, sb = Summary.of(a), Summary.of(b)
    return welch_t(sa.mean, sa.variance, sa.n, sb.mean, sb.variance, sb.n)


# ------------------------------------------------------------------ running summary
class Summary:
    """Count, mean, (n-1) variance, min and max of numbers added one at a time (Welford)."""

    __slots__ = ("n", "mean", "_m2", "min", "max")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0
        self.min: float | None = None
        self.max: float | None = None

    @classmethod
    def of(cls, values: Iterable[float]) -> Summary:
        s = cls()
        for v in values:
            s.add(v)
        return s

    def add(self, value: float) -> None:
        self.n += 1
        delta = value - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (value - self.mean)
        self.min = value if self.min is None or value < self.min else self.min
        self.max = value if self.max is None or value > self.max else self.max

    @property
    def variance(self) -> float:
        return self._m2 / (self.n - 1) if self.n > 1 else 0.0

    @property
    def sd(self) -> float:
        return math.sqrt(self.variance)


def quantile(sorted_values: list[float], q: float) -> float:
    """The q-quantile (0..1) of already sorted values, linear between neighbours."""
    if not sorted_values:
        raise ValueError("no values")
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)
