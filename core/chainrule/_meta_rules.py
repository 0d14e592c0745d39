"""What NumPy calls on MetaArrays return, inferred without computing (Note [meta
arrays] in _meta.py): the handlers of ``__array_ufunc__``, ``__array_function__`` and
indexing."""
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ._meta import (DATA_DEPENDENT, META, NO_DATA, NO_ITEM, SMALL, VOID, MetaArray,
                    _layout_strides)
from ._tensor import CPU, DEVICE_ARRAY_TYPES

HANDLERS = {}
TRUTH = {np.any: False, np.all: True}     # Note [meta truth] in _meta.py
COMPARISONS = {np.less, np.less_equal, np.greater, np.greater_equal}


def handles(*funcs):
    def register(fn):
        for f in funcs:
            HANDLERS[f] = fn
        return fn
    return register


class _quiet:
    """NumPy's warnings and floating-point errors off while probing templates (their
    values are stand-ins: a warning about them would be about nothing)."""

    def __enter__(self):
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")
        self._e = np.errstate(all="ignore")
        self._e.__enter__()

    def __exit__(self, *exc):
        self._e.__exit__(*exc)
        self._w.__exit__(*exc)


# -- operands ------------------------------------------------------------------------------
def _device(x):
    """The device an operand pins the op to, or None for values that join any device
    (Python scalars, NumPy scalars and 0-d host arrays)."""
    if type(x) is MetaArray:
        return META
    if isinstance(x, np.ndarray):
        return CPU if x.ndim else None
    if type(x) in DEVICE_ARRAY_TYPES:
        return x.device
    return None


def check_operands(values):
    """The reference's error for data operands on two devices."""
    expected = None
    for x in values:
        d = _device(x)
        if d is None:
            continue
        if expected is None:
            expected = d
        elif d != expected:
            raise RuntimeError(f"Tensor on device {d} is not on the expected device {expected}!")


def _walk(x, fn):
    """``fn`` applied to every MetaArray in ``x`` (nested lists, tuples and dicts)."""
    if type(x) is MetaArray:
        return fn(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_walk(v, fn) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_walk(v, fn) for v in x)
    if isinstance(x, dict):
        return {k: _walk(v, fn) for k, v in x.items()}
    return x


def _metas(x):
    found = []
    _walk(x, found.append)
    return found


def _shape(x):
    return x.shape if type(x) is MetaArray else np.shape(x)


def _dtype(x):
    return x.dtype if type(x) is MetaArray else np.result_type(x)


def _zero(x):
    """A 0-d stand-in of ``x``'s dtype."""
    return np.zeros((), x.dtype)


def _shrunk(x):
    """Zeros of ``x``'s dtype with each dimension shrunk to at most one element."""
    return np.zeros(tuple(min(n, 1) for n in x.shape), x.dtype)


def _void(x):
    """A void proxy (Note [meta arrays]): ``x``'s shape, no memory."""
    return np.empty(x.shape, VOID)


def _zero_index(x):
    """A meta index array's stand-in: zeros of its shape, zero-strided."""
    if x.dtype == np.bool_:
        raise NotImplementedError(DATA_DEPENDENT)
    return np.broadcast_to(np.zeros((), np.intp), x.shape)


def _fmt(shape):
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def broadcast(shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(_fmt(s) for s in shapes) + " ") from None


def result(shape, dtype, operands=()):
    """A new meta array, laid out like the first operand of its shape (order 'K')."""
    for x in operands:
        if type(x) is MetaArray and x.shape == shape and len(shape) > 1:
            if not x.flags.c_contiguous:
                return MetaArray.empty(shape, dtype, _layout_strides(shape, x._est))
            break
    return MetaArray.empty(shape, dtype)


def into(out, value):
    """``value``, or ``out`` (a meta array of its shape) when one was given."""
    if isinstance(out, tuple):
        out = out[0] if len(out) == 1 else out
    if out is None:
        return value
    if type(out) is not MetaArray:
        raise NotImplementedError(NO_DATA)
    if broadcast([value.shape, out.shape]) != out.shape:
        raise ValueError(f"non-broadcastable output operand with shape {_fmt(out.shape)} "
                         f"doesn't match the broadcast shape {_fmt(value.shape)}")
    return out


