"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers as its state.

Note [parameters are a Tensor subclass]
    As in torch, ``type(p) is Parameter`` and ops on a parameter return plain
    tensors. The C++ engine's fast paths (the recorder's ``plain_tensor`` and the
    accumulator's ``is_plain_tensor``) accept exactly ``Tensor``, so an op with a
    parameter input, and a parameter's gradient accumulation, take the Python paths:
    measured +50 us per step of an 8-8-8-2 MLP (143 -> 194 us), about 1% of the
    784-512-512-10 bench step. Accepting this subclass there would remove it.
"""
from .. import _dtypes
from .._tensor import CONSTRUCTOR_DTYPE_MESSAGE, Tensor, _check_can_require_grad
from .._torch_function import DISABLED as _disabled_torch_function_impl
from .._version_counter import counter_of


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter when assigned as its
    attribute. It shares memory with ``data`` and requires grad by default.

    >>> import chainrule as cr
    >>> p = cr.nn.Parameter(cr.zeros(2))
    >>> p.requires_grad, p.is_leaf, isinstance(p, cr.Tensor)
    (True, True, True)
    """

    _init_constructs = True
    __torch_function__ = _disabled_torch_function_impl    # ops on parameters give Tensors

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = Tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        self._data = data._data
        self.grad_fn = None
        self._output_nr = 0
        self._grad = self._base = self._extra = None
        self._vc = counter_of(data)     # an alias of data: one version counter
        self._requires_grad = False
        if requires_grad:
            _check_can_require_grad(self._data, CONSTRUCTOR_DTYPE_MESSAGE)
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._data, self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(Tensor._wrap(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            out._grad = Tensor._wrap(self._grad._data.copy())
        memo[id(self)] = out
        return out


def _rebuild_parameter(arr, requires_grad):
    return Parameter(Tensor._wrap(arr), requires_grad)


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned as its attribute
    (``persistent=False`` leaves it out of ``state_dict``). Assigned, it is stored as
    a plain tensor, like torch's.

    >>> import chainrule as cr
    >>> m = cr.nn.Module(); m.steps = cr.nn.Buffer(cr.zeros(1))
    >>> list(dict(m.named_buffers()))
    ['steps']
    """

    _init_constructs = True
    __torch_function__ = _disabled_torch_function_impl

    def __init__(self, data=None, *, persistent=True):
        data = Tensor([]) if data is None else data
        self._data = data._data
        self.grad_fn = None
        self._output_nr = 0
        self._grad = self._base = self._extra = None
        self._vc = counter_of(data)
        self._requires_grad = data._requires_grad
        self.persistent = persistent


# --- uninitialized parameters and buffers (lazy modules) ----------------------------------------
_SHAPE_MESSAGE = ("Can't access the shape of an uninitialized parameter or buffer. This error "
                  "usually happens in `load_state_dict` when trying to load an uninitialized "
                  "parameter into an initialized one. Call `forward` to initialize the "
                  "parameters before accessing their attributes.")


class UninitializedTensorMixin:
    """What an uninitialized parameter or buffer can do before it has a shape: report
    its dtype and device, move or cast (staying uninitialized), and ``materialize``
    into a ``cls_to_become`` of a given shape (in place: modules and optimizers keep
    the same object)."""

    __slots__ = ()

    def materialize(self, shape, device=None, dtype=None):
        """Become a ``cls_to_become`` (Parameter / Tensor) of uninitialized values of
        ``shape``, on this tensor's device and dtype unless given."""
        from .. import _factories
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self._data = _factories.empty(*tuple(shape), device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_MESSAGE)

    def size(self, dim=None):
        return Tensor._wrap(self._data).size(dim)

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def to(self, *args, **kwargs):
        moved = Tensor._wrap(self._data).to(*args, **kwargs)
        return type(self)(self.requires_grad, moved.device, moved.dtype)

    def float(self):
        return self.to(_dtypes.float32)

    def double(self):
        return self.to(_dtypes.float64)

    def half(self):
        return self.to(_dtypes.float16)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device)

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


def _refuse(name):
    def method(self, *args, **kwargs):
        raise ValueError(
            f"Attempted to use an uninitialized parameter in <method '{name}' of 'Tensor' "
            "objects>. This error happens when you are using a `LazyModule` or explicitly "
            f"manipulating `torch.nn.parameter.{type(self).__name__}` objects. When using "
            "LazyModules Call `forward` with a dummy batch to initialize the parameters "
            "before calling torch functions")
    method.__name__ = name
    return method


# What torch's uninitialized tensors refuse that a program reaches for before the
# first forward (counting parameters, initializing them, arithmetic).
for _name in ("numel", "dim", "view", "reshape", "sum", "mean", "norm", "t", "flatten",
              "fill_", "zero_", "normal_", "uniform_", "add", "mul", "__add__", "__radd__",
              "__sub__", "__rsub__", "__mul__", "__rmul__", "__matmul__", "__truediv__",
              "__neg__", "__getitem__", "__setitem__"):
    setattr(UninitializedTensorMixin, _name, _refuse(_name))


def is_lazy(param):
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer.

    >>> import chainrule as cr
    >>> cr.nn.parameter.is_lazy(cr.nn.LazyLinear(2).weight)
    True
    """
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first
    forward); ``materialize(shape)`` turns it into a Parameter.

    >>> import chainrule as cr
    >>> p = cr.nn.parameter.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3)); type(p).__name__, p.shape
    ('Parameter', chainrule.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        from .. import _factories
        super().__init__(_factories.empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; ``materialize(shape)`` turns it into a
    Tensor. (``persistent`` is accepted; an uninitialized buffer is persistent.)

    >>> import chainrule as cr
    >>> b = cr.nn.parameter.UninitializedBuffer()
    >>> b.materialize((2,)); type(b).__name__, b.shape
    ('Tensor', chainrule.Size([2]))
    """

    __slots__ = ()
    cls_to_become = Tensor
    _init_constructs = True
    __torch_function__ = _disabled_torch_function_impl

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        from .. import _factories
        data = _factories.empty(0, device=device, dtype=dtype)
        self._data = data._data
        self.grad_fn = None
        self._output_nr = 0
        self._grad = self._base = self._extra = None
        self._vc = counter_of(data)
        self._requires_grad = False
        if requires_grad:
            self.requires_grad_(True)
