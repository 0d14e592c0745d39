"""The Adam family beyond Adam/AdamW: Adamax (infinity norm), NAdam (Nesterov
momentum), RAdam (rectified variance) (Note [optimizer updates])."""
import math

from .. import _dtypes, _factories
from .adam import _check_adam_args, lerp_
from .optimizer import Optimizer, _closure_loss, _step_tensor, _use_grad

__all__ = ["Adamax", "NAdam", "RAdam"]


class _AdamLike(Optimizer):
    """Shared construction, state and step loop; subclasses give ``_update``."""

    def _state(self, p):
        state = self.state[p]
        if not state:
            state["step"] = _step_tensor()
            for key in self._moments:
                state[key] = _factories.zeros_like(p)
            if "mu_product" in self._scalars:
                state["mu_product"] = _factories.tensor(1.0, dtype=_dtypes.float32)
        return state

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                if group["maximize"]:
                    grad = -grad
                state = self._state(p)
                state["step"].add_(1)
                self._update(p, grad, group, state, state["step"].item())
        return loss

    @staticmethod
    def _decay(p, grad, group):
        """Weight decay: coupled (added to the gradient) or decoupled (AdamW's)."""
        lr, wd = group["lr"], group["weight_decay"]
        if wd == 0:
            return grad
        if group.get("decoupled_weight_decay", False):
            p.mul_(1 - lr * wd)
            return grad
        return grad.add(p, alpha=wd)


class Adamax(_AdamLike):
    """Adam with the infinity norm: ``u = max(beta2 * u, |g| + eps)``, ``p -= lr /
    (1 - beta1^t) * m / u``.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True); opt = cr.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 4)
    0.9
    """

    _moments, _scalars = ("exp_avg", "exp_inf"), ()

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, grad, group, state, step):
        beta1, beta2 = group["betas"]
        grad = self._decay(p, grad, group)
        lerp_(state["exp_avg"], grad, 1 - beta1)
        exp_inf = state["exp_inf"]
        exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(group["eps"])))
        p.add_(state["exp_avg"] / exp_inf, alpha=-group["lr"] / (1 - beta1 ** step))


class NAdam(_AdamLike):
    """Adam with Nesterov momentum and torch's momentum-decay schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))``.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True); opt = cr.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 3)
    0.894
    """

    _moments, _scalars = ("exp_avg", "exp_avg_sq"), ("mu_product",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, p, grad, group, state, step):
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["momentum_decay"]
        grad = self._decay(p, grad, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        state["mu_product"].mul_(mu)                 # a float32 scalar, as torch keeps it
        mu_product = state["mu_product"].item()
        lerp_(state["exp_avg"], grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).add_(grad * grad, alpha=1 - beta2)
        denom = (state["exp_avg_sq"] / (1 - beta2 ** step)).sqrt().add_(group["eps"])
        p.add_(grad / denom, alpha=-lr * (1.0 - mu) / (1.0 - mu_product))
        p.add_(state["exp_avg"] / denom, alpha=-lr * mu_next / (1.0 - mu_product * mu_next))


class RAdam(_AdamLike):
    """Rectified Adam: plain momentum SGD while the variance estimate is unreliable
    (rho_t <= 5), then Adam with the variance rectification term.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True); opt = cr.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 4)
    0.8
    """

    _records_differentiable_step = True

    _moments, _scalars = ("exp_avg", "exp_avg_sq"), ()

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, p, grad, group, state, step):
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        grad = self._decay(p, grad, group)
        lerp_(state["exp_avg"], grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).add_(grad * grad, alpha=1 - beta2)
        corrected = state["exp_avg"] / (1 - beta1 ** step)
        correction2 = 1 - beta2 ** step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / correction2
        if rho_t <= 5.0:
            p.add_(corrected * lr, alpha=-1.0)
            return
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = math.sqrt(correction2) / state["exp_avg_sq"].sqrt().add_(group["eps"])
        p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