def _as_meta(x):
    """NumPy results of a template run as meta arrays."""
    if isinstance(x, (np.ndarray, np.generic)):
        return MetaArray.empty(np.shape(x), x.dtype)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_as_meta(v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_as_meta(v) for v in x)
    return x


# -- ufuncs ------------------------------------------------------------------------------
def array_ufunc(ufunc, method, inputs, kwargs):
    out = kwargs.pop("out", None)
    if method == "__call__":
        inputs = tuple(np.asarray(x) if isinstance(x, (list, tuple)) else x for x in inputs)
        if ufunc is np.matmul:
            return into(out, matmul(*inputs, **kwargs))
        return ufunc_call(ufunc, inputs, out, kwargs)
    if method == "at":
        if type(inputs[0]) is not MetaArray:
            raise NotImplementedError(NO_DATA)
        return None
    handler = {"reduce": ufunc_reduce, "accumulate": ufunc_accumulate,
               "outer": ufunc_outer}.get(method)
    if handler is None:
        raise NotImplementedError(f"meta tensors: no shape rule for {ufunc.__name__}.{method}")
    return into(out, handler(ufunc, *inputs, **kwargs))


def operands_broadcast(shapes):
    """The broadcast shape of an op's operands, or the reference's error for meta
    tensors that do not broadcast (worded unlike its CPU one: the shape so far, the
    first operand that does not fit it)."""
    so_far = ()
    for index, shape in enumerate(shapes):
        n = max(len(so_far), len(shape))
        a, b = (1,) * (n - len(so_far)) + tuple(so_far), (1,) * (n - len(shape)) + tuple(shape)
        bad = [i for i in range(n) if a[i] != b[i] and 1 not in (a[i], b[i])]
        if bad:
            from ._size import Size
            i = bad[-1]
            raise RuntimeError(f"Attempting to broadcast a dimension of length {b[i]} at "
                               f"{i - n}! Mismatching argument at index {index} had "
                               f"{Size(shape)!r}; but expected shape should be broadcastable "
                               f"to {list(a)}")
        so_far = tuple(max(x, y) if 0 not in (x, y) else 0 for x, y in zip(a, b))
    return so_far


def ufunc_call(ufunc, inputs, out, kwargs):
    outs = out if isinstance(out, tuple) else (() if out is None else (out,))
    check_operands(inputs + outs)
    kwargs.pop("where", None)
    shape = operands_broadcast([_shape(x) for x in inputs])
    with _quiet():
        probe = ufunc(*[_zero(x) if type(x) is MetaArray else x for x in inputs], **kwargs)
    if ufunc.nout == 1:
        made = result(shape, probe.dtype, inputs)
        if not shape and ufunc in COMPARISONS:
            made._truth = False                   # Note [meta truth]: no bound is crossed
        return into(out, made)
    made = tuple(result(shape, p.dtype, inputs) for p in probe)
    return made if not outs else tuple(into(o, m) for o, m in zip(outs, made))


def reduced_shape(shape, axis, keepdims):
    axes = range(len(shape)) if axis is None else normalize_axis_tuple(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape)
                 if keepdims or i not in axes)


def ufunc_reduce(ufunc, a, axis=0, dtype=None, out=None, keepdims=False, **kwargs):
    kwargs.pop("where", None)
    with _quiet():
        probe = ufunc.reduce(_shrunk(a), axis, dtype, None, keepdims, **kwargs)
    return MetaArray.empty(reduced_shape(a.shape, axis, keepdims), np.asarray(probe).dtype)


def ufunc_accumulate(ufunc, a, axis=0, dtype=None, out=None):
    with _quiet():
        probe = ufunc.accumulate(_shrunk(a), axis, dtype)
    return MetaArray.empty(a.shape, probe.dtype)


def ufunc_outer(ufunc, a, b, **kwargs):
    check_operands((a, b))
    with _quiet():
        probe = ufunc(_zero(a) if type(a) is MetaArray else a,
                      _zero(b) if type(b) is MetaArray else b, **kwargs)
    return MetaArray.empty(tuple(_shape(a)) + tuple(_shape(b)), probe.dtype)


# -- functions -------------------------------------------------------------------------------
def array_function(func, args, kwargs):
    kwargs = {k: v for k, v in kwargs.items() if k != "like"}
    handler = HANDLERS.get(func)
    if handler is None:
        return small_fallback(func, args, kwargs)
    return handler(func, *args, **kwargs)


