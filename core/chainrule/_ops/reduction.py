"""Derivative table: reductions (sum, mean, prod, var, std, amax, amin, max, min,
logsumexp, softmax, log_softmax, norm, cumsum) and the non-differentiable ones
(argmax, argmin, all, any).

Reduced dims are kept in the op's attributes as a sorted tuple, or None for "all
dims" (also for ``dim=()`` and for 0-d inputs), so ``unreduce`` can put a reduced
gradient back over the input. Where the reference has two overloads with different
node names (``sum()`` -> SumBackward0, ``sum(dim)`` -> SumBackward1) there are two
entries sharing their formulas.

Note [ties in max and min]
    Full reductions (``max()``, ``amax``, ``amin``, the inf-norms) split the gradient
    evenly among the elements equal to the extreme; ``max(dim)``/``min(dim)`` send it
    to the element at the returned index only. The weights are constants of the
    backward (their derivative is 0 almost everywhere), computed on raw data in both
    namespaces by ``_tie_weights`` and ``_index_mask``.
"""
import math
import warnings

import numpy as np

from .._tensor import asarray, on_device_of, zeros_on
from .. import _dtypes, return_types
from ._out import refuse_grad, store
from .._batched import BatchedTensor, along_axis
from .._tensor import Tensor
from ..autograd._sum_to import sum_to as _sum_to
from ._common import (FUNCTIONS, broadcast_error, commit_inplace, errors_by_kind, formula_helper,
                      kernel_error, method, promote, public, raising, require_tensors, wrap_dim,
                      wrap_dims)
from ._method_slot import accelerable
from .elementwise import maximum, minimum, refuse_bool_subtraction
from ._formula_helpers import helper
from ._namespaces import array_fn
from ._registry import NONDIFF, apply_op, defop
from . import _cpu_select as _select

_INF = math.inf


# --- helpers that formulas use (bound into both namespaces) -----------------------
@helper
def unreduce(F, g, shape, dim, keepdim):
    """Broadcast a reduced tensor back over the input's ``shape``."""
    if dim is not None and not keepdim:
        g = F.reshape(g, tuple(1 if i in dim else n for i, n in enumerate(shape)))
    return F.expand(g, shape)


@helper
def safe_div(F, a, b):
    """a / b, and 0 where b == 0 (the reference's masked_fill after dividing by a norm)."""
    zero = b == 0
    return F.where(zero, 0, a / F.where(zero, 1, b))


@helper
def prod_others(F, self, result, dim, keepdim):
    """d prod / d self_i = the product of the other elements of its slice, also where
    the slice holds zeros; written so that its own derivative (double backward) is exact
    too: with three or more zeros in a slice every second derivative is 0."""
    shape = self.shape
    r = unreduce(F, result, shape, dim, keepdim)
    zero = self == 0
    if not F.any(zero):
        return r / self
    safe = F.where(zero, 1, self)
    nonzero_prod = F.prod(safe) if dim is None else safe
    for d in () if dim is None else dim:     # several: vmap's rule for dim=None gives them
        nonzero_prod = F.prod(nonzero_prod, d, True)
    nz = F.sum(zero, dim, True)
    zero_sum = F.sum(F.where(zero, self, 0), dim, True)
    # at a zero: the product of the nonzeros when it is the only zero; with exactly two,
    # times the other zero (zero_sum - self), which is 0 but has the right derivative
    at_zero = nonzero_prod * ((nz == 1) + (nz == 2) * (zero_sum - self))
    return F.where(zero, at_zero, r / safe)


@helper
def var_grad(F, g, self, dim, keepdim, correction):
    scale = _dof_scale(self.shape, dim, correction, 2.0)
    return unreduce(F, g, self.shape, dim, keepdim) * (self - F.mean(self, dim, True)) * scale


@helper
def var_jvp(F, t, self, dim, keepdim, correction):
    scale = _dof_scale(self.shape, dim, correction, 2.0)
    return F.sum(F.real(F.conj(self - F.mean(self, dim, True)) * t), dim, keepdim) * scale


def _dof_scale(shape, dim, correction, numerator):
    dof = _count(shape, dim) - correction
    return numerator / dof if dof > 0 else _INF


@helper
def norm_direction(F, self, p, result, dim, keepdim):
    """D with d||x||_p = sum(Re(conj(D) * dx)): the gradient of the norm for g = 1."""
    shape = self.shape
    if p == 0:
        return self * 0
    if p == 1:
        return F.sgn(self)
    if p == _INF or p == -_INF:
        return F.sgn(self) * F._tie_weights(F.abs(self), result, dim, keepdim)
    if p == 2:
        return self * unreduce(F, safe_div(F, 1, result), shape, dim, keepdim)
    mag = F.abs(self)
    zero = mag == 0
    scaled = F.where(zero, 0, F.sgn(self) * F.where(zero, 1, mag) ** (p - 1))
    # 1 / result**(p-1), and 0 where the norm is 0 (written so 0 never meets a negative power)
    inverse = safe_div(F, 1, result ** (p - 1)) if p > 1 else \
        F.where(result == 0, 0, result ** (1 - p))
    return scaled * unreduce(F, inverse, shape, dim, keepdim)


# --- ndarray implementations for ARRAY_NS (tensor twins below) --------------------
@array_fn("prod")
def _prod_array(x, dim=None, keepdim=False):
    return _multiply(x, axis=dim, keepdims=keepdim)


@array_fn("any")
def _any_array(x, dim=None, keepdim=False):
    return np.any(x, axis=dim, keepdims=keepdim)


@array_fn("cumsum")
def _cumsum_array(x, dim):
    return np.cumsum(x, axis=dim) if x.ndim else x.copy()


@array_fn("_reverse_cumsum")
def _reverse_cumsum_array(g, dim):
    """sum_{j >= i} g_j along dim: the backward of cumsum."""
    if g.ndim == 0:
        return g
    return np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim)


@array_fn("_tie_weights")
def _tie_weights_array(values, reduced, dim, keepdim, nan_matches=False):
    """1/count where ``values`` equals its slice's extreme ``reduced``, else 0. A NaN
    extreme matches the NaNs with ``nan_matches`` (the reference's max()); without, the
    slice's weights are NaN (its amax)."""
    if dim is not None and not keepdim:
        reduced = np.expand_dims(reduced, dim)
    mask = values == reduced
    if nan_matches:
        mask |= np.isnan(values) & np.isnan(reduced)
    real = np.empty(0, values.dtype).real.dtype
    weights = mask.astype(real)
    with np.errstate(invalid="ignore"):
        weights /= _add(mask, axis=dim, keepdims=True, dtype=real)
    return weights


@array_fn("_index_mask")
def _index_mask_array(indices, dim, keepdim, shape):
    """True where an element's position along ``dim`` is its slice's ``indices``."""
    if dim is None:
        return np.ones(shape, bool)
    (d,) = dim
    if not keepdim:
        indices = np.expand_dims(indices, d)
    positions = on_device_of(np.arange(shape[d]), indices).reshape((-1,) + (1,) * (len(shape) - d - 1))
    return indices == positions


def _constant(fn):
    """The tensor twin of a non-differentiable helper: the same on raw data."""
    def twin(*args):
        return Tensor._wrap(fn(*[a._data if isinstance(a, Tensor) else a for a in args]))
    twin.__name__ = fn.__name__.replace("_array", "")
    return formula_helper(twin)


_constant(_tie_weights_array)
_constant(_index_mask_array)


@formula_helper
def _reverse_cumsum(g, dim):
    """Tensor twin: the same sum, written with differentiable ops."""
    if g._data.ndim == 0:
        return g
    return sum(g, dim, True) - cumsum(g, dim) + g


# --- forwards on ndarrays --------------------------------------------------------
# The ufuncs' reduce methods directly: np.sum/np.max add microseconds of dispatch.
_add, _multiply = np.add.reduce, np.multiply.reduce
_maximum, _minimum = np.maximum.reduce, np.minimum.reduce


def _mean_forward(a, dim, keepdim, dtype):
    n = _count(a.shape, dim)
    if a.dtype.itemsize < 4 and dtype is None:            # float16: a float32 accumulator
        return np.mean(a, axis=dim, keepdims=keepdim) if n else _nan_like(a, dim, keepdim)
    total = _add(a, axis=dim, dtype=dtype, keepdims=keepdim)
    if n:
        return total / n
    with np.errstate(invalid="ignore"):                  # the mean of nothing is nan
        return total / asarray(0, total.dtype)


def _nan_like(a, dim, keepdim):
    return np.full(np.shape(_add(a, axis=dim, keepdims=keepdim)), np.nan, a.dtype)


