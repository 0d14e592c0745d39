"""Tensor factories: tensor, as_tensor, from_numpy, zeros, ones, full, empty, eye,
arange, linspace, rand, randn, randint and the *_like forms (random numbers come from
the generators of _random.py)."""
import math
import numbers

import functools

import numpy as np

from . import _dtypes
from ._grad_mode import STATE as _MODE
from ._backends import BACKENDS, canonical_device, move_array
from ._meta import MetaArray, is_meta_target
from ._batched import BatchedTensor, rewrap, unwrap_all
from ._random import check_generator_device as _check_generator_device
from ._random import cpu_generator as _cpu_generator
from . import _cpu_stream
from ._tensor import (CONSTRUCTOR_DTYPE_MESSAGE, CPU, DEFAULT_DEVICE, Tensor, _check_can_require_grad,
                      device as _device)


def mark_exported(t):
    from .autograd.saved_guard import mark_exported as mark
    mark(t)


def _infer_dtype(data):
    """Torch's inference: bool, int64, the default float, or complex; a sequence holding
    NumPy scalars promotes its elements' own dtypes (``[np.int16(1)]`` is int16)."""
    if isinstance(data, (list, tuple)):
        leaves = list(_flat(data))
        if any(isinstance(v, np.generic) for v in leaves):
            return _promote_leaves(leaves)
    flat = np.asarray(data)
    kind = flat.dtype.kind
    if kind == "b":
        return _dtypes.bool_
    if kind in "iu":
        return _dtypes.int64
    if kind == "c":
        return _dtypes.get_default_dtype().to_complex()
    if kind == "f":
        return _dtypes.get_default_dtype()
    if kind == "O" and all(type(v) is int for v in flat.ravel()):
        return _dtypes.int64             # ints beyond 64 bits: _checked_array's error
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _as_array(data, dtype=None):
    if isinstance(data, Tensor):
        arr = data._data
        return arr.copy() if dtype is None else arr.astype(_dtypes.to_dtype(dtype).np)
    if isinstance(data, (np.ndarray, np.generic)):     # NumPy scalars keep their dtype too
        target = _dtypes.from_numpy_dtype(data.dtype) if dtype is None else _dtypes.to_dtype(dtype)
        return np.array(data, dtype=target.np)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _tensors_to_lists(data)
    target = _infer_dtype(data) if dtype is None else _dtypes.to_dtype(dtype)
    if dtype is not None and target.np.kind in "iu":
        _check_float_range(data, target)
    try:
        return np.array(data, dtype=target.np)
    except OverflowError:
        return _checked_array(data, target)


def _check_float_range(data, target):
    """Floats into an integer dtype: the reference's overflow error (Note [checked
    integer conversion]) rather than NumPy's undefined cast."""
    probe = np.asarray(data)
    if probe.dtype.kind == "f" and probe.size:
        for v in (probe.min(), probe.max()):
            _dtypes.checked_integer(float(v), target.np, target.name)


def _checked_array(data, target):
    """Python ints beyond ``target``'s range (Note [checked integer conversion]):
    beyond 64 bits the reference's ValueError, else its overflow error or, for an
    unsigned type, the wrapped negatives."""
    values = np.array(data, dtype=object)
    out = []
    for v in values.ravel():
        if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        out.append(_dtypes.checked_integer(v, target.np, target.name))
    return np.array(out, dtype=target.np).reshape(values.shape)


def _promote_leaves(leaves):
    result = None
    for v in leaves:
        d = _dtypes.from_numpy_dtype(v.dtype) if isinstance(v, np.generic) else _infer_dtype(v)
        result = d if result is None else _dtypes.promote_types(result, d)
    return result


def _flat(data):
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            yield item


def _tensors_to_lists(data):
    if isinstance(data, Tensor):
        return data._data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(x) for x in data]
    return data


def _check_device(device):
    if device is not None and _device(device).type != "cpu":
        from ._backends import require_backend
        require_backend(_device(device).type)


def get_default_device():
    """The device factories use when given no ``device=`` (Note [default device]).

    >>> import chainrule as cr
    >>> cr.get_default_device()
    device(type='cpu')
    """
    chosen = DEFAULT_DEVICE.device
    return CPU if chosen is None else chosen


def set_default_device(device):
    """Make ``device`` (a device, a string such as ``"cpu"`` or ``"cuda:0"``, or None for
    the CPU) the default of the factories in this thread (Note [default device]).

    >>> import chainrule as cr
    >>> cr.set_default_device("cpu"); cr.ones(2).device
    device(type='cpu')
    >>> cr.set_default_device(None)
    """
    if device is None:
        DEFAULT_DEVICE.device = None
        return
    if not isinstance(device, (str, _device)):
        raise TypeError(f"set_default_device(): device must be a str, a chainrule.device or "
                        f"None, not {type(device).__name__}")
    chosen = _device(device)
    DEFAULT_DEVICE.device = None if chosen == CPU else chosen


