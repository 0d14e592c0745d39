"""Adam and AdamW (decoupled weight decay), with AMSGrad and maximize
(Note [optimizer updates])."""
from .. import _factories
from .optimizer import Optimizer, _closure_loss, _step_tensor, _use_grad

__all__ = ["Adam", "AdamW"]


def _check_adam_args(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def lerp_(start, end, weight):
    """``start += weight * (end - start)`` in place, rounded as torch's lerp kernel
    (from the nearer end)."""
    if weight < 0.5:
        return start.add_(end - start, alpha=weight)
    return start.copy_(end - (end - start) * (1 - weight))


class Adam(Optimizer):
    """Adam: moving averages of the gradient and its square, bias-corrected;
    ``amsgrad`` keeps the maximum of the second moment; ``weight_decay`` adds
    ``weight_decay * p`` to the gradient (``decoupled_weight_decay=True``: AdamW).

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = cr.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -1.9]
    """

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay
                                      or self._decoupled))

    def _state(self, p, amsgrad):
        state = self.state[p]
        if not state:
            state["step"] = _step_tensor()
            state["exp_avg"] = _factories.zeros_like(p)
            state["exp_avg_sq"] = _factories.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _factories.zeros_like(p)
        return state

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                self._update(p, grad, group, self._state(p, group["amsgrad"]))
        return loss

    def _update(self, p, grad, group, state):
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        state["step"].add_(1)
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_(grad * grad.conj(), alpha=1 - beta2)
        step = state["step"].item()
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        second = exp_avg_sq
        if group["amsgrad"]:
            second = state["max_exp_avg_sq"]
            second.copy_(second.maximum(exp_avg_sq))
        denom = (second.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        p.add_(exp_avg / denom, alpha=-lr / (1 - beta1 ** step))


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before the
    Adam update (default weight_decay 0.01).

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True)
    >>> opt = cr.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 4)
    0.85
    """

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)
