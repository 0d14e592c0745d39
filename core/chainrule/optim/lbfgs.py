"""L-BFGS with an optional strong-Wolfe line search (torch's algorithm: the two-loop
recursion over the last ``history_size`` curvature pairs, and a bracketing
line search with cubic interpolation).

The direction arithmetic runs on flat ndarrays of the parameters' dtype (no graph is
ever needed there); the parameters themselves change by in-place tensor ops under
no_grad (Note [optimizer updates]).
"""
import numpy as np

from .._grad_mode import enable_grad
from .._tensor import Tensor
from .optimizer import Optimizer, _use_grad

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to
    ``bounds`` (default: the interval); the midpoint if the cubic has none."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square ** 0.5
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, low), high)


class _Point:
    """One trial of the line search: step t, loss f, flat gradient g, slope gtd."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _bracket_phase(obj_func, f, gtd, t, d, first, c1, c2, max_ls):
    """Grow the step until an interval that holds a strong-Wolfe point is bracketed
    (or the point itself is found). Returns (bracket, done, ls_iter, evals)."""
    prev = first
    new = _Point(t, *obj_func(t))
    evals, ls_iter = 1, 0
    while ls_iter < max_ls:
        if new.f > f + c1 * new.t * gtd or (ls_iter > 1 and new.f >= prev.f):
            return [prev, new], False, ls_iter, evals
        if abs(new.gtd) <= -c2 * gtd:
            return [new], True, ls_iter, evals
        if new.gtd >= 0:
            return [prev, new], False, ls_iter, evals
        bounds = (new.t + 0.01 * (new.t - prev.t), new.t * 10)
        t = _cubic_interpolate(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd, bounds)
        prev, new = new, _Point(t, *obj_func(t))
        evals += 1
        ls_iter += 1
    return [first, new], False, ls_iter, evals


def _safeguard(t, bracket_t, insuf_progress):
    """Keep the trial away from the interval's ends (torch's rule); returns (t,
    insuf_progress)."""
    high, low = max(bracket_t), min(bracket_t)
    eps = 0.1 * (high - low)
    if min(high - t, t - low) >= eps:
        return t, False
    if insuf_progress or t >= high or t <= low:
        t = high - eps if abs(t - high) < abs(t - low) else low + eps
        return t, False
    return t, True


def _strong_wolfe(obj_func, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step t satisfying the strong Wolfe conditions along d; returns (f_new,
    g_new, t, evaluations). ``obj_func(t)`` gives (loss, flat grad, slope)."""
    d_norm = np.abs(d).max()
    bracket, done, ls_iter, evals = _bracket_phase(obj_func, f, gtd, t, d,
                                                   _Point(0, f, g.copy(), gtd), c1, c2, max_ls)
    if done:
        return bracket[0].f, bracket[0].g, bracket[0].t, evals
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    insuf_progress = False
    while not done and ls_iter < max_ls:
        if abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change:
            break
        a, b = bracket
        t = _cubic_interpolate(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        t, insuf_progress = _safeguard(t, (a.t, b.t), insuf_progress)
        new = _Point(t, *obj_func(t))
        evals += 1
        ls_iter += 1
        if new.f > f + c1 * t * gtd or new.f >= bracket[low].f:
            bracket[high] = new
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
            continue
        if abs(new.gtd) <= -c2 * gtd:
            done = True
        elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """Limited-memory BFGS. ``step(closure)`` runs up to ``max_iter`` iterations, each
    re-evaluating ``closure`` (which clears the gradients, computes the loss, calls
    backward and returns the loss); ``line_search_fn='strong_wolfe'`` picks each
    step by line search. One parameter group only.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.5, -0.5], dtype=cr.float64, requires_grad=True)
    >>> opt = cr.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    ...     loss.backward()
    ...     return loss
    >>> for _ in range(5):
    ...     _ = opt.step(closure)
    >>> [round(v, 4) for v in x.tolist()]
    [1.0, 1.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- flat views of the parameters ------------------------------------------------------
    def _gather_flat_grad(self):
        parts = [np.zeros(p.numel(), p._data.dtype) if p.grad is None
                 else p.grad._data.reshape(-1) for p in self._params]
        return np.concatenate(parts)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            chunk = Tensor._wrap(update[offset:offset + n].reshape(p._data.shape))
            p.add_(chunk.to(p.dtype), alpha=step_size)
            offset += n

    def _clone_param(self):
        return [p.clone() for p in self._params]

    def _set_param(self, values):
        for p, value in zip(self._params, values):
            p.copy_(value)

    def _evaluate(self, closure):
        with enable_grad():
            loss = float(closure())
        return loss, self._gather_flat_grad()

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss, flat_grad = self._evaluate(closure)
        self._set_param(x)
        return loss, flat_grad, float(flat_grad.dot(d))

    # -- the algorithm -----------------------------------------------------------------
    def _direction(self, state, flat_grad, history_size):
        """The L-BFGS direction: -H g by the two-loop recursion, after adding the
        newest curvature pair (when it has positive curvature)."""
        if state["n_iter"] == 1:
            state.update(old_dirs=[], old_stps=[], ro=[], H_diag=1)
            return -flat_grad
        y = flat_grad - state["prev_flat_grad"]
        s = state["d"] * state["t"]
        ys = float(y.dot(s))
        if ys > 1e-10:
            if len(state["old_dirs"]) == history_size:
                for key in ("old_dirs", "old_stps", "ro"):
                    state[key].pop(0)
            state["old_dirs"].append(y)
            state["old_stps"].append(s)
            state["ro"].append(1.0 / ys)
            state["H_diag"] = ys / float(y.dot(y))
        dirs, stps, ro = state["old_dirs"], state["old_stps"], state["ro"]
        al = [0.0] * len(dirs)
        q = -flat_grad
        for i in range(len(dirs) - 1, -1, -1):
            al[i] = float(stps[i].dot(q)) * ro[i]
            q = q - al[i] * dirs[i]
        r = q * state["H_diag"]
        for i in range(len(dirs)):
            be_i = float(dirs[i].dot(r)) * ro[i]
            r = r + (al[i] - be_i) * stps[i]
        return r

    def _line_step(self, closure, group, state, loss, flat_grad, gtd):
        """Move along state['d'] by state['t'] (line search or fixed); returns (loss,
        flat_grad, evaluations)."""
        t, d = state["t"], state["d"]
        if group["line_search_fn"] is None:
            self._add_grad(t, d)
            if state["iter_in_step"] == group["max_iter"]:
                return loss, flat_grad, 0
            loss, flat_grad = self._evaluate(closure)
            return loss, flat_grad, 1
        if group["line_search_fn"] != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")
        x_init = self._clone_param()
        loss, flat_grad, t, evals = _strong_wolfe(
            lambda step: self._directional_evaluate(closure, x_init, step, d),
            t, d, loss, flat_grad, gtd)
        state["t"] = t
        self._add_grad(t, d)
        return loss, flat_grad, evals

    @_use_grad
    def step(self, closure):
        """Up to ``max_iter`` L-BFGS iterations; returns the loss of the first
        ``closure()`` evaluation."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure")
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss, flat_grad = float(orig_loss), self._gather_flat_grad()
        state["func_evals"] += 1
        if np.abs(flat_grad).max() <= group["tolerance_grad"]:
            return orig_loss
        self._iterate(closure, group, state, loss, flat_grad)
        return orig_loss

    def _iterate(self, closure, group, state, loss, flat_grad):
        evals, state["iter_in_step"] = 1, 0
        tol_change = group["tolerance_change"]
        while state["iter_in_step"] < group["max_iter"]:
            state["iter_in_step"] += 1
            state["n_iter"] += 1
            state["d"] = self._direction(state, flat_grad, group["history_size"])
            state["prev_flat_grad"], prev_loss = flat_grad.copy(), loss
            state["t"] = (min(1.0, 1.0 / np.abs(flat_grad).sum()) * group["lr"]
                          if state["n_iter"] == 1 else group["lr"])
            gtd = float(flat_grad.dot(state["d"]))
            if gtd > -tol_change:
                break
            loss, flat_grad, ls_evals = self._line_step(closure, group, state, loss, flat_grad, gtd)
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (state["iter_in_step"] == group["max_iter"] or evals >= group["max_eval"]
                    or np.abs(flat_grad).max() <= group["tolerance_grad"]
                    or np.abs(state["d"] * state["t"]).max() <= tol_change
                    or abs(loss - prev_loss) < tol_change):
                break
