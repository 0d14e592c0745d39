"""The last of the reference's ``torch.*`` and ``Tensor`` names that programs can reach:
function forms of in-place methods (``addmv_``, ``i0_``, ``resize_as_``), ``fill``,
``frobenius_norm``/``nuclear_norm``, ``as_strided_scatter``, ``slice_inverse``,
``nonzero_static``, ``empty_permuted``, ``get_device``, ``set_anomaly_enabled``, the legacy
``Tensor.new``/``resize``/``resize_as`` and ``chalf``, and the removed
``solve``/``eig``/``symeig``/``lstsq``/``matrix_rank``, which raise the reference's errors.
"""
import os
import sys
import warnings

import numpy as np

from .. import _dtypes, _factories
from .._size import Size
from .._tensor import Tensor, memory_root
from ._common import FUNCTIONS, check_inplace, method, public, require_tensors
from ._registry import apply_op

F = FUNCTIONS


# The reference's TORCH_WARN_ONCE: a deprecation said once per process.
WARNED_ONCE = set()


def _warn_once(message):
    if message not in WARNED_ONCE:
        WARNED_ONCE.add(message)
        warnings.warn(message, UserWarning, stacklevel=_first_frame_outside_chainrule())


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _first_frame_outside_chainrule():
    """The stacklevel (for a warning raised by _warn_once's caller) of the first frame
    that is not chainrule's: the user's line that called into it."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += not _skipped_by_warnings(frame)
    return level


def _skipped_by_warnings(frame):
    """Frames ``warnings`` does not count in a stacklevel (importlib's bootstrap, whose
    name the torch function wrappers take, Note [torch function slot])."""
    name = frame.f_code.co_filename if frame is not None else ""
    return "importlib" in name and "_bootstrap" in name


_JIT_ONLY = ("at::{} is deprecated and it is just left for JIT compatibility. It will be "
             "removed in a future PyTorch release. Please use `{}` instead")


# --- function forms of methods -------------------------------------------------------------
@public(method=False)
def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """``input = beta * input + alpha * (mat @ vec)`` in place.

    >>> import chainrule as cr
    >>> x = cr.ones(2); cr.addmv_(x, cr.eye(2), cr.ones(2)).tolist()
    [2.0, 2.0]
    """
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


@public(method=False)
def i0_(input):
    """The modified Bessel function of order 0, in place.

    >>> import chainrule as cr
    >>> cr.i0_(cr.zeros(1)).tolist()
    [1.0]
    """
    return input.i0_()


@public(method=False)
def resize_as_(input, the_template, *, memory_format=None):
    """Give ``input`` the shape of ``the_template`` (:meth:`Tensor.resize_`).

    >>> import chainrule as cr
    >>> cr.resize_as_(cr.arange(4.0), cr.zeros(2, 2)).shape
    chainrule.Size([2, 2])
    """
    require_tensors("resize_as_", ("input", "the_template"), input, the_template)
    return input.resize_(the_template.shape)


@public(method=False)
def get_device(input):
    """The tensor's device index, -1 on the CPU.

    >>> import chainrule as cr
    >>> cr.get_device(cr.ones(1))
    -1
    """
    return input.get_device()


@public(method=False)
def fill(input, value):
    """A new tensor like ``input`` holding ``value`` everywhere (a number, or a 0-dim
    tensor whose gradient is the sum of the result's).

    >>> import chainrule as cr
    >>> cr.fill(cr.zeros(2), 3.0).tolist()
    [3.0, 3.0]
    """
    from .operators import FILL_OUT, FILL_TENSOR_OUT, filled
    return filled(input, value, FILL_OUT, FILL_TENSOR_OUT)


@public
def hash_tensor(input, dim=(), *, keepdim=False, mode=0):
    """The xor of the elements' 64-bit patterns (floats widened to float64, integers and
    bools to int64) over ``dim`` (every dim by default), as uint64.

    >>> import chainrule as cr
    >>> cr.hash_tensor(cr.tensor([1, 2, 3])).item()
    0
    """
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.is_complex():
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for "
                                  f"'{_dtypes.scalar_type_name(input._data.dtype)}'")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    data = np.asarray(input.detach().cpu().numpy())
    wide = data.astype(np.float64 if input.is_floating_point() else np.int64)
    bits = np.bitwise_xor.reduce(wide.view(np.uint64), axis=dims or None, keepdims=keepdim)
    return Tensor._wrap(np.asarray(bits, dtype=np.uint64))


@method("const_data_ptr")
def const_data_ptr(self):
    """The address of the first element (:meth:`data_ptr`; nothing here is read-only).

    >>> import chainrule as cr
    >>> x = cr.ones(2); x.const_data_ptr() == x.data_ptr()
    True
    """
    return self.data_ptr()


# --- norms -----------------------------------------------------------------------------------
@public(method=False)
def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm over ``dim`` (at most two dims; an empty ``dim`` is every dim).

    >>> import chainrule as cr
    >>> cr.frobenius_norm(cr.tensor([[3.0, 4.0]]), [1]).tolist()
    [5.0]
    """
    _warn_once(_JIT_ONLY.format("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)"))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    from . import reduction            # the reference's at::norm: one NormBackward1 node
    if input._data.dtype.kind in "biu":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtypes.scalar_type_name(input._data.dtype)} instead.")
    dims = reduction._dims(input, dims or None)
    return apply_op(reduction.NORM_DIM, (input,), {"p": 2, "dim": dims, "keepdim": bool(keepdim)})


