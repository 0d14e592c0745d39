"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_`` (in place, on
``.grad``, outside the graph)."""
import math
import warnings

from ... import _factories
from ..._grad_mode import no_grad
from ..._ops import FUNCTIONS
from ..._tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _total_norm(grads, norm_type):
    if norm_type == math.inf:
        norms = [g.detach().abs().max() for g in grads]
        return norms[0] if len(norms) == 1 else FUNCTIONS["stack"](norms).max()
    norms = [FUNCTIONS["norm"](g.detach(), norm_type) for g in grads]
    return FUNCTIONS["norm"](FUNCTIONS["stack"](norms), norm_type)


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type`` norm of all ``tensors`` together (as if concatenated).

    >>> import chainrule as cr
    >>> cr.nn.utils.get_total_norm([cr.tensor([3.0]), cr.tensor([4.0])])
    tensor(5.)
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _factories.tensor(0.0)
    total = _total_norm(tensors, norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` by ``max_norm / total_norm`` (at most 1), a
    ``total_norm`` computed beforehand (``get_total_norm``).

    >>> import chainrule as cr
    >>> p = cr.nn.Parameter(cr.zeros(2)); p.grad = cr.tensor([3.0, 4.0])
    >>> cr.nn.utils.clip_grads_with_norm_([p], 1.0, cr.tensor(5.0))
    >>> [round(v, 4) for v in p.grad.tolist()]
    [0.6, 0.8]
    """
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in _grads(parameters):
        g.mul_(coef.to(g.dtype))


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients of ``parameters`` so that their joint ``norm_type`` norm
    is at most ``max_norm``; returns the norm before clipping.

    >>> import chainrule as cr
    >>> p = cr.nn.Parameter(cr.zeros(2)); p.grad = cr.tensor([3.0, 4.0])
    >>> cr.nn.utils.clip_grad_norm_([p], max_norm=1.0).item(), [round(v, 4) for v in p.grad.tolist()]
    (5.0, [0.6, 0.8])
    """
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = _grads(parameters)
    if not grads:
        return _factories.tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated name of ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` to [-clip_value, clip_value] in place.

    >>> import chainrule as cr
    >>> p = cr.nn.Parameter(cr.zeros(2)); p.grad = cr.tensor([3.0, -0.5])
    >>> cr.nn.utils.clip_grad_value_([p], 1.0); p.grad.tolist()
    [1.0, -0.5]
    """
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.clamp_(min=-clip_value, max=clip_value)
