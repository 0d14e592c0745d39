"""Muon: momentum SGD whose update is orthogonalized by a Newton-Schulz iteration
(Note [optimizer updates])."""
import math

from .. import _dtypes
from .asgd import _check_tensor_lr, _number, _scalar
from .optimizer import Optimizer, _closure_loss, _use_grad

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _check_muon_args(lr, weight_decay, momentum, adjust_lr_fn):
    _check_tensor_lr(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not 0.0 <= momentum:
        raise ValueError(f"momentum should be >= 0 but is: {momentum}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
    if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
        raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")


class Muon(Optimizer):
    """Muon, for 2-D parameters (hidden layers' weights; give biases and embeddings
    to e.g. AdamW): a momentum buffer (Nesterov by default), whose update is
    replaced by an approximately orthogonal matrix (``ns_steps`` quintic
    Newton-Schulz iterations with ``ns_coefficients``, in bfloat16 as torch), scaled
    by ``lr * sqrt(max(1, rows/cols))`` (``adjust_lr_fn='original'``, the default) or
    ``lr * 0.2 * sqrt(max(rows, cols))`` (``'match_rms_adamw'``); ``weight_decay``
    is decoupled.

    >>> import chainrule as cr
    >>> w = cr.eye(2, requires_grad=True); opt = cr.optim.Muon([w], lr=0.1, weight_decay=0)
    >>> (w * cr.tensor([[1.0, 0.0], [0.0, 2.0]])).sum().backward(); opt.step()
    >>> [[round(v, 2) for v in row] for row in w.tolist()]
    [[0.89, 0.0], [0.0, 0.93]]
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        _check_muon_args(lr, weight_decay, momentum, adjust_lr_fn)
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients,
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @_use_grad
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._real_params_with_grad(group):
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = grad.new_zeros(grad.shape)
                self._update(p, grad, group, state["momentum_buffer"])
        return loss

    @staticmethod
    def _update(p, grad, group, buf):
        from .adam import lerp_
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        lr, momentum = _scalar(group["lr"]), group["momentum"]
        lerp_(buf, grad, 1 - momentum)
        update = lerp_(grad.clone(), buf, momentum) if group["nesterov"] else buf
        update = _orthogonalize(update, group["ns_coefficients"], group["ns_steps"],
                                group["eps"])
        p.mul_(1 - lr * group["weight_decay"])
        # cast first: the bfloat16 update is scaled in the parameter's precision
        p.add_(update.to(p.dtype), alpha=_number(-_adjust_lr(lr, group["adjust_lr_fn"], p.shape)))


def _orthogonalize(grad, ns_coefficients, ns_steps, eps):
    """The quintic Newton-Schulz iteration towards ``U V^T`` of ``grad = U S V^T``,
    in bfloat16: every product is formed in float32 and rounded to bfloat16, which
    is what torch's bfloat16 kernels do on the CPU."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = _bf16(grad.T if tall else grad)
    norm = _bf16(_bf16(x.float().norm()).float().clamp(min=eps))
    x = _bf16(x.float() / norm.float())
    for _ in range(ns_steps):
        gram = _bf16(x.float() @ x.float().T).float()
        poly = _bf16(gram * b + (gram @ gram) * c).float()
        x = _bf16(x.float() * a + poly @ x.float())
    return x.T if tall else x


def _bf16(t):
    return t.to(_dtypes.bfloat16)


def _adjust_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr
