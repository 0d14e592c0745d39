"""Derivative table: shape ops (views, reshapes, joins and splits, flips, repeats,
triangles, strided views, complex numbers as pairs of reals).

Views (Note [views share memory and version] in views.py) go through ``make_view``
with a ``view_fn`` that re-makes the view from its base, on ndarrays or Tensors.
Indexing (``__getitem__``, select, gather, ...) lives in indexing.py, imported at the
end of this module so that it registers with the shape family.
"""
import functools
import math

import numpy as np

from .._dtypes import dtype as _dtype_class, scalar_type_name
from .._factories import keyword_sizes
from .._batched import BatchedTensor, rewrap, unwrap_all
from .._tensor import Tensor, asarray, memory_root, on_device_of, strided_view, zeros_on
from .._version_counter import counter_of
from ._common import (EMPTY, FUNCTIONS, broadcast_error, formula_helper, kernel_error, method,
                      promote, public, refusing, require_tensor, require_tensors, wrap_dim)
from ._formula_helpers import helper
from ._namespaces import ARRAY_NS          # its expand: Note [array function slot]
from ._namespaces import array_fn
from ._out import write_out
from ._registry import OPS, OpDef, apply_op, defop
from .views import make_view

_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one "
               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


def _replay_view(op, attrs, public_fn, *args_and_base):
    """What a view_fn made by ``_view_fn`` runs: the public function on a Tensor, the
    op's forward on an ndarray (the base comes last)."""
    x = args_and_base[-1]
    if isinstance(x, Tensor):
        return public_fn(x, *args_and_base[:-1])
    return op.forward(x, **attrs)


def _replay_dual(array_impl, tensor_impl, *args_and_base):
    """What a view_fn made by ``_dual`` runs (the base comes last)."""
    x = args_and_base[-1]
    if isinstance(x, Tensor):
        return tensor_impl(x, *args_and_base[:-1])
    return array_impl(x, *args_and_base[:-1])


# How a view re-makes itself from its base, on ndarrays or Tensors:
# ``_view_fn(op, attrs, public_fn, *args)`` and ``_dual(array_impl, tensor_impl, *args)``
# return ``view_fn(x)``, a partial of the replay functions above, made without a
# Python frame (one per view op, Note [view fast path]).
_view_fn = functools.partial(functools.partial, _replay_view)
_dual = functools.partial(functools.partial, _replay_dual)


# Note [ndarray methods in view forwards]
#     NumPy's function forms (np.transpose, np.squeeze, np.expand_dims, np.reshape
#     with copy=False) are Python wrappers that cost several times the ndarray method
#     they end in; view forwards call the method on exact ndarrays and the function
#     (which device arrays implement, Note [device arrays]) otherwise.
def _permute_array(a, dims):
    return a.transpose(dims) if type(a) is np.ndarray else np.transpose(a, dims)


def _transpose_array(a, dim0, dim1):
    return a.swapaxes(dim0, dim1) if type(a) is np.ndarray else np.swapaxes(a, dim0, dim1)


def _squeeze_array(a, dim):
    return a.squeeze(dim) if type(a) is np.ndarray else np.squeeze(a, dim)


def _reshape_view(a, shape):
    if type(a) is np.ndarray:
        return a.reshape(shape, copy=False)
    return np.reshape(a, shape, copy=False)


def _unsqueeze_array(a, dim):
    if type(a) is np.ndarray:
        shape = a.shape
        return a.reshape(shape[:dim] + (1,) + shape[dim:], copy=False)
    return np.expand_dims(a, dim)


# --- the table: views ----------------------------------------------------------------
VIEW = defop("view", _reshape_view, attrs=("shape",),
             node_name="ViewBackward0",
             vjp=(lambda F, g, self_shape: F.reshape(g, self_shape),),
             jvp=lambda F, t, shape: F.reshape(t[0], shape))
UNSAFE_VIEW = defop("_unsafe_view", lambda a, shape: np.reshape(a, shape), attrs=("shape",),
                    vjp=(lambda F, g, self_shape: F.reshape(g, self_shape),),
                    jvp=lambda F, t, shape: F.reshape(t[0], shape))
ALIAS = defop("alias", lambda a: a.view(), vjp=(lambda F, g: g,), jvp=lambda F, t: t[0])
EXPAND = defop("expand", lambda a, shape: ARRAY_NS.expand(a, shape), attrs=("shape",),
               vjp=(lambda F, g, self_shape: F.sum_to(g, self_shape),),
               jvp=lambda F, t, shape: F.expand(t[0], shape))
PERMUTE = defop("permute", _permute_array, attrs=("dims",),
                vjp=(lambda F, g, dims: F.permute(g, _inverse_permutation(dims)),),
                jvp=lambda F, t, dims: F.permute(t[0], dims))
TRANSPOSE = defop("transpose", _transpose_array,
                  attrs=("dim0", "dim1"),
                  vjp=(lambda F, g, dim0, dim1: F.transpose(g, dim0, dim1),),
                  jvp=lambda F, t, dim0, dim1: F.transpose(t[0], dim0, dim1))
T = defop("t", lambda a: a.T, vjp=(lambda F, g: F.t(g),), jvp=lambda F, t: F.t(t[0]))
UNSQUEEZE = defop("unsqueeze", _unsqueeze_array, attrs=("dim",),
                  vjp=(lambda F, g, dim: F.squeeze(g, dim),),
                  jvp=lambda F, t, dim: F.unsqueeze(t[0], dim))


def _squeeze_op(name, node_name):
    return defop(name, _squeeze_array, attrs=("dim",), node_name=node_name,
                 vjp=(lambda F, g, self_shape: F.reshape(g, self_shape),),
                 jvp=lambda F, t, dim: F.squeeze(t[0], dim))


SQUEEZE = _squeeze_op("squeeze", "SqueezeBackward0")            # squeeze()
SQUEEZE_DIM = _squeeze_op("squeeze_dim", "SqueezeBackward1")    # squeeze(int)
SQUEEZE_DIMS = _squeeze_op("squeeze_dims", "SqueezeBackward2")  # squeeze(tuple)
CONTIGUOUS = defop("contiguous", lambda a: a.copy(order="C"),
                   node_name="CloneBackward0", vjp=(lambda F, g: g,), jvp=lambda F, t: t[0])


