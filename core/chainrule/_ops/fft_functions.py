"""The functions of ``chainrule.fft``: the reference's argument handling (``n``/``s``,
``dim``, ``norm``, ``out=``, dtype promotion and errors) around the three table ops of
fft.py, composed as the reference composes them (so the graphs have its nodes:
``fft`` of a real tensor is FftR2CBackward0, ``ihfft`` a ConjBackward0 over it, ...).

``FFT`` holds the ``chainrule.fft`` namespace.
"""
import functools
import inspect

import numpy as np

from .. import _dtypes
from .._factories import arange
from .._tensor import Tensor
from ._common import FUNCTIONS, cast, numpy_spellings, wrap_dim
from .fft import _fft_c2c, _fft_c2r, _fft_r2c
from .reduction import _write_out

FFT = {}


def fft_function(f):
    """Register a function of ``chainrule.fft`` (with ``out=`` where it has one)."""
    FFT[f.__name__] = _writes_out(f) if "out" in inspect.signature(f).parameters \
        else numpy_spellings(f)
    return f


def _writes_out(f):
    """``out=``: the result written into ``out`` (a complex result needs a complex
    ``out``, a real one a real ``out``; the frequencies take ``out``'s dtype)."""
    inner = numpy_spellings(f)
    fname = f.__name__.replace("2", "n")

    @functools.wraps(f)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return inner(*args, **kwargs)
        if fname.endswith("freq"):
            kwargs.setdefault("dtype", out.dtype)
        result = inner(*args, **kwargs)
        if result.is_complex() != out.is_complex():
            kind = "a complex" if result.is_complex() else "a floating point"
            raise RuntimeError(f"{fname} expects {kind} output tensor, but got "
                               f"{_dtypes.scalar_type_name(out._data.dtype)}")
        return _write_out(result, out, fname)
    return wrapper


# --- argument handling ------------------------------------------------------------------
def _normalization(norm, forward):
    """The reference's scaling code for a norm string: 0 none, 1 by 1/sqrt(n), 2 by 1/n."""
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"argument 'norm' must be str, not {type(norm).__name__}")
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex=False):
    """Integer and bool inputs become the default dtype; half types are refused."""
    dtype = _dtypes.from_numpy_dtype(x._data.dtype)
    if dtype in (_dtypes.float16, _dtypes.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_dtypes.scalar_type_name(x._data.dtype)}")
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = _dtypes.get_default_dtype()
    return cast(x, dtype.to_complex() if require_complex else dtype)


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _int_arg(value, fname, name):
    if value is not None and (not isinstance(value, (int, np.integer)) or
                              isinstance(value, bool)):
        raise TypeError(f"fft_{fname}(): argument '{name}' must be int, not "
                        f"{type(value).__name__}")
    return value


def _one_dim(x, n, dim, fname, default=None):
    """(dims, sizes) of a 1-D transform: ``dim`` wrapped, ``n`` defaulting to its size
    there (or to ``default(size)``)."""
    _int_arg(n, fname, "n")
    d = _wrap(_int_arg(dim, fname, "dim"), x)
    if n is None:
        n = x.shape[d] if default is None else default(x.shape[d])
    _check_points(n)
    return (d,), (n,)


def _wrap(dim, x):
    """``dim`` made non-negative; a 0-d tensor has no dim to transform."""
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, x.dim())


def _n_dims(x, s, dim):
    """(dims, sizes) of an n-D transform (the reference's canonicalization of s and dim)."""
    s = (s,) if isinstance(s, int) else s
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_wrap(d, x) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.dim():
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.dim()} dimensions.")
        dims = tuple(range(x.dim() - len(s), x.dim()))
    else:
        dims = tuple(range(x.dim()))
    sizes = tuple(x.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims))
    for n in sizes:
        _check_points(n)
    return dims, sizes


def _resize(x, dims, sizes):
    """``x`` cropped or zero-padded at the end of each of ``dims`` to ``sizes``."""
    pads = [(0, 0)] * x.dim()
    for d, n in zip(dims, sizes):
        pads[d] = (0, n - x.shape[d])
    if not any(after for _, after in pads):
        return x
    return FUNCTIONS["_constant_pad"](x, tuple(pads), 0)


