"""ASGD: averaged stochastic gradient descent (Note [optimizer updates])."""
from .. import _factories
from .optimizer import Optimizer, _closure_loss, _step_tensor, _use_grad

__all__ = ["ASGD"]

# torch's capturable (CUDA-graph) update runs only on these devices: on the CPU it
# raises, and so does chainrule's
_CAPTURABLE_DEVICES = ("cuda", "xpu", "hpu", "privateuseone", "xla")


class ASGD(Optimizer):
    """Averaged SGD: SGD whose step size ``eta`` decays as
    ``lr / (1 + lambd * lr * t) ** alpha``, with the parameter shrunk by
    ``1 - lambd * eta`` each step; from step ``t0`` on, ``state['ax']`` holds the
    running average of the iterates (before that it is the last iterate).

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0], requires_grad=True); opt = cr.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); round(w.item(), 5)
    0.79999
    >>> sorted(opt.state[w])
    ['ax', 'eta', 'mu', 'step']
    """

    _records_differentiable_step = True

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                if group["capturable"] and p.device.type not in _CAPTURABLE_DEVICES:
                    raise AssertionError("If capturable=True, params, mus, etas, and state_steps "
                                         "must be on supported devices: "
                                         f"{list(_CAPTURABLE_DEVICES)}.")
                state = self.state[p]
                if not state:
                    state["step"] = _step_tensor()
                    state["eta"] = _step_tensor().fill_(_number(group["lr"]))
                    state["mu"] = _step_tensor().fill_(1.0)
                    state["ax"] = _factories.zeros_like(p)
                update = self._update_foreach if group["foreach"] else self._update
                update(p, -grad if group["maximize"] else grad, group, state)
        return loss

    @staticmethod
    def _update(p, grad, group, state):
        lr, lambd = _scalar(group["lr"]), group["lambd"]
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        eta = state["eta"].item()          # float32-rounded, as torch reads it back
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        if state["mu"].item() != 1:
            state["ax"].add_(p.sub(state["ax"]).mul_(state["mu"]))
        else:
            state["ax"].copy_(p)
        step = state["step"].item()
        state["eta"].fill_(_number(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        state["mu"].fill_(1 / max(1, step - group["t0"]))

    @staticmethod
    def _update_foreach(p, grad, group, state):
        """torch's multi-tensor (``foreach=True``) update: the same step, rounded as
        ``p -= eta * (grad + weight_decay * p + lambd * p)``, the average always
        blended, and the next eta computed on the float32 step tensor."""
        lr, lambd = _scalar(group["lr"]), group["lambd"]
        state["step"].add_(1)
        direction = grad.add(p, alpha=group["weight_decay"]) if group["weight_decay"] else grad
        p.addcmul_(direction.add(p, alpha=lambd), state["eta"], value=-1)
        state["ax"].addcmul_(p.sub(state["ax"]), state["mu"])
        state["eta"].copy_(lr / ((1 + lambd * lr * state["step"]) ** group["alpha"]))
        state["mu"].fill_(1 / max(1, state["step"].item() - group["t0"]))


def _check_tensor_lr(lr):
    from .._tensor import Tensor
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def _scalar(value):
    """A learning rate as torch's updates use it (its ``_to_scalar``): a number stays
    one, a tensor becomes a 0-d tensor, so that what is computed from it is computed
    in the tensor's dtype, as in torch."""
    from .._tensor import Tensor
    return value.squeeze() if isinstance(value, Tensor) and value.dim() != 0 else value


def _number(value):
    """A step size for ``alpha=``: a 0-d tensor read as a Python number."""
    return value.item() if hasattr(value, "item") else value
