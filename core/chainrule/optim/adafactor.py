"""Adafactor: factored second moments (Note [optimizer updates])."""
from .. import _dtypes
from .._config import finfo
from .._factories import tensor as _tensor
from .asgd import _check_tensor_lr, _number, _scalar
from .optimizer import Optimizer, _closure_loss, _use_grad

__all__ = ["Adafactor"]


def _check_adafactor_args(lr, beta2_decay, eps, d, weight_decay):
    _check_tensor_lr(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not 0.0 >= beta2_decay:
        raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
    if eps[0] is not None and not 0.0 <= eps[0]:
        raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
    if not 0.0 <= eps[1]:
        raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
    if not 1.0 <= d:
        raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")


class Adafactor(Optimizer):
    """Adafactor: for a matrix (or a stack of them) the second moment is kept as a
    row factor ``state['row_var']`` and a column factor ``state['col_var']`` over the
    last two dimensions (a vector keeps ``state['variance']``); the decay
    ``1 - beta2`` is ``step ** beta2_decay``; the step is relative to the
    parameter's RMS (at least ``eps[1]``) times ``min(lr, 1/sqrt(step))``, and the
    update's RMS is clipped to ``d``. ``eps[0]`` (default: the dtype's eps) floors
    the variance estimate. ``weight_decay`` is decoupled: ``p *= 1 - lr * wd``.

    >>> import chainrule as cr
    >>> w = cr.ones(2, 3, requires_grad=True); opt = cr.optim.Adafactor([w])
    >>> (w * w).sum().backward(); opt.step()
    >>> sorted(opt.state[w]), tuple(opt.state[w]["row_var"].shape)
    (['col_var', 'row_var', 'step'], (2, 1))
    >>> round(w[0, 0].item(), 4)
    0.99
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        _check_adafactor_args(lr, beta2_decay, eps, d, weight_decay)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._real_params_with_grad(group):
                self._update(p, -grad if group["maximize"] else grad, group, self._state(p, grad))
        return loss

    def _state(self, p, grad):
        state = self.state[p]
        if not state:
            state["step"] = _tensor(0.0, dtype=_dtypes.float32)
            if grad.dim() > 1:
                shape = list(grad.shape)
                state["row_var"] = grad.new_zeros(shape[:-1] + [1])
                state["col_var"] = grad.new_zeros(shape[:-2] + [1, shape[-1]])
            else:
                state["variance"] = grad.new_zeros(grad.shape)
        return state

    @staticmethod
    def _update(p, grad, group, state):
        lr = _scalar(group["lr"])
        eps1, eps2 = group["eps"]
        eps1 = finfo(p.dtype).eps if eps1 is None else eps1
        state["step"].add_(1)
        step = state["step"].item()
        decay = step ** group["beta2_decay"]          # 1 - beta2 at this step
        alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * min(lr, 1 / step ** 0.5)
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        estimate = _variance_estimate(grad, state, decay, eps1)
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
        p.add_(update, alpha=_number(-alpha / denom))


def _variance_estimate(grad, state, decay, eps1):
    """The second-moment estimate after folding in ``grad``: the outer product of the
    row and column factors over the row factors' mean, or the plain variance."""
    from .adam import lerp_
    if grad.dim() <= 1:
        return lerp_(state["variance"], grad * grad, decay).clone()
    row_var, col_var = state["row_var"], state["col_var"]
    lerp_(row_var, grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)), decay)
    lerp_(col_var, grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)), decay)
    estimate = row_var @ col_var
    return estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
