"""More of the reference's ``torch.*`` names that programs use, composed from the table's
ops (so differentiable where the reference is): the ``*_copy`` variants of the views,
``adjoint``, ``trapz`` and ``cumulative_trapezoid``, ``put``/``put_``, ``index_reduce``,
the in-place ``addmm_`` family, the deprecated ``lu``/``lu_solve``/``lu_unpack``, the
conversions ``asarray``, ``frombuffer``, ``from_dlpack``/``to_dlpack`` (DLPack through
NumPy's), and the constants ``e``, ``pi``, ``inf``, ``nan``, ``newaxis``.
"""
import math

import numpy as np

from .. import _dtypes, _factories
from .._tensor import Tensor
from ._common import FUNCTIONS, as_tensor_arg, commit_inplace, method, public, require_tensor

F = FUNCTIONS

CONSTANTS = {"e": math.e, "pi": math.pi, "inf": math.inf, "nan": math.nan, "newaxis": None}


# --- the *_copy variants: the view, then a contiguous copy ------------------------------------
def _contiguous_copy(view):
    """A contiguous tensor of ``view``'s values in new memory (recorded, differentiable)."""
    out = view.contiguous()
    return out.clone() if out is view else out


def _copy_variant(name, view):
    """``<name>_copy``: what ``view`` returns, as new tensors that share no memory."""
    def copy(input, *args, **kwargs):
        out = view(input, *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return [_contiguous_copy(t) for t in out]
        return _contiguous_copy(out)
    copy.__name__ = copy.__qualname__ = f"{name}_copy"
    copy.__doc__ = (f"``{name}``'s result copied into new memory (the reference's "
                    f"``torch.{name}_copy``).\n\n    >>> import chainrule as cr\n"
                    f"    >>> x = cr.zeros(2, 3); cr.t_copy(x)._base is None\n    True\n")
    return public(copy, method=False)


_VIEWS = {
    "view": lambda x, *shape: x.view(*shape), "permute": lambda x, dims: x.permute(dims),
    "select": lambda x, dim, index: x.select(dim, index),
    "slice": lambda x, dim=0, start=None, end=None, step=1:
        x[(slice(None),) * (dim % max(x.dim(), 1)) + (slice(start, end, step),)],
    "split": lambda x, split_size, dim=0: x.split(split_size, dim),
    "split_with_sizes": lambda x, split_sizes, dim=0: x.split_with_sizes(split_sizes, dim),
    "unbind": lambda x, dim=0: x.unbind(dim),
    "unfold": lambda x, dimension, size, step: x.unfold(dimension, size, step),
    "as_strided": lambda x, size, stride, storage_offset=None:
        x.as_strided(size, stride, storage_offset),
    "diagonal": lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2),
    "expand": lambda x, size, implicit=False: x.expand(size),
    "squeeze": lambda x, *dim: x.squeeze(*dim), "t": lambda x: x.t(),
    "transpose": lambda x, dim0, dim1: x.transpose(dim0, dim1),
    "unsqueeze": lambda x, dim: x.unsqueeze(dim), "detach": lambda x: x.detach(),
    "alias": lambda x: x.view_as(x),
    "view_as_real": lambda x: F["view_as_real"](x),
    "view_as_complex": lambda x: F["view_as_complex"](x),
}
for _name, _view in _VIEWS.items():
    _copy_variant(_name, _view)


@public
def adjoint(input):
    """The conjugate transpose of the last two dimensions (a view), ``input.mH``.

    >>> import chainrule as cr
    >>> cr.adjoint(cr.tensor([[1 + 2j, 3j]])).tolist()
    [[(1-2j)], [-3j]]
    """
    return input.adjoint()


