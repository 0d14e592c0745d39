"""chainrule.Tensor: a NumPy array plus the autograd bookkeeping.

Fields (slots, kept few because every op creates a tensor):
    _data            the ndarray (views share memory with their base)
    grad_fn          the Node that made this tensor (None for leaves)
    _output_nr       which output of grad_fn this tensor is
    _requires_grad   leaves: set by the user; non-leaves: True
    _grad            the accumulated gradient (leaves, or retain_grad)
    _vc              Note [version counters] in _version_counter.py
    _base            the tensor this one is a view of (None if not a view)
    _extra           rarely used state (hooks, retain_grad, ...), None until needed

The ops (methods and operators) are attached by ``_ops`` from the derivative table.
"""
import functools
import threading
import warnings

import numpy as np

from . import _dtypes
from ._grad_mode import STATE as _MODE
from ._size import Size
from ._version_counter import VersionCounter, bump, counter_of


def _only_one(name, value, modern):
    """``value``, or the one ``modern[name]`` gives (Note [deprecated keyword slot])."""
    if name not in modern:
        return value
    if value is not None:
        raise ValueError(f"only one of {name} and its deprecated name can be specified")
    return modern[name]


@functools.cache
def _autograd_backward():
    """autograd.backward, imported at the first call (autograd imports this module);
    cached because an import statement costs half a microsecond per loss.backward()."""
    from .autograd.backward import backward
    return backward


class _Extras:
    __slots__ = ("hooks", "post_acc_hooks", "retains_grad", "grad_acc", "inference",
                 "view_fn", "name", "views", "exported", "creation", "memory")

    def __init__(self):
        self.hooks = self.post_acc_hooks = self.grad_acc = self.view_fn = self.name = None
        self.views = None          # weakrefs to this root's views (_ops/views.py)
        self.creation = None       # Note [how a view was made] (_ops/views.py)
        self.memory = None         # detach()'s: Note [views of a detached tensor]
        self.retains_grad = False
        self.inference = False
        self.exported = False      # Note [read-only saved arrays]


# A leaf's ``_extra.grad_acc`` when it has no accumulator although it requires grad: a
# view made under no_grad of a tensor that requires grad (Note [how a view was made]
# in _ops/views.py); gradients flowing to it go nowhere.
NO_ACCUMULATOR = "no accumulator"


def memory_root(t):
    """The tensor whose memory ``t`` shares: its ``_base`` (or itself), or the one a
    detached tensor keeps in ``_extra.memory`` (Note [views of a detached tensor] in
    _ops/_registry.py)."""
    root = t._base if t._base is not None else t
    extra = root._extra
    memory = extra.memory if extra is not None else None
    return root if memory is None else memory


class _DefaultDevice(threading.local):
    """Note [default device]
        ``set_default_device`` (and ``with chainrule.device(...)``) choose where the
        factories (``tensor``, ``zeros``, ``rand``, ...) put tensors made without a
        ``device=``; the ``*_like`` factories follow their input instead. Per thread,
        like the reference; None stands for the CPU."""

    def __init__(self):
        self.device = None
        self.stack = []        # what each active ``with device(...)`` block replaced


DEFAULT_DEVICE = _DefaultDevice()


class device:
    """A device: ``cpu`` and ``meta`` (core) or ``cuda`` (with the chainrule-cuda layer;
    ``meta`` tensors have shapes but no data, Note [meta arrays]). As a context
    manager, the default device of the factories inside the block (Note [default
    device]).

    >>> import chainrule as cr
    >>> cr.device("cpu")
    device(type='cpu')
    >>> with cr.device("cpu"):
    ...     cr.get_default_device()
    device(type='cpu')
    """

    __slots__ = ("type", "index")

    def __enter__(self):
        DEFAULT_DEVICE.stack.append(DEFAULT_DEVICE.device)
        DEFAULT_DEVICE.device = None if self == CPU else self
        return self

    def __exit__(self, *exc):
        DEFAULT_DEVICE.device = DEFAULT_DEVICE.stack.pop()

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, meta device type at start of device "
                               f"string: {type}")
        self.type, self.index = type, index

    def __repr__(self):
        extra = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{extra})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")


