"""An anytime-valid confidence sequence for the mean of a finite population of values in
[0, 1] drawn one at a time without replacement: the hedged capital process with
predictable plug-in bets.

A confidence sequence (CS) ``C_1, C_2, ...`` covers the mean at every ``t`` at once with
probability at least ``1 - alpha``, so a run may look after every draw and stop the moment
``C_t`` lies wholly on one side of a threshold; a fixed-n interval looked at that way
errs far more often than ``alpha``. Sources:

- I. Waudby-Smith and A. Ramdas (2020), "Confidence sequences for sampling without
  replacement", NeurIPS 33: with ``N`` values of mean ``m`` and ``S_{t-1}`` the sum of the
  first ``t - 1`` draws, the mean of the values not yet drawn is
  ``m_t = (N m - S_{t-1}) / (N - t + 1)``, and betting on ``X_t - m_t`` is fair under
  ``m``; ``S_t / N <= mean <= (S_t + N - t) / N`` holds whatever is left (the
  "logical" bounds).
- I. Waudby-Smith and A. Ramdas (2024), "Estimating means of bounded random variables by
  betting", JRSS-B 86(1):1-27 (arXiv:2010.09686): the hedged capital process
  ``K_t(m) = max(theta K_t^+(m), (1 - theta) K_t^-(m))`` with
  ``K_t^+(m) = prod_i (1 + l_i^+ (X_i - m_i))`` and ``K_t^-(m) = prod_i (1 - l_i^- (X_i - m_i))``,
  the predictable plug-in bet ``l_t = sqrt(2 log(1 / (alpha theta)) / (s2_{t-1} t log(1 + t)))``
  with ``mu_t = (1/2 + sum_{i<=t} X_i) / (t + 1)`` and
  ``s2_t = (1/4 + sum_{i<=t} (X_i - mu_i)^2) / (t + 1)``, truncated to
  ``l^+ <= c / m_t`` and ``l^- <= c / (1 - m_t)`` (``c = 1/2``) so the capital stays
  positive; by Ville's inequality ``C_t = {m : K_t(m) <= 1 / alpha}`` is a
  ``(1 - alpha)`` CS.
- confseq 0.0.11 (the authors' package), ``betting.hedged_cs(x, alpha, N, breaks=1000,
  running_intersection=True)``: the same process on the same grid of ``m`` (each bound
  widened by one grid step, intersected with the logical bounds and with every earlier
  ``C_s``); tests/test_sequential.py checks this module against its values. confseq is
  not a dependency: it needs Boost headers and numpy < 2 to build, and recomputes the
  whole sequence for each new draw.

With ``population=None`` the draws are i.i.d. (sampling with replacement, the JRSS-B
paper's setting): ``m_t = m`` and no logical bounds, the question a fixed-n interval
answers (the mean of the distribution the values come from, not of a finite list).

Here the state is updated once per draw (``O(grid)`` work, about 30 microseconds), and
``runs`` independent sequences update at once (the simulation tests).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["HedgedCS", "BREAKS", "METHOD", "METHOD_IID"]

BREAKS = 1000  # grid of candidate means: 0, 1/BREAKS, ..., 1 (confseq's default)
THETA = 0.5  # weight of the upward bet in the hedge (confseq's default)
TRUNCATION = 0.5  # c: a bet risks at most half the capital (confseq's default)
METHOD = "hedged capital, sampling without replacement (Waudby-Smith & Ramdas)"
METHOD_IID = "hedged capital, i.i.d. draws (Waudby-Smith & Ramdas)"


class HedgedCS:
    """The ``(1 - alpha)`` confidence sequence of the mean of ``population`` values in
    [0, 1] drawn without replacement (see the module docstring for the formulas).

    Attributes:
        population: N, the number of values (>= 1); None: i.i.d. draws (with replacement),
            as many as wanted.
        alpha: the error level, in (0, 1).
        t: draws so far.
        low, high: shape ``(runs,)``: the bounds after ``t`` draws (0 and 1 before any),
            each the running intersection, so ``low`` never falls and ``high`` never rises.
        total: shape ``(runs,)``: the sum of the draws.
    """

    def __init__(
        self, population: int | None, alpha: float = 0.05, runs: int = 1, breaks: int = BREAKS
    ) -> None:
        if (
            (population is not None and population < 1)
            or not 0 < alpha < 1
            or runs < 1
            or breaks < 1
        ):
            raise ValueError(
                f"HedgedCS needs population >= 1, 0 < alpha < 1, runs >= 1, breaks >= 1; got "
                f"{population}, {alpha}, {runs}, {breaks}"
            )
        self.population, self.alpha, self.t = population, alpha, 0
        self._grid = np.arange(0, 1 + 1 / breaks, step=1 / breaks)  # confseq's grid
        self._step = 1 / breaks
        self._log_threshold = math.log(1 / alpha)
        self._bet_scale = 2 * math.log(1 / (alpha * THETA))
        shape = (runs, self._grid.size)
        self._log_up = np.zeros(shape)  # log K^+(m)
        self._log_down = np.zeros(shape)  # log K^-(m)
        self._possible = np.ones(shape, dtype=bool)  # m_t(m) stayed within [0, 1]
        self.total = np.zeros(runs)
        self._plugin_sum = np.zeros(runs)  # sum of X_i (the plug-in mean's, uncapped)
        self._square_sum = np.zeros(runs)  # sum of (X_i - mu_i)^2
        self._variance = np.full(runs, 0.25)  # s2_{t-1}: 1/4 before any draw
        self.low = np.zeros(runs)
        self.high = np.ones(runs)

    def update(self, x: ArrayLike) -> None:
        """Add the next draw of each run.

        Args:
            x: shape ``(runs,)`` (or a float for one run), each in [0, 1].

        Raises:
            ValueError: a value outside [0, 1], or more draws than the population.
        """
        x = np.broadcast_to(np.asarray(x, dtype=float), self.total.shape)
        if not np.all((x >= 0) & (x <= 1)):
            raise ValueError(f"HedgedCS takes values in [0, 1], got {x[(x < 0) | (x > 1)][0]}")
        if self.population is not None and self.t >= self.population:
            raise ValueError(f"HedgedCS: all {self.population} values were drawn already")
        self.t += 1
        t, n = self.t, self.population
        bet = np.sqrt(self._bet_scale / (self._variance * t * math.log(1 + t)))[:, None]
        if n is None:  # i.i.d.: every draw has mean m
            remaining = np.repeat(self._grid[None, :], x.size, axis=0)
        else:  # the mean of the values not yet drawn if the population's mean were m
            remaining = (n * self._grid[None, :] - self.total[:, None]) / (n - t + 1)
        self._possible &= remaining >= 0
        self._possible &= remaining <= 1
        np.clip(remaining, 0.0, 1.0, out=remaining)
        gain = x[:, None] - remaining
        with np.errstate(divide="ignore"):
            bets = np.divide(TRUNCATION, remaining)  # l^+ <= c / m_t
            np.minimum(bets, bet, out=bets)
            bets *= gain
            self._log_up += np.log1p(bets, out=bets)
            np.subtract(1.0, remaining, out=remaining)
            bets = np.divide(TRUNCATION, remaining, out=remaining)  # l^- <= c / (1 - m_t)
            np.minimum(bets, bet, out=bets)
            bets *= gain
            self._log_down += np.log1p(np.negative(bets, out=bets), out=bets)
        self._plugin(x)
        # K = max(theta K^+, (1 - theta) K^-) <= 1 / alpha, side by side in logs
        inside = self._log_up <= self._log_threshold - math.log(THETA)
        inside &= self._log_down <= self._log_threshold - math.log(1 - THETA)
        inside &= self._possible
        self._narrow(inside)

    def _plugin(self, x: np.ndarray) -> None:
        """The plug-in mean and variance after this draw (the next bet's ``s2_{t-1}``)."""
        t = self.t
        self.total += x
        self._plugin_sum += x
        mean = np.minimum((0.5 + self._plugin_sum) / (t + 1), 1.0)
        self._square_sum += (x - mean) ** 2
        self._variance = (0.25 + self._square_sum) / (t + 1)

    def _narrow(self, inside: np.ndarray) -> None:
        """This draw's interval (the grid points not rejected, widened by a step; [0, 1]
        when none is left), cut to the logical bounds and to every earlier interval."""
        any_inside = inside.any(axis=1)
        first = np.argmax(inside, axis=1)
        last = inside.shape[1] - 1 - np.argmax(inside[:, ::-1], axis=1)
        low = np.where(any_inside, np.maximum(0.0, self._grid[first] - self._step), 0.0)
        high = np.where(any_inside, np.minimum(1.0, self._grid[last] + self._step), 1.0)
        n = self.population
        if n is not None:
            low = np.maximum(low, self.total / n)
            high = np.minimum(high, 1 - (self.t - self.total) / n)
        self.low = np.maximum(self.low, low)
        self.high = np.minimum(self.high, high)