def _c2r_sizes(x, s, dims, sizes, fname):
    """(last_dim_size, input sizes) of a complex-to-real transform: the output's last
    size defaults to 2 * (m - 1) for an input of size m there."""
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = sizes[-1] if s is not None and s[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
    _check_points(last)
    return last, sizes[:-1] + (last // 2 + 1,)


def _require_real(x, message, got="but got"):
    if x.is_complex():
        raise RuntimeError(f"{message}, {got} {_dtypes.scalar_type_name(x._data.dtype)}")


# --- one-dimensional transforms -------------------------------------------------------
def _fft_1d(input, n, dim, norm, forward, fname):
    x = _promote(input)
    dims, sizes = _one_dim(x, n, dim, fname)
    x = _resize(x, dims, sizes)
    if x.is_complex():
        return _fft_c2c(x, dims, _normalization(norm, forward), forward)
    out = _fft_r2c(x, dims, _normalization(norm, forward), False)
    return out if forward else FUNCTIONS["conj"](out)


@fft_function
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform along ``dim`` (``n`` points: the
    input is cropped or zero-padded). ``norm``: "backward" (no scaling, the default),
    "ortho" (1/sqrt(n)) or "forward" (1/n).

    >>> import chainrule as cr
    >>> cr.fft.fft(cr.tensor([1., 2., 3., 4.])).tolist()
    [(10+0j), (-2+2j), (-2+0j), (-2-2j)]
    """
    return _fft_1d(input, n, dim, norm, True, "fft")


@fft_function
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``fft`` (scaled by 1/n with the default norm "backward").

    >>> import chainrule as cr
    >>> cr.fft.ifft(cr.tensor([4., 0., 0., 0.])).tolist()
    [(1-0j), (1-0j), (1-0j), (1-0j)]
    """
    return _fft_1d(input, n, dim, norm, False, "ifft")


@fft_function
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """``fft`` of a real signal, only the n // 2 + 1 non-redundant bins.

    >>> import chainrule as cr
    >>> cr.fft.rfft(cr.tensor([1., 2., 3., 4.])).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    """
    _require_real(input, "rfft expects a real input tensor")
    x = _promote(input)
    dims, sizes = _one_dim(x, n, dim, "rfft")
    return _fft_r2c(_resize(x, dims, sizes), dims, _normalization(norm, True), True)


@fft_function
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``rfft``: a real signal of ``n`` points (default 2 * (m - 1)) from
    its m one-sided bins.

    >>> import chainrule as cr
    >>> cr.fft.irfft(cr.tensor([10+0j, -2+2j, -2+0j])).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    return _c2r_1d(input, n, dim, _normalization(norm, False), False, "irfft")


@fft_function
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """``fft`` of a Hermitian-symmetric signal given by its first half: real output of
    ``n`` points (default 2 * (m - 1)).

    >>> import chainrule as cr
    >>> cr.fft.hfft(cr.tensor([1+0j, 2+0j, 3+0j])).tolist()
    [8.0, -2.0, 0.0, -2.0]
    """
    return _c2r_1d(input, n, dim, _normalization(norm, True), True, "hfft")


def _c2r_1d(input, n, dim, normalization, conjugate, fname):
    x = _promote(input, require_complex=True)
    dims, (last,) = _one_dim(x, n, dim, fname, default=lambda m: 2 * (m - 1))
    x = _resize(x, dims, (last // 2 + 1,))
    return _fft_c2r(FUNCTIONS["conj"](x) if conjugate else x, dims, normalization, last)


@fft_function
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``hfft``: the one-sided (n // 2 + 1 bins) inverse transform of a
    real signal.

    >>> import chainrule as cr
    >>> cr.fft.ihfft(cr.tensor([8., -2., 0., -2.])).tolist()
    [(1-0j), (2-0j), (3-0j)]
    """
    _require_real(input, "ihfft expects a real input tensor")
    x = _promote(input)
    dims, sizes = _one_dim(x, n, dim, "ihfft")
    out = _fft_r2c(_resize(x, dims, sizes), dims, _normalization(norm, False), True)
    return FUNCTIONS["conj"](out)


# --- n-dimensional transforms ---------------------------------------------------------
def _fftn(input, s, dim, norm, forward):
    x = _promote(input, require_complex=True)
    dims, sizes = _n_dims(x, s, dim)
    return _fft_c2c(_resize(x, dims, sizes), dims, _normalization(norm, forward), forward)


def _rfftn(input, s, dim, norm):
    dims, sizes = _n_dims(input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _promote(input)
    _require_real(x, "rfftn expects a real-valued input tensor")
    return _fft_r2c(_resize(x, dims, sizes), dims, _normalization(norm, True), True)


def _irfftn(input, s, dim, norm):
    dims, sizes = _n_dims(input, s, dim)
    last, sizes = _c2r_sizes(input, s, dims, sizes, "irfftn")
    x = _resize(_promote(input, require_complex=True), dims, sizes)
    return _fft_c2r(x, dims, _normalization(norm, False), last)


def _hfftn(input, s, dim, norm, fname):
    dims, sizes = _n_dims(input, s, dim)
    last, sizes = _c2r_sizes(input, s, dims, sizes, fname)
    x = _resize(_promote(input, require_complex=True), dims, sizes)
    normalization = _normalization(norm, True)
    if len(dims) > 1:
        x = _fft_c2c(x, dims[:-1], normalization, True)
    return _fft_c2r(FUNCTIONS["conj"](x), dims[-1:], normalization, last)


def _ihfftn(input, s, dim, norm, fname):
    dims, sizes = _n_dims(input, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    _require_real(input, "Only supports floating-point dtypes", "but found:")
    x = _resize(_promote(input), dims, sizes)
    normalization = _normalization(norm, False)
    out = _fft_r2c(x, dims[-1:], normalization, True)
    if len(dims) == 1:
        return FUNCTIONS["conj"](out)
    out = FUNCTIONS["conj_physical"](out)
    return _fft_c2c(out, dims[:-1], normalization, False)


@fft_function
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``fft`` (over the last two dims by default).

    >>> import chainrule as cr
    >>> cr.fft.fft2(cr.tensor([[1., 2.], [3., 4.]])).real.tolist()
    [[10.0, -2.0], [-4.0, 0.0]]
    """
    return _fftn(input, s, dim, norm, True)


@fft_function
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``ifft``.

    >>> import chainrule as cr
    >>> cr.fft.ifft2(cr.tensor([[4., 0.], [0., 0.]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _fftn(input, s, dim, norm, False)


@fft_function
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional ``fft`` over ``dim`` (every dim by default, or the last len(s)),
    each cropped or zero-padded to its size in ``s`` (-1: unchanged).

    >>> import chainrule as cr
    >>> cr.fft.fftn(cr.ones(2, 3)).abs().tolist()
    [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _fftn(input, s, dim, norm, True)


@fft_function
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional ``ifft``.

    >>> import chainrule as cr
    >>> cr.fft.ifftn(cr.fft.fftn(cr.tensor([[1., 2.], [3., 4.]]))).real.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _fftn(input, s, dim, norm, False)


@fft_function
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``rfft`` (the last transformed dim one-sided).

    >>> import chainrule as cr
    >>> cr.fft.rfft2(cr.ones(2, 4)).shape
    chainrule.Size([2, 3])
    """
    return _rfftn(input, s, dim, norm)


@fft_function
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional ``rfft`` (the last transformed dim one-sided).

    >>> import chainrule as cr
    >>> cr.fft.rfftn(cr.ones(2, 4)).real.tolist()
    [[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _rfftn(input, s, dim, norm)


@fft_function
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of ``rfft2``.

    >>> import chainrule as cr
    >>> x = cr.tensor([[1., 2., 3., 4.], [5., 6., 7., 8.]])
    >>> cr.fft.irfft2(cr.fft.rfft2(x)).tolist()
    [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    """
    return _irfftn(input, s, dim, norm)


@fft_function
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of ``rfftn``: the last dim's size defaults to 2 * (m - 1).

    >>> import chainrule as cr
    >>> cr.fft.irfftn(cr.ones(2, 3, dtype=cr.complex64)).shape
    chainrule.Size([2, 4])
    """
    return _irfftn(input, s, dim, norm)


@fft_function
def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``hfft``.

    >>> import chainrule as cr
    >>> cr.fft.hfft2(cr.ones(2, 3, dtype=cr.complex64)).shape
    chainrule.Size([2, 4])
    """
    return _hfftn(input, s, dim, norm, "hfftn")


@fft_function
def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional ``hfft``: real output, the last dim Hermitian-completed.

    >>> import chainrule as cr
    >>> cr.fft.hfftn(cr.tensor([[1+0j, 0j], [0j, 0j]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _hfftn(input, s, dim, norm, "hfftn")


@fft_function
def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional ``ihfft``.

    >>> import chainrule as cr
    >>> cr.fft.ihfft2(cr.ones(2, 4)).shape
    chainrule.Size([2, 3])
    """
    return _ihfftn(input, s, dim, norm, "ihfftn")


@fft_function
def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional ``ihfft`` (the last transformed dim one-sided).

    >>> import chainrule as cr
    >>> cr.fft.ihfftn(cr.ones(2, 4)).real.tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _ihfftn(input, s, dim, norm, "ihfftn")


# --- sample frequencies and shifts ------------------------------------------------------
@fft_function
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """The sample frequencies of an ``n``-point ``fft`` with sample spacing ``d``:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n).

    >>> import chainrule as cr
    >>> cr.fft.fftfreq(4, d=0.5).tolist()
    [0.0, 0.5, -1.0, -0.5]
    """
    k = _frequency_steps(n, dtype, device, "fftfreq")
    k = FUNCTIONS["where"](k >= (n + 1) // 2, k - n, k)
    return _scaled(k, n, d, requires_grad)


@fft_function
def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The sample frequencies of an ``n``-point ``rfft``: [0, 1, ..., n // 2] / (d * n).

    >>> import chainrule as cr
    >>> cr.fft.rfftfreq(5, d=0.1).tolist()
    [0.0, 2.0, 4.0]
    """
    k = _frequency_steps(n // 2 + 1, dtype, device, "rfftfreq")
    return _scaled(k, n, d, requires_grad)


def _frequency_steps(count, dtype, device, fname):
    dtype = _dtypes.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: "
                           f"[{count}]")
    return arange(count, dtype=dtype, device=device)


def _scaled(k, n, d, requires_grad):
    out = k * (1.0 / (n * float(d))) if n else k
    return out.requires_grad_(requires_grad)


def _shift(input, dim, amount):
    dims = tuple(range(input.dim())) if dim is None else \
        ((dim,) if isinstance(dim, int) else tuple(dim))
    dims = tuple(wrap_dim(d, input.dim()) for d in dims)
    if not dims:
        raise RuntimeError("`shifts` required")
    shifts = tuple(amount(input.shape[d]) for d in dims)
    return FUNCTIONS["roll"](input, shifts, dims)


@fft_function
def fftshift(input, dim=None):
    """Move the zero-frequency bin to the centre of ``dim`` (every dim by default):
    a roll by size // 2.

    >>> import chainrule as cr
    >>> cr.fft.fftshift(cr.fft.fftfreq(5)).tolist()
    [-0.4000000059604645, -0.20000000298023224, 0.0, 0.20000000298023224, 0.4000000059604645]
    """
    return _shift(input, dim, lambda n: n // 2)


@fft_function
def ifftshift(input, dim=None):
    """The inverse of ``fftshift``: a roll by (size + 1) // 2.

    >>> import chainrule as cr
    >>> cr.fft.ifftshift(cr.fft.fftshift(cr.arange(5))).tolist()
    [0, 1, 2, 3, 4]
    """
    return _shift(input, dim, lambda n: (n + 1) // 2)