def _inverse_permutation(dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return tuple(inverse)


# --- shape arguments -------------------------------------------------------------------
def _shape_arg(shape):
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` alike, as a tuple of ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    if type(shape) is tuple and all(map(_EXACT_INT, map(type, shape))):    # no frames
        return shape
    return tuple(s.__index__() for s in shape)


_EXACT_INT = frozenset((int,)).__contains__


def _infer_shape(shape, numel):
    """``shape`` with its -1 (if any) inferred from ``numel``, checked."""
    if shape and min(shape) >= -1:          # the common cases first (C calls only)
        known = math.prod(shape)
        if known == numel and -1 not in shape:
            return shape
        if known < 0 and shape.count(-1) == 1 and numel % known == 0:
            i = shape.index(-1)
            return shape[:i] + (numel // -known,) + shape[i + 1:]
    return _checked_shape(shape, numel)


def _checked_shape(shape, numel):
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def legacy_type_name(t):
    """The reference's old-style type name, e.g. ``torch.FloatTensor``."""
    return f"torch.{scalar_type_name(t._data.dtype)}Tensor"


# --- views: public functions -----------------------------------------------------------
def _view(input, shape):
    attrs = {"shape": shape}
    return make_view(VIEW, input, attrs, _view_fn(VIEW, attrs, _view, shape))


@public(top_level=False)             # a Tensor method only, as in the reference
def view(input, *shape, size=None):
    """The same data with a new shape; always a view (fails where the layout does not
    allow one: use ``reshape``). One dimension may be -1 (inferred). ``view(dtype)``
    reads the same bytes as another dtype (a view, not differentiable).

    >>> import chainrule as cr
    >>> cr.arange(6).view(2, 3).shape
    chainrule.Size([2, 3])
    """
    shape = keyword_sizes(shape, size)
    if len(shape) == 1 and isinstance(shape[0], _dtype_class):
        return view_dtype(input, shape[0])
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    try:
        return _view(input, shape)
    except ValueError:
        raise RuntimeError(_VIEW_ERROR) from None


def _viewable(arr, shape):
    if arr.flags.c_contiguous:
        return True
    try:
        np.reshape(arr, shape, copy=False)
        return True
    except ValueError:
        return False


@public
def reshape(input, *sizes, shape=None):
    """The same data with a new shape: a view when the layout allows, else a copy.

    >>> import chainrule as cr
    >>> cr.reshape(cr.arange(6), (2, 3)).shape
    chainrule.Size([2, 3])
    """
    shape = _infer_shape(_shape_arg(keyword_sizes(sizes, shape)), input._data.size)
    if _viewable(input._data, shape):
        return _view(input, shape)
    return apply_op(UNSAFE_VIEW, (contiguous(input),), {"shape": shape})


@method("view_as")
def view_as(self, other):
    """``self.view(other.shape)``.

    >>> import chainrule as cr
    >>> cr.arange(6).view_as(cr.zeros(2, 3)).shape
    chainrule.Size([2, 3])
    """
    require_tensor(other, "view_as", "other", 2)
    return view(self, other._data.shape)


@method("reshape_as")
def reshape_as(self, other):
    """``self.reshape(other.shape)``.

    >>> import chainrule as cr
    >>> cr.arange(6).reshape_as(cr.zeros(3, 2)).shape
    chainrule.Size([3, 2])
    """
    require_tensor(other, "reshape_as", "other", 2)
    return reshape(self, other._data.shape)


@public
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim`` .. ``end_dim`` into one (a view when possible).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).flatten(1).shape
    chainrule.Size([2, 12])
    """
    shape = input._data.shape
    if not shape:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    merged = math.prod(shape[s:e + 1])
    return reshape(input, shape[:s] + (merged,) + shape[e + 1:])


@public
def unflatten(input, dim, sizes):
    """Split dimension ``dim`` into ``sizes`` (one of them may be -1); a view.

    >>> import chainrule as cr
    >>> cr.zeros(2, 12).unflatten(1, (3, 4)).shape
    chainrule.Size([2, 3, 4])
    """
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    sizes = tuple(s.__index__() for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if -1 not in sizes and math.prod(sizes) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {d} ({shape[d]}) in the input tensor")
    sizes = _infer_shape(sizes, shape[d])
    return view(input, shape[:d] + sizes + shape[d + 1:])


@public(top_level=False)             # a Tensor method only, as in the reference
def expand(input, *sizes, size=None):
    """Broadcast singleton dims to ``sizes`` (-1 keeps a dim) without copying.

    >>> import chainrule as cr
    >>> cr.ones(3, 1).expand(3, 4).shape
    chainrule.Size([3, 4])
    """
    sizes = _shape_arg(keyword_sizes(sizes, size))
    shape = input._data.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(f"expand({legacy_type_name(input)}{{{list(shape)}}}, size="
                           f"{list(sizes)}): the number of sizes provided ({len(sizes)}) must "
                           f"be greater or equal to the number of dimensions in the tensor "
                           f"({len(shape)})")
    target = _expanded_shape(shape, sizes, lead)
    attrs = {"shape": target}
    return make_view(EXPAND, input, attrs, _view_fn(EXPAND, attrs, expand, target))


def _expanded_shape(shape, sizes, lead):
    """The shape ``sizes`` asks for (-1 keeps a dim); checked from the last dim, as the
    reference does, so that its first mismatch is the one named."""
    target = list(sizes)
    for i in reversed(range(len(sizes))):
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            continue
        have = shape[i - lead]
        if s == -1:
            target[i] = have
        elif have != 1 and have != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({have}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
    return tuple(target)


@public
def broadcast_to(input, size):
    """``input`` broadcast to ``size`` (a view, like ``expand``).

    >>> import chainrule as cr
    >>> cr.broadcast_to(cr.tensor([1., 2.]), (3, 2)).shape
    chainrule.Size([3, 2])
    """
    return expand(input, tuple(size))


@method("expand_as")
def expand_as(self, other):
    """``self.expand(other.shape)``.

    >>> import chainrule as cr
    >>> cr.ones(1, 2).expand_as(cr.zeros(3, 2)).shape
    chainrule.Size([3, 2])
    """
    require_tensor(other, "expand_as", "other", 2)
    return expand(self, other._data.shape)


@public
def permute(input, *order, dims=None):
    """Reorder the dimensions (a view).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).permute(2, 0, 1).shape
    chainrule.Size([4, 2, 3])
    """
    nd = input._data.ndim
    dims = _shape_arg(keyword_sizes(order, dims))
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    if not (dims and min(dims) >= 0 and max(dims) < nd):       # else already wrapped
        dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    attrs = {"dims": dims}
    return make_view(PERMUTE, input, attrs, _view_fn(PERMUTE, attrs, permute, dims))


@public
def movedim(input, source, destination):
    """Move dimension(s) ``source`` to position(s) ``destination`` (a view).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).movedim(0, -1).shape
    chainrule.Size([3, 4, 2])
    """
    nd = input._data.ndim
    src = [wrap_dim(d, nd) for d in ((source,) if isinstance(source, int) else source)]
    dst = [wrap_dim(d, nd) for d in ((destination,) if isinstance(destination, int)
                                     else destination)]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    if nd == 0:
        return _alias(input)             # dims 0 and -1 of a 0-d tensor: the reference's alias
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = public(movedim, name="moveaxis")


@public
def transpose(input, dim0, dim1):
    """Swap two dimensions (a view).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).transpose(0, 1).shape
    chainrule.Size([3, 2])
    """
    nd = input._data.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    if nd == 0:
        return make_view(ALIAS, input, EMPTY, _ALIAS_VIEW_FN)
    attrs = {"dim0": d0, "dim1": d1}
    return make_view(TRANSPOSE, input, attrs, _view_fn(TRANSPOSE, attrs, transpose, d0, d1))


@public
def swapaxes(input, axis0, axis1):
    """NumPy's name for :func:`transpose`.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).swapaxes(0, 1).shape
    chainrule.Size([3, 2])
    """
    return transpose(input, axis0, axis1)



swapdims = public(transpose, name="swapdims")        # the same parameter names


def _alias(input):
    return make_view(ALIAS, input, EMPTY, _ALIAS_VIEW_FN)


_ALIAS_VIEW_FN = _dual(lambda a: a.view(), _alias)    # they take no arguments: made once


@public
def t(input):
    """Transpose a tensor of at most 2 dimensions (a view).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).t().shape
    chainrule.Size([3, 2])
    """
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return make_view(T, input, EMPTY, _T_VIEW_FN)


_T_VIEW_FN = _dual(lambda a: a.T, t)


def _matrix_transpose(self):
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _conj_transpose(self):
    if self._data.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self._data.ndim}-D tensor.")
    return FUNCTIONS["conj"](transpose(self, 0, 1))


def _matrix_conj_transpose(self):
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return FUNCTIONS["conj"](transpose(self, -2, -1))


Tensor.mT = property(_matrix_transpose, doc="The last two dimensions swapped (a view).")
Tensor.H = property(_conj_transpose, doc="Conjugate transpose of a matrix.")
Tensor.mH = property(_matrix_conj_transpose, doc="Conjugate transpose of the last two dims.")
Tensor.adjoint = _matrix_conj_transpose


@public
def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim`` (a view).

    >>> import chainrule as cr
    >>> cr.zeros(3).unsqueeze(0).shape
    chainrule.Size([1, 3])
    """
    d = wrap_dim(dim, input._data.ndim + 1)
    attrs = {"dim": d}
    return make_view(UNSQUEEZE, input, attrs, _view_fn(UNSQUEEZE, attrs, unsqueeze, d))


@public
def squeeze(input, dim=None):
    """Remove dimensions of size 1 (all of them, or those in ``dim``) (a view).

    >>> import chainrule as cr
    >>> cr.zeros(1, 3, 1).squeeze().shape
    chainrule.Size([3])
    """
    shape = input._data.shape
    if dim is None:
        op, dims, arg = SQUEEZE, tuple(i for i, s in enumerate(shape) if s == 1), None
    elif isinstance(dim, (int, np.integer)):
        op, dims, arg = SQUEEZE_DIM, (wrap_dim(dim, len(shape)),), dim
    else:
        op, dims, arg = SQUEEZE_DIMS, tuple(wrap_dim(d, len(shape)) for d in dim), tuple(dim)
    dims = tuple(d for d in dims if shape and shape[d] == 1)
    attrs = {"dim": dims}
    return make_view(op, input, attrs, _view_fn(op, attrs, squeeze, arg))


@method("contiguous")
def contiguous(self, memory_format=None):
    """This tensor if its elements are laid out in row-major order, else a row-major
    copy (``CloneBackward0``).

    >>> import chainrule as cr
    >>> x = cr.zeros(2, 3); x.contiguous() is x, x.t().contiguous().is_contiguous()
    (True, True)
    """
    if self._data.flags.c_contiguous:
        return self
    return apply_op(CONTIGUOUS, (self,), EMPTY)


# --- joins and splits ----------------------------------------------------------------
def _offsets(sizes, i):
    return sum(s for s in sizes[:i] if s > 0)


def _cat_forward(*arrays, dim, sizes):
    parts = [a for a, s in zip(arrays, sizes) if s >= 0]
    if not parts:                           # only skipped empty 1-d tensors
        return np.concatenate(arrays)
    return np.concatenate(parts, axis=dim)


def _cat_vjp(i):
    def vjp(F, g, dim, sizes):
        if sizes[i] < 0:                    # a skipped empty 1-d input
            return F._new_zeros(g, (0,))
        return F.narrow(g, dim, _offsets(sizes, i), sizes[i])
    return vjp


def _cat_jvp(F, t, dim, sizes):
    # the skipped empty 1-d inputs by ``sizes`` (under vmap their tangents are 2-d)
    kept = [g for g, s in zip(t, sizes) if s >= 0]
    return F.cat(kept or list(t), dim)


def _stack_vjp(i):
    return lambda F, g, dim: F.select(g, dim, i)


def _variadic(cache, n, name, forward, make_vjp, jvp, attrs, node_name):
    """The op for ``n`` tensor inputs (cat and stack take any number); one OpDef per
    arity, the 2-input one standing in the table."""
    op = cache.get(n)
    if op is None:
        op = cache[n] = OpDef(name, forward, tuple(f"tensor{i}" for i in range(n)),
                              tuple(make_vjp(i) for i in range(n)), jvp, attrs, node_name,
                              False)
    return op


_CAT_OPS, _STACK_OPS = {}, {}


def _cat_op(n):
    return _variadic(_CAT_OPS, n, "cat", _cat_forward, _cat_vjp,
                     _cat_jvp, ("dim", "sizes"),
                     "CatBackward0")


def _stack_op(n):
    return _variadic(_STACK_OPS, n, "stack", lambda *arrays, dim: np.stack(arrays, axis=dim),
                     _stack_vjp, lambda F, t, dim: F.stack(list(t), dim), ("dim",),
                     "StackBackward0")


OPS["cat"] = _cat_op(2)
OPS["stack"] = _stack_op(2)


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not tensors:
        raise ValueError(f"torch.{name}(): expected a non-empty list of Tensors")
    return list(promote(*tensors)) if len({t._data.dtype for t in tensors}) > 1 else \
        list(tensors)


def _cat_sizes(tensors, dim):
    """Sizes along ``dim`` (-1 for the empty 1-d tensors that cat skips), checked."""
    kept = [t for t in tensors if t._data.shape != (0,)]
    ref = kept[0]._data.shape if kept else (0,)
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    d = wrap_dim(dim, len(ref))
    sizes = []
    for i, t in enumerate(tensors):
        shape = t._data.shape
        if shape == (0,) and kept:
            sizes.append(-1)
            continue
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} "
                               f"and {len(shape)}")
        for k, (a, b) in enumerate(zip(ref, shape)):
            if k != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {a} but got size {b} for tensor number {i} "
                                   f"in the list.")
        sizes.append(shape[d])
    return d, tuple(sizes)


@public(method=False)
def cat(tensors, dim=0, *, out=None):
    """Join tensors along an existing dimension (dtypes promote; empty 1-d tensors
    are skipped, like the reference).

    >>> import chainrule as cr
    >>> cr.cat([cr.zeros(2, 3), cr.ones(1, 3)]).shape
    chainrule.Size([3, 3])
    """
    if out is not None:
        return write_out("cat", out, tensors, lambda: cat(tensors, dim))
    tensors = _tensor_list(tensors, "cat")
    d, sizes = _cat_sizes(tensors, dim)
    return apply_op(_cat_op(len(tensors)), tuple(tensors), {"dim": d, "sizes": sizes})


concat = public(cat, name="concat", method=False)
concatenate = public(cat, name="concatenate", method=False)


@public(method=False)
def stack(tensors, dim=0, *, out=None):
    """Join same-shaped tensors along a new dimension ``dim``.

    >>> import chainrule as cr
    >>> cr.stack([cr.zeros(2), cr.ones(2)], dim=1).shape
    chainrule.Size([2, 2])
    """
    if out is not None:
        return write_out("stack", out, tensors, lambda: stack(tensors, dim))
    tensors = _tensor_list(tensors, "stack")
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(t._data.shape)} at entry "
                               f"{i}")
    d = wrap_dim(dim, len(first) + 1)
    return apply_op(_stack_op(len(tensors)), tuple(tensors), {"dim": d})


def _split_forward(a, dim, sizes):
    return np.split(a, np.cumsum(sizes[:-1]), axis=dim)


def _split_op(name, node_name):
    return defop(name, _split_forward, attrs=("dim", "sizes"), node_name=node_name,
                 multi_output=True,
                 vjp=(lambda F, g, dim: F.cat(g, dim),),
                 jvp=lambda F, t, dim, sizes: F.split(t[0], list(sizes), dim))


SPLIT = _split_op("split", "SplitBackward0")
SPLIT_WITH_SIZES = _split_op("split_with_sizes", "SplitWithSizesBackward0")
UNBIND = defop("unbind", lambda a, dim: _unbind_array(a, dim), attrs=("dim",),
               multi_output=True,
               vjp=(lambda F, g, dim: F.stack(g, dim),),
               jvp=lambda F, t, dim: F.unbind(t[0], dim))


def _split_views(op, input, d, sizes):
    fns = []
    for i, size in enumerate(sizes):
        fns.append(_dual(narrow_array, FUNCTIONS["narrow"], d, _offsets(sizes, i), size))
    return make_view(op, input, {"dim": d, "sizes": tuple(sizes)}, fns)


def _split_dim(input, dim, name):
    if input._data.ndim == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")
    return wrap_dim(dim, input._data.ndim)


@public
def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    """Split into views of ``split_size_or_sections`` (an int: equal pieces, the last
    maybe smaller; a list: those sizes) along ``dim``.

    >>> import chainrule as cr
    >>> [p.shape[0] for p in cr.arange(5).split(2)]
    [2, 2, 1]
    """
    if split_size is not None:                     # Tensor.split's name for it
        split_size_or_sections = split_size
    d = _split_dim(tensor, dim, "split")
    n = tensor._data.shape[d]
    if not isinstance(split_size_or_sections, (int, np.integer)):
        return _split_with_sizes(tensor, [int(s) for s in split_size_or_sections], d)
    size = int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {n}")
    sizes = [size] * (n // size) + ([n % size] if n % size else []) if n else [0]
    return _split_views(SPLIT, tensor, d, sizes)


def _split_with_sizes(tensor, sizes, d):
    n = tensor._data.shape[d]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={sizes}")
    return _split_views(SPLIT_WITH_SIZES, tensor, d, sizes)


@public
def chunk(input, chunks, dim=0):
    """Split into ``chunks`` views of (nearly) equal size along ``dim`` (fewer when
    the dimension is too short).

    >>> import chainrule as cr
    >>> [p.shape[0] for p in cr.arange(5).chunk(2)]
    [3, 2]
    """
    d = _split_dim(input, dim, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[d]
    size = -(-n // chunks)
    if size == 0:
        return _split_with_sizes(input, [0] * chunks, d)
    return split(input, size, d)


def _unbind_array(a, dim):
    lead = (slice(None),) * dim
    return [a[lead + (i, Ellipsis)] for i in range(a.shape[dim])]


@public
def unbind(input, dim=0):
    """All slices along ``dim``, as a tuple of views with that dimension removed.

    >>> import chainrule as cr
    >>> len(cr.zeros(3, 2).unbind())
    3
    """
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input._data.ndim)
    fns = [_dual(select_array, FUNCTIONS["select"], d, i) for i in range(input._data.shape[d])]
    return make_view(UNBIND, input, {"dim": d}, fns)


# --- flips, rolls, repeats, diagonals --------------------------------------------------
FLIP = defop("flip", lambda a, dims: np.flip(a, dims).copy(), attrs=("dims",),
             vjp=(lambda F, g, dims: F.flip(g, dims),),
             jvp=lambda F, t, dims: F.flip(t[0], dims))
ROLL = defop("roll", lambda a, shifts, dims: _roll_array(a, shifts, dims),
             attrs=("shifts", "dims"),
             vjp=(lambda F, g, shifts, dims: F.roll(g, tuple(-s for s in shifts), dims),),
             jvp=lambda F, t, shifts, dims: F.roll(t[0], shifts, dims))
REPEAT = defop("repeat", lambda a, repeats: np.tile(a, repeats), attrs=("repeats",),
               vjp=(lambda F, g, self_shape, repeats: F.repeat_backward(g, self_shape, repeats),),
               jvp=lambda F, t, repeats: F.repeat(t[0], repeats))
DIAGONAL = defop("diagonal", lambda a, offset, dim1, dim2: diagonal_array(a, offset, dim1, dim2),
                 attrs=("offset", "dim1", "dim2"),
                 vjp=(lambda F, g, self_shape, offset, dim1, dim2:
                      F.diagonal_backward(g, self_shape, offset, dim1, dim2),),
                 jvp=lambda F, t, offset, dim1, dim2: F.diagonal(t[0], offset, dim1, dim2))
DIAGONAL_COPY = defop("diagonal_copy",
                      lambda a, offset, dim1, dim2: diagonal_array(a, offset, dim1, dim2).copy(),
                      attrs=("offset", "dim1", "dim2"), node_name="DiagonalBackward0_copy",
                      vjp=(lambda F, g, self_shape, offset, dim1, dim2:
                           F.diagonal_backward(g, self_shape, offset, dim1, dim2),),
                      jvp=lambda F, t, offset, dim1, dim2: F.diagonal(t[0], offset, dim1, dim2))
DIAG_EMBED = defop("diag_embed",
                   lambda a, offset, dim1, dim2: diag_embed_array(a, offset, dim1, dim2),
                   attrs=("offset", "dim1", "dim2"),
                   vjp=(lambda F, g, offset, dim1, dim2: F.diagonal(g, offset, dim1, dim2),),
                   jvp=lambda F, t, offset, dim1, dim2: F.diag_embed(t[0], offset, dim1, dim2))


def _roll_array(a, shifts, dims):
    if dims is None:
        return np.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return np.roll(a, shifts, axis=dims)


@public
def flip(input, *axes, dims=None):
    """Reverse the order of elements along ``dims`` (a copy).

    >>> import chainrule as cr
    >>> cr.flip(cr.tensor([1., 2., 3.]), (0,)).tolist()
    [3.0, 2.0, 1.0]
    """
    dims = _dims_arg(keyword_sizes(axes, dims), input._data.ndim)
    if input._data.ndim == 0:
        dims = ()                        # dim 0 or -1 of a 0-d tensor: nothing to reverse
    return apply_op(FLIP, (input,), {"dims": dims})


def _dims_arg(dims, nd):
    dims = _shape_arg(dims)
    wrapped = tuple(wrap_dim(d, nd) for d in dims)
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


@public
def fliplr(input):
    """Flip the second dimension (at least 2-D).

    >>> import chainrule as cr
    >>> cr.fliplr(cr.tensor([[1., 2.]])).tolist()
    [[2.0, 1.0]]
    """
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@public
def flipud(input):
    """Flip the first dimension (at least 1-D).

    >>> import chainrule as cr
    >>> cr.flipud(cr.tensor([1., 2.])).tolist()
    [2.0, 1.0]
    """
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@public
def roll(input, shifts, dims=None):
    """Shift elements cyclically by ``shifts`` along ``dims`` (flattened if None).

    >>> import chainrule as cr
    >>> cr.roll(cr.tensor([1., 2., 3.]), 1).tolist()
    [3.0, 1.0, 2.0]
    """
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    shifts = tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:0")
        return apply_op(ROLL, (input,), {"shifts": shifts, "dims": None})
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(wrap_dim(d, input._data.ndim) for d in dims)
    return apply_op(ROLL, (input,), {"shifts": shifts, "dims": dims})


@public(top_level=False)             # a Tensor method only, as in the reference
def repeat(input, *sizes, repeats=None):
    """Tile the tensor ``sizes[i]`` times along each dimension (extra leading sizes
    add dimensions); a copy.

    >>> import chainrule as cr
    >>> cr.tensor([1., 2.]).repeat(2, 2).shape
    chainrule.Size([2, 4])
    """
    sizes = _shape_arg(keyword_sizes(sizes, repeats))
    if len(sizes) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(sizes)}: {list(sizes)}")
    return apply_op(REPEAT, (input,), {"repeats": sizes})


@public
def tile(input, dims):
    """Like ``repeat``, with ``dims`` padded with leading ones to the tensor's rank.

    >>> import chainrule as cr
    >>> cr.tile(cr.zeros(2, 3), (2,)).shape
    chainrule.Size([2, 6])
    """
    dims = _shape_arg((dims,))
    dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat(input, dims)


@helper
def repeat_backward(F, g, self_shape, repeats):
    """Sum the copies that ``repeat`` made back onto the input's shape."""
    lead = len(repeats) - len(self_shape)
    split_shape, axes = list(repeats[:lead]), list(range(lead))
    for r, s in zip(repeats[lead:], self_shape):
        axes.append(len(split_shape))
        split_shape += [r, s]
    if not axes:
        return g
    return F.reshape(F.sum(F.reshape(g, tuple(split_shape)), tuple(axes)), self_shape)


def _diag_dims(nd, offset, dim1, dim2):
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return {"offset": int(offset), "dim1": d1, "dim2": d2}


@public
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the matrices in dims ``dim1``, ``dim2`` (offset above/below),
    as a view whose last dimension runs along the diagonal.

    >>> import chainrule as cr
    >>> cr.diagonal(cr.eye(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    attrs = _diag_dims(input._data.ndim, offset, dim1, dim2)
    return make_view(DIAGONAL, input, attrs,
                     _dual(diagonal_array, diagonal, *attrs.values()))


@public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims ``dim1``, ``dim2`` of the result) whose diagonals are the last
    dimension of ``input``; zeros elsewhere.

    >>> import chainrule as cr
    >>> cr.diag_embed(cr.tensor([1., 2.])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    attrs = _diag_dims(input._data.ndim + 1, offset, dim1, dim2)
    return apply_op(DIAG_EMBED, (input,), attrs)


@public
def diag(input, diagonal=0):
    """A 1-D tensor as a diagonal matrix, or the diagonal of a 2-D tensor (a copy).

    >>> import chainrule as cr
    >>> cr.diag(cr.tensor([1., 2.])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    nd = input._data.ndim
    if nd == 1:
        return apply_op(DIAG_EMBED, (input,), {"offset": int(diagonal), "dim1": 0, "dim2": 1})
    if nd != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return apply_op(DIAGONAL_COPY, (input,), {"offset": int(diagonal), "dim1": 0, "dim2": 1})


def diagonal_array(a, offset, dim1, dim2):
    """A writable view of a diagonal (NumPy's own is read-only)."""
    m = np.moveaxis(a, (dim1, dim2), (-2, -1))
    m = m[..., :, offset:] if offset >= 0 else m[..., -offset:, :]
    n = max(0, min(m.shape[-2], m.shape[-1]))
    return strided_view(m, m.shape[:-2] + (n,),
                                           m.strides[:-2] + (m.strides[-2] + m.strides[-1],))


def diag_embed_array(a, offset, dim1, dim2):
    n = a.shape[-1] + abs(offset) if a.ndim else 1 + abs(offset)
    rest = iter(a.shape[:-1])
    shape = tuple(n if d in (dim1, dim2) else next(rest) for d in range(a.ndim + 1))
    out = zeros_on(shape, a.dtype, a)
    diagonal_array(out, offset, dim1, dim2)[...] = a
    return out


@helper
def diagonal_backward(F, g, self_shape, offset, dim1, dim2):
    """Gradient of diagonal: ``g`` written on that diagonal of zeros."""
    out = F._new_zeros(g, self_shape)
    F._write_into(F.diagonal(out, offset, dim1, dim2), g)
    return out


# --- triangles, traces, diagonals written into ---------------------------------------
TRIL = defop("tril", lambda a, diagonal: np.tril(a, diagonal), attrs=("diagonal",),
             vjp=(lambda F, g, diagonal: F.tril(g, diagonal),),
             jvp=lambda F, t, diagonal: F.tril(t[0], diagonal))
TRIU = defop("triu", lambda a, diagonal: np.triu(a, diagonal), attrs=("diagonal",),
             vjp=(lambda F, g, diagonal: F.triu(g, diagonal),),
             jvp=lambda F, t, diagonal: F.triu(t[0], diagonal))
TRACE = defop("trace", refusing(lambda a: asarray(np.trace(a, dtype=_sum_dtype_of(a))),
                                {"b": kernel_error("trace")}),
              vjp=(lambda F, g, self_shape: F.trace_backward(g, self_shape),),
              jvp=lambda F, t: F.trace(t[0]))
DIAGONAL_SCATTER = defop(
    "diagonal_scatter",
    lambda a, src, offset, dim1, dim2: diagonal_scatter_array(a, src, offset, dim1, dim2),
    inputs=("self", "src"), attrs=("offset", "dim1", "dim2"),
    vjp=(lambda F, g, src_shape, offset, dim1, dim2:
         F.diagonal_scatter(g, F._new_zeros(g, src_shape), offset, dim1, dim2),
         lambda F, g, offset, dim1, dim2: F.diagonal(g, offset, dim1, dim2)),
    jvp=lambda F, t, offset, dim1, dim2: F.diagonal_scatter(t[0], t[1], offset, dim1, dim2))


def _triangle(op, name, input, diagonal):
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply_op(op, (input,), {"diagonal": diagonal.__index__()})


@public
def tril(input, diagonal=0, *, out=None):
    """The lower triangle of the last two dims (elements on and below ``diagonal``);
    the rest zero.

    >>> import chainrule as cr
    >>> cr.tril(cr.ones(2, 2)).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    if out is not None:
        return write_out("tril", out, (input,), lambda: tril(input, diagonal))
    return _triangle(TRIL, "tril", input, diagonal)


@public
def triu(input, diagonal=0, *, out=None):
    """The upper triangle of the last two dims (elements on and above ``diagonal``);
    the rest zero.

    >>> import chainrule as cr
    >>> cr.triu(cr.ones(2, 2)).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    if out is not None:
        return write_out("triu", out, (input,), lambda: triu(input, diagonal))
    return _triangle(TRIU, "triu", input, diagonal)


@public
def trace(input):
    """The sum of the main diagonal of a matrix (integers sum as int64).

    >>> import chainrule as cr
    >>> cr.trace(cr.tensor([[1., 2.], [3., 4.]])).item()
    5.0
    """
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    return apply_op(TRACE, (input,), EMPTY)


@helper
def trace_backward(F, g, self_shape):
    """Gradient of trace: ``g`` on the main diagonal of zeros."""
    n = min(self_shape)
    return F.diagonal_backward(F.expand(g, (n,)), self_shape, 0, 0, 1)


def diagonal_scatter_array(a, src, offset, dim1, dim2):
    out = a.copy()
    diagonal_array(out, offset, dim1, dim2)[...] = src
    return out


def _diagonal_shape(shape, offset, dim1, dim2):
    """The shape of ``diagonal_array`` of an array of ``shape`` (from the shape alone)."""
    rows, cols = shape[dim1], shape[dim2]
    n = min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols)
    return tuple(k for d, k in enumerate(shape) if d not in (dim1, dim2)) + (max(n, 0),)


def _check_scatter_src(src, slice_shape):
    if tuple(src._data.shape) != tuple(slice_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(slice_shape)}")


@public
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written on the diagonal that ``diagonal(input,
    offset, dim1, dim2)`` selects.

    >>> import chainrule as cr
    >>> cr.diagonal_scatter(cr.zeros(2, 2), cr.ones(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    require_tensors("diagonal_scatter", ("input", "src"), input, src)
    attrs = _diag_dims(input._data.ndim, offset, dim1, dim2)
    _check_scatter_src(src, _diagonal_shape(input._data.shape, **attrs))
    src = src if src._data.dtype == input._data.dtype else src.to(input.dtype)
    return apply_op(DIAGONAL_SCATTER, (input, src), attrs)


@public
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on diagonal ``offset``.

    >>> import chainrule as cr
    >>> cr.diagflat(cr.tensor([[1., 2.]])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    return diag(reshape(input, (-1,)), offset)


# --- rotations, splits by index, stacks ---------------------------------------------
ROT90 = defop("rot90", lambda a, k, dims: np.rot90(a, k, dims).copy(), attrs=("k", "dims"),
              vjp=(lambda F, g, k, dims: F.rot90(g, -k, dims),),
              jvp=lambda F, t, k, dims: F.rot90(t[0], k, dims))


@public
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first
    towards the second).

    >>> import chainrule as cr
    >>> cr.rot90(cr.tensor([[1., 2.], [3., 4.]])).tolist()
    [[2.0, 4.0], [1.0, 3.0]]
    """
    dims = list(dims)
    nd = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = wrap_dim(dims[0], nd), wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return apply_op(ROT90, (input,), {"k": k % 4, "dims": (d0, d1)})


def _split_points(input, indices_or_sections, d):
    """The (start, end) of each piece of tensor_split along ``d``."""
    n = input._data.shape[d]
    if isinstance(indices_or_sections, Tensor):
        arr = indices_or_sections._data
        if arr.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {scalar_type_name(arr.dtype)}")
        if arr.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {arr.ndim} dims")
        indices_or_sections = arr.item() if arr.ndim == 0 else arr.tolist()
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)
        ends = np.cumsum([size + 1] * extra + [size] * (sections - extra)).tolist()
        return list(zip([0] + ends[:-1], ends))
    bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return list(zip(bounds[:-1], bounds[1:]))


@public
def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` split along ``dim`` into ``sections`` pieces of nearly equal
    size (an int) or at the given indices (a list or 1-D long tensor).

    >>> import chainrule as cr
    >>> [p.tolist() for p in cr.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    """
    if input._data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    pieces = []
    for start, end in _split_points(input, indices_or_sections, d):
        start, end, _ = slice(start, end).indices(n)
        pieces.append(FUNCTIONS["_slice"](input, d, start, max(start, end), 1))
    return tuple(pieces)


@public
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``,
    repeated ``n`` times; "not equal" for bool), after concatenating ``prepend``
    and ``append`` along ``dim``. Built from slices and ``sub``, so it is
    differentiable to any order.

    >>> import chainrule as cr
    >>> cr.diff(cr.tensor([1., 4., 9., 16.])).tolist()
    [3.0, 5.0, 7.0]
    >>> cr.diff(cr.tensor([1., 4., 9.]), n=2, prepend=cr.tensor([0.])).tolist()
    [2.0, 2.0]
    """
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input._data.ndim)
    x = _with_ends(input, d, prepend, append)
    for _ in range(n):
        length = x._data.shape[d]
        if length == 0:
            break
        later = FUNCTIONS["_slice"](x, d, 1, length, 1)
        earlier = FUNCTIONS["_slice"](x, d, 0, length - 1, 1)
        x = later != earlier if x._data.dtype == np.bool_ else later - earlier
    return x


def _with_ends(input, d, prepend, append):
    """``cat([prepend, input, append], d)`` with diff's checks on the two ends."""
    parts = []
    for end in (prepend, input, append):
        if end is None:
            continue
        if end is not input:
            _check_diff_end(input, end, d)
        parts.append(end)
    return parts[0] if len(parts) == 1 else FUNCTIONS["cat"](parts, d)


def _check_diff_end(input, end, d):
    if end._data.ndim != input._data.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i, (a, b) in enumerate(zip(input._data.shape, end._data.shape)):
        if i != d and a != b:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({i}) = {a}, but got "
                f"tensor.size({i}) = {b}")