def _var_forward(a, dim, keepdim, correction):
    n = _count(a.shape, dim)
    dev = a - _add(a, axis=dim, keepdims=True) / n if n else a
    sq = dev.real * dev.real + dev.imag * dev.imag if a.dtype.kind == "c" else dev * dev
    total = _add(sq, axis=dim, keepdims=keepdim)
    dof = n - correction
    if dof > 0:
        return total / asarray(dof, total.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / asarray(0, total.dtype)


def _logsumexp_forward(a, dim, keepdim):
    m = _maximum(a.real if a.dtype.kind == "c" else a, axis=dim, keepdims=True, initial=-_INF)
    m = np.where(np.isfinite(m), m, 0).astype(m.dtype, copy=False)   # no inf - inf
    with np.errstate(divide="ignore"):
        out = np.log(_add(np.exp(a - m), axis=dim, keepdims=True)) + m
    if keepdim:
        return out
    return out.reshape(_reduced_shape(a.shape, dim))


def _softmax_forward(a, dim):
    if a.size == 0:
        return a.copy()
    e = np.exp(a - _maximum(a, axis=dim, keepdims=True))
    e /= _add(e, axis=dim, keepdims=True)
    return e


def _log_softmax_forward(a, dim):
    if a.size == 0:
        return a.copy()
    shifted = a - _maximum(a, axis=dim, keepdims=True)
    shifted -= np.log(_add(np.exp(shifted), axis=dim, keepdims=True))
    return shifted


def _norm_forward(a, p, dim, keepdim):
    mag = np.abs(a)
    if p == 2:
        return np.sqrt(_add(mag * mag, axis=dim, keepdims=keepdim))
    if p == 1:
        return _add(mag, axis=dim, keepdims=keepdim)
    if p == _INF:
        return _maximum(mag, axis=dim, keepdims=keepdim)
    if p == -_INF:
        return _minimum(mag, axis=dim, keepdims=keepdim)
    if p == 0:
        return _add(mag != 0, axis=dim, keepdims=keepdim, dtype=mag.dtype)
    with np.errstate(divide="ignore"):                  # 0 ** negative p is inf, like torch
        out = _add(mag ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)
    return asarray(out, mag.dtype)                   # (bfloat16 ** float is float32)


def _extreme_at_forward(reducer):
    """max(dim)/min(dim) values; ``indices`` (an input, for the backward) agrees with them."""
    def forward(a, indices, dim, keepdim):
        return a.copy() if dim is None else reducer(a, axis=dim[0], keepdims=keepdim)
    return forward


def _cumsum_forward(a, dim, dtype):
    if a.ndim == 0:
        return a.astype(dtype or a.dtype)
    return np.cumsum(a, axis=dim, dtype=dtype)


def _count(shape, dim):
    n = 1
    for d in (range(len(shape)) if dim is None else dim):
        n *= shape[d]
    return n


def _reduced_shape(shape, dim):
    if dim is None:
        return ()
    return tuple(s for i, s in enumerate(shape) if i not in dim)


# --- the table --------------------------------------------------------------------
def _sum_vjp(F, g, self_shape, dim, keepdim):
    return unreduce(F, g, self_shape, dim, keepdim)


def _sum_jvp(F, t, dim, keepdim):
    return F.sum(t[0], dim, keepdim)


def _mean_vjp(F, g, self_shape, dim, keepdim):
    return unreduce(F, g, self_shape, dim, keepdim) / _count(self_shape, dim)


def _mean_jvp(F, t, dim, keepdim):
    return F.mean(t[0], dim, keepdim)


def _sum_forward(a, dim, keepdim, dtype):
    if dtype is None and a.dtype.itemsize == 2 and a.dtype.kind in "fV":
        # bfloat16, float16: a float32 accumulator, as the reference's
        return asarray(_add(a, axis=dim, dtype=np.float32, keepdims=keepdim)).astype(a.dtype)
    return _add(a, axis=dim, dtype=dtype, keepdims=keepdim)


def _prod_forward(a, dim, keepdim, dtype):
    return _multiply(a, axis=dim, dtype=dtype, keepdims=keepdim)


def _prod_vjp(F, g, self, result, dim, keepdim):
    others = prod_others(F, self, result, dim, keepdim)
    return unreduce(F, g, self.shape, dim, keepdim) * F.conj(others)


def _prod_jvp(F, t, self, result, dim, keepdim):
    return F.sum(t[0] * prod_others(F, self, result, dim, keepdim), dim, keepdim)


_REDUCE_ATTRS = ("dim", "keepdim", "dtype")
SUM = defop("sum", _sum_forward, attrs=_REDUCE_ATTRS, vjp=(_sum_vjp,), jvp=_sum_jvp)
SUM_DIM = defop("sum_dim", _sum_forward, attrs=_REDUCE_ATTRS, node_name="SumBackward1",
                vjp=(_sum_vjp,), jvp=_sum_jvp)
MEAN = defop("mean", _mean_forward, attrs=_REDUCE_ATTRS, vjp=(_mean_vjp,), jvp=_mean_jvp)
MEAN_DIM = defop("mean_dim", _mean_forward, attrs=_REDUCE_ATTRS, node_name="MeanBackward1",
                 vjp=(_mean_vjp,), jvp=_mean_jvp)
PROD = defop("prod", _prod_forward, attrs=_REDUCE_ATTRS, vjp=(_prod_vjp,), jvp=_prod_jvp)
PROD_DIM = defop("prod_dim", _prod_forward, attrs=_REDUCE_ATTRS, node_name="ProdBackward1",
                 vjp=(_prod_vjp,), jvp=_prod_jvp)

VAR = defop("var", _var_forward, attrs=("dim", "keepdim", "correction"),
            vjp=(lambda F, g, self, dim, keepdim, correction:
                 var_grad(F, g, self, dim, keepdim, correction),),
            jvp=lambda F, t, self, dim, keepdim, correction:
                var_jvp(F, t[0], self, dim, keepdim, correction))
STD = defop("std", lambda a, dim, keepdim, correction:
            np.sqrt(_var_forward(a, dim, keepdim, correction)),
            attrs=("dim", "keepdim", "correction"),
            vjp=(lambda F, g, self, result, dim, keepdim, correction:
                 var_grad(F, safe_div(F, g, 2 * result), self, dim, keepdim, correction),),
            jvp=lambda F, t, self, result, dim, keepdim, correction:
                safe_div(F, var_jvp(F, t[0], self, dim, keepdim, correction), 2 * result))


def _extreme(name, reducer, node_name=None, nan_matches=False):
    def vjp(F, g, self, result, dim, keepdim):
        weights = F._tie_weights(self, result, dim, keepdim, nan_matches)
        return unreduce(F, g, self.shape, dim, keepdim) * weights

    def jvp(F, t, self, result, dim, keepdim):
        weights = F._tie_weights(self, result, dim, keepdim, nan_matches)
        return F.sum(t[0] * weights, dim, keepdim)

    return defop(name, lambda a, dim, keepdim: reducer(a, axis=dim, keepdims=keepdim),
                 attrs=("dim", "keepdim"), node_name=node_name, vjp=(vjp,), jvp=jvp)


AMAX = _extreme("amax", _maximum)
AMIN = _extreme("amin", _minimum)
MAX = _extreme("max", _maximum, "MaxBackward1", nan_matches=True)   # see Note [ties in ...]
MIN = _extreme("min", _minimum, "MinBackward1", nan_matches=True)


def _take_vjp(F, g, self_shape, indices, dim, keepdim):
    mask = F._index_mask(indices, dim, keepdim, self_shape)
    return F.where(mask, unreduce(F, g, self_shape, dim, keepdim), 0)


def _take_jvp(F, t, self_shape, indices, dim, keepdim):
    if dim is None:         # a 0-d input (also a 0-d entry under vmap): the value copied
        return t[0]
    mask = F._index_mask(indices, dim, keepdim, self_shape)
    return F.sum(F.where(mask, t[0], 0), dim, keepdim)


# max(dim)/min(dim): the indices are computed first and passed in (not differentiable);
# the backward saves them, not the input, and sends the gradient to them alone.
MAX_DIM = defop("max_dim", _extreme_at_forward(_maximum), inputs=("self", "indices"),
                attrs=("dim", "keepdim"), node_name="MaxBackward0",
                vjp=(_take_vjp, NONDIFF), jvp=_take_jvp)
MIN_DIM = defop("min_dim", _extreme_at_forward(_minimum), inputs=("self", "indices"),
                attrs=("dim", "keepdim"), node_name="MinBackward0",
                vjp=(_take_vjp, NONDIFF), jvp=_take_jvp)

LOGSUMEXP = defop(
    "logsumexp", _logsumexp_forward, attrs=("dim", "keepdim"),
    vjp=(lambda F, g, self, result, dim, keepdim: unreduce(F, g, self.shape, dim, keepdim)
         * F.conj(F.exp(self - unreduce(F, result, self.shape, dim, keepdim))),),
    jvp=lambda F, t, self, result, dim, keepdim: F.sum(
        t[0] * F.exp(self - unreduce(F, result, self.shape, dim, keepdim)), dim, keepdim))
SOFTMAX = defop(
    "softmax", _softmax_forward, attrs=("dim",),
    vjp=(lambda F, g, result, dim: result * (g - F.sum(g * result, dim, True)),),
    jvp=lambda F, t, result, dim: result * (t[0] - F.sum(t[0] * result, dim, True)))
LOG_SOFTMAX = defop(
    "log_softmax", _log_softmax_forward, attrs=("dim",),
    vjp=(lambda F, g, result, dim: g - F.exp(result) * F.sum(g, dim, True),),
    jvp=lambda F, t, result, dim: t[0] - F.sum(F.exp(result) * t[0], dim, True))
def _norm_vjp(F, g, self, result, p, dim, keepdim):
    return unreduce(F, g, self.shape, dim, keepdim) * norm_direction(F, self, p, result, dim,
                                                                     keepdim)


def _norm_jvp(F, t, self, result, p, dim, keepdim):
    return F.sum(F.real(F.conj(norm_direction(F, self, p, result, dim, keepdim)) * t[0]), dim,
                 keepdim)


NORM = defop("linalg_vector_norm", _norm_forward, attrs=("p", "dim", "keepdim"),
             vjp=(_norm_vjp,), jvp=_norm_jvp)
# the reference's internal at::norm(self, p, dim, keepdim) (pairwise_distance records it)
NORM_DIM = defop("norm_dim", _norm_forward, attrs=("p", "dim", "keepdim"),
                 node_name="NormBackward1", vjp=(_norm_vjp,), jvp=_norm_jvp)



def _difference(tangents):
    """t[0] - t[1], either of them possibly absent."""
    a, b = tangents
    return -b if a is None else a if b is None else a - b


def _dist_gradient(F, g, self, other, result, p):
    return g * norm_direction(F, self - other, p, result, None, False)


# dist(a, b, p): the p-norm of a - b, one node like the reference's (DistBackward0)
DIST = defop("dist", lambda a, b, p: _norm_forward(a - b, p, None, False),
             inputs=("self", "other"), attrs=("p",),
             vjp=(lambda F, g, self, other, result, p, self_shape:
                  F.sum_to(_dist_gradient(F, g, self, other, result, p), tuple(self_shape)),
                  lambda F, g, self, other, result, p, other_shape:
                  F.sum_to(-_dist_gradient(F, g, self, other, result, p), tuple(other_shape))),
             jvp=lambda F, t, self, other, result, p: F.sum(F.real(F.conj(
                 norm_direction(F, self - other, p, result, None, False)) * _difference(t))))
CUMSUM = defop("cumsum", _cumsum_forward, attrs=("dim", "dtype"),
               vjp=(lambda F, g, dim: F._reverse_cumsum(g, dim),),
               jvp=lambda F, t, dim: F.cumsum(t[0], dim))


# --- argument handling --------------------------------------------------------------
def _dims(input, dim):
    """A dim argument as a sorted tuple, or None for all dims (also () and 0-d input)."""
    if dim is None:
        return None
    ndim = input._data.ndim
    dims = wrap_dims(dim, ndim)
    return dims if dims and ndim else None


def _one_dim(input, dim, name):
    """A single-int dim argument, wrapped; None for a 0-d input."""
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    dim = int(dim)
    ndim = input._data.ndim
    d = wrap_dim(dim, ndim)
    return (d,) if ndim else None


def _np_dtype(dtype):
    return None if dtype is None else _dtypes.to_dtype(dtype).np


def _sum_dtype(input, dtype):
    """The accumulation dtype of sum/prod/cumsum: integral inputs give int64."""
    if dtype is None:
        return np.dtype(np.int64) if input._data.dtype.kind in "biu" else None
    return _dtypes.to_dtype(dtype).np


def _check_floating(input, message):
    if input._data.dtype.kind in "biu":
        raise RuntimeError(message + _dtypes.scalar_type_name(input._data.dtype))


def _check_nonempty(input, dim, name, error=RuntimeError):
    """The reference's errors for reductions without an identity over nothing."""
    shape = input._data.shape
    if dim is None:
        if input._data.size == 0:
            raise error(f"{name}(): Expected reduction dim to be specified for input.numel() "
                        "== 0." + (" Specify the reduction dim with the 'dim' argument."
                                   if error is RuntimeError else ""))
        return
    for d in dim:
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _check_real(input, kernel):
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(input._data.dtype)}'")