def _fresh(device, shape, dtype, make):
    """``make()``, a new host array of ``shape``, or a meta array of that shape when the
    factory's target is the meta device: no host memory for it (Note [meta arrays])."""
    if (device is None and DEFAULT_DEVICE.device is None) or not is_meta_target(device):
        return make()
    return MetaArray.empty(shape, dtype)


def _like_source(data, device):
    """The array a ``*_like`` factory copies the shape and layout of: a meta stand-in
    for a host input going to meta, a zero-stride host one for a meta input going
    elsewhere (Note [meta arrays])."""
    if type(data) is np.ndarray:
        return MetaArray.like(data) if is_meta_target(device) else data
    if type(data) is MetaArray and not is_meta_target(device):
        return np.broadcast_to(np.zeros((), data.dtype), data.shape)
    return data


def _finish(arr, requires_grad, device=None):
    if device is None:
        device = DEFAULT_DEVICE.device        # Note [default device]
    if device is not None:
        arr = move_array(arr, device)         # before requires_grad: the result is a leaf
    t = Tensor._wrap(arr)
    if _MODE.inference:
        t._extras().inference = True
    if requires_grad:
        _check_can_require_grad(arr, CONSTRUCTOR_DTYPE_MESSAGE)
        t.requires_grad_(True)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Make a leaf tensor by copying ``data`` (nested lists, numbers, arrays).

    >>> import chainrule as cr
    >>> cr.tensor([[1, 2], [3, 4]]).dtype
    chainrule.int64
    >>> cr.tensor([1.5]).dtype
    chainrule.float32
    """
    if isinstance(data, Tensor):
        warn_copy_construct("clone().detach()", "chainrule.tensor(sourceTensor)")
    return _finish(_as_array(data, dtype), requires_grad, device)


def warn_copy_construct(recommended, used):
    """The reference's warning for building a tensor from a tensor (its words differ
    between ``tensor`` and ``Tensor.new_tensor``), pointed at the caller's caller."""
    import warnings
    warnings.warn(f"To copy construct from a tensor, it is recommended to use sourceTensor."
                  f"{recommended} or sourceTensor.{recommended}.requires_grad_(True), rather "
                  f"than {used}.", UserWarning, stacklevel=3)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a NumPy array or tensor when it can.

    >>> import chainrule as cr, numpy as np
    >>> a = np.zeros(2, dtype=np.float32); t = cr.as_tensor(a); a[0] = 5; t.tolist()
    [5.0, 0.0]
    """
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray):
        _dtypes.from_numpy_dtype(data.dtype)
        if dtype is None or _dtypes.to_dtype(dtype).np == data.dtype:
            t = Tensor._wrap(data)
            mark_exported(t)
            return t
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (its dtype kept).

    >>> import chainrule as cr, numpy as np
    >>> cr.from_numpy(np.arange(3)).tolist()
    [0, 1, 2]
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtypes.from_numpy_dtype(ndarray.dtype)
    t = Tensor._wrap(ndarray)
    mark_exported(t)
    return t


def _size_args(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (numbers.Integral, np.integer)) or isinstance(s, bool):
            raise TypeError(f"expected a sequence of integers for size, but got "
                            f"{type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return tuple(int(s) for s in size)


def keyword_sizes(positional, keyword):
    """A size (or dims) given by keyword, as the reference's ``zeros(size=(2, 3))`` or
    ``x.view(size=(2, 3))``, where the function takes it as positional arguments."""
    if keyword is None:
        return positional
    if positional:
        raise TypeError("got the sizes both as positional arguments and by keyword")
    return (keyword,)


def _float_dtype(dtype):
    return _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)


def written_out(out, result, name):
    """``result`` written into the ``out=`` tensor (which keeps its dtype), as the
    reference's factories do: resized without a word, cast as needed; no autograd
    through it (Note [out= arguments] for the other functions)."""
    from ._ops._out import refuse_grad
    refuse_grad(name, [result, out])
    out._data = np.array(result._data, dtype=out._data.dtype)
    out._bump_version()
    return out


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor of zeros.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).shape
    chainrule.Size([2, 3])
    """
    if out is not None:
        return written_out(out, zeros(*sizes, size=size, dtype=dtype or out.dtype), "zeros")
    size = keyword_sizes(sizes, size)
    return _finish(_filled(np.zeros, _size_args(size), 0, _float_dtype(dtype).np, device),
                   requires_grad, device)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor of ones.

    >>> import chainrule as cr
    >>> cr.ones(2).tolist()
    [1.0, 1.0]
    """
    if out is not None:
        return written_out(out, ones(*sizes, size=size, dtype=dtype or out.dtype), "ones")
    size = keyword_sizes(sizes, size)
    return _finish(_filled(np.ones, _size_args(size), 1, _float_dtype(dtype).np, device),
                   requires_grad, device)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          memory_format=None):
    """An uninitialised tensor.

    >>> import chainrule as cr
    >>> cr.empty(3).shape
    chainrule.Size([3])
    """
    if out is not None:
        return written_out(out, empty(*sizes, size=size, dtype=dtype or out.dtype), "empty")
    size = keyword_sizes(sizes, size)
    return _finish(_filled(np.empty, _size_args(size), None, _float_dtype(dtype).np, device),
                   requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor filled with ``fill_value`` (dtype inferred from it, like the reference).

    >>> import chainrule as cr
    >>> cr.full((2,), 7).dtype
    chainrule.int64
    """
    if dtype is None:
        dtype = _infer_dtype(fill_value)
    shape, d = _size_args((size,)), _dtypes.to_dtype(dtype).np
    fill_value = _dtypes.checked_integer(fill_value, d)   # Note [checked integer conversion]
    return _finish(_filled(lambda *_: np.full(shape, fill_value, d), shape, fill_value, d, device),
                   requires_grad, device)