def small_fallback(func, args, kwargs):
    """Run ``func`` on zero (for np.linalg, identity) templates of its meta operands when
    they are small; results become meta arrays (Note [meta arrays])."""
    metas = _metas((args, kwargs))
    if sum(m.size for m in metas) > SMALL:
        raise NotImplementedError(f"meta tensors: no shape rule for numpy.{func.__name__} "
                                  "on operands this large")
    check_operands([m for m in args if not isinstance(m, (list, tuple))])
    linalg = getattr(func, "__module__", "").startswith("numpy.linalg")
    make = _identity_template if linalg else (lambda m: np.zeros(m.shape, m.dtype))
    with _quiet():
        got = func(*_walk(args, make), **_walk(kwargs, make))
    return _as_meta(got)


def _identity_template(m):
    if m.ndim < 2:
        return np.ones(m.shape, m.dtype)
    return np.broadcast_to(np.eye(m.shape[-2], m.shape[-1], dtype=m.dtype), m.shape).copy()


@handles(np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.all, np.any,
         np.std, np.var, np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanstd,
         np.nanvar, np.argmax, np.argmin, np.nanargmax, np.nanargmin, np.count_nonzero,
         np.median, np.nanmedian, np.ptp, np.average)
def reduction(func, a, *args, **kwargs):
    out = kwargs.pop("out", None)
    axis = kwargs.get("axis", args[0] if args else None)
    with _quiet():
        probe = func(_shrunk(a), *args, **kwargs)
    shape = reduced_shape(a.shape, axis, kwargs.get("keepdims", False))
    made = MetaArray.empty(shape, np.asarray(probe).dtype)
    made._truth = TRUTH.get(func)                 # Note [meta truth]
    return into(out, made)


@handles(np.linalg.norm)
def norm(func, x, ord=None, axis=None, keepdims=False):
    with _quiet():
        probe = func(_shrunk(x), ord, axis, keepdims)
    return MetaArray.empty(reduced_shape(x.shape, axis, keepdims), np.asarray(probe).dtype)


