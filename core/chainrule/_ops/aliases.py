"""Names the reference gives to ops that exist under another name or form:

- aliases (``greater`` is ``gt``), as functions and methods;
- in-place forms the families do not install (``eq_``, ``logical_and_``, ``cumsum_``);
- the ``chainrule.X_`` function forms of in-place methods (``chainrule.relu_(x)``);
- in-place view ops (``unsqueeze_``, ``t_``): the tensor itself becomes the view;
- small predicates and properties (``is_same_size``, ``nbytes``, ``type_as``).

None of them adds a derivative: each runs an op of the table (or reads metadata).
"""
import numpy as np

from .. import _dtypes, _layout
from .._tensor import Tensor
from ._common import (FUNCTIONS, commit_inplace, inplace_form, method, public, require_tensor,
                      require_tensors)
from .operators import _inplace
from .elementwise import rsub as _rsub

F = FUNCTIONS

# --- aliases -----------------------------------------------------------------------
ALIASES = {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
           "not_equal": "ne"}
for _alias, _target in ALIASES.items():
    FUNCTIONS[_alias] = FUNCTIONS[_target]
    setattr(Tensor, _alias, FUNCTIONS[_target])


@public(method=False)
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (subtraction with the operands reversed).

    >>> import chainrule as cr
    >>> cr.rsub(cr.tensor([1., 2.]), 5, alpha=2).tolist()
    [3.0, 1.0]
    """
    return _rsub(input, other, alpha=alpha)


# --- in-place forms ----------------------------------------------------------------
_COMPARE_EXAMPLE = "1"
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
              "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor",
              "divide", "multiply", "subtract", "heaviside", "ldexp", "nextafter"):
    _inplace(_name, _COMPARE_EXAMPLE)
for _name in ("absolute", "negative", "sgn", "logical_not"):
    _inplace(_name, "")


@method("cumsum_")
def cumsum_(self, dim, *, dtype=None):
    """In-place ``cumsum`` along ``dim``.

    >>> import chainrule as cr
    >>> cr.ones(3).cumsum_(0).tolist()
    [1.0, 2.0, 3.0]
    """
    return commit_inplace(self, F["cumsum"](self, dim, dtype=dtype or self.dtype))  # in its dtype


def _integer_inplace(name):
    """``bitwise_and_`` and friends, for integer and bool tensors."""
    inplace = inplace_form(name, F[name])
    inplace.__doc__ = (f"In-place ``{name}`` (integer and bool tensors).\n\n"
                       f"    >>> import chainrule as cr\n"
                       f"    >>> x = cr.tensor([6, 3]); _ = x.{name}_({'' if name == 'bitwise_not' else '5'}); x._version\n"
                       f"    1\n")
    setattr(Tensor, name + "_", inplace)


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "gcd", "lcm"):
    _integer_inplace(_name)
Tensor.__iand__, Tensor.__ior__, Tensor.__ixor__ = (Tensor.bitwise_and_, Tensor.bitwise_or_,
                                                    Tensor.bitwise_xor_)


# --- chainrule.X_ functions --------------------------------------------------------
def _function_forms():
    """``chainrule.relu_(x)`` is ``x.relu_()``: every in-place method the reference also
    offers as a function."""
    names = ("abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ "
             "asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ "
             "deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ "
             "index_put_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ "
             "rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ "
             "square_ tan_ tanh_ trunc_ xlogy_ zero_ gcd_ lcm_ ldexp_").split()
    for name in names:
        FUNCTIONS.setdefault(name, getattr(Tensor, name))


_function_forms()


def _activation_inplace(name, example):
    def inplace(input, *args, **kwargs):
        from ..nn import functional as nnf
        return commit_inplace(input, getattr(nnf, name)(input, *args, **kwargs))
    inplace.__name__ = name + "_"
    inplace.__doc__ = (f"In-place ``nn.functional.{name}``.\n\n"
                       f"    >>> import chainrule as cr\n"
                       f"    >>> x = cr.tensor([-1., 2.]); _ = cr.{name}_({example}); x._version\n"
                       f"    1\n")
    FUNCTIONS[name + "_"] = inplace


for _name, _example in (("celu", "x"), ("selu", "x"), ("threshold", "x, 0., 5."),
                        ("rrelu", "x")):
    _activation_inplace(_name, _example)


# --- in-place views ----------------------------------------------------------------
def _inplace_view(name, example):
    """``x.unsqueeze_(0)``: ``x`` itself takes the view's shape and strides (its memory
    unchanged) and, when it has history, the view's node; a leaf that requires grad
    refuses, as the reference does."""
    view = F[name]

    def inplace(self, *args, **kwargs):
        if self.grad_fn is None and self.requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        out = view(self, *args, **kwargs)
        self._data = out._data
        if out.grad_fn is not None:
            self.grad_fn, self._output_nr = out.grad_fn, out._output_nr
        self._bump_version()
        return self
    inplace.__name__ = name + "_"
    inplace.__doc__ = (f"In-place ``{name}``: this tensor takes the view's shape.\n\n"
                       f"    >>> import chainrule as cr\n"
                       f"    >>> x = cr.zeros(2, 3); _ = x.{name}_({example}); x.shape\n")
    setattr(Tensor, name + "_", inplace)
    return inplace


for _name, _example, _shape in (("unsqueeze", "0", "[1, 2, 3]"), ("squeeze", "", "[2, 3]"),
                                ("t", "", "[3, 2]"), ("transpose", "0, 1", "[3, 2]"),
                                ("swapaxes", "0, 1", "[3, 2]"), ("swapdims", "0, 1", "[3, 2]"),
                                ("as_strided", "(3,), (1,)", "[3]")):
    _fn = _inplace_view(_name, _example)
    _fn.__doc__ += f"    chainrule.Size({_shape})\n"
FUNCTIONS["as_strided_"] = Tensor.as_strided_


# --- predicates and properties -----------------------------------------------------
@method("type_as")
def type_as(self, tensor):
    """This tensor in ``tensor``'s dtype (itself when it has it already).

    >>> import chainrule as cr
    >>> cr.ones(2).type_as(cr.zeros(1, dtype=cr.float64)).dtype
    chainrule.float64
    """
    require_tensor(tensor, "type_as", "other", 2)
    return self.to(tensor.dtype)


@public
def is_same_size(input, other):
    """Whether the two tensors have the same shape.

    >>> import chainrule as cr
    >>> cr.ones(2, 3).is_same_size(cr.zeros(2, 3))
    True
    """
    require_tensors("is_same_size", ("input", "other"), input, other)
    return tuple(input.shape) == tuple(other.shape)


@public
def is_nonzero(input):
    """The truth of a one-element tensor.

    >>> import chainrule as cr
    >>> cr.is_nonzero(cr.tensor([0.5]))
    True
    """
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@public
def is_signed(input):
    """Whether the dtype can hold negative values (not uint8/bool).

    >>> import chainrule as cr
    >>> cr.tensor([1], dtype=cr.uint8).is_signed()
    False
    """
    return input.dtype not in (_dtypes.uint8, _dtypes.bool_)


@public
def is_conj(input):
    """False: chainrule conjugates eagerly (no lazy conjugate bit).

    >>> import chainrule as cr
    >>> cr.tensor([1j]).conj().is_conj()
    False
    """
    return False


@public
def is_neg(input):
    """False: chainrule negates eagerly (no lazy negative bit).

    >>> import chainrule as cr
    >>> cr.is_neg(cr.ones(1))
    False
    """
    return False


@public
def resolve_conj(input):
    """The tensor itself: its conjugation is never pending (see ``is_conj``).

    >>> import chainrule as cr
    >>> x = cr.ones(1); cr.resolve_conj(x) is x
    True
    """
    return input


@public
def resolve_neg(input):
    """The tensor itself: its negation is never pending (see ``is_neg``).

    >>> import chainrule as cr
    >>> x = cr.ones(1); x.resolve_neg() is x
    True
    """
    return input


@public
def conj_physical(input):
    """The complex conjugate, materialised (real tensors: themselves).

    >>> import chainrule as cr
    >>> cr.conj_physical(cr.tensor([1 + 2j])).tolist()
    [(1-2j)]
    """
    return F["conj"](input) if input.is_complex() else input


@method("conj_physical_")
def conj_physical_(self):
    """In-place ``conj_physical``.

    >>> import chainrule as cr
    >>> cr.tensor([1 + 2j]).conj_physical_().tolist()
    [(1-2j)]
    """
    return commit_inplace(self, F["conj"](self)) if self.is_complex() else self


FUNCTIONS["conj_physical_"] = conj_physical_


@public
def numel(input):
    """The number of elements.

    >>> import chainrule as cr
    >>> cr.numel(cr.ones(2, 3))
    6
    """
    return input.numel()


for _name in ("is_floating_point", "is_complex", "is_inference"):
    FUNCTIONS.setdefault(_name, getattr(Tensor, _name))
FUNCTIONS.setdefault("detach", Tensor.detach)


Tensor.nbytes = property(lambda self: int(self._data.size * self._data.dtype.itemsize),
                         doc="Bytes of the elements (numel * itemsize).")
Tensor.itemsize = property(lambda self: int(self._data.dtype.itemsize),
                           doc="Bytes per element.")
Tensor.is_cpu = property(lambda self: self.device.type == "cpu",
                         doc="Whether the tensor lives in host memory.")
Tensor.output_nr = property(lambda self: self._output_nr,
                            doc="Which output of its grad_fn this tensor is.")
Tensor.layout = property(lambda self: _layout.strided, doc="Always ``chainrule.strided``.")
for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_nested", "is_mkldnn", "is_mps",
              "is_xpu", "is_xla", "is_vulkan", "is_ipu", "is_mtia", "is_maia"):
    setattr(Tensor, _name, property(lambda self: False,
                                    doc="False: chainrule tensors are dense host/CUDA arrays."))


@method("is_shared")
def is_shared(self):
    """False: tensors are not placed in shared memory.

    >>> import chainrule as cr
    >>> cr.ones(1).is_shared()
    False
    """
    return False


@method("share_memory_")
def share_memory_(self):
    """This tensor (chainrule does not move tensors to shared memory; threads share
    memory already).

    >>> import chainrule as cr
    >>> x = cr.ones(1); x.share_memory_() is x
    True
    """
    return self


@method("to_dense")
def to_dense(self, dtype=None, *, masked_grad=None):
    """This tensor (it is dense already), in ``dtype`` if given.

    >>> import chainrule as cr
    >>> x = cr.ones(1); x.to_dense() is x
    True
    """
    return self if dtype is None else self.to(dtype)


@public
def ravel(input):
    """The elements as a 1-D tensor (a view when the memory allows).

    >>> import chainrule as cr
    >>> cr.arange(4).reshape(2, 2).t().ravel().tolist()
    [0, 2, 1, 3]
    """
    return F["reshape"](input, (-1,))


@method("fill_diagonal_")
def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal in place (every dimension equal, or a
    matrix; ``wrap``: a tall matrix's diagonal restarts every ``cols + 1`` rows).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).fill_diagonal_(5).tolist()
    [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    flat_step = sum(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
    n = int(np.prod(shape))
    limit = n if (wrap and len(shape) == 2 and shape[0] > shape[1]) else \
        min(shape) * flat_step - flat_step + 1
    positions = np.arange(0, min(limit, n), flat_step)
    mask = np.zeros(n, dtype=bool)
    mask[positions] = True
    mask = Tensor._wrap(mask.reshape(shape))
    return commit_inplace(self, F["masked_fill"](self, mask, fill_value))


@public
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` with ``p``-norm above ``maxnorm`` scaled down to it.

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.renorm(cr.tensor([[1., 2.], [3., 4.]]), 2, 0, 2.5)[1].tolist()]
    [1.5, 2.0]
    """
    from .. import linalg
    others = tuple(d for d in range(input.ndim) if d != dim % max(input.ndim, 1))
    norms = linalg.vector_norm(input, p, others, keepdim=True) if others else input.abs()
    factor = F["where"](norms > maxnorm, maxnorm / (norms + 1e-7), norms * 0 + 1)
    return input * factor