def _filled(host, shape, value, dtype, device):
    """``host(shape, dtype)`` (zeros, ones, empty, a full) made where the factory's result
    goes (Note [default device]): on a device one scalar goes over and the fill runs
    there (``value`` None: left uninitialised), not a host array copied."""
    device = DEFAULT_DEVICE.device if device is None else device
    if device is not None and is_meta_target(device):
        return MetaArray.empty(shape, dtype)       # no memory (Note [meta arrays])
    if device is None or canonical_device(device).type == "cpu":
        return host(shape, dtype)
    probe = move_array(np.zeros((), dtype), device)
    if value is None:
        return np.empty_like(probe, shape=shape)
    return np.full_like(probe, value, shape=shape)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The identity matrix (n x m).

    >>> import chainrule as cr
    >>> cr.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    d = _float_dtype(dtype).np
    return _finish(_fresh(device, (n, n if m is None else m), d, lambda: np.eye(n, m, dtype=d)),
                   requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``.

    >>> import chainrule as cr
    >>> cr.arange(3).tolist(), cr.arange(0, 1, 0.5).dtype
    ([0, 1, 2], chainrule.float32)
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = _infer_dtype([start, end, step])
    d = _dtypes.to_dtype(dtype)
    _refuse_kinds(d, "bc", "arange_cpu")
    length = (max(0, math.ceil((end - start) / step)),)
    arr = _fresh(device, length, d.np, lambda: np.arange(
        start, end, step, dtype=np.float64 if d.is_floating_point else None).astype(d.np))
    return _finish(arr, requires_grad, device)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> import chainrule as cr
    >>> cr.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    d = _float_dtype(dtype)
    _refuse_kinds(d, "b", "linspace_cpu")
    return _finish(_fresh(device, (steps,), d.np,
                          lambda: np.linspace(start, end, steps).astype(d.np)),
                   requires_grad, device)


def _refuse_kinds(d, kinds, kernel):
    """A sequence factory's kernel lacks these dtype kinds (Note [kernels without a
    dtype])."""
    if d.np.kind in kinds:
        from ._ops._common import kernel_error
        raise kernel_error(kernel)(d.np)


def _on_device(kind, shape, dtype, device, generator, arg0, arg1):
    """Random numbers drawn on the device (Note [random numbers on a device] in
    _random.py: its backend's ``random``, from the device's or ``generator``'s state),
    or None for the CPU."""
    device = DEFAULT_DEVICE.device if device is None else device
    if device is None:
        return None
    if is_meta_target(device):          # no numbers drawn (the host generator stays put)
        return MetaArray.empty(shape, dtype.np)
    target = canonical_device(device)
    if target.type == "cpu":
        return None
    _check_generator_device(generator, target)
    return BACKENDS[target.type].random(kind, shape, dtype.np, target, arg0, arg1, generator)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Uniform samples in [0, 1) (on a CUDA device, from its Philox generator).

    >>> import chainrule as cr
    >>> cr.rand(2, 2).shape
    chainrule.Size([2, 2])
    """
    d = _float_dtype(dtype)
    drawn = _on_device("uniform", _size_args(size), d, device, generator, 0.0, 1.0)
    if drawn is not None:
        return _finish(drawn, requires_grad, device)
    arr = _cpu_stream.uniform(_cpu_generator(generator), _size_args(size), d.np)
    return _finish(arr, requires_grad, device)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Standard normal samples (complex: real and imaginary parts each of variance 1/2).

    >>> import chainrule as cr
    >>> cr.randn(3).dtype
    chainrule.float32
    """
    d = _float_dtype(dtype)
    shape = _size_args(size)
    drawn = _on_device("normal", shape, d, device, generator, 0.0, 1.0)
    if drawn is not None:
        return _finish(drawn, requires_grad, device)
    gen = _cpu_generator(generator)
    if d.is_complex:                   # the reference's: normal(0, 1/sqrt(2)) on the real view
        real = np.empty(0, d.np).real.dtype
        pairs = _cpu_stream.normal(gen, shape + (2,), real, 0.0, 1.0 / np.sqrt(2))
        arr = pairs[..., 0] + 1j * pairs[..., 1]
    else:
        arr = _cpu_stream.normal(gen, shape, d.np)
    return _finish(arr.astype(d.np), requires_grad, device)


def randint(low=0, high=None, size=None, *, dtype=None, device=None, requires_grad=False,
            generator=None):
    """Random integers in [low, high).

    >>> import chainrule as cr
    >>> cr.randint(0, 5, (3,)).dtype
    chainrule.int64
    """
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    d = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    drawn = _on_device("randint", _size_args((size,)), d, device, generator, low, high)
    if drawn is not None:
        return _finish(drawn, requires_grad, device)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    arr = _cpu_stream.integers(_cpu_generator(generator), _size_args((size,)), low, high, d.np)
    return _finish(arr.astype(d.np), requires_grad, device)


def _like_dtype(input, dtype):
    return input.dtype if dtype is None else _dtypes.to_dtype(dtype)


def _like_device(input, device):
    """The ``*_like`` factories put their result on the input's device by default."""
    return input.device if device is None else device



def _batch_aware(factory):
    """A ``*_like`` factory that, given a batched tensor (inside vmap), makes a batched
    result of the same batch (Note [batched tensors])."""
    @functools.wraps(factory)
    def like(input, *args, **kwargs):
        if type(input) is BatchedTensor:
            physical, levels = unwrap_all(input)
            return rewrap(factory(physical, *args, **kwargs), levels)
        return factory(input, *args, **kwargs)
    return like

@_batch_aware
def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               layout=None):
    """Zeros with the shape (and by default dtype) of ``input``.

    >>> import chainrule as cr
    >>> cr.zeros_like(cr.ones(2)).tolist()
    [0.0, 0.0]
    """
    d = _like_dtype(input, dtype)
    device = _like_device(input, device)
    return _finish(np.zeros_like(_like_source(input._data, device), dtype=d.np), requires_grad,
                   device)