@handles(np.trace)
def trace(func, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    with _quiet():
        probe = func(_shrunk(a), offset, axis1, axis2, dtype)
    axes = normalize_axis_tuple((axis1, axis2), a.ndim)
    shape = tuple(n for i, n in enumerate(a.shape) if i not in axes)
    return into(out, MetaArray.empty(shape, np.asarray(probe).dtype))


@handles(np.cumsum, np.cumprod, np.nancumsum, np.nancumprod)
def scan(func, a, axis=None, dtype=None, out=None):
    with _quiet():
        probe = func(_shrunk(a), axis, dtype)
    return into(out, MetaArray.empty((a.size,) if axis is None else a.shape, probe.dtype))


@handles(np.sort, np.argsort)
def sort(func, a, axis=-1, kind=None, order=None, **kwargs):
    dtype = np.intp if func is np.argsort else a.dtype
    return MetaArray.empty((a.size,) if axis is None else a.shape, dtype)


@handles(np.partition, np.argpartition)
def partition(func, a, kth, axis=-1, kind="introselect", order=None):
    return sort(np.argsort if func is np.argpartition else np.sort, a, axis)


@handles(np.searchsorted)
def searchsorted(func, a, v, side="left", sorter=None):
    check_operands((a, v))
    return MetaArray.empty(_shape(v), np.intp)


# -- element-wise functions ------------------------------------------------------------------
@handles(np.where)
def where(func, condition, *xy):
    if not xy:
        raise NotImplementedError(DATA_DEPENDENT)
    return elementwise(func, condition, *xy)


@handles(np.clip, np.isclose, np.nan_to_num, np.round, np.around, np.angle, np.sinc,
         np.isneginf, np.isposinf, np.fix, np.real_if_close, np.i0)
def elementwise(func, *args, **kwargs):
    out = kwargs.pop("out", None)
    operands = [v for v in list(args) + list(kwargs.values()) if type(v) is MetaArray
                or isinstance(v, (np.ndarray, np.generic, bool, int, float, complex))]
    check_operands(operands)
    shape = broadcast([_shape(x) for x in operands])
    with _quiet():
        probe = func(*_walk(args, _zero), **_walk(kwargs, _zero))
    return into(out, result(shape, np.asarray(probe).dtype, operands))


# -- views and copies ----------------------------------------------------------------------
@handles(np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze, np.broadcast_to,
         np.diagonal, np.flip, np.fliplr, np.flipud, np.rot90, np.split, np.array_split,
         np.atleast_1d, np.atleast_2d, np.atleast_3d)
def view(func, a, *args, **kwargs):
    """Views, run on the stride proxy: exact strides and offset."""
    if type(a) is not MetaArray:
        raise NotImplementedError(NO_DATA)
    return _map_proxies(func(a.proxy(), *args, **kwargs), a)


def _map_proxies(got, a):
    if isinstance(got, np.ndarray):
        return a.from_proxy(got)
    return type(got)(a.from_proxy(p) for p in got)


@handles(np.reshape)
def reshape(func, a, shape=None, order="C", *, newshape=None, copy=None):
    shape = shape if shape is not None else newshape
    if copy is False:                     # a view or NumPy's ValueError
        return a.from_proxy(np.reshape(a.proxy(), shape, copy=False))
    return a.reshape(shape)


@handles(np.ravel)
def ravel(func, a, order="C"):
    return a.reshape(-1)


@handles(np.real)
def real(func, val):
    return val.real


@handles(np.imag)
def imag(func, val):
    return val.imag


@handles(np.broadcast_arrays)
def broadcast_arrays(func, *args, subok=False):
    check_operands(args)
    shape = broadcast([_shape(x) for x in args])
    return tuple(np.broadcast_to(x, shape) for x in args)


@handles(np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack)
def join(func, arrays, *args, dtype=None, out=None, **kwargs):
    arrays = list(arrays)
    check_operands(arrays)
    got = func([np.empty(_shape(x), VOID) for x in arrays], *args, **kwargs)
    kind = np.dtype(dtype) if dtype is not None else np.result_type(*[_dtype(x) for x in arrays])
    return into(out, MetaArray.empty(got.shape, kind))


@handles(np.take, np.take_along_axis, np.repeat, np.tile, np.roll, np.delete, np.tril,
         np.triu, np.diag, np.diagflat, np.pad, np.resize, np.compress)
def move_elements(func, a, *args, **kwargs):
    """Copies that only move elements, run on void proxies (Note [meta arrays])."""
    out = kwargs.pop("out", None)
    if type(a) is not MetaArray:
        raise NotImplementedError(NO_DATA)
    if func is np.compress and type(args[0]) is MetaArray:
        raise NotImplementedError(DATA_DEPENDENT)
    if func is np.pad:       # the fill values (constant_values, ...) do not move
        kwargs = {k: v for k, v in kwargs.items() if k == "mode"}
    got = func(_void(a), *_walk(args, _zero_index), **_walk(kwargs, _zero_index))
    return into(out, MetaArray.empty(got.shape, a.dtype))


@handles(np.copy)
def copy(func, a, order="K", subok=False):
    return a.astype(a.dtype, order=order)


@handles(np.isin)
def isin(func, element, test_elements, assume_unique=False, invert=False, **kwargs):
    check_operands((element, test_elements))
    return MetaArray.empty(_shape(element), np.bool_)


@handles(np.diff)
def diff(func, a, n=1, axis=-1, **kwargs):
    with _quiet():
        probe = func(_shrunk(a), 0, axis)             # the dtype, and NumPy's axis check
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    shape = tuple(max(m - n, 0) if i == axis else m for i, m in enumerate(a.shape))
    return MetaArray.empty(shape, probe.dtype)


@handles(np.kron)
def kron(func, a, b):
    check_operands((a, b))
    sa, sb = tuple(_shape(a)), tuple(_shape(b))
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    return MetaArray.empty(tuple(x * y for x, y in zip(sa, sb)), _core_dtype(np.dot, a, b))


@handles(np.copyto, np.put_along_axis, np.place, np.putmask, np.put)
def write(func, a, *args, **kwargs):
    """Writes into a meta array do nothing; into a host array, there is nothing to
    write."""
    if type(a) is not MetaArray:
        raise NotImplementedError(NO_DATA)
    return None


@handles(np.nonzero, np.flatnonzero, np.argwhere, np.extract)
def data_dependent(func, *args, **kwargs):
    raise NotImplementedError(DATA_DEPENDENT)


@handles(np.unique, np.bincount, np.histogram)
def no_meta_kernel(func, *args, **kwargs):
    name = {np.unique: "_unique2"}.get(func, func.__name__)
    raise NotImplementedError(f"aten::{name}: attempted to run this operator with Meta "
                              "tensors, but there was no fake impl or Meta kernel registered.")


@handles(np.allclose, np.array_equal, np.array2string, np.array_repr, np.array_str)
def reads_values(func, *args, **kwargs):
    raise RuntimeError(NO_ITEM)


@handles(np.unravel_index)
def unravel_index(func, indices, shape, order="C"):
    return tuple(MetaArray.empty(_shape(indices), np.intp) for _ in np.atleast_1d(shape))


# -- creation ----------------------------------------------------------------------------------
@handles(np.empty_like, np.zeros_like, np.ones_like)
def like(func, a, dtype=None, order="K", subok=True, shape=None, device=None):
    kind = a.dtype if dtype is None else np.dtype(dtype)
    if shape is not None:
        return MetaArray.empty(np.empty(shape, VOID).shape, kind)
    return MetaArray.like(a, kind) if order == "K" else MetaArray.empty(a.shape, kind)


@handles(np.full_like)
def full_like(func, a, fill_value, dtype=None, order="K", subok=True, shape=None, device=None):
    return like(func, a, dtype, order, subok, shape)


@handles(np.empty, np.zeros, np.ones)
def filled(func, shape, dtype=float, order="C", **kwargs):
    return MetaArray.empty(np.empty(shape, VOID).shape, dtype)


@handles(np.full)
def full(func, shape, fill_value, dtype=None, order="C", **kwargs):
    kind = np.asarray(fill_value).dtype if dtype is None else dtype
    return MetaArray.empty(np.empty(shape, VOID).shape, kind)


@handles(np.eye)
def eye(func, N, M=None, k=0, dtype=float, **kwargs):
    return MetaArray.empty((N, N if M is None else M), dtype)


@handles(np.shape)
def shape_of(func, a):
    return a.shape


@handles(np.ndim)
def ndim_of(func, a):
    return a.ndim


@handles(np.size)
def size_of(func, a, axis=None):
    return a.size if axis is None else a.shape[axis]


@handles(np.result_type)
def result_type(func, *values):
    return np.result_type(*[v.dtype if type(v) is MetaArray else v for v in values])


@handles(np.can_cast)
def can_cast(func, from_, to, casting="safe"):
    return np.can_cast(from_.dtype if type(from_) is MetaArray else from_, to, casting)


@handles(np.iscomplexobj)
def iscomplexobj(func, x):
    return x.dtype.kind == "c"


@handles(np.may_share_memory, np.shares_memory)
def shares_memory(func, a, b, max_work=None):
    return a is b


@handles(np.ascontiguousarray)
def ascontiguousarray(func, a, dtype=None, **kwargs):
    kind = a.dtype if dtype is None else np.dtype(dtype)
    return a if a.flags.c_contiguous and kind == a.dtype else MetaArray.empty(a.shape, kind)


# -- products ------------------------------------------------------------------------------
def _core_dtype(func, a, b):
    with _quiet():
        return func(np.zeros((1, 1), _dtype(a)), np.zeros((1, 1), _dtype(b))).dtype


def matmul(a, b, **kwargs):
    check_operands((a, b))
    sa, sb = tuple(_shape(a)), tuple(_shape(b))
    for i, s in enumerate((sa, sb)):
        if not s:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has "
                             "0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    a2 = sa if len(sa) > 1 else (1,) + sa
    b2 = sb if len(sb) > 1 else sb + (1,)
    if a2[-1] != b2[-2]:
        raise ValueError("matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         "gufunc signature (n?,k),(k,m?)->(n?,m?) "
                         f"(size {b2[-2]} is different from {a2[-1]})")
    shape = broadcast([a2[:-2], b2[:-2]]) + (a2[-2:-1] if len(sa) > 1 else ()) + \
        (b2[-1:] if len(sb) > 1 else ())
    return MetaArray.empty(shape, kwargs.get("dtype") or _core_dtype(np.matmul, a, b))


handles(np.matmul)(lambda func, a, b, out=None, **kw: into(out, matmul(a, b, **kw)))


@handles(np.dot)
def dot(func, a, b, out=None):
    sa, sb = tuple(_shape(a)), tuple(_shape(b))
    if not sa or not sb:
        return into(out, np.multiply(a, b))
    if len(sa) <= 2 and len(sb) <= 2 and sa[-1] == sb[0 if len(sb) == 1 else -2]:
        return into(out, matmul(a, b))
    k = sb[0] if len(sb) == 1 else sb[-2]
    if sa[-1] != k:
        raise ValueError(f"shapes {sa} and {sb} not aligned: {sa[-1]} (dim {len(sa) - 1}) != "
                         f"{k} (dim {max(len(sb) - 2, 0)})")
    check_operands((a, b))
    return into(out, MetaArray.empty(sa[:-1] + sb[:-2] + sb[-1:], _core_dtype(np.dot, a, b)))


@handles(np.vdot)
def vdot(func, a, b):
    check_operands((a, b))
    return MetaArray.empty((), _core_dtype(np.dot, a, b))


@handles(np.outer)
def outer(func, a, b, out=None):
    check_operands((a, b))
    return into(out, MetaArray.empty((a.size, np.size(b)), _core_dtype(np.dot, a, b)))


@handles(np.einsum)
def einsum(func, subscripts, *operands, out=None, dtype=None, **kwargs):
    if not isinstance(subscripts, str):
        return small_fallback(func, (subscripts,) + operands, dict(kwargs, dtype=dtype))
    check_operands(operands)
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    sizes, ellipses = {}, []
    for term, x in zip(inputs.split(","), operands):
        shape = tuple(_shape(x))
        head, dots, tail = term.partition("...")
        n_ell = len(shape) - len(head) - len(tail) if dots else 0
        if n_ell < 0 or (not dots and len(term) != len(shape)):
            raise ValueError(f"operand has more dimensions than subscripts given in einstein "
                             f"sum, but no '...' ellipsis provided to broadcast the extra "
                             f"dimensions.")
        ellipses.append(shape[len(head):len(head) + n_ell])
        for label, n in zip(head + tail, shape[:len(head)] + shape[len(head) + n_ell:]):
            if sizes.get(label, n) not in (n, 1) and n != 1:
                raise ValueError(f"operands could not be broadcast together with remapped "
                                 f"shapes [original->remapped]: size {n} for label '{label}'")
            sizes[label] = max(sizes.get(label, n), n)
    if not arrow:
        once = sorted(c for c in sizes if inputs.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    ell = broadcast(ellipses)
    head, dots, tail = output.partition("...")
    shape = tuple(sizes[c] for c in head) + (ell if dots else ()) + tuple(sizes[c] for c in tail)
    with _quiet():
        probe = func(subscripts, *[np.zeros((1,) * len(_shape(x)), _dtype(x)) for x in operands],
                     dtype=dtype)
    return into(out, MetaArray.empty(shape, np.asarray(probe).dtype))


# -- indexing --------------------------------------------------------------------------------
def _basic(index):
    return index is None or index is Ellipsis or isinstance(index, slice) or \
        (isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)))


