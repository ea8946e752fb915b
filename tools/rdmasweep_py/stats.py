"""Significance of a difference between two sets of runs (compare, vs-perftest).

scipy (python3-scipy) is imported only when a p-value is asked for: a tool that can do
without one (vs-perftest prints its medians) checks `have_scipy()` first."""

import importlib.util
import math


def have_scipy():
    return importlib.util.find_spec("scipy") is not None


def mann_whitney(a, b):
    """Two-sided p-value of the Mann-Whitney U test for samples a and b, as Google
    Benchmark's tools/gbench/report.py computes it: scipy's default method (exact
    for small samples without ties, else the normal approximation with continuity
    correction)."""
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return 1.0 if math.isnan(p) else p


def min_attainable_p(n1, n2):
    """The smallest two-sided exact p-value that n1 vs n2 samples can give."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))
