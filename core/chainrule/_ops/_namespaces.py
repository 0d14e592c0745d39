"""The two namespaces derivative formulas run against (Note [one formula, two
namespaces] in _registry.py).

ARRAY_NS implements each name on ndarrays with the reference's signature; TENSOR_NS
resolves the same names to chainrule's differentiable functions. A formula may use
only names listed in ARRAY_NS, so both stay in step (a test checks it).
"""
import numpy as np

from .._tensor import Tensor, zeros_on

from ..autograd._sum_to import add_reduce as _add_reduce, sum_to as _sum_to


def _axes(dim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return dim
    return tuple(dim)


def _conj(x):
    return np.conj(x) if x.dtype.kind == "c" else x


def _expand(x, shape):
    return np.broadcast_to(x, shape)


class ArrayNamespace:
    """Formula namespace over ndarrays (the fast backward path)."""

    exp, log, sin, cos, tan = np.exp, np.log, np.sin, np.cos, np.tan
    tanh, sqrt, sign, abs, log1p, expm1 = np.tanh, np.sqrt, np.sign, np.abs, np.log1p, np.expm1
    maximum, minimum, floor, matmul = np.maximum, np.minimum, np.floor, np.matmul
    sinh, cosh, reciprocal = np.sinh, np.cosh, np.reciprocal
    real, imag = staticmethod(np.real), staticmethod(np.imag)
    outer = staticmethod(np.outer)

    conj = staticmethod(_conj)                 # Note [array function slot]

    @staticmethod
    def where(cond, a, b):
        return np.where(cond, a, b)

    @staticmethod
    def sum(x, dim=None, keepdim=False):
        # np.sum's own reduction, without its Python wrapper (a microsecond a call)
        if x.dtype.itemsize == 2:                  # bfloat16, float16: float32 accumulator
            return _add_reduce(x, _axes(dim), keepdim)
        return np.add.reduce(x, axis=_axes(dim), keepdims=keepdim)

    @staticmethod
    def mean(x, dim=None, keepdim=False):
        return np.mean(x, axis=_axes(dim), keepdims=keepdim)

    sum_to = staticmethod(_sum_to)

    expand = staticmethod(_expand)             # Note [array function slot]

    @staticmethod
    def reshape(x, shape):
        return x.reshape(shape)          # the method: np.reshape adds a Python wrapper

    @staticmethod
    def permute(x, dims):
        return np.transpose(x, dims)

    @staticmethod
    def transpose(x, dim0, dim1):
        return x.swapaxes(dim0, dim1)

    @staticmethod
    def unsqueeze(x, dim):
        return np.expand_dims(x, dim)

    @staticmethod
    def squeeze(x, dim=None):
        if dim is None:
            return np.squeeze(x)
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        return np.squeeze(x, tuple(d for d in dims if x.shape[d] == 1))

    @staticmethod
    def zeros_like(x):
        return np.zeros_like(x)

    @staticmethod
    def ones_like(x):
        return np.ones_like(x)

    @staticmethod
    def zeros(shape, like):
        return zeros_on(shape, like.dtype, like)     # on like's device

    @staticmethod
    def to_dtype_of(x, like):
        return x.astype(like.dtype, copy=False)

    @staticmethod
    def is_tensor_path():
        return False

    @staticmethod
    def is_complex(x):
        return x.dtype.kind == "c"


class TensorNamespace:
    """Formula namespace over chainrule Tensors (create_graph backward)."""

    def __init__(self, functions):
        self._functions = functions
        self.conj = self._formula_conj

    def _formula_conj(self, x):
        """``F.conj`` of the create_graph formulas: a real tensor is its own conjugate,
        returned without ``conj``'s frames (its dispatching ``is_complex()``): the
        reference runs formulas below ``__torch_function__`` too. Subclasses and complex
        tensors go through ``conj``."""
        if x.__class__ is Tensor and x._data.dtype.kind != "c":
            return x
        return self._functions["conj"](x)

    def __getattr__(self, name):
        # kept as an attribute once looked up (no Python frame next time); Note
        # [method slot]'s replacement of functions updates this namespace too
        try:
            value = self._functions[name]
        except KeyError:
            raise AttributeError(f"no differentiable function '{name}' for formulas") from None
        setattr(self, name, value)
        return value

    @staticmethod
    def is_tensor_path():
        return True

    @staticmethod
    def is_complex(x):
        return x.is_complex()


def bind_helpers(namespace, helpers):
    """Bind each helper's first parameter ``F`` to ``namespace``."""
    import functools
    for name, fn in helpers.items():
        setattr(namespace, name, functools.partial(fn, namespace))


ARRAY_NS = ArrayNamespace()


def array_fn(name=None):
    """Add an ndarray implementation to ARRAY_NS (its Tensor twin must be in FUNCTIONS,
    as a public function or a ``formula_helper``)."""
    def register(fn):
        setattr(ArrayNamespace, name or fn.__name__, staticmethod(fn))
        return fn
    return register


# Note [array function slot]
#     Nearly every VJP formula calls ``F.conj`` (Wirtinger calculus): on the fast
#     backward that is a Python frame per formula for a function that, for real
#     arrays, returns its argument; every reduction's backward calls ``F.expand``,
#     whose NumPy implementation (``np.broadcast_to``) spends over a microsecond in
#     Python to make a view. A layer may install a faster implementation of such an
#     ARRAY_NS helper with ``set_array_fn`` (the C++ engine installs both); it must
#     give the Python function's results and errors, and may call it for any case
#     it does not handle. The Python functions stay the reference and the default.
ARRAY_FN_SLOTS = {"conj": _conj, "expand": _expand}


def set_array_fn(name, fn):
    """Install ``fn`` as ``ARRAY_NS.<name>`` (None restores the Python function);
    returns what was installed before (None for the Python function)."""
    reference = ARRAY_FN_SLOTS[name]
    previous = ArrayNamespace.__dict__[name].__func__          # a staticmethod
    setattr(ArrayNamespace, name, staticmethod(reference if fn is None else fn))
    return None if previous is reference else previous