def _directional_split(name, dim, min_dims):
    def split_fn(input, indices_or_sections):
        nd = input._data.ndim
        if nd < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {nd} dimensions!")
        d = dim if nd > 1 or name != "hsplit" else 0
        if isinstance(indices_or_sections, (int, np.integer)):
            size = input._data.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {size} is not divisible by the "
                                   f"split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    split_fn.__name__ = name
    split_fn.__doc__ = (f"``tensor_split`` along dimension {dim} (sections must divide it "
                        f"evenly).\n\n    >>> import chainrule as cr\n    >>> len(cr.{name}("
                        f"cr.zeros(4, 4, 4), 2))\n    2\n")
    return public(split_fn)


hsplit = _directional_split("hsplit", 1, 1)
vsplit = _directional_split("vsplit", 0, 2)
dsplit = _directional_split("dsplit", 2, 3)


def _atleast(input, nd):
    shape = input._data.shape
    if len(shape) >= nd:
        return input
    if nd == 3 and len(shape) == 2:
        return unsqueeze(input, -1)
    if nd == 3 and len(shape) == 1:
        return view(input, (1, shape[0], 1))
    return view(input, (1,) * (nd - len(shape)) + shape)


def _atleast_fn(nd):
    def atleast(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(_atleast(t, nd) for t in tensors[0])
        if len(tensors) == 1:
            return _atleast(tensors[0], nd)
        return tuple(_atleast(t, nd) for t in tensors)
    atleast.__name__ = f"atleast_{nd}d"
    atleast.__doc__ = (f"Tensors of fewer than {nd} dimensions viewed with {nd} (several "
                       f"tensors give a tuple).\n\n    >>> import chainrule as cr\n    >>> "
                       f"cr.atleast_{nd}d(cr.tensor(1.)).dim()\n    {nd}\n")
    return public(atleast, method=False)


atleast_1d, atleast_2d, atleast_3d = _atleast_fn(1), _atleast_fn(2), _atleast_fn(3)


def _stack_list(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


@public(method=False)
def hstack(tensors, *, out=None):
    """Join along the first dimension of 1-D tensors, the second otherwise.

    >>> import chainrule as cr
    >>> cr.hstack([cr.zeros(2, 1), cr.ones(2, 2)]).shape
    chainrule.Size([2, 3])
    """
    ts = [_atleast(t, 1) for t in _stack_list(tensors, "hstack")]
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1, out=out)


@public(method=False)
def vstack(tensors, *, out=None):
    """Join along the first dimension, 1-D tensors as rows.

    >>> import chainrule as cr
    >>> cr.vstack([cr.zeros(2), cr.ones(2)]).shape
    chainrule.Size([2, 2])
    """
    return cat([_atleast(t, 2) for t in _stack_list(tensors, "vstack")], 0, out=out)


row_stack = public(vstack, name="row_stack", method=False)


@public(method=False)
def dstack(tensors, *, out=None):
    """Join along the third dimension (tensors of fewer dims are viewed as 3-D).

    >>> import chainrule as cr
    >>> cr.dstack([cr.zeros(2), cr.ones(2)]).shape
    chainrule.Size([1, 2, 2])
    """
    return cat([_atleast(t, 3) for t in _stack_list(tensors, "dstack")], 2, out=out)


@public(method=False)
def column_stack(tensors, *, out=None):
    """Join as columns: 0-d and 1-d tensors become columns, the rest join along dim 1.

    >>> import chainrule as cr
    >>> cr.column_stack([cr.zeros(3), cr.ones(3, 2)]).shape
    chainrule.Size([3, 3])
    """
    ts = [view(t, (t._data.size, 1)) if t._data.ndim <= 1 else t
          for t in _stack_list(tensors, "column_stack")]
    return cat(ts, 1, out=out)


# --- repeat_interleave, broadcasting, grids, block matrices ------------------------
def _repeat_counts(repeats, n):
    """``repeats`` (an int or an integer tensor) as one count per element, checked."""
    if isinstance(repeats, Tensor):
        arr = repeats._data
        if arr.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(-1), (n,))
        elif arr.shape[0] != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {arr.shape[0]} and input.size(0) = {n}")
        if arr.size and arr.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return arr.astype(np.int64)
    repeats = repeats.__index__()
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    return np.full(n, repeats, np.int64)


