"""What autocast does to each op: the reference's op lists per device type, the
dispatcher that applies them to table ops, and the wrappers of the listed composites.

Note [autocast dispatch]
    Autocast is a dispatcher in the dispatch slot (Note [dispatch slot]), registered
    only while some thread has autocast enabled. For a table op named in the running
    thread's list for the device type of its first input it casts the op's floating
    inputs (never float64) first, as the reference's autocast key does:
    - "lower": to the autocast dtype (matmul, linear, convolutions, ...);
    - "fp32": to float32 (losses, prod, most of linalg, ...);
    - "promote": all to the widest floating dtype among them (cat, stack, ...);
    - "below" (composites only): no cast, the inside runs below autocast.
    Other ops run as they are. The casts are ordinary differentiable ``.to`` calls, so
    gradients flow back in each input's own dtype (float32 ``.grad`` for float32
    weights). Listed composites (addmm, cross_entropy, ...) are wrapped where they are
    published: the wrapper casts their arguments and runs them with autocast excluded
    (``STATE.excluded``), so the ops inside run as the reference runs them, below its
    autocast key. Without a region the wrapper costs one check of ``ACTIVE``.

Note [autocast weight cache]
    Inside a region, a float32 leaf that requires grad (a weight) cast to the autocast
    dtype is cast once: the cast is kept (``STATE.cache``) and reused by every later op
    of the region, until the outermost region exits or ``clear_autocast_cache()``.
"""
import functools
import types

from .. import _dtypes
from .._ops import _registry
from .._tensor import Tensor
from . import _state
from ._state import STATE

LOWER, FP32, PROMOTE, BELOW = "lower", "fp32", "promote", "below"

# The reference's CPU lists, for the ops of chainrule's table.
_CPU_TABLE_OPS = {
    LOWER: ("mm", "bmm", "matmul", "linear", "convolution", "einsum",
            "affine_grid_generator"),        # (the reference's inner bmm is autocast)
    FP32: ("prod", "prod_dim", "trace", "mse_loss", "nll_loss", "nll_loss2d", "linalg_inv",
           "linalg_solve", "linalg_cholesky", "linalg_qr", "linalg_svd", "linalg_eigh",
           "linalg_eig", "linalg_lstsq", "view_as_complex", "polar"),
    PROMOTE: ("cat", "stack", "index_copy"),
}
# CUDA adds to them (its fp32 list takes in the pointwise functions that lose most in
# float16, and the reductions).
_CUDA_EXTRA_TABLE_OPS = {
    LOWER: ("mv",),
    FP32: ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
           "reciprocal", "rsqrt", "sinh", "tan", "pow", "pow_scalar", "pow_scalar_base",
           "softplus", "logsumexp", "softmax", "log_softmax", "cumprod", "cumsum",
           "linalg_vector_norm", "sum", "sum_dim"),
    PROMOTE: ("atan2", "dot", "index_put", "scatter_add", "linalg_cross"),
}


def _table(*lists):
    table = {}
    for ops in lists:
        for policy, names in ops.items():
            table.update(dict.fromkeys(names, policy))
    return table


OP_POLICY = {"cpu": _table(_CPU_TABLE_OPS),
             "cuda": _table(_CPU_TABLE_OPS, _CUDA_EXTRA_TABLE_OPS)}
ACTIVE = [False]                  # the dispatcher is registered (some thread has autocast on)
_HANDLE = []


def is_eligible(t, device_type):
    """A floating tensor of ``device_type`` other than float64: what autocast casts."""
    return (isinstance(t, Tensor) and t.dtype.is_floating_point and t.dtype is not
            _dtypes.float64 and t.device.type == device_type)


def _cast_to(t, dtype):
    """``t.to(dtype)``, through the weight cache (Note [autocast weight cache])."""
    if not (STATE.cache_enabled and t.dtype is _dtypes.float32 and t._requires_grad
            and t.grad_fn is None and t._base is None):
        return t.to(dtype)
    hit = STATE.cache.get(id(t))
    if hit is None or hit[0] is not t:
        hit = STATE.cache[id(t)] = (t, t.to(dtype))
    return hit[1]


def _target_dtype(policy, tensors, device_type):
    if policy == LOWER:
        return STATE.dtype[device_type]
    if policy == FP32:
        return _dtypes.float32
    widest = STATE.dtype[device_type]
    for t in tensors:
        if isinstance(t, Tensor) and t.dtype.is_floating_point and t.dtype is not widest:
            widest = _dtypes.float64 if _dtypes.float64 in (t.dtype, widest) \
                else _dtypes.float32
    return widest


def cast_tensors(policy, tensors, device_type):
    """``tensors`` with the eligible ones cast as ``policy`` says (Note [autocast dispatch])."""
    dtype = _target_dtype(policy, tensors, device_type)
    return tuple(_cast_to(t, dtype) if is_eligible(t, device_type) and t.dtype is not dtype
                 else t for t in tensors)


def autocast_dispatch(run, op, inputs, attrs, view_base):
    """The dispatcher (Note [autocast dispatch])."""
    if STATE.excluded or not inputs:
        return run(op, inputs, attrs, view_base)
    device_type = inputs[0].device.type
    policy = OP_POLICY.get(device_type, {}).get(op.name)
    if policy is None or not STATE.enabled[device_type]:
        return run(op, inputs, attrs, view_base)
    return run(op, cast_tensors(policy, inputs, device_type), attrs, view_base)


def _register():
    ACTIVE[0] = True
    _HANDLE.append(_registry.add_dispatcher(autocast_dispatch))


def _unregister():
    ACTIVE[0] = False
    while _HANDLE:
        _HANDLE.pop().remove()


_state._HOOKS.update(on=_register, off=_unregister)
