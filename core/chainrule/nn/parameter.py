"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers as its state.

Note [parameters are a Tensor subclass]
    As in torch, ``type(p) is Parameter`` and ops on a parameter return plain
    tensors. The C++ engine's fast paths (the recorder's ``plain_tensor`` and the
    accumulator's ``is_plain_tensor``) accept exactly ``Tensor``, so an op with a
    parameter input, and a parameter's gradient accumulation, take the Python paths:
    measured +50 us per step of an 8-8-8-2 MLP (143 -> 194 us), about 1% of the
    784-512-512-10 bench step. Accepting this subclass there would remove it.
"""
from .._tensor import Tensor
from .._version_counter import counter_of


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter when assigned as its
    attribute. It shares memory with ``data`` and requires grad by default.

    >>> import chainrule as cr
    >>> p = cr.nn.Parameter(cr.zeros(2))
    >>> p.requires_grad, p.is_leaf, isinstance(p, cr.Tensor)
    (True, True, True)
    """

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

    def __init__(self, data=None, *, persistent=True):
        data = Tensor([]) if data is None else data
        self._data = data._data
        self.grad_fn = None
        self._output_nr = 0
        self._grad = self._base = self._extra = None
        self._vc = counter_of(data)
        self._requires_grad = data._requires_grad
        self.persistent = persistent
