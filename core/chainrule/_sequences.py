"""Factories of index and value sequences: tril_indices/triu_indices, unravel_index,
logspace, the deprecated ``range``, scalar_tensor, vander, and the signal windows
(hann, hamming, blackman, bartlett, kaiser). Windows are computed in their dtype in
the reference's order of operations, so float32 windows round as its do."""
import math
import warnings

import numpy as np

from . import _dtypes
from ._factories import _finish, _refuse_kinds, ones_like, written_out
from ._ops._common import FUNCTIONS
from ._tensor import Tensor


def _dtype_or_default(dtype):
    return _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)


def _triangle_indices(row, col, offset, dtype, device, lower):
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    d = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    return _finish(np.stack([r, c]).astype(d.np).reshape(2, -1), False, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of a ``row`` x ``col`` matrix's lower triangle (on and
    below diagonal ``offset``), as a 2 x N tensor.

    >>> import chainrule as cr
    >>> cr.tril_indices(3, 3, -1).tolist()
    [[1, 2, 2], [0, 0, 1]]
    """
    return _triangle_indices(row, col, offset, dtype, device, lower=True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of the upper triangle (on and above ``offset``).

    >>> import chainrule as cr
    >>> cr.triu_indices(2, 3, 1).tolist()
    [[0, 0, 1], [1, 2, 2]]
    """
    return _triangle_indices(row, col, offset, dtype, device, lower=False)


def unravel_index(indices, shape):
    """The coordinates in ``shape`` of flat ``indices``: a tuple of tensors, one per
    dimension, each shaped like ``indices``.

    >>> import chainrule as cr
    >>> [t.tolist() for t in cr.unravel_index(cr.tensor([4, 7]), (3, 3))]
    [[1, 2], [1, 1]]
    """
    if not isinstance(indices, Tensor) or indices._data.dtype.kind not in "iu":
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{getattr(indices, 'dtype', type(indices).__name__)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    flat, total = indices._data, math.prod(shape)
    if flat.size and (flat.min() < -total or flat.max() >= total):
        raise RuntimeError(f"'indices' must be in range [{-total}, {total - 1}]")
    coords = np.unravel_index(np.where(flat < 0, flat + total, flat), shape)
    return tuple(Tensor._wrap(np.asarray(c, dtype=np.int64)) for c in coords)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False,
             layout=None, out=None):
    """``steps`` values ``base ** e`` for exponents evenly spaced from ``start`` to ``end``.

    >>> import chainrule as cr
    >>> cr.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    if out is not None:
        return written_out(out, logspace(start, end, steps, base, dtype=dtype or out.dtype),
                           "logspace")
    d = _dtype_or_default(dtype)
    _refuse_kinds(d, "b", "logspace_cpu")
    values = np.power(float(base), np.linspace(float(start), float(end), steps))
    if not (d.is_floating_point or d.is_complex):
        values = np.trunc(values)
    return _finish(values.astype(d.np), requires_grad, device)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False,
          layout=None, out=None):
    """Deprecated: the values from ``start`` to ``end`` *inclusive* by ``step`` (use
    ``arange``, which excludes ``end``).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     cr.range(0, 1, 0.5).tolist()
    [0.0, 0.5, 1.0]
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    d = _dtype_or_default(dtype if out is None or dtype is not None else out.dtype)
    count = int(math.floor((end - start) / step)) + 1
    values = start + step * np.arange(max(count, 0), dtype=np.float64)
    result = _finish(values.astype(d.np), requires_grad, device)
    return result if out is None else written_out(out, result, "range")


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    """A 0-d tensor holding ``s`` (the default float dtype unless ``dtype`` is given).

    >>> import chainrule as cr
    >>> cr.scalar_tensor(2, dtype=cr.int64)
    tensor(2)
    """
    d = _dtype_or_default(dtype)
    return _finish(np.asarray(s, dtype=d.np), requires_grad, device)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1)`` down to
    ``x ** 0`` (or up, with ``increasing``). Differentiable.

    >>> import chainrule as cr
    >>> cr.vander(cr.tensor([1, 2, 3]), N=3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "bu" or x._data.dtype == np.int8 or x._data.dtype == np.int16 \
            or x._data.dtype == np.int32:
        x = x.to(_dtypes.int64)
    powers = [ones_like(x)] + [x] * max(n - 1, 0)
    columns = FUNCTIONS["cumprod"](FUNCTIONS["stack"](powers[:n], 1), 1) if n else \
        FUNCTIONS["reshape"](x, (-1, 0))
    return columns if increasing else FUNCTIONS["flip"](columns, (1,))


# --- windows -------------------------------------------------------------------------
def _window(name, length, periodic, dtype, device, requires_grad, body):
    d = _dtype_or_default(dtype)
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{str(d).replace('chainrule.', 'torch.')}")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window length, got "
                           f"window_length={length}")
    if length <= 1:
        return _finish(np.ones(length, d.np), requires_grad, device)
    m = length + 1 if periodic else length
    values = body(np.arange(m, dtype=d.np), m)[:length]
    return _finish(np.ascontiguousarray(values, dtype=d.np), requires_grad, device)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   device=None, requires_grad=False, layout=None, pin_memory=False):
    """The Hamming window ``alpha - beta * cos(2 pi n / (M - 1))`` (M = length + 1 when
    ``periodic``, the last value then dropped).

    >>> import chainrule as cr
    >>> [round(v, 2) for v in cr.hamming_window(4, periodic=False).tolist()]
    [0.08, 0.77, 0.77, 0.08]
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: alpha - beta * np.cos(n * (2 * math.pi / (m - 1))))


def hann_window(window_length, periodic=True, *, dtype=None, device=None,
                requires_grad=False, layout=None, pin_memory=False):
    """The Hann window (a Hamming window with alpha = beta = 0.5).

    >>> import chainrule as cr
    >>> cr.hann_window(4).tolist()
    [0.0, 0.5, 1.0, 0.5]
    """
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None, pin_memory=False):
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``.

    >>> import chainrule as cr
    >>> [round(v, 2) for v in cr.blackman_window(3, periodic=False).tolist()]
    [-0.0, 1.0, -0.0]
    """
    def body(n, m):
        x = n * (math.pi / (m - 1))
        return np.cos(x * 4) * 0.08 - np.cos(x * 2) * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   body)


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False, layout=None, pin_memory=False):
    """The Bartlett (triangular) window ``1 - |2n / (M - 1) - 1|``.

    >>> import chainrule as cr
    >>> cr.bartlett_window(5, periodic=False).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    def body(n, m):
        x = n * (2.0 / (m - 1))
        half = ((m - 1) >> 1) + 1
        x[half:] = 2 - x[half:]
        return x
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   body)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None,
                  requires_grad=False, layout=None, pin_memory=False):
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``.

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.kaiser_window(4).tolist()]
    [0.0001, 0.2157, 1.0, 0.2157]
    """
    def body(n, m):
        ratio = n.astype(np.float64) * (2.0 / (m - 1)) - 1.0
        return np.i0(beta * np.sqrt(np.clip(1.0 - ratio * ratio, 0.0, None))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   body)


__all__ = ["tril_indices", "triu_indices", "unravel_index", "logspace", "range",
           "scalar_tensor", "vander", "hamming_window", "hann_window", "blackman_window",
           "bartlett_window", "kaiser_window"]
