"""Lunar12: the 12-parameter heuristic LunarLander controller of Eriksson et al. (2019, TuRBO).

Dependencies: `pip install "gymnasium[box2d]" numpy`.

The objective (maximised) of x in [0, 1]^12 is the episode return of gymnasium's
`LunarLander-v3` (discrete actions) under the controller below with weights W = 2x, averaged
over the terrains `reset(seed=s)`, s = 0 … n_seeds − 1 (`rcagp.md` §5.5: 50 seeds, 0–49; the
RCaGP reference code runs an older copy of gym's lander whose `reset()` re-seeds with 0, so its
50 terrains are one; gymnasium's `reset(seed=s)` gives 50 different ones here). An episode ends
when the lander crashes, rests, leaves the screen, or at gymnasium's 1000-step time limit.

The controller is gym's hand-written `heuristic` with its 12 constants made parameters: an
angle target from the horizontal position and speed (clipped at ±W₂), a hover target from the
horizontal offset, two PD terms, a leg-contact override, and thresholds W₁₀ (main engine) and
W₁₁ (side engines).
"""
import numpy as np


def controller(s, w):
    """The action (0 none, 1 left, 2 main, 3 right engine) for state s and weights w."""
    angle_targ = np.clip(s[0] * w[0] + s[2] * w[1], -w[2], w[2])
    hover_targ = w[3] * abs(s[0])
    angle_todo = (angle_targ - s[4]) * w[4] - s[5] * w[5]
    hover_todo = (hover_targ - s[1]) * w[6] - s[3] * w[7]
    if s[6] or s[7]:
        angle_todo = w[8]
        hover_todo = -s[3] * w[9]
    if hover_todo > abs(angle_todo) and hover_todo > w[10]:
        return 2
    if angle_todo < -w[11]:
        return 3
    if angle_todo > w[11]:
        return 1
    return 0


def episode(x, seed, env):
    """Return of one episode on terrain `seed` with weights 2x."""
    w = 2.0 * np.asarray(x, dtype=float)
    s, _ = env.reset(seed=int(seed))
    total = 0.0
    while True:
        s, r, terminated, truncated, _ = env.step(controller(s, w))
        total += float(r)
        if terminated or truncated:
            return total


_ENV = None


def lunar12(x, n_seeds=50):
    """Mean return over terrains 0 … n_seeds − 1."""
    global _ENV
    if _ENV is None:
        import gymnasium

        _ENV = gymnasium.make("LunarLander-v3")
    return float(np.mean([episode(x, s, _ENV) for s in range(n_seeds)]))
