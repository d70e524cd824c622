"""stats.py -- the confidence intervals of the conformance tables (95 %):
Wilson's interval for a proportion, Student's t for a mean, and the
distribution-free interval of a quantile from order statistics."""

import math

# Two-sided 97.5 % points of Student's t, by degrees of freedom (1..30).
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
Z = 1.959964


def t975(df):
    return _T975[df - 1] if 1 <= df <= len(_T975) else Z


def wilson(k, n):
    """(low, high) of a proportion k/n; (0, 1) when n is 0."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / d
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def mean_ci(xs):
    """(mean, low, high); the interval is None with fewer than 2 values."""
    n = len(xs)
    if n == 0:
        return (None, None, None)
    m = sum(xs) / n
    if n < 2:
        return (m, None, None)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    h = t975(n - 1) * sd / math.sqrt(n)
    return (m, m - h, m + h)


def quantile(xs, q):
    s = sorted(xs)
    if not s:
        return None
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def quantile_ci(xs, q):
    """(value, low, high) of quantile q: the order statistics whose ranks
    bound q's with 95 % confidence (normal approximation of the binomial);
    a bound that falls outside the sample is None."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return (None, None, None)
    h = Z * math.sqrt(n * q * (1 - q))
    lo = math.floor(n * q - h)
    hi = math.ceil(n * q + h)
    return (quantile(s, q), s[lo - 1] if lo >= 1 else None, s[hi - 1] if hi <= n else None)
