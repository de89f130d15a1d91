"""Logistic regression by Newton's method with an L2 penalty on the weights (not the bias): the reader's
calibration (``fit_levels.py``). Written here rather than taken from scikit-learn: a dozen lines of numpy, and the
training environment needs nothing more."""

from __future__ import annotations

import numpy as np

L2 = 1e-3


def fit(x: np.ndarray, y: np.ndarray, iters: int = 50, l2: float = L2) -> tuple[np.ndarray, float]:
    """(weights, bias) of the logistic model of ``y`` (0/1) on the rows of ``x``."""
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    reg = np.full(a.shape[1], l2 * len(x))
    reg[-1] = 1e-9  # the bias: all but unpenalised (a tiny ridge keeps a one-class sample solvable)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + reg * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])