# --- public functions: sum, mean, prod ---------------------------------------------
@public
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim`` (an int or a tuple of ints). Integer and bool
    inputs sum to int64 unless ``dtype`` says otherwise.

    >>> import chainrule as cr
    >>> cr.sum(cr.tensor([[1., 2.], [3., 4.]]), dim=0).tolist()
    [4.0, 6.0]
    >>> cr.tensor([True, True, False]).sum().dtype
    chainrule.int64
    """
    attrs = {"dim": _dims(input, dim), "keepdim": bool(keepdim),
             "dtype": _sum_dtype(input, dtype)}
    return apply_op(SUM if dim is None else SUM_DIM, (input,), attrs)


@public
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim`` (floating and complex inputs, or a
    floating ``dtype``).

    >>> import chainrule as cr
    >>> cr.mean(cr.tensor([[1., 2.], [3., 5.]]), dim=1).tolist()
    [1.5, 4.0]
    """
    np_dtype = _np_dtype(dtype)
    if np_dtype is not None and np_dtype.kind in "biu":
        raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either "
                           f"a floating point or complex dtype. Got: {_dtypes.scalar_type_name(np_dtype)}")
    if np_dtype is None:
        _check_floating(input, "mean(): could not infer output dtype. Input dtype must be "
                               "either a floating point or complex dtype. Got: ")
    attrs = {"dim": _dims(input, dim), "keepdim": bool(keepdim), "dtype": np_dtype}
    return apply_op(MEAN if dim is None else MEAN_DIM, (input,), attrs)


# Note [method slot]: ``x.sum()`` and ``x.mean()`` (no arguments) of a float or complex
# tensor are the whole-tensor op with these attrs
for _name, _op in (("sum", SUM), ("mean", MEAN)):
    accelerable(_name, "unary", _op, {"dim": None, "keepdim": False, "dtype": None},
                Tensor.__dict__[_name])


@public
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or along one ``dim``. The gradient is exact also where
    the input holds zeros. Integer and bool inputs give int64.

    >>> import chainrule as cr
    >>> x = cr.tensor([2., 0., 3.], requires_grad=True)
    >>> x.prod().backward()
    >>> x.grad.tolist()
    [0.0, 6.0, 0.0]
    """
    attrs = {"dim": None if dim is None else _one_dim(input, dim, "prod"),
             "keepdim": bool(keepdim), "dtype": _sum_dtype(input, dtype)}
    return apply_op(PROD if dim is None else PROD_DIM, (input,), attrs)


# --- var, std -----------------------------------------------------------------------
def _correction(unbiased, correction, name):
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either unbiased= or correction=, not both")
    if correction is not None:
        return correction
    return 1 if unbiased is None else int(bool(unbiased))


def _var_attrs(input, dim, unbiased, keepdim, correction, name):
    if isinstance(dim, bool):                     # the legacy overload var(input, unbiased)
        dim, unbiased = None, dim
    if input._data.dtype.kind in "biu":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims(input, dim)
    c = _correction(unbiased, correction, name)
    if _count(input._data.shape, dims) - c <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return {"dim": dims, "keepdim": bool(keepdim), "correction": c}


@public
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` (all dims by default), dividing by ``N - correction``
    (``correction=1``, Bessel's correction, by default; ``unbiased=False`` means 0).
    Complex inputs give a real variance.

    >>> import chainrule as cr
    >>> cr.var(cr.tensor([1., 2., 3., 4.])).item()
    1.6666666269302368
    >>> cr.var(cr.tensor([1., 2., 3., 4.]), correction=0).item()
    1.25
    """
    attrs = _var_attrs(input, dim, unbiased, keepdim, correction, "var")
    return apply_op(VAR, (input,), attrs)


@public
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation, the square root of :func:`var` (same arguments). Its
    gradient is 0 where the deviation is 0.

    >>> import chainrule as cr
    >>> cr.std(cr.tensor([[1., 3.], [2., 2.]]), dim=1, unbiased=False).tolist()
    [1.0, 0.0]
    """
    attrs = _var_attrs(input, dim, unbiased, keepdim, correction, "std")
    return apply_op(STD, (input,), attrs)


# --- amax, amin, max, min -----------------------------------------------------------
def _extreme_dims(input, dim, keepdim, name):
    _check_real(input, f"{name[1:]}_values_cpu")
    dims = _dims(input, dim)
    _check_nonempty(input, dims, name)
    return {"dim": dims, "keepdim": bool(keepdim)}


@public
def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (an int or a tuple; all dims by default). The gradient is
    split evenly among tied maxima.

    >>> import chainrule as cr
    >>> cr.amax(cr.tensor([[1., 5.], [7., 2.]]), dim=0).tolist()
    [7.0, 5.0]
    """
    return apply_op(AMAX, (input,), _extreme_dims(input, dim, keepdim, "amax"))