@_batch_aware
def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
              layout=None):
    """Ones with the shape (and by default dtype) of ``input``.

    >>> import chainrule as cr
    >>> cr.ones_like(cr.zeros(2)).tolist()
    [1.0, 1.0]
    """
    d = _like_dtype(input, dtype)
    device = _like_device(input, device)
    return _finish(np.ones_like(_like_source(input._data, device), dtype=d.np), requires_grad,
                   device)


@_batch_aware
def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               layout=None):
    """An uninitialised tensor shaped like ``input``.

    >>> import chainrule as cr
    >>> cr.empty_like(cr.zeros(2)).shape
    chainrule.Size([2])
    """
    d = _like_dtype(input, dtype)
    device = _like_device(input, device)
    return _finish(np.empty_like(_like_source(input._data, device), dtype=d.np), requires_grad,
                   device)


@_batch_aware
def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None):
    """A tensor shaped like ``input`` filled with ``fill_value``.

    >>> import chainrule as cr
    >>> cr.full_like(cr.zeros(2), 4).tolist()
    [4.0, 4.0]
    """
    d = _like_dtype(input, dtype)
    device = _like_device(input, device)
    fill_value = _dtypes.checked_integer(fill_value, d.np)   # Note [checked integer conversion]
    return _finish(np.full_like(_like_source(input._data, device), fill_value, dtype=d.np),
                   requires_grad, device)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None):
    """Uniform samples shaped like ``input``.

    >>> import chainrule as cr
    >>> cr.rand_like(cr.zeros(2)).shape
    chainrule.Size([2])
    """
    return rand(*input.shape, dtype=dtype or input.dtype, device=_like_device(input, device),
                requires_grad=requires_grad, generator=generator)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               memory_format=None, layout=None):
    """Normal samples shaped like ``input``.

    >>> import chainrule as cr
    >>> cr.randn_like(cr.zeros(2)).shape
    chainrule.Size([2])
    """
    return randn(*input.shape, dtype=dtype or input.dtype, device=_like_device(input, device),
                 requires_grad=requires_grad, generator=generator)

