"""The statistics of `ludus simulate` / `ludus compare` against published and hand-computed values."""

from __future__ import annotations

import math
import statistics

import pytest

from interpreter.stats import (
    Summary,
    betainc,
    normal_cdf,
    normal_two_sided,
    quantile,
    t_two_sided,
    two_proportion_z,
    welch_t,
    welch_t_samples,
    wilson,
)


# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3
# (the Wilson score interval without continuity correction).
@pytest.mark.parametrize(("x", "n", "lo", "hi"), [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_matches_newcombe(x, n, lo, hi):
    got = wilson(x, n)
    assert got == pytest.approx((lo, hi), abs=5e-5)


def test_wilson_interval_always_holds_the_observed_rate():
    # at 0 of n and n of n rounding used to put a bound a hair past the rate (2.8e-17 above
    # 0 for 0 of 7), and the win-rate plot failed on the negative error bar
    for n in range(1, 200):
        for x in range(n + 1):
            lo, hi = wilson(x, n)
            assert lo <= x / n <= hi
    assert wilson(0, 7)[0] == 0.0 and wilson(10, 10)[1] == 1.0


def test_wilson_interval_by_hand():
    # p = 0.8, n = 10, z = 1.96: centre (0.8 + 0.19208) / 1.38416, half 1.41602 * sqrt(0.016 + 0.009604)
    assert wilson(8, 10) == pytest.approx((0.49016, 0.94332), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((10 / (10 + 1.959964 ** 2), 1.0), abs=1e-6)
    assert wilson(0, 0) == (0.0, 1.0)  # nothing known
    lo, hi = wilson(2.5, 10)  # a shared win counts a fraction
    assert lo < 0.25 < hi


def test_normal_distribution():
    assert normal_cdf(0) == 0.5
    assert normal_cdf(1.959963984540054) == pytest.approx(0.975, abs=1e-12)
    assert normal_two_sided(1.959963984540054) == pytest.approx(0.05, abs=1e-12)
    assert normal_two_sided(-2.0) == pytest.approx(0.0455003, abs=1e-7)


def test_two_proportion_z_test_by_hand():
    # 45/100 against 30/100: pooled 0.375, se = sqrt(0.375 * 0.625 * 0.02) = 0.0684653, z = 0.15 / se
    r = two_proportion_z(45, 100, 30, 100)
    assert r is not None
    assert r.statistic == pytest.approx(2.19089, abs=1e-5)
    assert r.p == pytest.approx(0.028460, abs=1e-5)
    assert r.significant()
    back = two_proportion_z(30, 100, 45, 100)
    assert back is not None and back.statistic == pytest.approx(-r.statistic) and back.p == pytest.approx(r.p)
    same = two_proportion_z(0, 50, 0, 80)
    assert same is not None and same.p == 1.0 and not same.significant()
    close = two_proportion_z(50, 100, 52, 100)
    assert close is not None and not close.significant()
    assert two_proportion_z(1, 0, 1, 10) is None


def test_incomplete_beta_exact_values():
    assert betainc(2, 3, 0.4) == pytest.approx(0.5248, abs=1e-12)  # binomial sum: P(Bin(4, 0.4) >= 2)
    assert betainc(3, 3, 0.5) == pytest.approx(0.5, abs=1e-12)
    assert betainc(1, 1, 0.3) == pytest.approx(0.3, abs=1e-12)
    assert betainc(5, 2, 0.0) == 0.0 and betainc(5, 2, 1.0) == 1.0


@pytest.mark.parametrize(("t", "df", "p"), [
    (12.706, 1, 0.05), (4.303, 2, 0.05), (2.228, 10, 0.05), (2.086, 20, 0.05), (2.042, 30, 0.05),
    (3.169, 10, 0.01), (1.812, 10, 0.10),  # printed Student t tables (two-sided)
])
def test_t_distribution_matches_printed_tables(t, df, p):
    assert t_two_sided(t, df) == pytest.approx(p, abs=2e-4)


def test_t_distribution_closed_forms():
    assert t_two_sided(1.0, 1) == pytest.approx(0.5, abs=1e-12)  # Cauchy
    for t in (0.5, 1.0, 3.0):  # 2 degrees of freedom: 1 - t / sqrt(2 + t^2)
        assert t_two_sided(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-12)
    assert t_two_sided(0.0, 7) == pytest.approx(1.0)
    assert t_two_sided(2.0, 1e7) == pytest.approx(normal_two_sided(2.0), abs=1e-6)
    assert t_two_sided(2.0, math.inf) == normal_two_sided(2.0)


def test_welch_t_test_matches_the_published_example():
    # Welch's t-test, Wikipedia, example 1: t = -2.46, df = 25.0, p = 0.021
    a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
    r = welch_t_samples(a1, a2)
    assert r is not None and r.df is not None
    assert round(r.statistic, 2) == -2.46
    assert round(r.df, 1) == 25.0
    assert round(r.p, 3) == 0.021
    assert r.significant()


def test_welch_t_test_by_hand_and_edge_cases():
    # means 10 and 12, variances 4 and 9, n 10 and 20: se^2 = 0.4 + 0.45, t = -2 / sqrt(0.85)
    r = welch_t(10, 4, 10, 12, 9, 20)
    assert r is not None and r.df is not None
    assert r.statistic == pytest.approx(-2.169305, abs=1e-6)
    assert r.df == pytest.approx(0.85 ** 2 / (0.4 ** 2 / 9 + 0.45 ** 2 / 19), rel=1e-12)
    assert r.p == pytest.approx(t_two_sided(2.169305, r.df), abs=1e-6)
    equal = welch_t(5, 0, 10, 5, 0, 10)
    assert equal is not None and equal.p == 1.0
    certain = welch_t(5, 0, 10, 6, 0, 10)
    assert certain is not None and certain.p == 0.0 and certain.significant()
    assert welch_t(5, 1, 1, 6, 1, 10) is None  # one value: no variance


def test_summary_and_quantiles():
    values = [3, 1, 4, 1, 5, 9, 2, 6]
    s = Summary.of(values)
    assert (s.n, s.min, s.max) == (8, 1, 9)
    assert s.mean == pytest.approx(statistics.mean(values))
    assert s.variance == pytest.approx(statistics.variance(values))
    assert s.sd == pytest.approx(statistics.stdev(values))
    v = sorted(values)
    assert quantile(v, 0.0) == 1 and quantile(v, 1.0) == 9
    assert quantile(v, 0.5) == pytest.approx(statistics.median(values))
    assert quantile([1, 2, 3, 4, 5], 0.1) == pytest.approx(1.4)
    assert Summary().variance == 0.0
