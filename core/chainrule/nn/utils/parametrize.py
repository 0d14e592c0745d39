"""``nn.utils.parametrize``: a module attribute computed from other tensors.

Note [parametrized attributes]
    ``register_parametrization(module, "weight", p)`` moves the module's ``weight``
    to ``module.parametrizations.weight.original`` (a ParametrizationList, a
    ModuleList of the parametrizations) and gives the module a property ``weight``
    that evaluates ``p(original)`` (each further parametrization applied to the
    previous one's result) every time it is read, so gradients reach ``original``.
    The property lives on a subclass made for that module alone
    (``ParametrizedLinear``), so other instances of the class are unaffected.
    Assigning to ``weight`` stores ``right_inverse(value)`` into ``original``. A
    parametrization whose ``right_inverse`` returns several tensors is evaluated on
    ``original0, original1, ...``. Inside ``cached()`` each parametrized tensor is
    computed once.
"""
import contextlib

from ... import _grad_mode
from ..._tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

_CACHE = {"depth": 0, "values": {}}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once and reused.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import parametrize
    >>> class Double(cr.nn.Module):
    ...     def forward(self, x):
    ...         return x * 2
    >>> m = parametrize.register_parametrization(cr.nn.Linear(2, 2), "weight", Double())
    >>> with parametrize.cached():
    ...     m.weight is m.weight
    True
    """
    _CACHE["depth"] += 1
    try:
        yield
    finally:
        _CACHE["depth"] -= 1
        if not _CACHE["depth"]:
            _CACHE["values"].clear()


def _initial_value(parametrization, original):
    """``right_inverse(original)``; none, or one raising NotImplementedError, counts as
    the identity at registration, as in the reference."""
    if not hasattr(parametrization, "right_inverse"):
        return original
    try:
        return parametrization.right_inverse(original)
    except NotImplementedError:
        return original


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its unparametrized value(s)
    (Note [parametrized attributes])."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        with _grad_mode.no_grad():
            new = _initial_value(first, original)
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            _store(self, "original", original, new)
        else:
            if not isinstance(new, (list, tuple)):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                 f"tensors (list, tuple...). Got {type(new).__name__}")
            self.ntensors = len(new)
            for i, value in enumerate(new):
                kind = Parameter if isinstance(original, Parameter) else None
                self._register(f"original{i}", value, kind, original.requires_grad)

    def _register(self, name, value, kind, requires_grad):
        if kind is Parameter:
            self.register_parameter(name, Parameter(value.detach(), requires_grad))
        else:
            self.register_buffer(name, value.detach())

    def right_inverse(self, value):
        """Store ``value`` as the parametrized tensor: the inverses applied last to
        first, the result written into the original(s)."""
        with _grad_mode.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                _copy_into(self.original, value)
            else:
                for i, v in enumerate(value):
                    _copy_into(getattr(self, f"original{i}"), v)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _store(plist, name, original, new):
    """Keep ``original``'s object (a Parameter stays the same Parameter) with ``new``'s
    values."""
    if new is not original:
        with _grad_mode.no_grad():
            _copy_into(original, new)
    if isinstance(original, Parameter):
        plist.register_parameter(name, original)
    else:
        plist.register_buffer(name, original)


def _copy_into(target, value):
    if tuple(target.shape) != tuple(value.shape) or target.dtype != value.dtype:
        raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the "
                         f"dtype or shape.\nvalue.shape: {tuple(value.shape)}\n"
                         f"original.shape: {tuple(target.shape)}")
    target.copy_(value)


def _check_output(before, plist):
    """Unless ``unsafe``: the parametrized tensor keeps the original's dtype and shape
    (one evaluation, before the module changes: a parametrization with state, like
    spectral_norm's power iteration, steps once, as in torch)."""
    with _grad_mode.no_grad():
        after = plist()
    if not isinstance(after, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(after).__name__}.")
    if after.dtype != before.dtype or tuple(after.shape) != tuple(before.shape):
        raise ValueError("Registering a parametrization may not change the shape or dtype of "
                         f"the tensor, unless the `unsafe` flag is enabled.\nunparametrized "
                         f"shape: {tuple(before.shape)}\nparametrized shape: "
                         f"{tuple(after.shape)}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Compute ``module.<tensor_name>`` as ``parametrization(original)`` from now on
    (Note [parametrized attributes]); returns the module.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import parametrize
    >>> class Symmetric(cr.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).transpose(-1, -2)
    >>> m = parametrize.register_parametrization(cr.nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((m.weight == m.weight.T).all()), type(m).__name__
    (True, 'ParametrizedLinear')
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    if not unsafe:
        _check_output(original, plist)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_class(module)
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    setattr(type(module), tensor_name, property(_getter(tensor_name), _setter(tensor_name)))
    return module


def _inject_class(module):
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,),
                            {"__module__": cls.__module__})


def _getter(name):
    def get(self):
        plist = self.parametrizations[name]
        if not _CACHE["depth"]:
            return plist()
        key = (id(self), name)
        if key not in _CACHE["values"]:
            _CACHE["values"][key] = plist()
        return _CACHE["values"][key]
    return get


def _setter(name):
    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    return set_


def is_parametrized(module, tensor_name=None):
    """Whether the module has parametrizations (on ``tensor_name``, if given).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import parametrize
    >>> parametrize.is_parametrized(cr.nn.Linear(2, 2))
    False
    """
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import parametrize
    >>> parametrize.type_before_parametrizations(cr.nn.Linear(2, 2)).__name__
    'Linear'
    """
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo ``register_parametrization`` on ``tensor_name``: the attribute becomes a
    plain parameter (buffer) again, holding the parametrized value
    (``leave_parametrized``) or the original.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils import parametrize
    >>> class Double(cr.nn.Module):
    ...     def forward(self, x):
    ...         return x * 2
    >>> m = parametrize.register_parametrization(cr.nn.Linear(2, 2), "weight", Double())
    >>> type(parametrize.remove_parametrizations(m, "weight")).__name__
    'Linear'
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if not plist.is_tensor and not leave_parametrized:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    original = plist.original if plist.is_tensor else plist.original0
    if leave_parametrized:
        with _grad_mode.no_grad():
            value = getattr(module, tensor_name)
            if plist.is_tensor and value.dtype == original.dtype and \
                    tuple(value.shape) == tuple(original.shape):
                original.copy_(value)            # the same Parameter object, new values
            elif isinstance(original, Parameter):
                original = Parameter(value.detach(), original.requires_grad)
            else:
                original = value.detach()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