@method("renorm_")
def renorm_(self, p, dim, maxnorm):
    """In-place ``renorm``.

    >>> import chainrule as cr
    >>> [round(v, 4) for v in cr.tensor([[3., 4.]]).renorm_(2, 0, 1.0)[0].tolist()]
    [0.6, 0.8]
    """
    return commit_inplace(self, renorm(self, p, dim, maxnorm))


@method("apply_")
def apply_(self, callable):
    """Replace each element ``x`` by ``callable(x)`` (a Python function; host tensors
    only, no gradient).

    >>> import chainrule as cr
    >>> cr.tensor([1., 2.]).apply_(lambda v: v * 10).tolist()
    [10.0, 20.0]
    """
    values = np.vectorize(callable, otypes=[self._data.dtype])(self._data)
    return commit_inplace(self, Tensor._wrap(np.asarray(values, dtype=self._data.dtype)))


@method("map_")
def map_(self, tensor, callable):
    """Replace each element ``x`` by ``callable(x, y)`` with ``y`` the matching element
    of ``tensor`` (broadcast); host tensors only, no gradient.

    >>> import chainrule as cr
    >>> cr.tensor([1., 2.]).map_(cr.tensor([10., 20.]), lambda a, b: a + b).tolist()
    [11.0, 22.0]
    """
    other = np.broadcast_to(tensor._data, self._data.shape)
    values = np.vectorize(callable, otypes=[self._data.dtype])(self._data, other)
    return commit_inplace(self, Tensor._wrap(np.asarray(values, dtype=self._data.dtype)))


@method("dim_order")
def dim_order(self):
    """The dimensions from outermost to innermost in memory (by stride).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).t().dim_order()
    (1, 0)
    """
    strides = self.stride()
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


@method("sum_to_size")
def sum_to_size(self, *size):
    """Sum broadcast dimensions so the result has ``size`` (which must be expandable to
    this tensor's shape).

    >>> import chainrule as cr
    >>> cr.ones(2, 3).sum_to_size(1, 3).tolist()
    [[2.0, 2.0, 2.0]]
    """
    shape = tuple(size[0]) if len(size) == 1 and hasattr(size[0], "__iter__") else size
    try:
        np.broadcast_shapes(shape, tuple(self.shape))
        expandable = np.broadcast_shapes(shape, tuple(self.shape)) == tuple(self.shape)
    except ValueError:
        expandable = False
    if not expandable:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(self.shape)}}}.")
    return F["sum_to"](self, shape)


@public
def split_with_sizes(input, split_sizes, dim=0):
    """Split into pieces of the given sizes along ``dim`` (they must add up to its
    length).

    >>> import chainrule as cr
    >>> [t.tolist() for t in cr.arange(5).split_with_sizes([2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    total = input.shape[dim]
    if sum(split_sizes) != total:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {total} "
                           f"(input tensor's size at dimension {dim}), but got split_sizes="
                           f"{list(split_sizes)}")
    return F["split"](input, list(split_sizes), dim)


for _name, _target in (("unsafe_split", "split"), ("unsafe_chunk", "chunk"),
                       ("unsafe_split_with_sizes", "split_with_sizes")):
    FUNCTIONS[_name] = FUNCTIONS[_target]
    setattr(Tensor, _name, FUNCTIONS[_target])
