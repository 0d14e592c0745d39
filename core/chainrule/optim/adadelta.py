"""Adadelta and Rprop (Note [optimizer updates])."""
from .. import _factories
from .optimizer import Optimizer, _closure_loss, _step_tensor, _use_grad

__all__ = ["Adadelta", "Rprop"]


class Adadelta(Optimizer):
    """Step by ``sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g`` (running averages with
    ``rho``), scaled by ``lr``.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True); opt = cr.optim.Adadelta([w])
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 5)
    0.99684
    """

    _records_differentiable_step = True

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("weight_decay value", weight_decay)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if not state:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _factories.zeros_like(p)
                    state["acc_delta"] = _factories.zeros_like(p)
                self._update(p, -grad if group["maximize"] else grad, group, state)
        return loss

    def _update(self, p, grad, group, state):
        rho, eps = group["rho"], group["eps"]
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
        p.add_(delta, alpha=-group["lr"])


class Rprop(Optimizer):
    """Resilient backpropagation: per-element step sizes grown by ``etas[1]`` while the
    gradient keeps its sign, shrunk by ``etas[0]`` when it flips; only signs are used.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True); opt = cr.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 4)
    0.9
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if not state:
                    state["step"] = _step_tensor()
                    state["prev"] = _factories.zeros_like(p)
                    state["step_size"] = _factories.full_like(grad, group["lr"])
                self._update(p, -grad if group["maximize"] else grad, group, state)
        return loss

    def _update(self, p, grad, group, state):
        eta_minus, eta_plus = group["etas"]
        low, high = group["step_sizes"]
        state["step"].add_(1)
        sign = (grad * state["prev"]).sign()
        step_size = state["step_size"]
        factor = _factories.ones_like(step_size).masked_fill(sign.gt(0), eta_plus)
        step_size.mul_(factor.masked_fill(sign.lt(0), eta_minus)).clamp_(low, high)
        grad = grad.masked_fill(sign.lt(0), 0)       # no step where the sign flipped
        p.add_(grad.sign() * step_size, alpha=-1)
        state["prev"].copy_(grad)
