"""Threshold comparisons that float noise cannot flip.

A figure computed from counts can land a hair beside a threshold it equals exactly
(4/20 - 3/20 = 0.05000000000000002). Every threshold check in metrics/ compares with
this absolute tolerance, so "<= 0.05" holds for that SPD, and a spread of exactly 0.2 is
not above 0.2. 1e-9 is far below any figure's meaningful digits (rates of up to 10^8
answers) and far above double rounding noise (~1e-16 relative).
"""
from __future__ import annotations

TOLERANCE = 1e-9


def above(value: float, limit: float, tol: float = TOLERANCE) -> bool:
    """value > limit by more than the tolerance."""
    return value > limit + tol


def at_most(value: float, limit: float, tol: float = TOLERANCE) -> bool:
    """value <= limit, within the tolerance."""
    return not above(value, limit, tol)


def at_least(value: float, limit: float, tol: float = TOLERANCE) -> bool:
    """value >= limit, within the tolerance."""
    return value >= limit - tol