# --- integration --------------------------------------------------------------------------------
@public(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim`` (the older name of :func:`trapezoid`).

    >>> import chainrule as cr
    >>> cr.trapz(cr.tensor([1., 2., 3.])).item()
    4.0
    """
    return F["trapezoid"](y, x, dx=dx, dim=dim)


@public(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim``: one element fewer than ``y``.

    >>> import chainrule as cr
    >>> cr.cumulative_trapezoid(cr.tensor([1., 2., 3.])).tolist()
    [1.5, 4.0]
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments")
    F["_refuse_bool_samples"]("cumulative_trapezoid", y, x)
    n = y.shape[dim]
    left, right = y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, min(1, n), max(n - 1, 0))
    areas = (left + right) / 2
    if x is not None:
        x = as_tensor_arg(x, "x")
        widths = F["diff"](x, dim=dim if x.dim() > 1 else -1)
        if x.dim() == 1 and y.dim() > 1:
            widths = widths.reshape([-1] + [1] * ((y.dim() - 1 - dim % y.dim())))
        areas = areas * widths
    else:
        areas = areas * (1 if dx is None else dx)
    return areas.cumsum(dim)


# --- put, index_reduce --------------------------------------------------------------------------
@public
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source``'s elements written (or, with ``accumulate``,
    added) at the flat positions ``index`` (negative positions count from the end).

    >>> import chainrule as cr
    >>> cr.put(cr.zeros(2, 2), cr.tensor([0, -1]), cr.tensor([1., 2.])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if index._data.dtype != np.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{_dtypes.scalar_type_name(index._data.dtype)}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_dtypes.scalar_type_name(input._data.dtype)} and "
                           f"source.dtype = {_dtypes.scalar_type_name(source._data.dtype)}")
    flat = input.reshape(-1).index_put((index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


@method("put_")
def put_(self, index, source, accumulate=False):
    """In-place :func:`put`.

    >>> import chainrule as cr
    >>> x = cr.zeros(3); _ = x.put_(cr.tensor([1]), cr.tensor([5.])); x.tolist()
    [0.0, 5.0, 0.0]
    """
    return commit_inplace(self, put(self, index, source, accumulate))


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


@public
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce ``source``'s slices along ``dim`` into ``input`` at ``index`` with ``reduce``
    ('prod', 'mean', 'amax' or 'amin'), counting ``input``'s own values when
    ``include_self``.

    >>> import chainrule as cr
    >>> cr.index_reduce(cr.ones(3), 0, cr.tensor([0, 0, 2]), cr.tensor([2., 3., 4.]), 'prod').tolist()
    [6.0, 1.0, 4.0]
    """
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = dim % max(input.dim(), 1)
    shape = [1] * source.dim()
    if source.dim():
        shape[dim] = -1
    expanded = index.reshape(shape).expand(source.shape) if source.dim() else index.reshape(())
    return input.scatter_reduce(dim, expanded, source, reduce, include_self=include_self)


@method("index_reduce_")
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In-place :func:`index_reduce`.

    >>> import chainrule as cr
    >>> x = cr.ones(2); _ = x.index_reduce_(0, cr.tensor([1]), cr.tensor([5.]), 'amax'); x.tolist()
    [1.0, 5.0]
    """
    return commit_inplace(self, index_reduce(self, dim, index, source, reduce,
                                             include_self=include_self))


# --- the in-place matrix products and method spellings -----------------------------------------
def _inplace_product(name):
    def inplace(self, *args, beta=1, alpha=1):
        return commit_inplace(self, F[name](self, *args, beta=beta, alpha=alpha))
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = (f"In-place ``{name}``: ``self = beta * self + alpha * (product)``.\n\n"
                       f"    >>> import chainrule as cr\n    >>> x = cr.zeros(2, 2); "
                       f"_ = x.addmm_(cr.eye(2), cr.eye(2)); x._version\n    1\n")
    method(name + "_")(inplace)


for _name in ("addmm", "addmv", "addr", "baddbmm", "addbmm"):
    _inplace_product(_name)


@method("prelu")
def prelu_method(self, weight):
    """``x.prelu(weight)`` is ``nn.functional.prelu(x, weight)``.

    >>> import chainrule as cr
    >>> cr.tensor([-2., 3.]).prelu(cr.tensor([0.25])).tolist()
    [-0.5, 3.0]
    """
    require_tensor(weight, "prelu", "weight", 2)     # before the functional form counts self
    from ..nn import functional
    return functional.prelu(self, weight)


@method("hardshrink")
def hardshrink_method(self, lambd=0.5):
    """``x.hardshrink(lambd)`` is ``nn.functional.hardshrink(x, lambd)``.

    >>> import chainrule as cr
    >>> cr.tensor([0.3, 2.0]).hardshrink().tolist()
    [0.0, 2.0]
    """
    from ..nn import functional
    return functional.hardshrink(self, lambd)


# --- the deprecated LU functions ------------------------------------------------------------------
_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


@public
def lu(A, pivot=True, get_infos=False, out=None):
    """``(LU, pivots)`` of ``A`` (with ``get_infos``, also the LAPACK infos), the older
    spelling of ``linalg.lu_factor``; warns that it is deprecated, like the reference.

    >>> import chainrule as cr, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     LU, pivots = cr.lu(cr.tensor([[1., 2.], [3., 4.]]))
    >>> pivots.tolist()
    [2, 2]
    """
    import warnings
    from .. import linalg, return_types
    warnings.warn(_LU_DEPRECATED, UserWarning, stacklevel=2)
    LU, pivots, info = linalg.lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return return_types._lu_with_info(LU, pivots, info)
    return LU, pivots


@public
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """Solve ``A x = b`` from ``A``'s LU factorization (``linalg.lu_solve(LU, pivots, b)``).

    >>> import chainrule as cr
    >>> A = cr.tensor([[2., 0.], [0., 4.]])
    >>> LU, pivots = cr.linalg.lu_factor(A)
    >>> cr.lu_solve(cr.tensor([[2.], [2.]]), LU, pivots).tolist()
    [[1.0], [0.5]]
    """
    from .. import linalg
    return linalg.lu_solve(LU_data, LU_pivots, b)


def _permutation_matrix(pivots, m, like):
    """P with A = P L U from LAPACK's 1-based sequential row swaps (batched)."""
    piv = np.asarray(pivots.detach().cpu().numpy(), np.int64) - 1
    batch = piv.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    flat_perm, flat_piv = perm.reshape(-1, m), piv.reshape(-1, piv.shape[-1])
    for row, swaps in zip(flat_perm, flat_piv):
        for i, j in enumerate(swaps):
            row[i], row[j] = row[j], row[i]
    eye = np.eye(m, dtype=like._data.dtype)
    return Tensor._wrap(np.ascontiguousarray(np.swapaxes(eye[perm], -1, -2)))


@public(method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from ``linalg.lu_factor``'s output: ``A = P @ L @ U``;
    differentiable in ``LU_data``. What is not unpacked comes back empty.

    >>> import chainrule as cr
    >>> A = cr.tensor([[1., 2.], [3., 4.]])
    >>> P, L, U = cr.lu_unpack(*cr.linalg.lu_factor(A))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    from .. import return_types
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = Tensor._wrap(np.zeros((0,), LU_data._data.dtype))
    P = _permutation_matrix(LU_pivots, m, LU_data) if unpack_pivots else empty
    if not unpack_data:
        return return_types.lu_unpack(P, empty, empty)
    eye = Tensor._wrap(np.eye(m, k, dtype=LU_data._data.dtype))
    L = F["tril"](LU_data[..., :, :k], -1) + eye
    U = F["triu"](LU_data[..., :k, :])
    return return_types.lu_unpack(P, L, U)


# --- conversions: asarray, frombuffer, DLPack -----------------------------------------------------
def _dtype_or_none(dtype):
    return None if dtype is None else _dtypes.to_dtype(dtype)


@public(method=False)
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing memory where it can (a tensor itself, a NumPy array or a
    DLPack producer of a matching dtype); ``copy=True`` always copies, ``copy=False``
    refuses to; other objects are read like :func:`tensor`.

    >>> import chainrule as cr, numpy as np
    >>> a = np.zeros(2); t = cr.asarray(a); a[0] = 5.0; t.tolist()
    [5.0, 0.0]
    """
    dtype = _dtype_or_none(dtype)
    if isinstance(obj, Tensor):
        out = obj
    elif isinstance(obj, np.ndarray):
        out = _factories.from_numpy(obj)
    elif hasattr(obj, "__dlpack__"):
        out = from_dlpack(obj)
    else:
        return _factories.tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)
    if dtype is not None and out.dtype != dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype "
                             f"'{_dtypes.scalar_type_name(out._data.dtype)}' into dtype "
                             f"'{_dtypes.scalar_type_name(dtype.np)}'.")
        out = out.to(dtype)
    if device is not None:
        out = out.to(device)
    if copy and out is obj or (copy and isinstance(obj, np.ndarray)):
        out = out.clone()
    if requires_grad:
        out.requires_grad_(True)
    return out


@public(method=False)
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the memory of a Python buffer (``bytes``, ``bytearray``,
    ``array.array``, ...), without a copy: ``count`` elements of ``dtype`` from byte
    ``offset`` (-1: to the end).

    >>> import chainrule as cr
    >>> cr.frombuffer(bytearray(b'\\x01\\x00\\x02\\x00'), dtype=cr.int16).tolist()
    [1, 2]
    """
    dtype = _dtypes.to_dtype(dtype)
    view = memoryview(buffer).cast("B")
    size = dtype.np.itemsize
    available = len(view) - offset
    if count == -1:
        if available % size:
            raise ValueError(f"buffer length ({available} bytes) after offset ({offset} bytes) "
                             f"must be a multiple of element size ({size})")
        count = available // size
    elif count * size > available:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({len(view)} bytes)")
    array = np.frombuffer(view, dtype=dtype.np, count=count, offset=offset)
    out = Tensor._wrap(array if array.flags.writeable else array.view())
    return out.requires_grad_(True) if requires_grad else out


@public(method=False)
def from_dlpack(ext_tensor):
    """A tensor sharing the memory of a DLPack producer (an object with ``__dlpack__``,
    e.g. a NumPy array or another library's tensor) or of a DLPack capsule.

    >>> import chainrule as cr, numpy as np
    >>> cr.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """
    if not hasattr(ext_tensor, "__dlpack__"):
        ext_tensor = _Capsule(ext_tensor)
    return _factories.from_numpy(np.from_dlpack(ext_tensor))


class _Capsule:
    """A bare DLPack capsule dressed as a producer (NumPy takes only producers)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)                                      # kDLCPU


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s memory (CPU tensors; shares, does not copy).

    >>> import chainrule as cr
    >>> cr.from_dlpack(cr.to_dlpack(cr.tensor([1, 2]))).tolist()
    [1, 2]
    """
    return tensor.detach().numpy().__dlpack__()


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack protocol: a capsule of this tensor's memory (CPU tensors).

    >>> import chainrule as cr, numpy as np
    >>> np.from_dlpack(cr.tensor([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    if self.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    kwargs = {} if max_version is None else {"max_version": max_version}
    return self.numpy().__dlpack__(**kwargs)


def _dlpack_device(self):
    """``(device type, index)`` for DLPack: (1, 0), the CPU.

    >>> import chainrule as cr
    >>> cr.tensor([1.0]).__dlpack_device__()
    (1, 0)
    """
    return (1, 0)


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
FUNCTIONS["to_dlpack"] = to_dlpack


# --- gradient ---------------------------------------------------------------------------------
def _spacings(spacing, dims, input):
    """Per differentiated dim: a number (uniform step) or a 1-D coordinate tensor."""
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        return [s.item() if isinstance(s, Tensor) and s.dim() == 0 else s for s in spacing]
    value = spacing.item() if isinstance(spacing, Tensor) else spacing
    return [value] * len(dims)


def _uniform_derivative(f, dim, h, edge_order):
    n = f.shape[dim]
    part = lambda start, length: f.narrow(dim, start, length)      # noqa: E731
    interior = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / h
        last = (part(n - 1, 1) - part(n - 2, 1)) / h
    else:
        first = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / h
        last = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / h
    return F["cat"]([first, interior, last], dim)


def _coordinate_derivative(f, dim, x, edge_order):
    """numpy.gradient's second-order formula on the nonuniform grid ``x``."""
    n = f.shape[dim]
    shape = [1] * f.dim()
    shape[dim] = -1
    dx = F["diff"](x).reshape(shape)
    part = lambda t, start, length: t.narrow(dim, start, length)    # noqa: E731
    hl, hr = part(dx, 0, n - 2), part(dx, 1, n - 2)
    interior = (hl * hl * part(f, 2, n - 2) - hr * hr * part(f, 0, n - 2)
                + (hr * hr - hl * hl) * part(f, 1, n - 2)) / (hl * hr * (hl + hr))
    if edge_order == 1:
        first = (part(f, 1, 1) - part(f, 0, 1)) / part(dx, 0, 1)
        last = (part(f, n - 1, 1) - part(f, n - 2, 1)) / part(dx, n - 2, 1)
    else:
        d1, d2 = part(dx, 0, 1), part(dx, 1, 1)
        first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * part(f, 0, 1)
                 + (d1 + d2) / (d1 * d2) * part(f, 1, 1) - d1 / (d2 * (d1 + d2)) * part(f, 2, 1))
        d1, d2 = part(dx, n - 3, 1), part(dx, n - 2, 1)
        last = (d2 / (d1 * (d1 + d2)) * part(f, n - 3, 1) - (d2 + d1) / (d1 * d2) * part(f, n - 2, 1)
                + (2 * d2 + d1) / (d2 * (d1 + d2)) * part(f, n - 1, 1))
    return F["cat"]([first, interior, last], dim)


@public(method=False)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Derivative estimates of ``input`` along each of ``dim`` (default: every dim): central
    differences inside, one-sided ones of order ``edge_order`` (1 or 2) at the edges;
    ``spacing`` a number, one number per dim, or one coordinate tensor per dim.

    >>> import chainrule as cr
    >>> cr.gradient(cr.tensor([1., 4., 9., 16.]))[0].tolist()
    [3.0, 4.0, 6.0, 7.0]
    """
    dims = list(range(input.dim())) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if input.is_floating_point() or input.is_complex() else \
        input.to(_dtypes.get_default_dtype())
    out = []
    for d, h in zip(dims, _spacings(spacing, dims, input)):
        if isinstance(h, Tensor):
            out.append(_coordinate_derivative(f, d, h.to(f.dtype), edge_order))
        else:
            out.append(_uniform_derivative(f, d, h, edge_order))
    return tuple(out)


# --- histogramdd --------------------------------------------------------------------------------
_C_TYPE_NAMES = {np.dtype(np.float64): "double", np.dtype(np.float32): "float"}


def _histogram_edges(column, bins, lo_hi, dtype, d=0):
    if isinstance(bins, Tensor):
        if bins._data.dtype != dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                f"got input with dtype {_C_TYPE_NAMES.get(dtype, dtype.name)} and bins for "
                f"dimension {d} with dtype {_C_TYPE_NAMES.get(bins._data.dtype, bins._data.dtype.name)}")
        return np.asarray(bins.detach().cpu().numpy(), dtype)
    lo, hi = lo_hi if lo_hi is not None else \
        ((column.min(), column.max()) if column.size else (0.0, 0.0))
    return _linspace(dtype.type(lo), dtype.type(hi), int(bins) + 1)


def _linspace(lo, hi, steps):
    """The reference's linspace in the edges' dtype: the first half counted up from
    ``lo``, the second down from ``hi`` (so both ends are exact)."""
    step = (hi - lo) / lo.dtype.type(steps - 1)
    i = np.arange(steps)
    up = lo + step * i.astype(lo.dtype)
    down = hi - step * (steps - 1 - i).astype(lo.dtype)
    return np.where(i < steps // 2, up, down).astype(lo.dtype)


@public(method=False)
def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The histogram of the points in ``input``'s rows (``(..., D)``: D coordinates each):
    ``bins`` a count, one count per dimension or one edge tensor per dimension;
    ``range`` the ``[lo_0, hi_0, lo_1, hi_1, ...]`` limits. Returns ``(hist, bin_edges)``.

    >>> import chainrule as cr
    >>> h = cr.histogramdd(cr.tensor([[0., 1.], [1., 0.], [1., 1.]]), bins=2)
    >>> h.hist.tolist()
    [[0.0, 1.0], [1.0, 1.0]]
    """
    from .. import return_types
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    data = np.asarray(input.detach().cpu().numpy())
    dims = data.shape[-1]
    sample = data.reshape(-1, dims)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    limits = [None] * dims if range is None else \
        [(range[2 * d], range[2 * d + 1]) for d in builtins_range(dims)]
    edges = [_histogram_edges(sample[:, d], b, lim, np.dtype(data.dtype), d)
             for d, (b, lim) in enumerate(zip(per_dim, limits))]
    weights = None if weight is None else np.asarray(weight.detach().cpu().numpy()).reshape(-1)
    hist, _ = np.histogramdd(sample, bins=[e.astype(np.float64) for e in edges], weights=weights,
                             density=density)
    return return_types.histogramdd(Tensor._wrap(hist.astype(data.dtype)),
                                    tuple(Tensor._wrap(e) for e in edges))


builtins_range = range


# --- resize_ --------------------------------------------------------------------------------------
def _storage_of(arr):
    """(the contiguous 1-D array ``arr``'s memory starts in, ``arr``'s element offset in it):
    NumPy's base chain stands for the reference's storage."""
    storage = arr
    while isinstance(storage.base, np.ndarray) and storage.base.dtype == arr.dtype:
        storage = storage.base
    if not storage.flags.c_contiguous:
        return np.ascontiguousarray(arr).reshape(-1), 0
    flat = storage.reshape(-1)
    start = arr.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    return flat, start // arr.dtype.itemsize


@method("resize_")
def resize_(self, *sizes, memory_format=None):
    """Give this tensor the shape ``sizes`` (contiguous) over its memory: the elements
    kept are the first ones of the memory it views, and growing beyond that memory adds
    uninitialized elements (zeros here). Not for tensors that require grad.

    >>> import chainrule as cr
    >>> x = cr.arange(6.0); _ = x.resize_(2, 2); x.tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    numel = int(np.prod(shape, dtype=np.int64))
    flat, start = _storage_of(self._data)
    if start + numel <= flat.size:
        self._data = flat[start:start + numel].reshape(shape)
    else:
        grown = np.zeros(numel, self._data.dtype)
        kept = flat[start:start + numel]
        grown[:kept.size] = kept
        self._data = grown.reshape(shape)
    self._bump_version()
    return self


@method("resize_as_")
def resize_as_(self, the_template, *, memory_format=None):
    """``self.resize_(the_template.shape)``.

    >>> import chainrule as cr
    >>> cr.ones(2, 3).resize_as_(cr.zeros(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    require_tensor(the_template, "resize_as_", "the_template", 2)
    return resize_(self, the_template.shape)


# --- binomial ---------------------------------------------------------------------------------------
@public(method=False)
def binomial(count, prob, generator=None):
    """Binomial samples: successes in ``count`` trials of probability ``prob`` each
    (floating tensors, broadcast), drawn from ``generator`` (default: the global one).

    >>> import chainrule as cr
    >>> cr.binomial(cr.tensor([10., 3.]), cr.tensor([1.0, 0.0])).tolist()
    [10.0, 0.0]
    """
    from .._random import numpy_rng
    if not count.is_floating_point():
        raise ValueError("binomial only supports floating-point dtypes for count, got: "
                         f"{_dtypes.scalar_type_name(count._data.dtype)}")
    n = np.asarray(count.detach().cpu().numpy())
    p = np.clip(np.asarray(prob.detach().cpu().numpy(), np.float64), 0.0, 1.0)
    draws = numpy_rng(generator).binomial(n.astype(np.int64), p)
    return Tensor._wrap(np.asarray(draws).astype(n.dtype))