def getitem(a, key):
    """``a[key]``: basic indexing on the stride proxy (a view), advanced indexing on a
    void proxy with meta index arrays standing in as zeros (Note [meta arrays])."""
    parts = key if isinstance(key, tuple) else (key,)
    if all(_basic(i) for i in parts):
        return a.from_proxy(a.proxy()[key])
    parts = tuple(_zero_index(i) if type(i) is MetaArray else i for i in parts)
    return MetaArray.empty(np.empty(a.shape, VOID)[parts].shape, a.dtype)


@handles(np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn)
def fft(func, a, s=None, axes=None, norm=None, out=None):
    """The n-D transforms (the fft ops' engines, with ``axes`` given): each axis takes
    its size in ``s``; rfftn's last one keeps n // 2 + 1 bins; the dtype from a
    one-element probe."""
    shape = list(a.shape)
    if axes is None:
        axes = range(a.ndim - (a.ndim if s is None else len(s)), a.ndim)
    axes = [ax % a.ndim for ax in axes]
    for i, ax in enumerate(axes):
        shape[ax] = shape[ax] if s is None else s[i]
    if func is np.fft.rfftn:
        shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    with _quiet():
        probe = func(np.zeros((2,) * len(axes), a.dtype), axes=tuple(range(len(axes))))
    return into(out, MetaArray.empty(tuple(shape), probe.dtype))