@public
def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (an int or a tuple; all dims by default). The gradient is
    split evenly among tied minima.

    >>> import chainrule as cr
    >>> cr.amin(cr.tensor([[1., 5.], [7., 2.]]), dim=1).tolist()
    [1.0, 2.0]
    """
    return apply_op(AMIN, (input,), _extreme_dims(input, dim, keepdim, "amin"))


def _full_or_dim(input, dim, keepdim, other, name):
    """Which of the reference's overloads a max/min call means ("full", "dim" or
    "other", the elementwise one) and its argument."""
    if other is not None or isinstance(dim, Tensor):
        if other is not None and dim is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments: "
                            "pass either dim or other")
        return "other", other if other is not None else dim
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments: "
                            "keepdim needs dim")
        return "full", None
    return "dim", dim


def _reduce_full(input, op, name):
    _check_real(input, f"{name}_all")
    _check_nonempty(input, None, name)
    return apply_op(op, (input,), {"dim": None, "keepdim": False})


def _reduce_dim(input, dim, keepdim, op, arg, result_type, name):
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    dims = _one_dim(input, dim, name)
    _check_nonempty(input, dims, name)
    if dims is None:
        index_t = Tensor._wrap(np.zeros((), np.int64))
    elif type(input) is BatchedTensor:                # inside vmap
        index_t = along_axis(arg, input, dims[0], keepdims=bool(keepdim))
    else:
        index_t = Tensor._wrap(arg(input._data, axis=dims[0], keepdims=bool(keepdim)))
    values = apply_op(op, (input, index_t), {"dim": dims, "keepdim": bool(keepdim)})
    return result_type(values, index_t)


@public
def max(input, dim=None, keepdim=False, *, other=None):
    """``max(input)``: the largest element (ties share the gradient evenly);
    ``max(input, dim, keepdim=False)``: a named tuple ``(values, indices)`` along
    ``dim`` (the gradient goes to the indexed element); ``max(input, other)``:
    :func:`maximum`.

    >>> import chainrule as cr
    >>> x = cr.tensor([[1., 5.], [7., 2.]])
    >>> x.max().item(), x.max(dim=1).indices.tolist()
    (7.0, [1, 0])
    """
    kind, arg = _full_or_dim(input, dim, keepdim, other, "max")
    if kind == "other":
        return maximum(input, arg)
    if kind == "full":
        return _reduce_full(input, MAX, "max")
    return _reduce_dim(input, arg, keepdim, MAX_DIM, np.argmax, return_types.max, "max")


@public
def min(input, dim=None, keepdim=False, *, other=None):
    """``min(input)``: the smallest element (ties share the gradient evenly);
    ``min(input, dim, keepdim=False)``: a named tuple ``(values, indices)``;
    ``min(input, other)``: :func:`minimum`.

    >>> import chainrule as cr
    >>> values, indices = cr.min(cr.tensor([[1., 5.], [7., 2.]]), 0)
    >>> values.tolist(), indices.tolist()
    ([1.0, 2.0], [0, 1])
    """
    kind, arg = _full_or_dim(input, dim, keepdim, other, "min")
    if kind == "other":
        return minimum(input, arg)
    if kind == "full":
        return _reduce_full(input, MIN, "min")
    return _reduce_dim(input, arg, keepdim, MIN_DIM, np.argmin, return_types.min, "min")


def _arg_extreme(input, dim, keepdim, fn, name):
    kind = input._data.dtype.kind
    if kind in "bc":
        raise RuntimeError(f"{name}(): does not support {'complex' if kind == 'c' else 'bool'} "
                           "input")
    dims = None if dim is None else _one_dim(input, dim, name)
    _check_nonempty(input, dims, name, error=IndexError)
    axis = None if dims is None else dims[0]
    out = fn(input._data, axis=axis, keepdims=bool(keepdim))
    return Tensor._wrap(asarray(out, np.int64))


@public
def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (of the flattened input, or along ``dim``); the
    first one among ties. An int64 tensor, not differentiable.

    >>> import chainrule as cr
    >>> cr.argmax(cr.tensor([[1., 5.], [7., 2.]]), dim=1).tolist()
    [1, 0]
    """
    return _arg_extreme(input, dim, keepdim, np.argmax, "argmax")


@public
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (of the flattened input, or along ``dim``).

    >>> import chainrule as cr
    >>> cr.argmin(cr.tensor([[1., 5.], [7., 2.]])).item()
    0
    """
    return _arg_extreme(input, dim, keepdim, np.argmin, "argmin")


# --- all, any -----------------------------------------------------------------------
def _logical_reduce(input, dim, keepdim, fn):
    a = input._data
    axis = None if dim is None else wrap_dims(dim, a.ndim)
    if axis is not None and a.ndim == 0:
        axis = None
    out = fn(a, axis=axis, keepdims=bool(keepdim))
    return Tensor._wrap(asarray(out, np.uint8 if a.dtype == np.uint8 else bool))


@public
def all(input, dim=None, keepdim=False):
    """Whether every element is nonzero (over ``dim``: an int or a tuple). A bool tensor
    (uint8 for uint8 input).

    >>> import chainrule as cr
    >>> cr.all(cr.tensor([[1., 0.], [2., 3.]]), dim=1).tolist()
    [False, True]
    """
    return _logical_reduce(input, dim, keepdim, np.all)


@public
def any(input, dim=None, keepdim=False):
    """Whether some element is nonzero (over ``dim``: an int or a tuple).

    >>> import chainrule as cr
    >>> cr.any(cr.tensor([[1., 0.], [0., 0.]]), dim=1).tolist()
    [True, False]
    """
    return _logical_reduce(input, dim, keepdim, np.any)


# --- logsumexp, softmax, log_softmax ------------------------------------------------
@public
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))``, computed without overflow. Integer inputs are
    cast to the default dtype.

    >>> import chainrule as cr
    >>> cr.logsumexp(cr.tensor([1000., 1000.]), dim=0).item()
    1000.6931762695312
    """
    if input._data.dtype.kind in "biu":
        input = input.to(_dtypes.get_default_dtype())
    attrs = {"dim": _dims(input, dim), "keepdim": bool(keepdim)}
    return apply_op(LOGSUMEXP, (input,), attrs)


def _softmax_input(input, dim, dtype, name):
    if dtype is not None:
        input = input.to(dtype)
    dims = _one_dim(input, dim, name)
    kind = input._data.dtype.kind
    if kind in "biuc":
        last = input._data.ndim <= 1 or dims[0] == input._data.ndim - 1
        kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(input._data.dtype)}'")
    return input, {"dim": None if dims is None else dims[0]}


@public
def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x), dim)`` along ``dim``, computed stably; ``dtype`` casts the
    input first.

    >>> import chainrule as cr
    >>> cr.softmax(cr.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    input, attrs = _softmax_input(input, dim, dtype, "softmax")
    return apply_op(SOFTMAX, (input,), attrs)


@public
def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x, dim, keepdim=True)``, computed stably.

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.log_softmax(cr.tensor([0., 0.]), dim=0).tolist()]
    [-0.6931, -0.6931]
    """
    input, attrs = _softmax_input(input, dim, dtype, "log_softmax")
    return apply_op(LOG_SOFTMAX, (input,), attrs)


# --- norm -------------------------------------------------------------------------
def _norm_order(p, dim):
    if p is None:
        return 2.0
    if isinstance(p, str):
        if p == "fro":
            if dim is not None and not isinstance(dim, int) and len(dim) > 2:
                raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                                   + " ".join(str(d) for d in dim))
            return 2.0
        if p == "nuc":
            raise NotImplementedError("norm(p='nuc') (the nuclear norm) is not supported")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return float(p)


def _norm_input(input, dtype):
    kind = input._data.dtype.kind
    if kind in "biu":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_dtypes.scalar_type_name(input._data.dtype)}")
    if dtype is None:
        return input
    target = _dtypes.to_dtype(dtype)
    if target.np.kind not in "fc":
        raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                           f"but got {_dtypes.scalar_type_name(target.np)}")
    if kind == "c" and target.np.kind != "c":
        raise RuntimeError("linalg.vector_norm: dtype should be complex for complex inputs, "
                           f"but got {_dtypes.scalar_type_name(target.np)}")
    if not np.can_cast(input._data.dtype, target.np, "safe"):
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                           f"({_dtypes.scalar_type_name(input._data.dtype)}) should be convertible without "
                           f"narrowing to the specified dtype ({_dtypes.scalar_type_name(target.np)})")
    return input.to(target)


def _check_inf_norm(input, p, dims):
    if p != _INF and p != -_INF:
        return
    if dims is None and input._data.size == 0:
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor "
                           "because the operation does not have an identity")
    for d in dims or ():
        if input._data.shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the inf norm on the "
                               f"dimension {d}because this dimension is empty and the "
                               "operation does not have an identity")


@public
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The vector p-norm over ``dim`` (all dims by default): ``p`` = "fro" or 2
    (Euclidean), 1, inf, -inf, 0 (count of nonzeros), or any other number. Complex
    inputs give a real norm. The gradient at 0 is 0 (a subgradient), like the
    reference's.

    >>> import chainrule as cr
    >>> cr.norm(cr.tensor([3., 4.])).item()
    5.0
    >>> cr.norm(cr.tensor([[3., -4.], [1., 2.]]), p=1, dim=1).tolist()
    [7.0, 3.0]
    """
    order = _norm_order(p, dim)
    input = _norm_input(input, dtype)
    dims = _dims(input, dim)
    _check_inf_norm(input, order, dims)
    result = apply_op(NORM, (input,), {"p": order, "dim": dims, "keepdim": bool(keepdim)})
    return result if out is None else _write_out(result, out, "norm")


