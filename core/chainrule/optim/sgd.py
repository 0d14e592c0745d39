"""Stochastic gradient descent with momentum, dampening, Nesterov momentum, weight
decay and maximize (Note [optimizer updates])."""
from .optimizer import Optimizer, _closure_loss, _use_grad

__all__ = ["SGD"]


def _check_nonneg(name, value):
    if value < 0.0:
        raise ValueError(f"Invalid {name} value: {value}")


class SGD(Optimizer):
    """``p -= lr * g`` where g is the gradient (plus ``weight_decay * p``), or its
    momentum buffer ``b = momentum * b + (1 - dampening) * g`` (Nesterov: ``g +
    momentum * b``); ``maximize`` ascends.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = cr.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.46, -0.92]
    """

    _sparse_grads = True     # Note [sparse gradients over dense storage]

    _records_differentiable_step = True

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if isinstance(lr, float) or isinstance(lr, int):
            _check_nonneg("learning rate", lr)
        _check_nonneg("momentum", momentum)
        _check_nonneg("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                self._update(p, grad, group)
        return loss

    def _update(self, p, grad, group):
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.clone().detach()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-group["lr"])
