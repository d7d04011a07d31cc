"""Pareto tools as small array functions (paper §3.2, §4.2; SPEC §6).

All functions accept leading batch dimensions: means are ``[..., K, D]``.
Dominance is strict in every coordinate.
"""

from __future__ import annotations

import math

import numpy as np

#: Tie tolerances of the elimination rule (Appendix A).
TIE_RTOL = 1e-10
TIE_ATOL = 1e-12


def margin_min(mu: np.ndarray) -> np.ndarray:
    """Pairwise margin ``m(i, j) = min_d (mu_j^(d) - mu_i^(d))`` (paper §3.2), ``[..., K, K]``.

    ``M(i, j) = max_d (mu_i^(d) - mu_j^(d))`` equals ``-m(i, j)`` exactly.
    """
    out = mu[..., None, :, 0] - mu[..., :, None, 0]  # [..., i, j] = mu_j - mu_i, objective 0
    for d in range(1, mu.shape[-1]):
        np.minimum(out, mu[..., None, :, d] - mu[..., :, None, d], out=out)
    return out


def pareto_mask(mu: np.ndarray) -> np.ndarray:
    """Pareto set ``P*``: arms strictly dominated by no arm (paper §3.2), bool ``[..., K]``."""
    return np.asarray(~(margin_min(mu) > 0).any(axis=-1))


def classification_gaps(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gaps of paper eq. (1) within the arm set ``mu`` ``[..., K, D]``.

    Returns ``(delta_minus, delta_plus, gamma, dominated)``, each ``[..., K]``:

    * ``Delta-_i = max_{j != i} m(i, j)`` (dominatedness gap);
    * ``Delta+_i = min_{j != i} [M(i, j) ^ (M(j, i)^+ + (Delta-_j)^+)]``
      (nondominatedness gap);
    * ``gamma_i = Delta-_i`` if ``i`` is dominated (``Delta-_i > 0``), else ``Delta+_i``.
    """
    m = margin_min(mu)
    k = m.shape[-1]
    diag = np.arange(k)
    m[..., diag, diag] = -np.inf  # exclude j = i
    delta_minus = m.max(axis=-1)
    dominated = delta_minus > 0
    m[..., diag, diag] = 0.0
    term = np.negative(np.swapaxes(m, -1, -2))  # [i, j] = M(j, i) = -m(j, i)
    np.maximum(term, 0.0, out=term)
    term += np.maximum(delta_minus, 0.0)[..., None, :]  # M(j, i)^+ + (Delta-_j)^+
    np.negative(m, out=m)  # M(i, j) = -m(i, j)
    np.minimum(term, m, out=term)
    term[..., diag, diag] = np.inf
    delta_plus = term.min(axis=-1)
    gamma = np.where(dominated, delta_minus, delta_plus)
    return delta_minus, delta_plus, gamma, dominated


def removal_choice(gamma: np.ndarray, dominated: np.ndarray) -> np.ndarray:
    """Arm removed in a phase (Algorithm 2, line 15), ``[...]`` positions.

    ``argmax gamma``; near-ties (``|g - max| <= atol + rtol |max|``) go first to an
    empirically dominated arm, then to the lowest position.
    """
    top = gamma.max(axis=-1, keepdims=True)
    tied = np.abs(gamma - top) <= TIE_ATOL + TIE_RTOL * np.abs(top)
    tied_dominated = tied & dominated
    use_dominated = tied_dominated.any(axis=-1, keepdims=True)
    return np.where(use_dominated, tied_dominated, tied).argmax(axis=-1)


def complexity(gamma: np.ndarray, costs: np.ndarray) -> float:
    """Cost-aware complexity ``H_{mu,c} = max_A C(A) / gamma_(|A|)^2`` (paper §3.2).

    For each size k the maximum is attained by the k most expensive arms.
    Returns ``inf`` if a gap is zero.
    """
    g = np.sort(np.asarray(gamma, dtype=float))
    c = np.sort(np.asarray(costs, dtype=float))[::-1].cumsum()
    with np.errstate(divide="ignore"):
        return float(np.max(c / g**2))


def harmonic_l(k: int, lam: float) -> float:
    """``L_{K,lambda} = 1 + sum_{l=2}^{K} 1 / (1 + (l - 1) lambda)`` (Algorithm 2, line 3)."""
    return 1.0 + sum(1.0 / (1.0 + (ell - 1) * lam) for ell in range(2, k + 1))


def theorem2_bound(budget: float, k: int, d: int, l_k: float, h: float) -> float:
    """Theorem 2: ``P(error) <= 2 K^2 D exp(-B / (256 L H))`` (normalised budget)."""
    return min(1.0, 2.0 * k * k * d * math.exp(-budget / (256.0 * l_k * h)))


def theorem2_min_budget(l_k: float, h: float) -> float:
    """Smallest normalised budget with Theorem 2's condition ``B >= 2 L H``."""
    return 2.0 * l_k * h


def hypervolume(points: np.ndarray, reference: np.ndarray | None = None) -> float:
    """Hypervolume dominated by the points ``[n, D]`` (maximisation) over ``reference`` (default 0).

    Paper §3.1 defines the hypervolume with the reference point 0; a single point gives
    ``prod_d mu^(d)``. Points not strictly above the reference in every objective add
    nothing. One objective: the largest gain; two: an exact sweep; three or more: moocore.
    """
    pts = np.asarray(points, dtype=float)
    ref = np.zeros(pts.shape[-1]) if reference is None else np.asarray(reference, dtype=float)
    pts = pts[(pts > ref).all(axis=-1)]
    if len(pts) == 0:
        return 0.0
    if pts.shape[-1] == 1:
        return float(pts.max() - ref[0])
    if pts.shape[-1] == 2:
        order = np.argsort(-pts[:, 0], kind="stable")  # sweep from the largest first objective down
        x = pts[order, 0]
        height = np.maximum.accumulate(pts[order, 1]) - ref[1]
        width = x - np.append(x[1:], ref[0])
        return float(np.sum(width * height))
    import moocore  # deferred: only three or more objectives need it

    return float(moocore.hypervolume(-pts, ref=-ref))  # moocore minimises