@public
def dist(input, other, p=2):
    """The p-norm of ``input - other``.

    >>> import chainrule as cr
    >>> cr.dist(cr.tensor([3., 0.]), cr.tensor([0., 4.])).item()
    5.0
    """
    require_tensors("dist", ("input", "other"), input, other)
    refuse_bool_subtraction(input, other)
    a, b = promote(input, other)
    if a._data.dtype.kind in "biu":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtypes.scalar_type_name(a._data.dtype)} instead.")
    try:
        np.broadcast_shapes(a._data.shape, b._data.shape)
    except ValueError:
        raise broadcast_error(a._data.shape, b._data.shape) from None
    return apply_op(DIST, (a, b), {"p": _norm_order(p, None)})


def _write_out(result, out, name):
    """``result`` (computed already) written into ``out`` (Note [out= arguments])."""
    refuse_grad(name, [result, out])
    return store(out, result)


# --- cumsum -------------------------------------------------------------------------
@public
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``. Integer and bool inputs give int64.

    >>> import chainrule as cr
    >>> cr.cumsum(cr.tensor([1., 2., 3.]), dim=0).tolist()
    [1.0, 3.0, 6.0]
    """
    d = _one_dim(input, dim, "cumsum")
    attrs = {"dim": d[0] if d else 0, "dtype": _scan_dtype(input, dtype, "cumsum")}
    return apply_op(CUMSUM, (input,), attrs)


def _scan_dtype(input, dtype, name):
    """cumsum's and cumprod's result dtype; their kernels write no bool."""
    result = _sum_dtype(input, dtype)
    if result is not None and np.dtype(result).kind == "b":
        raise kernel_error(f"{name}_out_cpu")(result)
    return result


def sum_to(x, shape):
    """Sum a tensor down to ``shape`` (formula helper for broadcast gradients)."""
    return _sum_to(x, shape)


FUNCTIONS["sum_to"] = sum_to


# --- scans: cumprod, logcumsumexp ----------------------------------------------------
@array_fn("cumprod")
def _cumprod_array(x, dim):
    return np.cumprod(x, axis=dim) if x.ndim else x.copy()


@array_fn("logcumsumexp")
def _logcumsumexp_array(x, dim):
    if x.ndim == 0:
        return x.copy()
    if x.dtype.kind == "c":
        return _complex_logcumsumexp(x, dim)
    with np.errstate(invalid="ignore"):                  # NaN and inf - inf give NaN quietly
        return np.logaddexp.accumulate(x, axis=dim)


def _complex_logcumsumexp(x, axis):
    """The running log-sum-exp of complex values, a step at a time along ``axis`` from
    -inf (NumPy's logaddexp has no complex loop); the imaginary part is the one the
    steps give, not reduced to the principal branch."""
    steps = np.moveaxis(x, axis, 0)
    out = np.empty_like(steps)
    total = on_device_of(np.full(steps.shape[1:], complex(-np.inf, 0), steps.dtype), x)
    for i in range(len(steps)):
        total = out[i] = _complex_logaddexp(total, steps[i])
    return np.moveaxis(out, 0, axis)


def _complex_logaddexp(a, b):
    """log(exp(a) + exp(b)) with the operand of larger real part factored out, so
    nothing overflows. Where both real parts are infinite: ``a`` for -inf (nothing was
    added), the sum itself for +inf; NaN anywhere gives NaN in both parts."""
    a_larger = a.real >= b.real
    high, low = np.where(a_larger, a, b), np.where(a_larger, b, a)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        out = high + np.log1p(np.exp(low - high))
        both_infinite = np.isinf(a.real) & (a.real == b.real)
        if both_infinite.any():
            out = np.where(both_infinite, np.where(a.real < 0, a, np.log(np.exp(a) + np.exp(b))),
                           out)
    return np.where(np.isnan(a) | np.isnan(b), complex(np.nan, np.nan), out).astype(a.dtype)


@helper
def cumprod_grad(F, g, self, result, dim):
    """VJP of cumprod, exact also where the input holds zeros.

    dy_i/dx_k is the product of x_j, j <= i, j != k. Before a slice's first zero z that is
    y_i / x_k; at z it is the cumprod of x with x_z set to 1; after z it is 0, but (for the
    double backward) it is x_z times the same two cases one zero further, which adds 0
    to the value and the right derivative with respect to x_z."""
    if self.ndim == 0:
        return g
    x, y = F.conj(self), F.conj(result)
    zero = x == 0
    if not F.any(zero):
        return F._reverse_cumsum(g * y, dim) / x
    count = F.cumsum(zero, dim)
    first = zero * (count == 1)
    x_safe = F.where(zero, 1, x)
    x1 = F.where(first, 1, x)
    at_first = F._reverse_cumsum(g * F.cumprod(x1, dim), dim)
    grad = F.where(count == 0, F._reverse_cumsum(g * y, dim) / x_safe,
                   F.where(first, at_first, 0))
    if not F.is_tensor_path():
        return grad
    second = zero * (count == 2)
    x_first = F.sum(F.where(first, x, 0), dim, True)          # 0, with its derivative
    beyond = F.where(second, F._reverse_cumsum(g * F.cumprod(F.where(second, 1, x1), dim), dim),
                     F.where((count == 1) * (x != 0), at_first / x_safe, 0))
    return grad + x_first * beyond


@helper
def cumprod_jvp(F, t, self, result, dim):
    """Tangent of cumprod: y_i sum_{k <= i} t_k / x_k before the first zero z of a slice,
    t_z times the cumprod of x with x_z set to 1 from z to the second zero, 0 after."""
    if self.ndim == 0:
        return t
    zero = self == 0
    if not F.any(zero):
        return result * F.cumsum(t / self, dim)
    count = F.cumsum(zero, dim)
    first = zero * (count == 1)
    t_first = F.sum(F.where(first, t, 0), dim, True)
    before = result * F.cumsum(t / F.where(zero, 1, self), dim)
    return F.where(count == 0, before,
                   F.where(count == 1, t_first * F.cumprod(F.where(first, 1, self), dim), 0))


@array_fn("_reverse_logcumsumexp")
def _reverse_logcumsumexp_array(x, dim):
    """log(sum_{j >= i} exp(x_j)) along dim."""
    if x.ndim == 0:
        return x.copy()
    return np.flip(_logcumsumexp_array(np.flip(x, dim), dim), dim)


@formula_helper
def _reverse_logcumsumexp(x, dim):
    """Tensor twin, with differentiable ops."""
    if x._data.ndim == 0:
        return x
    return FUNCTIONS["flip"](logcumsumexp(FUNCTIONS["flip"](x, (dim,)), dim), (dim,))


@helper
def signed_log_parts(F, v):
    """(log v where v > 0 else -inf, log -v where v < 0 else -inf): v's positive and negative
    parts in log space, so sums of exponentials never overflow."""
    parts = []
    for positive in (v > 0, v < 0):
        magnitude = F.where(positive, F.abs(v), 1)
        parts.append(F.where(positive, F.log(magnitude), -_INF))
    return parts


@helper
def complex_log_part(F, v):
    """log v, and -inf where v is 0 (a complex gradient in log space has no sign to
    split off)."""
    zero = v == 0
    return F.where(zero, -_INF, F.log(F.where(zero, 1, v)))


@helper
def logcumsumexp_grad(F, g, self, result, dim):
    """sum_{i >= k} g_i conj(exp(x_k - y_i)), summed in log space, for each sign of a real
    g (no overflow however far apart the values are)."""
    y = F.where(result == -_INF, 0, result)     # slices of -inf contribute 0
    if F.is_complex(self):
        log_g = F.complex_log_part(F.conj(g))
        return F.conj(F.exp(F._reverse_logcumsumexp(log_g - y, dim) + self))
    pos, neg = signed_log_parts(F, g)
    return F.exp(F._reverse_logcumsumexp(pos - y, dim) + self) - \
        F.exp(F._reverse_logcumsumexp(neg - y, dim) + self)


@helper
def logcumsumexp_jvp(F, t, self, result, dim):
    """sum_{k <= i} t_k exp(x_k - y_i), in log space like the VJP."""
    y = F.where(result == -_INF, 0, result)
    if F.is_complex(self):
        return F.exp(F.logcumsumexp(F.complex_log_part(t) + self, dim) - y)
    pos, neg = signed_log_parts(F, t)
    return F.exp(F.logcumsumexp(pos + self, dim) - y) - F.exp(F.logcumsumexp(neg + self, dim) - y)


CUMPROD = defop("cumprod", lambda a, dim, dtype: _cumprod_forward(a, dim, dtype),
                attrs=("dim", "dtype"),
                vjp=(lambda F, g, self, result, dim: F.cumprod_grad(g, self, result, dim),),
                jvp=lambda F, t, self, result, dim: F.cumprod_jvp(t[0], self, result, dim))
LOGCUMSUMEXP = defop("logcumsumexp", lambda a, dim: _logcumsumexp_array(a, dim), attrs=("dim",),
                     vjp=(lambda F, g, self, result, dim:
                          F.logcumsumexp_grad(g, self, result, dim),),
                     jvp=lambda F, t, self, result, dim:
                         F.logcumsumexp_jvp(t[0], self, result, dim))


def _cumprod_forward(a, dim, dtype):
    if a.ndim == 0:
        return a.astype(dtype or a.dtype)
    return np.cumprod(a, axis=dim, dtype=dtype)


# --- ops that pick elements by index (sort, topk, kthvalue, median(dim), cummax) ------
# The indices are computed first (NumPy) and passed in as a non-differentiable input;
# the op gathers the values at them along ``dim`` (``keepdim=False``: that dim dropped)
# and its backward scatter-adds the gradient back to them (cummax's repeat).
def _take_forward(a, indices, dim, keepdim):
    out = np.take_along_axis(a, indices, dim) if a.ndim else a.copy()
    return out if keepdim else np.squeeze(out, dim)


def _take_vjp(F, g, self_shape, indices, dim, keepdim):
    if not keepdim:
        g = F.unsqueeze(g, dim)
    return F.scatter_add(F._new_zeros(g, self_shape), dim, indices, g)


def _take_jvp(F, t, indices, dim, keepdim):
    out = F.gather(t[0], dim, indices)
    return out if keepdim else F.squeeze(out, dim)


def _take_op(name, node_name):
    return defop(name, _take_forward, inputs=("self", "indices"), attrs=("dim", "keepdim"),
                 node_name=node_name, vjp=(_take_vjp, NONDIFF), jvp=_take_jvp)


SORT = _take_op("sort", "SortBackward0")
SORT_STABLE = _take_op("sort_stable", "SortBackward1")       # sort(..., stable=)
TOPK = _take_op("topk", "TopkBackward0")
KTHVALUE = _take_op("kthvalue", "KthvalueBackward0")
MEDIAN_DIM = _take_op("median_dim", "MedianBackward1")
NANMEDIAN_DIM = _take_op("nanmedian_dim", "NanmedianBackward1")
CUMMAX = _take_op("cummax", "CummaxBackward0")
CUMMIN = _take_op("cummin", "CumminBackward0")


def _median_indices(a, dim, ignore_nan):
    """Per slice along ``dim`` (kept, size 1): the index of the lower median; of the first
    NaN where the slice holds one (``ignore_nan``: the median of the other values)."""
    order = np.argsort(_sortable(a), axis=dim, kind="stable")            # NaNs last
    nans = np.add.reduce(np.isnan(a), axis=dim, keepdims=True)
    n = a.shape[dim]
    if ignore_nan:
        k = np.maximum((n - nans - 1) // 2, 0)
    else:
        k = np.where(nans > 0, n - nans, (n - 1) // 2)
    k = np.broadcast_to(k, np.take(a, [0], axis=dim).shape)
    return np.take_along_axis(order, k.astype(np.int64), dim)


def _median_reducer(ignore_nan):
    def median(a, axis=None, keepdims=False):
        if axis is None:
            flat = a.reshape(-1)
            return flat[_median_indices(flat, 0, ignore_nan)].reshape(())
        return _median_over(a, axis, keepdims, ignore_nan)
    return median


def _median_over(a, axis, keepdims, ignore_nan):
    """The median of each slice over the dims ``axis`` (under vmap: of each entry)."""
    kept = [d for d in range(a.ndim) if d not in axis]
    lead = [a.shape[d] for d in kept]
    width = math.prod(a.shape[d] for d in axis)
    rows = np.moveaxis(a, kept, range(len(kept))).reshape(lead + [width])
    out = np.take_along_axis(rows, _median_indices(rows, -1, ignore_nan), -1)
    shape = [n if d in kept else 1 for d, n in enumerate(a.shape)] if keepdims else lead
    return out.reshape(shape)


MEDIAN = _extreme("median", _median_reducer(False), nan_matches=True)
NANMEDIAN = _extreme("nanmedian", _median_reducer(True), nan_matches=True)
NANSUM = defop("nansum", lambda a, dim, keepdim, dtype:
               _add(np.where(np.isnan(a), np.zeros((), a.dtype), a), axis=dim, dtype=dtype,
                    keepdims=keepdim),
               attrs=_REDUCE_ATTRS,
               vjp=(lambda F, g, self, dim, keepdim:
                    unreduce(F, g, self.shape, dim, keepdim) * (self == self),),
               jvp=lambda F, t, self, dim, keepdim:
                   F.sum(F.where(self == self, t[0], t[0] * 0), dim, keepdim))


def _sortable(a):
    """``a`` as NumPy sorts it correctly (bfloat16, NumPy's kind "V", through float32)."""
    return a.astype(np.float32) if a.dtype.kind == "V" else a


def _argsort(a, dim, descending):
    """Stable argsort along ``dim``; descending keeps equal elements in their order too
    (NaN counts as the largest value either way, like the reference)."""
    a = _sortable(a)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    n = a.shape[dim]
    flipped = np.argsort(np.flip(a, dim), axis=dim, kind="stable")
    return np.flip(n - 1 - flipped, dim)


# --- public functions: scans -----------------------------------------------------------
@public
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``; the gradient is exact also where the input holds
    zeros (to second order). Integer and bool inputs give int64.

    >>> import chainrule as cr
    >>> x = cr.tensor([2., 0., 3.], requires_grad=True)
    >>> y = cr.cumprod(x, 0); y.sum().backward(); y.tolist(), x.grad.tolist()
    ([2.0, 0.0, 0.0], [1.0, 8.0, 0.0])
    """
    d = _one_dim(input, dim, "cumprod")
    attrs = {"dim": d[0] if d else 0, "dtype": _scan_dtype(input, dtype, "cumprod")}
    return apply_op(CUMPROD, (input,), attrs)


@method("cumprod_")
def cumprod_(self, dim, *, dtype=None):
    """In-place :func:`cumprod`.

    >>> import chainrule as cr
    >>> cr.tensor([1., 2., 3.]).cumprod_(0).tolist()
    [1.0, 2.0, 6.0]
    """
    return commit_inplace(self, cumprod(self, dim, dtype=dtype or self.dtype))  # in its dtype


@public
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` computed without overflow.

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.logcumsumexp(cr.tensor([0., 0., 1000.]), 0).tolist()]
    [0.0, 0.6931, 1000.0]
    """
    if input._data.dtype.kind in "biu":
        raise kernel_error("logcumsumexp_out_cpu")(input._data.dtype)
    d = _one_dim(input, dim, "logcumsumexp")
    return apply_op(LOGCUMSUMEXP, (input,), {"dim": d[0] if d else 0})


def _cumulative_extreme(input, dim, op, ufunc, result_type, name):
    _check_sortable(input, name)
    d = _one_dim(input, dim, name)
    a = input._data
    if d is None:
        indices = zeros_on((), np.int64, a)
        return result_type(*_take(op, input, indices, 0, True))
    return result_type(*_picked(op, input, lambda a, axis: _running_extreme_at(a, axis, ufunc),
                                d[0], True))


def _running_extreme_at(a, axis, ufunc):
    """The position of the running extreme along ``axis`` (the latest on ties)."""
    values = ufunc.accumulate(_sortable(a), axis=axis)
    # where a new extreme (or a tie, or a NaN) is set; the latest such position so far
    setting = (_sortable(a) == values) | np.isnan(a)
    shape = [1] * a.ndim
    shape[axis] = a.shape[axis]
    positions = np.where(setting, on_device_of(np.arange(a.shape[axis]).reshape(shape), a), 0)
    indices = np.maximum.accumulate(positions, axis=axis) if a.size else positions
    return indices.astype(np.int64)


def _take(op, input, indices, dim, keepdim, kept_indices=None):
    """(values, indices) of an op that picks ``input``'s elements at ``indices``."""
    index_t = Tensor._wrap(indices)
    values = apply_op(op, (input, index_t), {"dim": dim, "keepdim": keepdim})
    out_indices = index_t if keepdim else Tensor._wrap(np.squeeze(indices, dim))
    return values, out_indices


def _picked(op, input, index_fn, dim, keepdim):
    """:func:`_take` at the indices ``index_fn(array, axis=dim)``; for a batched input
    computed on the whole physical array, the batch's axes first, in one call (Note
    [batched tensors])."""
    if type(input) is not BatchedTensor:
        return _take(op, input, index_fn(input._data, axis=dim), dim, keepdim)
    index_t = along_axis(index_fn, input, dim)
    values = apply_op(op, (input, index_t), {"dim": dim, "keepdim": keepdim})
    return values, index_t if keepdim else FUNCTIONS["squeeze"](index_t, dim)


_SORT_ERROR = raising(RuntimeError, " Sort does not support complex dtypes on CPU")
# The reference's errors of the sorting ops for the dtype kinds their kernels lack
# (Note [kernels without a dtype]): name -> {kind: error factory}.
_SORT_REFUSALS = {name: errors_by_kind(refusals) for name, refusals in {
    "sort": {"c": _SORT_ERROR}, "argsort": {"c": _SORT_ERROR},
    "topk": {"c": raising(RuntimeError, " topk does not support complex dtypes on CPU"),
             "b": raising(RuntimeError, "topk does not support bool dtypes on CPU")},
    "kthvalue": {"bc": kernel_error("kthvalue_cpu")},
    "cummax": {"c": kernel_error("cummax_cpu")}, "cummin": {"c": kernel_error("cummin_cpu")},
    "median": {"bc": kernel_error("median_cpu")}, "nanmedian": {"bc": kernel_error("median_cpu")},
    "median_dim": {"bc": kernel_error("median_out")},
    "nanmedian_dim": {"bc": kernel_error("median_out")}}.items()}


def _check_sortable(input, name):
    dtype = input._data.dtype
    if dtype.kind in _SORT_REFUSALS[name]:
        raise _SORT_REFUSALS[name][dtype.kind](dtype)


@public
def cummax(input, dim):
    """Running maximum along ``dim``: a named tuple ``(values, indices)``; the index is
    the latest position of the maximum so far, and the gradient goes there.

    >>> import chainrule as cr
    >>> r = cr.cummax(cr.tensor([1., 3., 2., 3.]), 0)
    >>> r.values.tolist(), r.indices.tolist()
    ([1.0, 3.0, 3.0, 3.0], [0, 1, 1, 3])
    """
    return _cumulative_extreme(input, dim, CUMMAX, np.maximum,
                               return_types.cummax, "cummax")


@public
def cummin(input, dim):
    """Running minimum along ``dim``: a named tuple ``(values, indices)``.

    >>> import chainrule as cr
    >>> cr.cummin(cr.tensor([3., 1., 2.]), 0).indices.tolist()
    [0, 1, 1]
    """
    return _cumulative_extreme(input, dim, CUMMIN, np.minimum, return_types.cummin, "cummin")


# --- public functions: sort, argsort, topk, kthvalue, median --------------------------
def _sort_dim(input, dim, name):
    _check_sortable(input, name)
    d = _one_dim(input, dim, name)
    return 0 if d is None else d[0]


@public
def sort(input, dim=-1, descending=False, stable=None):
    """Sort along ``dim``: a named tuple ``(values, indices)``; NaN sorts as the largest
    value. With ``stable=True`` equal elements keep their order (SortBackward1, as in
    the reference); otherwise ties get the reference's CPU indices (Note [ties on the
    CPU]).

    >>> import chainrule as cr
    >>> r = cr.sort(cr.tensor([3., 1., 2.]), descending=True)
    >>> r.values.tolist(), r.indices.tolist()
    ([3.0, 2.0, 1.0], [0, 2, 1])
    """
    d = _sort_dim(input, dim, "sort")
    op = SORT if stable is None else SORT_STABLE
    if not input._data.ndim:
        return return_types.sort(*_take(op, input, np.zeros((), np.int64), d, True))
    return return_types.sort(*_picked(
        op, input, lambda a, axis: _sort_at(a, axis, descending, stable), d, True))


def _sort_at(a, axis, descending, stable):
    indices = _argsort(a, axis, descending)
    if not stable:                                  # Note [ties on the CPU]
        indices = _select.with_reference_ties(
            a, axis, indices, lambda ranks: _select.sort_row(ranks, descending))
    return indices


@public
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (int64, not differentiable).

    >>> import chainrule as cr
    >>> cr.argsort(cr.tensor([3., 1., 2.])).tolist()
    [1, 2, 0]
    """
    d = _sort_dim(input, dim, "argsort")
    if not input._data.ndim:
        return Tensor._wrap(np.zeros((), np.int64))
    if type(input) is BatchedTensor:                         # inside vmap: the whole batch
        return along_axis(lambda a, axis: _sort_at(a, axis, descending, stable), input, d)
    return Tensor._wrap(_sort_at(input._data, d, descending, stable))


@public
def msort(input):
    """``sort(input, dim=0).values``.

    >>> import chainrule as cr
    >>> cr.msort(cr.tensor([[2., 1.], [1., 3.]])).tolist()
    [[1.0, 1.0], [2.0, 3.0]]
    """
    return sort(input, 0).values


@public
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim``, sorted: a
    named tuple ``(values, indices)``.

    >>> import chainrule as cr
    >>> cr.topk(cr.tensor([1., 5., 3., 4.]), 2).values.tolist()
    [5.0, 4.0]
    """
    d = _sort_dim(input, dim, "topk")
    a = input._data
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if a.ndim == 0:
        return return_types.topk(*_take(TOPK, input, np.zeros((), np.int64), 0, True))
    return return_types.topk(*_picked(
        TOPK, input, lambda a, axis: _topk_at(a, axis, k, largest, sorted), d, True))


def _topk_at(a, axis, k, largest, sorted):
    order = np.take(_argsort(a, axis, descending=bool(largest)), np.arange(k), axis=axis)
    if k:                                           # Note [ties on the CPU]
        order = _select.with_reference_ties(
            a, axis, order, lambda ranks: _select.topk_row(ranks, k, largest, sorted))
    return order


def _keepdim_for(input, keepdim):
    return True if input._data.ndim == 0 else bool(keepdim)


@public
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element (k from 1) along ``dim``: a named tuple ``(values,
    indices)``.

    >>> import chainrule as cr
    >>> cr.kthvalue(cr.tensor([3., 1., 2.]), 2)
    chainrule.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    d = _sort_dim(input, dim, "kthvalue")
    a = input._data
    n = a.shape[d] if a.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if a.ndim == 0:
        return return_types.kthvalue(*_take(KTHVALUE, input, np.zeros((), np.int64), 0, True))
    return return_types.kthvalue(*_picked(
        KTHVALUE, input, lambda a, axis: _kth_at(a, axis, k), d, bool(keepdim)))


def _kth_at(a, axis, k):
    return _select.with_reference_ties(             # Note [ties on the CPU]
        a, axis, np.take(_argsort(a, axis, False), [k - 1], axis=axis),
        lambda ranks: [_select.kth_row(ranks, k)])


def _median(input, dim, keepdim, ignore_nan, name):
    _check_sortable(input, name if dim is None else f"{name}_dim")
    if dim is None:
        if input._data.size == 0:
            return Tensor._wrap(np.full((), np.nan, input._data.dtype))
        return apply_op(NANMEDIAN if ignore_nan else MEDIAN, (input,),
                        {"dim": None, "keepdim": False})
    d = _one_dim(input, dim, name)
    result_type = return_types.nanmedian if ignore_nan else return_types.median
    op = NANMEDIAN_DIM if ignore_nan else MEDIAN_DIM
    if d is None:
        return result_type(*_take(op, input, np.zeros((), np.int64), 0, True))
    _check_nonempty(input, d, name)
    return result_type(*_picked(op, input, lambda a, axis: _median_indices(a, axis, ignore_nan),
                                d[0], bool(keepdim)))


@public
def median(input, dim=None, keepdim=False):
    """The lower median (of all elements, or along ``dim`` as a named tuple ``(values,
    indices)``); NaN where a slice holds NaN. Without ``dim`` the gradient is shared by
    the elements equal to the median.

    >>> import chainrule as cr
    >>> x = cr.tensor([[1., 4., 2., 3.]])
    >>> x.median().item(), x.median(1).indices.tolist()
    (2.0, [2])
    """
    return _median(input, dim, keepdim, False, "median")


@public
def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` ignoring NaN (NaN only for an all-NaN slice).

    >>> import chainrule as cr
    >>> cr.nanmedian(cr.tensor([float("nan"), 1., 3., 2.])).item()
    2.0
    """
    return _median(input, dim, keepdim, True, "nanmedian")


# --- public functions: nansum, nanmean, std_mean, var_mean, aminmax, count_nonzero ------
@public
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """:func:`sum` treating NaN as 0 (no gradient flows to the NaNs).

    >>> import chainrule as cr
    >>> cr.nansum(cr.tensor([1., float("nan"), 2.])).item()
    3.0
    """
    if input._data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is not None and input._data.dtype.kind in "fV" and _dtypes.to_dtype(dtype).is_complex:
        raise kernel_error("nansum_cpu")(_dtypes.to_dtype(dtype).np)    # its NaN test is real
    attrs = {"dim": _dims(input, dim), "keepdim": bool(keepdim),
             "dtype": _sum_dtype(input, dtype)}
    return apply_op(NANSUM, (input,), attrs)


@public
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """:func:`mean` of the non-NaN elements (``nansum / count``).

    >>> import chainrule as cr
    >>> cr.nanmean(cr.tensor([1., float("nan"), 2.])).item()
    1.5
    """
    if input._data.dtype.kind not in "fVc":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtypes.scalar_type_name(input._data.dtype)}")
    if dtype is not None and np.dtype(_dtypes.to_dtype(dtype).np).kind not in "fVc":
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                           "either a floating point or complex dtype. Got: "
                           f"{_dtypes.scalar_type_name(_dtypes.to_dtype(dtype).np)}")
    count = sum(Tensor._wrap(~np.isnan(input._data)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _stat_mean(stat, input, dim, unbiased, keepdim, correction):
    if input._data.dtype.kind in "biu":
        raise RuntimeError(f"{stat.__name__}_mean only support floating point and complex dtypes")
    if isinstance(dim, bool):                      # the legacy overload (input, unbiased)
        dim, unbiased = None, dim
    return (stat(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim, keepdim))


@public(method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(...), mean(...))`` over the same dims, in one call.

    >>> import chainrule as cr
    >>> s, m = cr.std_mean(cr.tensor([1., 3.]), correction=0); s.item(), m.item()
    (1.0, 2.0)
    """
    return _stat_mean(std, input, dim, unbiased, keepdim, correction)


@public(method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(...), mean(...))`` over the same dims, in one call.

    >>> import chainrule as cr
    >>> v, m = cr.var_mean(cr.tensor([1., 3.])); v.item(), m.item()
    (2.0, 2.0)
    """
    return _stat_mean(var, input, dim, unbiased, keepdim, correction)


@public
def aminmax(input, *, dim=None, keepdim=False):
    """``(amin, amax)`` over ``dim`` (all dims by default), a named tuple ``(min, max)``.

    >>> import chainrule as cr
    >>> cr.aminmax(cr.tensor([[1., 5.], [7., 2.]]), dim=0).max.tolist()
    [7.0, 5.0]
    """
    if input._data.dtype.kind == "c":
        raise kernel_error("aminmax_cpu")(input._data.dtype)
    dims = () if dim is None else dim
    return return_types.aminmax(amin(input, dims, keepdim), amax(input, dims, keepdim))


@public
def count_nonzero(input, dim=None):
    """The number of nonzero elements (over ``dim``: an int or a tuple), int64.

    >>> import chainrule as cr
    >>> cr.count_nonzero(cr.tensor([[0., 1.], [2., 3.]]), dim=0).tolist()
    [1, 2]
    """
    dims = _dims(input, dim)
    return Tensor._wrap(asarray(np.count_nonzero(input._data, axis=dims), np.int64))


# --- quantile, nanquantile (composed of sort, gather and lerp: differentiable) ----------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_q(input, q, name):
    """q as a 1-D float64 array, and whether it was a scalar."""
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._data.dtype != input._data.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        values, scalar = q._data.astype(np.float64).reshape(-1), q._data.ndim == 0
        if not np.all((values >= 0) & (values <= 1)):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        return values, scalar
    if not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    return np.array([float(q)]), True


def _quantile_ranks(a, d, qs, ignore_nan):
    """Fractional positions in the sorted slices (qs along ``d``); a slice with NaN
    points at its last element (a NaN) unless ``ignore_nan``."""
    shape = [1] * a.ndim
    shape[d] = qs.size
    qs = on_device_of(qs, a)                # a number's q (on the host) to a's device
    nans = np.add.reduce(np.isnan(a), axis=d, keepdims=True)
    n = a.shape[d]
    if ignore_nan:
        ranks = qs.reshape(shape) * (n - nans - 1)
    else:
        ranks = np.where(nans > 0, n - 1, qs.reshape(shape) * (n - 1))
    return np.maximum(ranks, 0)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    if input._data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    qs, scalar = _quantile_q(input, q, name)
    if input._data.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    x = input.reshape(-1) if dim is None or input._data.ndim == 0 else input
    d = 0 if x is not input else wrap_dim(dim, input._data.ndim)
    values = sort(x, d).values
    ranks = _quantile_ranks(values._data, d, qs, ignore_nan)
    out = _interpolate(values, d, ranks, interpolation)
    return _quantile_layout(out, input, d, dim, keepdim, scalar)


def _interpolate(values, d, ranks, interpolation):
    gather = FUNCTIONS["gather"]
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}[interpolation]
        return gather(values, d, Tensor._wrap(pick(ranks).astype(np.int64)))
    below, above = np.floor(ranks), np.ceil(ranks)
    weights = ranks * 0 + 0.5 if interpolation == "midpoint" else ranks - below
    low = gather(values, d, Tensor._wrap(below.astype(np.int64)))
    high = gather(values, d, Tensor._wrap(above.astype(np.int64)))
    return FUNCTIONS["lerp"](low, high, Tensor._wrap(weights.astype(values._data.dtype)))


def _quantile_layout(out, input, d, dim, keepdim, scalar):
    """The q values first (dropped for a scalar q), then the reduced shape."""
    out = FUNCTIONS["movedim"](out, d, 0)
    if keepdim:
        kept = [1] * input._data.ndim if dim is None else list(input._data.shape)
        if dim is not None and input._data.ndim:
            kept[d] = 1
        out = out.reshape([out.shape[0]] + kept)
    return out.squeeze(0) if scalar else out


@public
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles (``q`` a number or a 1-D tensor in [0, 1]) of all elements or
    along ``dim``, between the sorted values by ``interpolation`` ("linear", "lower",
    "higher", "midpoint", "nearest"); NaN where a slice holds NaN. Differentiable.

    >>> import chainrule as cr
    >>> cr.quantile(cr.tensor([1., 2., 3., 4.]), 0.5).item()
    2.5
    >>> cr.quantile(cr.tensor([1., 2., 3., 4.]), 0.5, interpolation="lower").item()
    2.0
    """
    result = _quantile(input, q, dim, keepdim, interpolation, False, "quantile")
    return result if out is None else _write_out(result, out, "quantile")


@public
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """:func:`quantile` ignoring NaN (NaN only for an all-NaN slice).

    >>> import chainrule as cr
    >>> cr.nanquantile(cr.tensor([1., float("nan"), 3.]), 0.5).item()
    2.0
    """
    # the reference's messages name quantile() for nanquantile too
    result = _quantile(input, q, dim, keepdim, interpolation, True, "quantile")
    return result if out is None else _write_out(result, out, "nanquantile")


# --- histograms (not differentiable) ----------------------------------------------------
@public
def histc(input, bins=100, min=0, max=0):
    """Counts of ``input`` in ``bins`` equal bins over ``[min, max]`` (min == max: the
    data's range); values outside are ignored. Same dtype as ``input``.

    >>> import chainrule as cr
    >>> cr.histc(cr.tensor([1., 2., 1.]), bins=4, min=0, max=3).tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    a = input._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"torch.histogram(): min should not exceed max, but got min {lo} "
                           f"max {hi} for dimension 0")
    counts, _ = np.histogram(a.astype(np.float64), bins, (lo, hi))
    return Tensor._wrap(counts.astype(a.dtype))


@public
def histogram(input, bins, *, range=None, weight=None, density=False):
    """A named tuple ``(hist, bin_edges)``: ``bins`` an int (equal bins over ``range``,
    by default the data's) or a 1-D tensor of edges; optional ``weight`` per element.

    >>> import chainrule as cr
    >>> h = cr.histogram(cr.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
    >>> h.hist.tolist(), h.bin_edges.tolist()
    ([0.0, 2.0, 1.0, 0.0], [0.0, 0.75, 1.5, 2.25, 3.0])
    """
    a = input._data
    edges = bins._data if isinstance(bins, Tensor) else int(bins)
    w = None if weight is None else weight._data
    hist, bin_edges = np.histogram(a, edges, range, density=density, weights=w)
    return return_types.histogram(Tensor._wrap(hist.astype(a.dtype)),
                                  Tensor._wrap(bin_edges.astype(a.dtype)))