@public(method=False)
def nuclear_norm(input, dim=None, keepdim=False):
    """The sum of singular values over the matrices of ``dim`` (the last two by default;
    ``nuclear_norm(x, True)`` keeps the dims, as in the reference's overload).

    >>> import chainrule as cr
    >>> cr.nuclear_norm(cr.eye(3)).item()
    3.0
    """
    _warn_once(_JIT_ONLY.format("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)"))
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    from .. import linalg
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


# --- scatters of views -------------------------------------------------------------------------
@public
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written where ``input.as_strided(size, stride,
    storage_offset)`` looks (new memory; gradients to both).

    >>> import chainrule as cr
    >>> cr.as_strided_scatter(cr.zeros(4), cr.ones(2), (2,), (2,)).tolist()
    [1.0, 0.0, 1.0, 0.0]
    """
    if tuple(src.shape) != tuple(size):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    out = input.clone(memory_format=_contiguous())
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def _contiguous():
    from .. import _layout
    return _layout.contiguous_format


@public
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of slicing, as the reference's functionalization records it: ``input``
    viewed with ``src``'s geometry (its size, strides and offset); the slice's arguments
    only describe where ``src`` came from.

    >>> import chainrule as cr
    >>> cr.slice_inverse(cr.arange(6.0).reshape(2, 3), cr.ones(2, 1), 1, 0, 1).tolist()
    [[0.0], [1.0]]
    """
    require_tensors("slice_inverse", ("input", "src"), input, src)
    return input.as_strided(src.shape, src.stride(), src.storage_offset())


@public
def nonzero_static(input, *, size, fill_value=-1):
    """:func:`nonzero` with exactly ``size`` rows: truncated, or padded with ``fill_value``.

    >>> import chainrule as cr
    >>> cr.nonzero_static(cr.tensor([0, 1, 0, 2]), size=3).tolist()
    [[1], [3], [-1]]
    """
    found = input.nonzero()._data[:size]
    rows = np.full((size, input.dim()), fill_value, dtype=np.int64)
    rows[:found.shape[0]] = found
    return Tensor._wrap(rows)


@public(method=False)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised (here zero) tensor of shape ``size`` whose memory holds its dims in
    the order ``physical_layout`` (outermost first).

    >>> import chainrule as cr
    >>> cr.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    order = list(physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError("physical_layout must be a permutation of the dims of size")
    physical = _factories.empty([size[d] for d in order], dtype=dtype, device=device)
    out = physical.permute(list(np.argsort(order)))
    return out.requires_grad_(requires_grad) if requires_grad else out


@public(method=False)
def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off (what ``autograd.set_detect_anomaly`` does for a
    block), for the rest of the thread.

    >>> import chainrule as cr
    >>> cr.set_anomaly_enabled(False); cr.is_anomaly_enabled()
    False
    """
    from ..autograd import anomaly_mode
    anomaly_mode.set_detect_anomaly(enabled, check_nan).__enter__()


# --- legacy Tensor methods ---------------------------------------------------------------------
_RESIZE_MISMATCH = ("requested resize to {} ({} elements in total), but the given tensor has "
                    "a size of {} ({} elements). autograd's resize can only change the shape "
                    "of a given tensor, while preserving the number of elements. ")


def _autograd_resize(self, shape):
    numel = int(np.prod(shape, dtype=np.int64))
    if numel != self.numel():
        raise RuntimeError(_RESIZE_MISMATCH.format("x".join(map(str, shape)), numel,
                                                   "x".join(map(str, self.shape)),
                                                   self.numel()))
    return self.reshape(shape)


@method("resize")
def resize(self, *sizes):
    """The deprecated out-of-place resize: a reshape that keeps the element count.

    >>> import chainrule as cr, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); cr.arange(6.0).resize(2, 3).shape
    chainrule.Size([2, 3])
    """
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    return _autograd_resize(self, tuple(shape))


@method("resize_as")
def resize_as(self, tensor):
    """The deprecated out-of-place resize to ``tensor``'s shape.

    >>> import chainrule as cr, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); cr.arange(6.0).resize_as(cr.zeros(3, 2)).shape
    chainrule.Size([3, 2])
    """
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return _autograd_resize(self, tuple(tensor.shape))


@method("new")
def new(self, *args, device=None):
    """The legacy constructor, of ``x``'s dtype: ``x.new(2, 3)`` or ``x.new(y.shape)``
    (uninitialised, here zeros), ``x.new(data)`` (a list or tuple is data, not a shape;
    a Size is a shape), ``x.new(tensor)`` (that tensor), ``x.new()`` (empty).

    >>> import chainrule as cr
    >>> cr.zeros(1, dtype=cr.int32).new([1.5, 2.0]).tolist()
    [1, 2]
    """
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if len(args) == 1 and type(args[0]) is Size:
        return self.new_empty(tuple(args[0]), device=device)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return self.new_tensor(list(args[0]), device=device)
    return self.new_empty(args if args else (0,), device=device)


@method("set_")
def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make this tensor look at ``source``'s memory (the same dtype): all of it as
    ``source`` does, or ``size``/``stride`` from ``storage_offset`` elements past its start;
    with no source, empty. Storage objects are not modelled (NumPy memory has none).

    >>> import chainrule as cr
    >>> x, y = cr.arange(6.0), cr.zeros(1)
    >>> _ = y.set_(x, 1, (2, 2), (2, 1)); y.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> y[0, 0] = 9.0; x[1].item()
    9.0
    """
    check_inplace(self)
    root = None
    if source is None:
        self._data = np.empty(0, self._data.dtype)
    else:
        if source._data.dtype != self._data.dtype:
            raise RuntimeError(f"Could not set tensor of type "
                               f"{_dtypes.cpp_type_name(source._data.dtype)} to a tensor of "
                               f"type {_dtypes.cpp_type_name(self._data.dtype)}")
        if size is not None:
            source = source.as_strided(size, _contiguous_strides(size) if stride is None
                                       else stride, source.storage_offset() + storage_offset)
        self._data, root = source._data, memory_root(source)
    # storage_offset and sharing are read against the memory's root tensor, as for a
    # detached tensor (Note [views of a detached tensor] in _ops/_registry.py)
    self._extras().memory = None if root is self else root
    self._bump_version()
    return self


def _contiguous_strides(size):
    return tuple(int(np.prod(size[i + 1:], dtype=np.int64)) for i in range(len(size)))


# --- storages ------------------------------------------------------------------------------------
_TYPED_STORAGE = ("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter to "
                  "you if you are using storages directly.  To access UntypedStorage directly, "
                  "use tensor.untyped_storage() instead of tensor.storage()")


@method("untyped_storage")
def untyped_storage(self):
    """The bytes of the memory this tensor views (:class:`chainrule._storage.UntypedStorage`).

    >>> import chainrule as cr
    >>> x = cr.zeros(2, 3); x[1].untyped_storage().data_ptr() == x.data_ptr()
    True
    """
    from .._storage import UntypedStorage
    return UntypedStorage(memory_root(self)._data)


@method("storage")
def storage(self):
    """The memory this tensor views as elements of its dtype; deprecated, as in the
    reference, which says so once per process (``_warn_once``).

    >>> import chainrule as cr, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); cr.arange(4.0)[2:].storage().size()
    4
    """
    from .._storage import TypedStorage
    _warn_once(_TYPED_STORAGE)
    return TypedStorage(memory_root(self)._data)


# --- deprecated but working ---------------------------------------------------------------------
_TRIANGULAR_SOLVE = ("torch.triangular_solve is deprecated in favor of "
                     "torch.linalg.solve_triangularand will be removed in a future PyTorch "
                     "release.\ntorch.linalg.solve_triangular has its arguments reversed and "
                     "does not return a copy of one of the inputs.\nX = "
                     "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
                     "torch.linalg.solve_triangular(A, B).")


@public
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """Solve ``A X = input`` (``A^T X = input`` with ``transpose``) for a triangular ``A``
    (its ``upper`` or lower part; unit diagonal with ``unitriangular``); returns
    (solution, cloned_coefficient). Deprecated in the reference, which warns once.

    >>> import chainrule as cr, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     r = cr.triangular_solve(cr.tensor([[1.0], [2.0]]), cr.tensor([[2.0, 1.0], [0.0, 4.0]]))
    >>> r.solution.tolist()
    [[0.25], [0.5]]
    """
    require_tensors("triangular_solve", ("input", "A"), input, A)
    from .. import linalg, return_types
    _warn_once(_TRIANGULAR_SOLVE)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() > 1 else 1} by {A.shape[-1]} matrices")
    coefficient = A.mT if transpose else A
    solution = linalg.solve_triangular(coefficient, input, upper=upper != bool(transpose),
                                       unitriangular=unitriangular)
    return return_types.triangular_solve(solution, A.clone())


# --- removed functions: the reference keeps the names and raises ----------------------------------
_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_SOLVE = (_REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
          "`torch.linalg.solve` has its arguments reversed and does not return the LU "
          "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used "
          "with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution "
          "should be replaced with:\nX = torch.linalg.solve(A, B)")
_EIG = (_REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)")
_SYMEIG = (_REMOVED + "The default behavior has changed from using the upper triangular "
           "portion of the matrix by default to using the lower triangular portion.\n\n"
           "L, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = "
           "torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
           "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
           "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_LSTSQ = (_REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
          "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
          "decomposition in the returned tuple (although it returns other information about "
          "the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
          "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
          "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
          "residuals are in the field 'residuals' of the returned named tuple.\n\nThe "
          "unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
          "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_MATRIX_RANK = (_REMOVED.rstrip() + "\nPlease use the `torch.linalg.matrix_rank` function "
                "instead. The parameter 'symmetric' was renamed in "
                "`torch.linalg.matrix_rank()` to 'hermitian'.")


# Each removed name binds its arguments as the reference declares them (a wrong call is
# the same TypeError, named as the reference names it), then raises the removal error.
_REMOVED_FUNCTIONS = {
    "solve": (lambda input, A, *, out=None: None, _SOLVE, "cr.eye(2), cr.eye(2)"),
    "eig": (lambda input, eigenvectors=False, *, out=None: None, _EIG, "cr.eye(2)"),
    "symeig": (lambda input, eigenvectors=False, upper=True, *, out=None: None, _SYMEIG,
               "cr.eye(2)"),
    "lstsq": (lambda input, A, *, out=None: None, _LSTSQ, "cr.eye(2), cr.eye(2)"),
    "matrix_rank": (lambda input, tol=None, symmetric=False, *, out=None: None, _MATRIX_RANK,
                    "cr.eye(2)"),
}
_REMOVED_METHODS = {
    "solve": (lambda self, other: None, _SOLVE, "cr.eye(2)"),
    "eig": (lambda self, eigenvectors=False: None, _EIG, ""),
    "symeig": (lambda self, eigenvectors=False, upper=True: None, _SYMEIG, ""),
    "lstsq": (lambda self, other: None, _LSTSQ, "cr.eye(2)"),
}


def _removed(name, qualname, binds, message, example_call):
    binds.__name__, binds.__qualname__ = name, qualname

    def removed(*args, **kwargs):
        binds(*args, **kwargs)
        raise RuntimeError(message)
    removed.__name__, removed.__qualname__ = name, qualname
    removed.__doc__ = (f"Removed from the reference: raises its RuntimeError.\n\n    >>> import "
                       f"chainrule as cr\n    >>> {example_call}\n    Traceback (most recent "
                       f"call last):\n    RuntimeError: This function was deprecated since "
                       f"version 1.9 and is now removed...\n")
    return removed


for _name, (_binds, _message, _args) in _REMOVED_FUNCTIONS.items():
    public(_removed(_name, _name, _binds, _message, f"cr.{_name}({_args})"), method=False)
for _name, (_binds, _message, _args) in _REMOVED_METHODS.items():
    method(_name)(_removed(_name, f"Tensor.{_name}", _binds, _message,
                           f"cr.eye(2).{_name}({_args})"))