@public
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (each slice along ``dim``) ``repeats`` times, in place
    order; the input is flattened when ``dim`` is None. With a single integer tensor,
    repeats its indices: ``repeat_interleave(tensor([1, 2]))`` is ``[0, 1, 1]``.

    >>> import chainrule as cr
    >>> cr.tensor([1., 2.]).repeat_interleave(2).tolist()
    [1.0, 1.0, 2.0, 2.0]
    """
    if repeats is None:
        counts = input._data
        if counts.dtype not in (np.int64, np.int32):    # the reference's kernel, and its dtype
            raise kernel_error("repeat_interleave_cpu")(counts.dtype)
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return Tensor._wrap(_repeated_positions(counts.reshape(-1)).astype(counts.dtype))
    if dim is None or input._data.ndim == 0:
        input, dim = reshape(input, (-1,)), 0 if dim is None else dim
    d = wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if not isinstance(repeats, Tensor):
        return _repeat_each(input, d, _repeat_counts(repeats, 1)[0], output_size)
    index = _repeated_positions(_repeat_counts(repeats, n))
    if output_size is not None and output_size != index.size:
        raise RuntimeError("allocated size does not match required size")
    return FUNCTIONS["index_select"](input, d, Tensor._wrap(index))


def _repeated_positions(counts):
    """``np.repeat(np.arange(n), counts)`` where ``counts`` lives (Note [device arrays]):
    on a device, a 1 at each element's first output position, summed up (an element
    repeated 0 times shares its start with the next one, which the sum steps past).
    Its size is the one value read back (the reference reads it too)."""
    if type(counts) is np.ndarray:
        return np.repeat(np.arange(counts.size), counts)
    ends = np.cumsum(counts)
    total = int(ends[-1].item()) if counts.size else 0
    starts = zeros_on((total + 1,), np.int64, counts)
    np.add.at(starts, ends - counts, 1)
    return np.cumsum(starts[:total]) - 1


def _repeat_each(input, d, r, output_size):
    """repeat_interleave by an int: each slice copied ``r`` times (a broadcast, then a
    copy viewed in the result's shape, like the reference)."""
    shape = input._data.shape
    wide = expand(unsqueeze(input, d + 1), shape[:d + 1] + (r,) + shape[d + 1:])
    out_shape = shape[:d] + (shape[d] * r,) + shape[d + 1:]
    if output_size is not None and output_size != out_shape[d]:
        raise RuntimeError("allocated size does not match required size")
    return view(apply_op(CONTIGUOUS, (wide,), EMPTY), out_shape)


@public(method=False)
def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (an int stands for a 1-D shape).

    >>> import chainrule as cr
    >>> cr.broadcast_shapes((2, 1), (3, 1, 4))
    chainrule.Size([3, 2, 4])
    """
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    result = [1] * max((len(s) for s in shapes), default=0)
    for i, shape in enumerate(shapes):
        for j in range(-1, -1 - len(shape), -1):
            if shape[j] < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"({shape[j]}): ({shape[j]})")
            if shape[j] == 1 or shape[j] == result[j]:
                continue
            if result[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[j]} "
                                   f"at {j}! Mismatching argument at index {i} had {shape}; but "
                                   f"expected shape should be broadcastable to {result}")
            result[j] = shape[j]
    from .._size import Size
    return Size(result)


def _tensor_args(tensors):
    """``f(a, b)`` and ``f([a, b])`` alike."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


@public(method=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views).

    >>> import chainrule as cr
    >>> [t.shape for t in cr.broadcast_tensors(cr.zeros(2, 1), cr.zeros(3))]
    [chainrule.Size([2, 3]), chainrule.Size([2, 3])]
    """
    tensors = _tensor_args(tensors)
    try:
        shape = np.broadcast_shapes(*(t._data.shape for t in tensors))
    except ValueError:
        raise broadcast_error(tensors[0]._data.shape, tensors[1]._data.shape) from None
    return tuple(expand(t, shape) for t in tensors)


@public(method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-D or 1-D tensors: output ``i`` varies along dimension
    ``i`` (``indexing='ij'``) or, for the first two, swapped (``'xy'``); views.

    >>> import chainrule as cr
    >>> [g.shape for g in cr.meshgrid(cr.zeros(2), cr.zeros(3), indexing='ij')]
    [chainrule.Size([2, 3]), chainrule.Size([2, 3])]
    """
    tensors = _tensor_args(tensors)
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    _check_grid_inputs(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t._data.size for t in tensors)
    grids = []
    for i, t in enumerate(tensors):
        lone = tuple(n if k == i else 1 for k, n in enumerate(shape))
        grids.append(expand(view(t, lone), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _check_grid_inputs(tensors):
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    if len({t._data.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")


@public(method=False)
def cartesian_prod(*tensors):
    """All tuples of one element from each 1-D tensor, as the rows of a matrix (a
    single tensor comes back as is).

    >>> import chainrule as cr
    >>> cr.cartesian_prod(cr.tensor([1, 2]), cr.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    tensors = _tensor_args(tensors)
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


@public(method=False)
def block_diag(*tensors):
    """A block-diagonal matrix of the tensors (0-D and 1-D ones as one-row blocks).

    >>> import chainrule as cr
    >>> cr.block_diag(cr.ones(1, 1), cr.tensor([2., 3.])).tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 3.0]]
    """
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
    if not tensors:
        return Tensor._wrap(np.zeros((1, 0), _default_np_dtype()))
    blocks = [view(t, (1, t._data.size)) if t._data.ndim < 2 else t for t in tensors]
    blocks = promote(*blocks) if len({b._data.dtype for b in blocks}) > 1 else blocks
    width = sum(b._data.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b._data.shape
        rows.append(cat([_zeros_like_block(b, (r, left)), b,
                         _zeros_like_block(b, (r, width - left - c))], 1))
        left += c
    return cat(rows, 0)


def _zeros_like_block(t, shape):
    return Tensor._wrap(zeros_on(shape, t._data.dtype, t._data))


def _default_np_dtype():
    from .._dtypes import get_default_dtype
    return get_default_dtype().np


@public(method=False)
def combinations(input, r=2, with_replacement=False):
    """All length-``r`` combinations of the elements of a 1-D tensor, one per row
    (like ``itertools.combinations``, or ``combinations_with_replacement``).

    >>> import chainrule as cr
    >>> cr.combinations(cr.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    import itertools
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._wrap(np.zeros((0,), input._data.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    index = np.array(list(pick(range(input._data.shape[0]), r)), np.int64).reshape(-1, r)
    return stack([input[Tensor._wrap(index[:, k].copy())] for k in range(r)], 1)


# --- strided views: unfold, as_strided -----------------------------------------------
UNFOLD = defop("unfold", lambda a, dimension, size, step: unfold_array(a, dimension, size, step),
               attrs=("dimension", "size", "step"),
               vjp=(lambda F, g, self_shape, dimension, size, step:
                    F.gather_positions_backward(
                        g, self_shape, unfold_array(_positions(self_shape), dimension, size,
                                                    step)),),
               jvp=lambda F, t, dimension, size, step: F._unfold(t[0], dimension, size, step))
# Note [as_strided reads the storage]
#     as_strided reads the memory of the input's base (its storage, which chainrule
#     needs contiguous) with an element geometry of its own. Like the reference, the
#     gradient goes to the input through the input's own geometry: storage positions
#     the output reads outside it get no gradient (they are not the input's elements).
AS_STRIDED = defop("as_strided", lambda a, size, stride, storage_offset, geometry:
                   as_strided_array(a, size, stride, storage_offset, geometry),
                   attrs=("size", "stride", "storage_offset", "geometry"),
                   vjp=(lambda F, g, self_shape, size, stride, storage_offset, geometry:
                        F._index(F.gather_positions_backward(
                            g, (geometry[2],), _strided_positions(size, stride, storage_offset)),
                            (_strided_positions(self_shape, geometry[1], geometry[0]),)),),
                   jvp=lambda F, t, self_shape, size, stride, storage_offset, geometry:
                   F._index(F._index_put(
                       F._new_zeros(t[0], (geometry[2],)),
                       (_strided_positions(self_shape, geometry[1], geometry[0]),), t[0]),
                       (_strided_positions(size, stride, storage_offset),)))


def _positions(shape):
    return np.arange(math.prod(shape)).reshape(shape)


def _strided_positions(size, stride, offset):
    """The flat storage position of each element of an ``as_strided`` view."""
    pos = np.full(tuple(size), offset, np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        pos += (np.arange(n) * s).reshape((n,) + (1,) * (len(size) - d - 1))
    return pos


@helper
def gather_positions_backward(F, g, self_shape, positions):
    """Gradient of a view that reads ``positions`` (flat, row-major) of its input:
    ``g`` summed into zeros there (windows may overlap)."""
    flat = F._new_zeros(g, (math.prod(self_shape),))
    return F.reshape(F._index_put(flat, (positions,), g, True), self_shape)


def unfold_array(a, dimension, size, step):
    """Windows of ``size`` every ``step`` along ``dimension``, as a new last dim (a view)."""
    if a.ndim == 0:
        return strided_view(a, (size,), (0,))
    n, s = a.shape[dimension], a.strides[dimension]
    count = (n - size) // step + 1
    shape = a.shape[:dimension] + (count,) + a.shape[dimension + 1:] + (size,)
    strides = a.strides[:dimension] + (s * step,) + a.strides[dimension + 1:] + (s,)
    return strided_view(a, shape, strides)


def as_strided_array(a, size, stride, storage_offset, geometry):
    """The storage that ``a`` lies in (``geometry``: a's offset in it, a's strides, its
    size; all in elements) read with ``size``, ``stride`` from ``storage_offset``."""
    item, (start, _, length) = a.itemsize, geometry
    strided = strided_view
    back = strided(a, (start + 1,), (-item,))[::-1]        # points at the storage's start
    storage = strided(back, (length,), (item,))
    return strided(storage[storage_offset:], tuple(size), tuple(s * item for s in stride))


def unfold(self, dimension, size, step):
    """All windows of ``size`` elements every ``step`` along ``dimension``, as a new
    last dimension (a view; windows may overlap).

    >>> import chainrule as cr
    >>> cr.arange(5.).unfold(0, 2, 2).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    nd = self._data.ndim
    d = wrap_dim(dimension, max(nd, 1))
    n = self._data.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    attrs = {"dimension": d, "size": int(size), "step": int(step)}
    return make_view(UNFOLD, self, attrs, _dual(unfold_array, unfold, d, size, step))


Tensor.unfold = unfold
FUNCTIONS["_unfold"] = unfold            # for formulas (torch has no top-level unfold)


@public
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size``, element ``stride`` and
    ``storage_offset`` (default: ``input``'s own). The storage is the memory of
    ``input``'s base, which must be contiguous (Note [as_strided reads the storage]).

    >>> import chainrule as cr
    >>> cr.arange(4.).as_strided((2, 2), (1, 1)).tolist()
    [[0.0, 1.0], [1.0, 2.0]]
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if type(input) is BatchedTensor:          # Note [as_strided under vmap]
        return _batched_as_strided(input, size, stride, storage_offset)
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    root = memory_root(input)
    _check_strided_geometry(root, size, stride, offset)
    return _as_strided_view(input, size, stride, offset)


# Note [as_strided under vmap]
#     Like the reference's batching rule, as_strided of a batch entry reads the physical
#     tensor's storage: entry i's result starts ``storage_offset`` (default: the
#     physical tensor's own offset) plus i batch strides in, with the given sizes and
#     strides. So it is one as_strided of the physical tensor, the batch dimension
#     prepended with its stride (_batching_rules.as_strided_rule); an entry's result
#     may read only memory its entry can (else the reference's error), so that no
#     entry reads another's.
def _batched_as_strided(input, size, stride, storage_offset):
    offset = None if storage_offset is None else int(storage_offset)
    _check_strided_geometry(None, size, stride, 0 if offset is None else offset)
    attrs = {"size": size, "stride": stride, "storage_offset": offset, "geometry": None}
    return make_view(AS_STRIDED, input, attrs,
                     lambda x: as_strided(x, size, stride, storage_offset))


def _as_strided_view(input, size, stride, offset):
    root = memory_root(input)
    geometry = (input.storage_offset(), input.stride(), root._data.size)
    attrs = {"size": size, "stride": stride, "storage_offset": offset, "geometry": geometry}
    return make_view(AS_STRIDED, input, attrs, _as_strided_fn(size, stride, offset, geometry))


def _as_strided_fn(size, stride, offset, geometry):
    """The view_fn: on an ndarray, the same geometry (the view's input re-made from a
    contiguous root lies where the original did); on a Tensor, its own."""
    def view_fn(x):
        if isinstance(x, Tensor):
            return _as_strided_view(x, size, stride, offset)
        return as_strided_array(x, size, stride, offset, geometry)
    return view_fn


def _check_strided_geometry(root, size, stride, offset):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if root is None:                          # a batch entry's: Note [as_strided under vmap]
        return
    if not root._data.flags.c_contiguous:
        raise RuntimeError("as_strided: chainrule needs the storage (the tensor's base) to be "
                           "contiguous; call .contiguous() first")
    item, storage = root._data.itemsize, root._data.size
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) \
        if all(size) else offset
    if needed > storage:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{needed * item} are out of bounds for storage of size "
                           f"{storage * item}")


# --- complex numbers as pairs of reals -------------------------------------------------
_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}

VIEW_AS_REAL = defop("view_as_real", lambda a: view_as_real_array(a),
                     vjp=(lambda F, g, self_shape: F.pairs_to_complex(g, len(self_shape)),),
                     jvp=lambda F, t: F.view_as_real(t[0]))
VIEW_AS_COMPLEX = defop("view_as_complex", lambda a: view_as_complex_array(a),
                        vjp=(lambda F, g: F.view_as_real(g),),
                        jvp=lambda F, t, self_shape:
                        F.pairs_to_complex(t[0], len(self_shape) - 1))
COMPLEX = defop("complex", lambda a, b: complex_array(a, b), inputs=("real", "imag"),
                vjp=(lambda F, g, real_shape: F.sum_to(F.real(g), real_shape),
                     lambda F, g, imag_shape: F.sum_to(F.imag(g), imag_shape)),
                jvp=lambda F, t: F.complex(t[0], t[1]))
POLAR = defop("polar", lambda a, b: complex_array(a * np.cos(b), a * np.sin(b)),
              inputs=("abs", "angle"),
              vjp=(lambda F, g, angle, abs_shape:
                   F.sum_to(F.real(g) * F.cos(angle) + F.imag(g) * F.sin(angle), abs_shape),
                   lambda F, g, result, angle_shape:
                   F.sum_to(F.imag(g) * F.real(result) - F.real(g) * F.imag(result),
                            angle_shape)),
              jvp=lambda F, t, abs, angle, result:
              F.complex(t[0] * F.cos(angle) - t[1] * F.imag(result),
                        t[0] * F.sin(angle) + t[1] * F.real(result)))


def view_as_real_array(a):
    """A complex array's memory as (..., 2) reals (a writable view)."""
    r = a.real
    return strided_view(r, a.shape + (2,), r.strides + (r.itemsize,))


def view_as_complex_array(a):
    return a.view(_COMPLEX_OF[a.dtype])[..., 0]


def complex_array(real, imag):
    """``real + 1j * imag``; float16 parts make complex64 (Note [ComplexHalf stands in
    as complex64])."""
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape),
                   _COMPLEX_OF.get(real.dtype, np.complex64))
    out = on_device_of(out, real)
    out.real, out.imag = real, imag
    return out


@helper
def pairs_to_complex(F, g, last):
    """Dimension ``last`` (of size 2) of ``g`` as real and imaginary parts (a copy)."""
    return F.complex(F.select(g, last, 0), F.select(g, last, 1))


@public(method=False)
def view_as_real(input):
    """A complex tensor as a real one with a last dimension of size 2 (real,
    imaginary); a view.

    >>> import chainrule as cr
    >>> cr.view_as_real(cr.tensor([1 + 2j])).tolist()
    [[1.0, 2.0]]
    """
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return make_view(VIEW_AS_REAL, input, EMPTY, _dual(view_as_real_array, view_as_real))


@public(method=False)
def view_as_complex(input):
    """A real tensor whose last dimension (size 2, stride 1) holds (real, imaginary)
    pairs, as a complex tensor; a view.

    >>> import chainrule as cr
    >>> cr.view_as_complex(cr.tensor([[1., 2.]])).tolist()
    [(1+2j)]
    """
    arr = input._data
    if arr.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: "
                           f"{scalar_type_name(arr.dtype)}")
    if arr.ndim == 0 or arr.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = arr.itemsize
    if arr.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * item) for s, n in zip(arr.strides[:-1], arr.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return make_view(VIEW_AS_COMPLEX, input, EMPTY,
                     _dual(view_as_complex_array, view_as_complex))


def _real_pair(real, imag):
    real, imag = real._data.dtype, imag._data.dtype
    if real not in _PARTS or imag not in _PARTS:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(real)} and {scalar_type_name(imag)}")
    if real != imag:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(real)} but got "
                           f"scalar type {scalar_type_name(imag)} for second argument")


_PARTS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


@public(method=False)
def complex(real, imag, *, out=None):
    """The complex tensor ``real + 1j * imag`` (float inputs of one dtype; broadcast).

    >>> import chainrule as cr
    >>> cr.complex(cr.tensor([1.]), cr.tensor([2.])).tolist()
    [(1+2j)]
    """
    if out is not None:
        return write_out("complex", out, (real, imag), lambda: complex(real, imag))
    _real_pair(real, imag)
    return _broadcasting(COMPLEX, real, imag)


@public(method=False)
def polar(abs, angle, *, out=None):
    """The complex tensor with magnitude ``abs`` and phase ``angle``:
    ``abs * (cos(angle) + 1j * sin(angle))``.

    >>> import chainrule as cr
    >>> cr.polar(cr.tensor([2.]), cr.tensor([0.])).tolist()
    [(2+0j)]
    """
    if out is not None:
        return write_out("polar", out, (abs, angle), lambda: polar(abs, angle))
    _real_pair(abs, angle)
    if abs._data.dtype == np.float16:       # the reference's polar has no complex32 kernel
        raise kernel_error("polar_cpu")(abs._data.dtype)
    return _broadcasting(POLAR, abs, angle)


def _broadcasting(op, a, b):
    try:
        return apply_op(op, (a, b), EMPTY)
    except ValueError:
        raise broadcast_error(a._data.shape, b._data.shape) from None


# --- view(dtype): the same bytes read as another dtype ------------------------------
def view_dtype(input, dtype):
    """``input``'s memory reinterpreted as ``dtype``: shares memory and version counter
    but, like the reference, is neither differentiable nor marked as a view."""
    arr, target = input._data, dtype.np
    if arr.itemsize != target.itemsize:
        _check_dtype_view(arr, target)
    out = Tensor._wrap(arr.view(target))
    out._vc = counter_of(input)     # like the reference: shares the version, but no _base
    return out


def _check_dtype_view(arr, target):
    what = f"view {scalar_type_name(arr.dtype)} as {scalar_type_name(target)} (different " \
           f"element sizes)"
    if arr.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to {what}")
    if arr.shape[-1] != 1 and arr.strides[-1] != arr.itemsize:
        raise RuntimeError(f"self.stride(-1) must be 1 to {what}, but got "
                           f"{arr.strides[-1] // arr.itemsize}")
    if target.itemsize > arr.itemsize:
        ratio = target.itemsize // arr.itemsize
        if arr.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to {what}, but got "
                               f"{arr.shape[-1]}")
        for k, s in enumerate(arr.strides[:-1]):
            if (s // arr.itemsize) % ratio:
                raise RuntimeError(f"self.stride({k}) must be divisible by {ratio} to {what}, "
                                   f"but got {s // arr.itemsize}")


# --- ndarray versions for derivative formulas (Note [one formula, two namespaces]) -----
@array_fn("squeeze")
def squeeze_array(x, dim=None):
    return np.squeeze(x, dim)


@array_fn("t")
def t_array(x):
    """``x.T``; when ``x`` is its whole owner transposed, the owner itself, so that a
    weight's gradient made in its layout and handed through TBackward0 can be stolen
    into ``.grad`` without a copy (Note [linear's graph])."""
    base = x.base
    if type(base) is np.ndarray and x.flags.f_contiguous and base.flags.c_contiguous and \
            base.ndim == 2 and base.shape == x.shape[::-1] and base.dtype == x.dtype:
        return base
    return x.T


@array_fn("cat")
def cat_array(tensors, dim=0):
    parts = [a for a in tensors if a.shape != (0,)]
    return np.concatenate(parts or tensors, axis=dim if parts else 0)


@array_fn("stack")
def stack_array(tensors, dim=0):
    return np.stack(tensors, axis=dim)


@array_fn("split")
def split_array(tensor, split_size_or_sections, dim=0):
    n = tensor.shape[dim]
    sizes = split_size_or_sections
    if isinstance(sizes, (int, np.integer)):
        sizes = [sizes] * (n // sizes) + ([n % sizes] if n % sizes else [])
    return tuple(_split_forward(tensor, dim, list(sizes)))


@array_fn("unbind")
def unbind_array(x, dim=0):
    return tuple(_unbind_array(x, dim))


@array_fn("narrow")
def narrow_array(x, dim, start, length):
    return x[(slice(None),) * dim + (slice(start, start + length),)]


@array_fn("select")
def select_array(x, dim, index):
    return x[(slice(None),) * dim + (index, Ellipsis)]


@array_fn("flip")
def flip_array(x, dims):
    return np.flip(x, dims)


@array_fn("roll")
def roll_array(x, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    return _roll_array(x, shifts, dims)


@array_fn("repeat")
def repeat_array(x, repeats):
    return np.tile(x, repeats)


@array_fn("diagonal")
def diagonal_ns_array(x, offset=0, dim1=0, dim2=1):
    return diagonal_array(x, offset, dim1 % x.ndim, dim2 % x.ndim)


@array_fn("diag_embed")
def diag_embed_ns_array(x, offset=0, dim1=-2, dim2=-1):
    return diag_embed_array(x, offset, dim1 % (x.ndim + 1), dim2 % (x.ndim + 1))


@array_fn("tril")
def tril_array(x, diagonal=0):
    return np.tril(x, diagonal)


@array_fn("triu")
def triu_array(x, diagonal=0):
    return np.triu(x, diagonal)


def _sum_dtype_of(a):
    """Integers sum in int64, as the reference's reductions do (NumPy's unsigned: uint64)."""
    return np.int64 if a.dtype.kind in "iu" else None


@array_fn("trace")
def trace_array(x):
    return asarray(np.trace(x, dtype=_sum_dtype_of(x)))


@array_fn("diagonal_scatter")
def diagonal_scatter_ns_array(x, src, offset=0, dim1=0, dim2=1):
    return diagonal_scatter_array(x, src, offset, dim1 % x.ndim, dim2 % x.ndim)


array_fn("_unfold")(unfold_array)
array_fn("rot90")(lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims))
array_fn("view_as_real")(view_as_real_array)
array_fn("complex")(complex_array)


@array_fn("_new_zeros")
def new_zeros_array(x, shape):
    return zeros_on(shape, x.dtype, x)


@array_fn("_write_into")
def write_into_array(view, value):
    view[...] = value


@formula_helper
def _new_zeros(x, shape):
    """Zeros of ``shape`` with ``x``'s dtype (a constant: no history), batched like a
    batched ``x`` (Note [batched tensors])."""
    if type(x) is BatchedTensor:
        physical, levels = unwrap_all(x)
        lead = tuple(physical.shape)[:len(levels)]
        return rewrap(Tensor._wrap(np.zeros(lead + tuple(shape), x._data.dtype)), levels)
    return Tensor._wrap(np.zeros(shape, x._data.dtype))


@formula_helper
def _write_into(view, value):
    """Copy ``value`` into ``view`` (recorded: the view's base gets CopySlices)."""
    view.copy_(value)


from . import indexing  # noqa: E402,F401  (registers the indexing ops)
