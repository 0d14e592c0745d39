"""RMSprop (centered, momentum, weight decay, maximize) and Adagrad
(Note [optimizer updates])."""
from .. import _factories
from .adam import lerp_
from .optimizer import Optimizer, _closure_loss, _step_tensor, _use_grad

__all__ = ["RMSprop", "Adagrad"]


def _check(name, value):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name}: {value}")


class RMSprop(Optimizer):
    """Divide the gradient by a running root mean square of its recent values
    (``centered``: by the running variance); optional momentum.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True)
    >>> opt = cr.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 4)
    0.9
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _state(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = _step_tensor()
            state["square_avg"] = _factories.zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _factories.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = _factories.zeros_like(p)
        return state

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                self._update(p, grad, group, self._state(p, group))
        return loss

    def _update(self, p, grad, group, state):
        alpha = group["alpha"]
        if group["maximize"]:
            grad = -grad
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        if group["centered"]:
            grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)
            avg = square_avg.add(grad_avg * grad_avg, alpha=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(group["momentum"]).add_(grad / avg)
            p.add_(buf, alpha=-group["lr"])
        else:
            p.add_(grad / avg, alpha=-group["lr"])


class Adagrad(Optimizer):
    """Divide the gradient by the root of the sum of all its squares so far (learning
    rate decayed by ``lr_decay``).

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True)
    >>> opt = cr.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 4)
    0.9
    """

    _sparse_grads = True     # Note [sparse gradients over dense storage]

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value),
                            ("epsilon value", eps)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:      # torch creates the state up front
            for p in group["params"]:
                self.state[p]["step"] = _step_tensor()
                self.state[p]["sum"] = _factories.full_like(p, initial_accumulator_value)

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                self._update(p, grad, group, self.state[p])
        return loss

    def _update(self, p, grad, group, state):
        state["step"].add_(1)
        step = state["step"].item()
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state["sum"].add_(grad * grad)
        std = state["sum"].sqrt().add_(group["eps"])
        p.add_(grad / std, alpha=-clr)