# Note [device arrays]
#     A tensor's ``_data`` is an ndarray (the CPU) or a device array of a registered
#     backend (chainrule-cuda's DeviceArray): a type listed in DEVICE_ARRAY_TYPES that
#     implements NumPy's ``__array_ufunc__`` / ``__array_function__`` protocols and the
#     ndarray methods core uses, so the derivative table's forwards and formulas run on
#     it unchanged, and that says its ``device`` (a chainrule.device). Core tells the
#     two apart by ``type(arr) is np.ndarray`` (the hot paths test nothing more; the
#     C++ fast paths take ndarrays only and leave device arrays to the Python code).
#     Operations mixing a device array with a host array other than a 0-d one (a
#     Python scalar's constant) raise ``mixed_device_error``.
DEVICE_ARRAY_TYPES = set()


def _as_data(arr):
    """``arr`` as a tensor's data: a device array as it is, anything else through
    ``np.asarray`` (NumPy scalars from full reductions become 0-d arrays)."""
    return arr if type(arr) in DEVICE_ARRAY_TYPES else np.asarray(arr)


def asarray(x, dtype=None):
    """``np.asarray(x, dtype)`` that keeps a device array on its device (Note [device
    arrays]): forwards and helpers that normalise their results call this."""
    if type(x) in DEVICE_ARRAY_TYPES:
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype)


def strided_view(x, shape, strides, writeable=True):
    """``np.lib.stride_tricks.as_strided`` for ndarrays and device arrays (Note [device
    arrays]); strides in bytes."""
    if type(x) in DEVICE_ARRAY_TYPES:
        return x.as_strided(shape, strides)
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=writeable)


def zeros_on(shape, dtype, like):
    """``np.zeros(shape, dtype)`` on the device of ``like`` (an array or a NumPy
    scalar; Note [device arrays])."""
    if type(like) in DEVICE_ARRAY_TYPES:
        return np.zeros(shape, dtype, like=like)
    return np.zeros(shape, dtype)


def on_device_of(arr, like):
    """``arr``, an array core built on the host, moved to the device of the array
    ``like`` (itself for a CPU ``like``: one type check)."""
    if type(like) is np.ndarray or type(like) not in DEVICE_ARRAY_TYPES:
        return arr
    from ._backends import move_array
    return move_array(arr, like.device)


def device_of(arr):
    """The device an array lives on (Note [device arrays])."""
    return CPU if type(arr) is np.ndarray or type(arr) not in DEVICE_ARRAY_TYPES else arr.device


def mixed_device_error(a, b):
    """The reference's error for one op given tensors on two devices."""
    return RuntimeError("Expected all tensors to be on the same device, but found at least "
                        f"two devices, {a} and {b}!")


def _constructor_arguments(args):
    """``(data, None)`` or ``(None, sizes)`` from ``Tensor(*args)``'s positional
    arguments, with the reference's TypeErrors for anything else."""
    if not args:
        return [], None
    if len(args) == 1 and isinstance(args[0], Size):
        return None, tuple(args[0])
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return None, tuple(int(a) for a in args)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(data, (list, tuple, np.ndarray, Tensor)):
            return data, None
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got}), "
                    "but expected one of: (*, device), (tuple of ints size, *, device), "
                    "(object data, *, device)")


class Tensor:
    """A multi-dimensional array that records operations for automatic differentiation.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4., 6.])
    """

    __slots__ = ("_data", "grad_fn", "_output_nr", "_requires_grad", "_grad", "_vc",
                 "_base", "_extra", "__weakref__")
    __array_priority__ = 1000   # ndarray (op) Tensor defers to Tensor's reflected operator

    _init_constructs = False   # Parameter and Buffer build themselves in __init__

    def __new__(cls, *args, dtype=None, requires_grad=False, **others):
        """The reference's constructor: ``Tensor(data)`` copies ``data`` into the
        default dtype (a Tensor of that dtype is shared, not copied); ``Tensor(*sizes)``
        or ``Tensor(Size)`` makes a tensor of that shape (zero-filled, where the
        reference leaves it uninitialised); ``Tensor()`` an empty one. A subclass
        given a tensor gets an alias of it, like ``tensor.as_subclass(cls)``.

        >>> import chainrule as cr
        >>> cr.Tensor(2, 3).shape, cr.Tensor([1, 2]).tolist()
        (chainrule.Size([2, 3]), [1.0, 2.0])
        """
        if cls._init_constructs:
            return object.__new__(cls)
        if others:
            raise TypeError(f"Tensor.__new__() got an unexpected keyword argument "
                            f"'{next(iter(others))}'")
        if cls is not Tensor and len(args) == 1 and isinstance(args[0], Tensor) and \
                dtype is None and not requires_grad:
            return args[0].as_subclass(cls)
        from ._factories import _as_array
        data, sizes = _constructor_arguments(args)
        target = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
        if sizes is not None:
            arr = np.zeros(sizes, dtype=target.np)
        elif isinstance(data, Tensor) and data._data.dtype == target.np:
            arr = data._data                   # the reference aliases a same-dtype tensor
        else:
            arr = _as_array(data, target)
        self = object.__new__(cls)
        self._data = arr
        self.grad_fn = None
        self._output_nr = 0
        self._grad = self._vc = self._base = self._extra = None
        self._requires_grad = False
        if requires_grad:
            _check_can_require_grad(arr, CONSTRUCTOR_DTYPE_MESSAGE)
            self.requires_grad_(True)
        return self

    def __init__(self, *args, **kwargs):
        pass                       # built by __new__ (a subclass's __init__ may skip this)

    def __init_subclass__(cls, **kwargs):
        """A subclass that does not disable ``__torch_function__`` turns dispatch on
        (Note [torch function slot])."""
        super().__init_subclass__(**kwargs)
        from . import _torch_function
        if getattr(cls, "__torch_function__") is not _torch_function.DISABLED:
            _torch_function.enable()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default: ``func`` runs with subclass dispatch off and its Tensor results
        become ``cls`` (Note [torch function slot]).

        >>> import chainrule as cr
        >>> class MyTensor(cr.Tensor):
        ...     pass
        >>> type(cr.sin(cr.ones(2).as_subclass(MyTensor))).__name__
        'MyTensor'
        """
        from ._torch_function import default_torch_function
        return default_torch_function(cls, func, types, args, kwargs)

    def as_subclass(self, cls):
        """This tensor as an instance of ``cls`` (a Tensor subclass): an alias sharing
        data and version counter, differentiable (``AliasBackward0``).

        >>> import chainrule as cr
        >>> class MyTensor(cr.Tensor):
        ...     pass
        >>> t = cr.ones(2).as_subclass(MyTensor)
        >>> type(t).__name__, type(t + 1).__name__
        ('MyTensor', 'MyTensor')
        """
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit "
                            "from Tensor is not possible. Make sure your class inherits from "
                            "Tensor.")
        from ._ops.shape import _alias
        return _retyped(_alias(self), cls)

    @staticmethod
    def _make_subclass(cls, data, require_grad=False, **kwargs):
        """A leaf of type ``cls`` sharing ``data``'s memory (detached), with
        ``requires_grad=require_grad``.

        >>> import chainrule as cr
        >>> class MyTensor(cr.Tensor):
        ...     pass
        >>> t = cr.Tensor._make_subclass(MyTensor, cr.ones(2), True)
        >>> type(t).__name__, t.is_leaf, t.requires_grad
        ('MyTensor', True, True)
        """
        out = _retyped(data.detach(), cls)
        out._base = None
        out.requires_grad_(require_grad)
        return out

    # -- construction fast paths (no checks) ---------------------------------------
    @classmethod
    def _wrap(cls, arr):
        """A leaf that needs no grad around an ndarray (taken as is)."""
        t = object.__new__(Tensor)
        t._data = arr if type(arr) is np.ndarray else _as_data(arr)
        t.grad_fn = t._grad = t._vc = t._base = t._extra = None
        t._output_nr = 0
        t._requires_grad = False
        return t

    @classmethod
    def _make_output(cls, arr, node, output_nr, vc=None):
        t = object.__new__(Tensor)
        t._data = arr if type(arr) is np.ndarray else _as_data(arr)
        t.grad_fn = node
        t._output_nr = output_nr
        t._requires_grad = True
        t._grad = t._base = t._extra = None
        t._vc = vc
        return t

    def _extras(self):
        extra = self._extra
        if extra is None:
            extra = self._extra = _Extras()
        return extra

    # -- metadata --------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape (a ``chainrule.Size``), or the length of one dimension."""
        if dim is None:
            return self.shape
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return _dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        """Where the data lives (Note [device arrays]).

        >>> import chainrule as cr
        >>> cr.ones(2).device
        device(type='cpu')
        """
        data = self._data
        return CPU if type(data) is np.ndarray else device_of(data)

    @property
    def is_cuda(self):
        return type(self._data) is not np.ndarray and self.device.type == "cuda"

    @property
    def is_meta(self):
        """Whether this is a meta tensor: a shape and dtype, no data (Note [meta arrays]).

        >>> import chainrule as cr
        >>> cr.ones(2).is_meta, cr.ones(2, device="meta").is_meta
        (False, True)
        """
        return type(self._data) is not np.ndarray and self.device.type == "meta"

    def get_device(self):
        """The device index of a CUDA tensor, -1 for a CPU or meta one (like the reference).

        >>> import chainrule as cr
        >>> cr.ones(2).get_device()
        -1
        """
        d = self.device
        return d.index if d.type == "cuda" else -1

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def ndimension(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    def stride(self, dim=None):
        """Strides in elements (not bytes), like the reference."""
        item = self._data.itemsize
        strides = tuple(s // item for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        root = memory_root(self)
        if root is self:
            return 0
        return (_address(self._data) - _address(root._data)) // self._data.itemsize

    def data_ptr(self):
        return _address(self._data)

    def is_contiguous(self, memory_format=None):
        return self._data.flags.c_contiguous

    def is_floating_point(input):          # also chainrule.is_floating_point(input=...)
        return input.dtype.is_floating_point

    def is_complex(input):
        return input._data.dtype.kind == "c"      # dtype.is_complex, without the lookup

    def is_inference(self):
        return self._extra is not None and self._extra.inference

    def _is_view(self):
        """Whether this tensor was made by a view op from another (``detach()`` shares
        memory but is no view; inference tensors keep no view links), like the
        reference.

        >>> import chainrule as cr
        >>> x = cr.ones(2, 3)
        >>> x[1:]._is_view(), x.t()._is_view(), x[[0]]._is_view(), x.detach()._is_view()
        (True, True, False, False)
        """
        extra = self._extra
        return self._base is not None and extra is not None and extra.view_fn is not None \
            and not extra.inference

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def _version(self):
        """How many times this tensor (or a view of its memory) was modified in place.

        >>> import chainrule as cr
        >>> x = cr.zeros(2); _ = x.add_(1); x._version
        1
        """
        if self._extra is not None and self._extra.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return 0 if self._vc is None else self._vc.v

    def _bump_version(self):
        bump(self)

    @property
    def T(self):
        return self.permute(*reversed(range(self._data.ndim)))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    # -- values ----------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, *, force=False):
        """The ndarray behind this tensor (shared memory).

        Like the reference, refuses tensors that require grad while grad mode is on
        (use ``.detach()``, or ``force=True``).

        >>> import chainrule as cr
        >>> x = cr.ones(2, requires_grad=True)
        >>> with cr.no_grad():
        ...     x.numpy()
        array([1., 1.], dtype=float32)
        """
        if type(self._data) is not np.ndarray:
            if force:
                return self._data.get()          # the reference copies to the host
            _not_on_host(self)
        if self._requires_grad and not force and _MODE.grad_enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        from .autograd.saved_guard import mark_exported
        mark_exported(self)
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self._data
        if type(arr) is not np.ndarray:
            _not_on_host(self)
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        from .autograd.saved_guard import mark_exported
        mark_exported(self)
        return arr

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        # the reference's order (dim, then unbind): what a __torch_function__ sees
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()).item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.category > _dtypes._INT or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self):
        from ._printing import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0 and not self.is_meta:     # a meta tensor has no value
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        args = (self._data, self._requires_grad if self.grad_fn is None else False)
        if type(self) is Tensor:
            return (_rebuild, args)
        return (_rebuild_subclass, (type(self), *args, getattr(self, "__dict__", None)))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        out = Tensor._wrap(self._data.copy())
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = Tensor._wrap(self._grad._data.copy())
        memo[id(self)] = out
        return out

    # -- autograd --------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None and not value:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        if value:
            _check_can_require_grad(self._data, "only Tensors of floating point and complex "
                                                "dtype can require gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set whether autograd records operations on this leaf; returns self.

        >>> import chainrule as cr
        >>> cr.zeros(2).requires_grad_().requires_grad
        True
        """
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        extra = self._extra
        if requires_grad:
            # is_inference() read directly: the reference checks its own flag, which no
            # subclass's Python method overrides (and no wrapper frames)
            if extra is not None and extra.inference and not _MODE.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                                   "InferenceMode is not allowed.")
            _check_can_require_grad(self._data, "only Tensors of floating point dtype can "
                                                "require gradients")
        if extra is not None and extra.grad_acc is NO_ACCUMULATOR:
            if not requires_grad:
                return self      # a view made under no_grad requires grad as its base does
            extra.grad_acc = None          # set by the user: it gets an accumulator
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        if self.grad_fn is not None and not self.retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype.name}' to a "
                    f"tensor with dtype '{self.dtype.name}'. Please ensure that the gradient "
                    "and the tensor have the same dtype")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._extra is not None and self._extra.retains_grad

    def retain_grad(self):
        """Make a non-leaf tensor keep its ``.grad`` after backward.

        >>> import chainrule as cr
        >>> x = cr.ones(2, requires_grad=True); y = x * 2; y.retain_grad()
        >>> y.sum().backward(); y.grad.tolist()
        [1.0, 1.0]
        """
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self.retains_grad:
            return
        from .autograd.tensor_hooks import install_retain_grad
        install_retain_grad(self)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned
        tensor replaces the gradient. Returns a handle with ``.remove()``.

        >>> import chainrule as cr
        >>> x = cr.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 3)
        >>> (x * 1).sum().backward(); x.grad.tolist()
        [3.0, 3.0]
        """
        from .autograd.tensor_hooks import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` on a leaf after its ``.grad`` has been accumulated.

        >>> import chainrule as cr
        >>> x = cr.ones(2, requires_grad=True); seen = []
        >>> h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        >>> (x * 2).sum().backward(); seen
        [[2.0, 2.0]]
        """
        from .autograd.tensor_hooks import register_post_accumulate_hook
        return register_post_accumulate_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None,
                 **deprecated):
        """Compute the gradient of this tensor w.r.t. graph leaves (see
        ``chainrule.autograd.backward``).

        >>> import chainrule as cr
        >>> x = cr.tensor(3.0, requires_grad=True)
        >>> (x ** 2).backward(); x.grad.item()
        6.0
        """
        if deprecated:                       # Note [deprecated keyword slot]
            from . import _legacy_slots
            modern = _legacy_slots.deprecated_kwargs("backward", deprecated, 2)
            retain_graph = _only_one("retain_graph", retain_graph, modern)
        _autograd_backward()(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A new tensor sharing this one's data and version counter, outside the graph;
        no view (its ``_base`` is None), as in the reference.

        >>> import chainrule as cr
        >>> x = cr.ones(2, requires_grad=True)
        >>> d = x[1:].detach()
        >>> d.requires_grad, d._base, d.storage_offset()
        (False, None, 1)
        """
        out = Tensor._wrap(self._data)
        out._vc = counter_of(self)
        out._extra = extra = _Extras()              # (a new tensor: no _extras() call)
        extra.memory = memory_root(self)            # Note [views of a detached tensor]
        if self._extra is not None and self._extra.inference:
            extra.inference = True                  # like every view of an inference tensor
        return out

    def detach_(self):
        """Detach this tensor from the graph in place (it becomes a leaf)."""
        if self._is_view():
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                "be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    @property
    def data(self):
        out = Tensor._wrap(self._data)
        return out

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError("Tensor.data must be a Tensor")
        self._data = value._data

    # -- devices: to(), cpu(), cuda(), pin_memory() are in _ops/conversions.py ----------


def _retyped(t, cls):
    """``t`` (a tensor just made) as an object of class ``cls``: the same fields, and
    listed on its root in its place when it is a view."""
    if type(t) is cls:
        return t
    out = object.__new__(cls)
    for name in _FIELDS:
        setattr(out, name, getattr(t, name))
    if t._extra is not None and t._extra.view_fn is not None:
        from ._ops.views import _register
        _register(out)
    return out


_FIELDS = ("_data", "grad_fn", "_output_nr", "_requires_grad", "_grad", "_vc", "_base",
           "_extra")


def _address(arr):
    """The address of an array's first element (a device array's on its device)."""
    if type(arr) is np.ndarray:
        return arr.__array_interface__["data"][0]
    return arr.data_ptr


def _not_on_host(t):
    raise TypeError(f"can't convert {t.device} device type tensor to numpy. Use Tensor.cpu() "
                    "to copy the tensor to host memory first.")


def _rebuild(arr, requires_grad):
    t = Tensor._wrap(arr)
    t._requires_grad = requires_grad
    return t


def _rebuild_subclass(cls, arr, requires_grad, state):
    """An unpickled Tensor subclass: its class, data and attributes."""
    t = _retyped(_rebuild(arr, requires_grad), cls)
    if state:
        t.__dict__.update(state)
    return t


# torch words this error three ways: constructors (this one), the requires_grad
# setter and requires_grad_() (see their calls); programs print and match them.
CONSTRUCTOR_DTYPE_MESSAGE = "Only Tensors of floating point and complex dtype can require gradients"


def _check_can_require_grad(data, message):
    if not _differentiable_dtype(data.dtype):
        raise RuntimeError(message)


def _differentiable_dtype(np_dtype):
    return np_dtype.kind in "fc" or np_dtype == _dtypes.bfloat16.np


def _wrap_dim(dim, ndim):
    if 0 <= dim < ndim:                 # the common case: nothing to wrap
        return dim
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim
