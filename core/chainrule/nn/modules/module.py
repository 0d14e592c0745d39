"""``nn.Module``: the base class of every layer and model.

A Module keeps its state in three ordered dicts, filled by attribute assignment
(Note [module attributes]): ``_parameters`` (Parameters), ``_buffers`` (tensors that
are state but not trained) and ``_modules`` (child modules). Everything else a
module offers (named_parameters, state_dict, to, train, hooks, ...) walks the tree
of modules these dicts make, without recursion (an explicit stack).

Note [module attributes]
    Assigning a Parameter registers it as a parameter, a Module as a child, and a
    tensor to a name already registered as a buffer replaces the buffer; any other
    value is a plain attribute. Reading an attribute that is not in the instance's
    ``__dict__`` looks in the three dicts (``__getattr__``), so registered names
    never shadow each other: registering one removes the name from the others.
"""
import collections
import functools
import itertools
import warnings
import weakref

from ... import _dtypes
from ..._grad_mode import no_grad
from ..._tensor import Tensor, device as _device
from ..parameter import Buffer, Parameter

__all__ = ["Module", "RemovableHandle", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook"]


class RemovableHandle:
    """A handle that removes the hook it was returned for (also as a context manager).

    >>> import chainrule as cr
    >>> m = cr.nn.Identity()
    >>> with m.register_forward_hook(lambda mod, args, out: out * 2):
    ...     m(cr.ones(1)).item()
    2.0
    >>> m(cr.ones(1)).item()
    1.0
    """

    _next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        self.extra_dict_refs = tuple(weakref.ref(d) for d in
                                     (extra_dict if isinstance(extra_dict, list) else
                                      [extra_dict] if extra_dict is not None else []))

    def remove(self):
        """Remove the hook (a second call does nothing)."""
        for ref in (self.hooks_dict_ref,) + self.extra_dict_refs:
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys",
                                               ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it ignored."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _check_name(kind, name, module):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


def _add_hook(hooks, hook, prepend, extra=None):
    """Store ``hook`` in the ordered dict ``hooks`` (first when ``prepend``)."""
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# Note [global module hooks]
#     Hooks registered for every module: each call runs them before the module's own
#     hooks of the same kind (forward pre-hooks, forward hooks, full backward pre-hooks
#     and full backward hooks), with the same arguments and the same power to replace
#     values. ``_call_impl`` takes the hooked path while any of these dicts is non-empty.
_global_forward_pre_hooks = collections.OrderedDict()
_global_forward_hooks = collections.OrderedDict()
_global_forward_hooks_with_kwargs = collections.OrderedDict()
_global_forward_hooks_always_called = collections.OrderedDict()
_global_backward_pre_hooks = collections.OrderedDict()
_global_backward_hooks = collections.OrderedDict()


def register_module_forward_pre_hook(hook):
    """Call ``hook(module, args)`` before every module's forward (Note [global module
    hooks]); a returned value replaces the arguments.

    >>> import chainrule as cr
    >>> from chainrule.nn.modules.module import register_module_forward_pre_hook
    >>> seen = []
    >>> with register_module_forward_pre_hook(lambda m, args: seen.append(type(m).__name__)):
    ...     _ = cr.nn.Sequential(cr.nn.ReLU())(cr.ones(1))
    >>> seen
    ['Sequential', 'ReLU']
    """
    return _add_hook(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """Call ``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args,
    kwargs, output)``) after every module's forward (Note [global module hooks]); a
    returned value replaces the output. ``always_call``: also when forward raises.

    >>> import chainrule as cr
    >>> from chainrule.nn.modules.module import register_module_forward_hook
    >>> with register_module_forward_hook(lambda m, args, out: out * 2):
    ...     cr.nn.Identity()(cr.ones(1)).item()
    2.0
    """
    handle = _add_hook(_global_forward_hooks, hook, False,
                       extra=[_global_forward_hooks_with_kwargs,
                              _global_forward_hooks_always_called])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """Call ``hook(module, grad_output)`` for every module whose output gradients are
    known (Note [global module hooks]); a returned tuple replaces them.

    >>> import chainrule as cr
    >>> from chainrule.nn.modules.module import register_module_full_backward_pre_hook
    >>> x = cr.ones(2, requires_grad=True)
    >>> with register_module_full_backward_pre_hook(lambda m, g: (g[0] * 3,)):
    ...     cr.nn.Identity()(x).sum().backward()
    >>> x.grad.tolist()
    [3.0, 3.0]
    """
    return _add_hook(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook):
    """Call ``hook(module, grad_input, grad_output)`` for every module whose input
    gradients are computed (Note [global module hooks]); a returned tuple replaces
    ``grad_input``.

    >>> import chainrule as cr
    >>> from chainrule.nn.modules.module import register_module_full_backward_hook
    >>> x = cr.ones(2, requires_grad=True); seen = []
    >>> with register_module_full_backward_hook(lambda m, gi, go: seen.append(gi[0].tolist())):
    ...     cr.nn.Identity()(x * 2).sum().backward()
    >>> seen
    [[1.0, 1.0]]
    """
    return _add_hook(_global_backward_hooks, hook, False)


def _placing_on_device(init):
    """Note [module device]
        The ``device=`` of a module's constructor places what the constructor makes
        (parameters, buffers, submodules) on that device, as the reference's
        factory_kwargs do: the constructor runs with that device as the factories'
        default (Note [default device]). Only chainrule's own modules get this (a
        user's module passes its ``device`` on itself)."""
    code = init.__code__
    position = code.co_varnames[:code.co_argcount].index("device") \
        if "device" in code.co_varnames[:code.co_argcount] else None

    @functools.wraps(init)
    def placed(self, *args, **kwargs):
        device = kwargs.get("device")
        if device is None and position is not None and len(args) >= position:
            device = args[position - 1]
        if device is None:
            return init(self, *args, **kwargs)
        with _device("cuda", device) if isinstance(device, int) else _device(device):
            return init(self, *args, **kwargs)
    return placed


class Module:
    """Base class of all layers and models. Subclasses assign parameters, buffers and
    child modules as attributes in ``__init__`` (after ``super().__init__()``) and
    compute their output in ``forward``; call the module, not ``forward``, so that
    hooks run.

    >>> import chainrule as cr
    >>> class TwoLayer(cr.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = cr.nn.Linear(3, 4)
    ...         self.out = cr.nn.Linear(4, 1)
    ...     def forward(self, x):
    ...         return self.out(self.hidden(x).relu())
    >>> model = TwoLayer()
    >>> [name for name, _ in model.named_parameters()]
    ['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
    >>> model(cr.ones(2, 3)).shape
    chainrule.Size([2, 1])
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        code = getattr(init, "__code__", None)
        if code is not None and cls.__module__.startswith("chainrule.nn") and \
                "device" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            cls.__init__ = _placing_on_device(init)        # Note [module device]

    training = True
    dump_patches = False
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            name = next(iter(kwargs)) if kwargs else None
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{name}'" if name else
                            f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", {})
        for name in ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
                     "_backward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
                     "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            setattr_(name, collections.OrderedDict())

    def forward(self, *input):
        """The computation; every subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # -- registration (Note [module attributes]) ---------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Register ``tensor`` (or None) as buffer ``name``; ``persistent=False`` keeps
        it out of ``state_dict``.

        >>> import chainrule as cr
        >>> m = cr.nn.Module(); m.register_buffer("running", cr.zeros(2), persistent=False)
        >>> m.running.tolist(), list(m.state_dict())
        ([0.0, 0.0], [])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach()
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Register ``param`` (a Parameter or None) as parameter ``name``.

        >>> import chainrule as cr
        >>> m = cr.nn.Module(); m.register_parameter("scale", cr.nn.Parameter(cr.ones(1)))
        >>> [n for n, _ in m.named_parameters()]
        ['scale']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Register ``module`` (or None) as child ``name``.

        >>> import chainrule as cr
        >>> m = cr.nn.Module(); m.add_module("act", cr.nn.ReLU()); m
        Module(
          (act): ReLU()
        )
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name("module", name, self)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of ``add_module``."""
        self.add_module(name, module)

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            self._set_module_or_buffer(name, value)

    def _set_module_or_buffer(self, name, value):
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
        elif isinstance(value, Buffer):
            self._forget(name, keep="_buffers")
            self.register_buffer(name, value)
        else:
            buffers = self.__dict__.get("_buffers")
            if buffers is not None and name in buffers:
                if value is not None and not isinstance(value, Tensor):
                    raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                    "(torch.Tensor or None expected)")
                buffers[name] = value
            else:
                super().__setattr__(name, value)

    def _forget(self, name, keep):
        """Remove ``name`` from the instance dict and the registries other than
        ``keep`` (where it keeps its place in the order)."""
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        if keep != "_buffers":
            self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        state = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            found = state.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, ()):
                del self.__dict__[registry][name]
                self._non_persistent_buffers_set.discard(name)
                return
        super().__delattr__(name)

    def __dir__(self):
        keys = list(super().__dir__()) + list(self._parameters) + list(self._modules)
        keys += list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- lookup --------------------------------------------------------------------------
    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ('' is this module).

        >>> import chainrule as cr
        >>> cr.nn.Sequential(cr.nn.Linear(1, 1)).get_submodule("0")
        Linear(in_features=1, out_features=1, bias=True)
        """
        module = self
        for item in target.split(".") if target else []:
            if not hasattr(module, item):
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless ``strict``, add) the submodule at dotted path ``target``.

        >>> import chainrule as cr
        >>> net = cr.nn.Sequential(cr.nn.ReLU())
        >>> net.set_submodule("0", cr.nn.Tanh()); net
        Sequential(
          (0): Tanh()
        )
        """
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        owner, name = self._owner_and_name(target)
        if strict and not hasattr(owner, name):
            raise AttributeError(f"{owner._get_name()} has no attribute `{name}`")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        setattr(owner, name, module)

    def _owner_and_name(self, target):
        module_path, _, name = target.rpartition(".")
        return self.get_submodule(module_path), name

    def get_parameter(self, target):
        """The parameter at dotted path ``target``.

        >>> import chainrule as cr
        >>> cr.nn.Sequential(cr.nn.Linear(1, 2)).get_parameter("0.bias").shape
        chainrule.Size([2])
        """
        module, name = self._owner_and_name(target)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``.

        >>> import chainrule as cr
        >>> cr.nn.BatchNorm1d(2).get_buffer("running_mean").tolist()
        [0.0, 0.0]
        """
        module, name = self._owner_and_name(target)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    # -- iteration -----------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) for this module and every descendant, depth first.

        >>> import chainrule as cr
        >>> [n for n, _ in cr.nn.Sequential(cr.nn.Linear(1, 1), cr.nn.ReLU()).named_modules()]
        ['', '0', '1']
        """
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if module in memo:
                    continue
                memo.add(module)
            yield name, module
            children = [(name + ("." if name else "") + key, child)
                        for key, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))

    def modules(self, remove_duplicate=True):
        """Every module of the tree (this one first).

        >>> import chainrule as cr
        >>> len(list(cr.nn.Sequential(cr.nn.ReLU(), cr.nn.ReLU()).modules()))
        3
        """
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_children(self):
        """(name, module) of the immediate children.

        >>> import chainrule as cr
        >>> [n for n, _ in cr.nn.Sequential(cr.nn.ReLU()).named_children()]
        ['0']
        """
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        """The immediate children.

        >>> import chainrule as cr
        >>> list(cr.nn.Sequential(cr.nn.ReLU()).children())
        [ReLU()]
        """
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        tree = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        for module_prefix, module in tree:
            for key, value in module.__dict__[registry].items():
                if value is None or value in memo:
                    continue
                if remove_duplicate:
                    memo.add(value)
                yield module_prefix + ("." if module_prefix else "") + key, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter) of this module and (``recurse``) its descendants;
        a parameter shared by two modules comes once.

        >>> import chainrule as cr
        >>> [n for n, _ in cr.nn.Linear(2, 1).named_parameters(prefix="fc")]
        ['fc.weight', 'fc.bias']
        """
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """The parameters (see ``named_parameters``), e.g. for an optimizer.

        >>> import chainrule as cr
        >>> sum(p.numel() for p in cr.nn.Linear(3, 2).parameters())
        8
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, buffer) of this module and (``recurse``) its descendants.

        >>> import chainrule as cr
        >>> [n for n, _ in cr.nn.BatchNorm1d(2).named_buffers()]
        ['running_mean', 'running_var', 'num_batches_tracked']
        """
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """The buffers (see ``named_buffers``).

        >>> import chainrule as cr
        >>> len(list(cr.nn.BatchNorm1d(2).buffers()))
        3
        """
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # -- modes and bulk changes ----------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (``mode=True``) or evaluation mode on every module.

        >>> import chainrule as cr
        >>> cr.nn.Dropout().train(False).training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            module.training = mode
        return self

    def eval(self):
        """Evaluation mode (``train(False)``): dropout off, batch norm uses its running
        statistics.

        >>> import chainrule as cr
        >>> cr.nn.Dropout().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter (e.g. to freeze a part).

        >>> import chainrule as cr
        >>> [p.requires_grad for p in cr.nn.Linear(1, 1).requires_grad_(False).parameters()]
        [False, False]
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the parameters' gradients: to None (default) or to zeros.

        >>> import chainrule as cr
        >>> m = cr.nn.Linear(2, 1); m(cr.ones(1, 2)).sum().backward(); m.zero_grad()
        >>> m.weight.grad is None
        True
        """
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                grad = p.grad.detach() if p.grad.grad_fn is not None else p.grad
                grad.requires_grad_(False)
                grad.zero_()
                p.grad = grad

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and on this module.

        >>> import chainrule as cr
        >>> seen = []
        >>> _ = cr.nn.Sequential(cr.nn.ReLU(), cr.nn.Tanh()).apply(lambda m: seen.append(type(m).__name__))
        >>> seen
        ['ReLU', 'Tanh', 'Sequential']
        """
        stack = [(self, False)]
        while stack:                      # post-order: children before their parent
            module, expanded = stack.pop()
            if expanded:
                fn(module)
                continue
            stack.append((module, True))
            stack.extend((child, False) for child in reversed(list(module.children())))
        return self

    def _apply(self, fn, recurse=True):
        """Replace every parameter's, gradient's and buffer's data by ``fn(data)``; the
        Parameter objects stay the same (optimizers keep working)."""
        modules = self.modules() if recurse else [self]
        with no_grad():
            for module in modules:
                for param in module._parameters.values():
                    if param is None:
                        continue
                    param.data = fn(param)
                    if param.grad is not None:
                        param.grad.data = fn(param.grad)
                for key, buf in module._buffers.items():
                    if buf is not None:
                        module._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Cast floating-point parameters and buffers to a dtype, and/or move them to a
        device: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)``.

        >>> import chainrule as cr
        >>> cr.nn.Linear(2, 2).to(cr.float64).weight.dtype
        chainrule.float64
        """
        device, dtype = _to_args(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dtype}")

        def convert(t):
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                t = t.to(dtype)
            return t if device is None else t.to(device)
        return self._apply(convert)

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        """Cast floating-point parameters and buffers to float32.

        >>> import chainrule as cr
        >>> cr.nn.Linear(1, 1).double().float().bias.dtype
        chainrule.float32
        """
        return self._cast(_dtypes.float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64.

        >>> import chainrule as cr
        >>> cr.nn.Linear(1, 1).double().bias.dtype
        chainrule.float64
        """
        return self._cast(_dtypes.float64)

    def half(self):
        """Cast floating-point parameters and buffers to float16."""
        return self._cast(_dtypes.float16)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._cast(_dtypes.bfloat16)

    def type(self, dst_type):
        """Cast every parameter and buffer to ``dst_type``."""
        return self._apply(lambda t: t.to(dst_type))

    def share_memory(self):
        """Nothing to do: chainrule's arrays live in this process's memory."""
        return self

    def to_empty(self, *, device=None, recurse=True):
        """Replace parameters and buffers by uninitialised ones of the same shapes on
        ``device`` (their own by default): how a model built on the meta device gets
        memory, to be initialised or loaded afterwards.

        >>> import chainrule as cr
        >>> cr.nn.Linear(2, 3, device="meta").to_empty(device="cpu").weight.device
        device(type='cpu')
        """
        from ... import _factories
        return self._apply(lambda t: _factories.empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        """Move parameters and buffers to the CPU (where they are)."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move parameters and buffers to a CUDA device (needs the cuda layer)."""
        return self._apply(lambda t: t.cuda(device))

    # -- state_dict ----------------------------------------------------------------------
    def get_extra_state(self):
        """State beyond parameters and buffers to save in ``state_dict`` (under
        '_extra_state'); a module that has some overrides this and
        ``set_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called. Please file an issue.")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called. Please file an issue.")

    def _has_extra_state(self):
        return type(self).get_extra_state is not Module.get_extra_state

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer by dotted name
        (detached unless ``keep_vars``), for ``load_state_dict``.

        >>> import chainrule as cr
        >>> list(cr.nn.Sequential(cr.nn.Linear(1, 1)).state_dict())
        ['0.weight', '0.bias']
        """
        if args:      # the old positional form (destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        for name, module in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            module_prefix = name + "." if name else ""
            metadata = getattr(destination, "_metadata", None)
            if metadata is not None:
                metadata[name] = {"version": module._version}
            for hook in module._state_dict_pre_hooks.values():
                hook(module, module_prefix, keep_vars)
            module._save_to_state_dict(destination, module_prefix, keep_vars)
            for hook in module._state_dict_hooks.values():
                result = hook(module, destination, module_prefix, {})
                if result is not None:
                    destination = result
        return destination

    def register_state_dict_pre_hook(self, hook):
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves it."""
        return _add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after it is saved."""
        return _add_hook(self._state_dict_hooks, hook, False)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries."""
        return _add_hook(self._load_state_dict_pre_hooks, hook, False)

    def register_load_state_dict_post_hook(self, hook):
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict``."""
        return _add_hook(self._load_state_dict_post_hooks, hook, False)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries of ``state_dict`` (under ``prefix``) into its
        parameters and persistent buffers; record what is missing or wrong."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        for name, target in itertools.chain(self._parameters.items(), persistent.items()):
            key = prefix + name
            if target is None:
                continue
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            _load_one(self, name, key, target, state_dict[key], error_msgs,
                      local_metadata.get("assign_to_params_buffers", False))
        if self._has_extra_state():
            if prefix + "_extra_state" in state_dict:
                self.set_extra_state(state_dict[prefix + "_extra_state"])
            elif strict:
                missing_keys.append(prefix + "_extra_state")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict``. With ``strict`` (default),
        missing or unexpected keys raise; either way the keys are returned.

        >>> import chainrule as cr
        >>> a, b = cr.nn.Linear(2, 1), cr.nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> cr.equal(a.weight, b.weight)
        True
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None) or {}
        state_dict = collections.OrderedDict(state_dict)
        expected = set()
        for name, module in self.named_modules(remove_duplicate=False):
            prefix = name + "." if name else ""
            local = dict(metadata.get(name, {}), assign_to_params_buffers=assign)
            module._load_from_state_dict(state_dict, prefix, local, True, missing, unexpected,
                                         errors)
            expected.update(prefix + k for k in module._parameters)
            expected.update(prefix + k for k in module._buffers
                            if k not in module._non_persistent_buffers_set)
            if module._has_extra_state():
                expected.add(prefix + "_extra_state")
        unexpected.extend(k for k in state_dict if k not in expected)
        result = _IncompatibleKeys(missing, unexpected)
        for module in self.modules():
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)
        _raise_load_errors(type(self).__name__, strict, missing, unexpected, errors)
        return result

    # -- hooks -----------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args)`` (``with_kwargs``: ``hook(module, args, kwargs)``)
        before ``forward``; a returned value replaces the arguments.

        >>> import chainrule as cr
        >>> m = cr.nn.Identity()
        >>> _ = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
        >>> m(cr.zeros(1)).item()
        1.0
        """
        handle = _add_hook(self._forward_pre_hooks, hook, prepend,
                           extra=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Call ``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args,
        kwargs, output)``) after ``forward``; a returned value replaces the output.

        >>> import chainrule as cr
        >>> m = cr.nn.Identity(); seen = []
        >>> _ = m.register_forward_hook(lambda mod, args, out: seen.append(out.tolist()))
        >>> _ = m(cr.ones(2)); seen
        [[1.0, 1.0]]
        """
        handle = _add_hook(self._forward_hooks, hook, prepend,
                           extra=[self._forward_hooks_with_kwargs,
                                  self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_output)`` when the gradients w.r.t. the module's
        outputs are known; a returned tuple replaces them.

        >>> import chainrule as cr
        >>> m = cr.nn.Identity(); x = cr.ones(2, requires_grad=True)
        >>> _ = m.register_full_backward_pre_hook(lambda mod, g: (g[0] * 10,))
        >>> m(x).sum().backward(); x.grad.tolist()
        [10.0, 10.0]
        """
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_input, grad_output)`` when the gradients w.r.t. the
        module's inputs are computed; a returned tuple replaces ``grad_input``.

        >>> import chainrule as cr
        >>> m = cr.nn.Linear(2, 1); seen = []
        >>> _ = m.register_full_backward_hook(lambda mod, gi, go: seen.append(gi[0].shape))
        >>> m(cr.ones(3, 2, requires_grad=True)).sum().backward(); seen
        [chainrule.Size([3, 2])]
        """
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated name; behaves as ``register_full_backward_hook``."""
        return self.register_full_backward_hook(hook)

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_hooks
                or _global_forward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):          # Note [global module hooks]
            return self.forward(*args, **kwargs)
        from ._hooks import call_with_hooks
        return call_with_hooks(self, args, kwargs)

    __call__ = _call_impl

    # -- printing --------------------------------------------------------------------------
    def extra_repr(self):
        """The text inside the parentheses of this module's repr (subclasses override)."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, module in self._modules.items():
            child = _indent(repr(module), 2)
            lines.append(f"({key}): {child}")
        if not self._modules and len(lines) <= 1:
            return f"{self._get_name()}({extra})"
        body = "\n  ".join(lines)
        return f"{self._get_name()}(\n  {body}\n)"


def _indent(text, spaces):
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


def _type_name(value):
    return f"{type(value).__module__.replace('chainrule', 'torch')}.{type(value).__name__}" \
        if isinstance(value, Tensor) else type(value).__name__


def _to_args(args, kwargs):
    """(device, dtype) from the forms of ``Module.to``."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    tensor = kwargs.pop("tensor", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            tensor = arg
        elif isinstance(arg, _dtypes.dtype):
            dtype = arg
        elif isinstance(arg, bool):
            continue                       # non_blocking, positionally
        else:
            device = arg
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    return device, (None if dtype is None else _dtypes.to_dtype(dtype))


_LAZY_TYPES = ("UninitializedParameter", "UninitializedBuffer")   # Note [lazy modules]


def _load_one(module, name, key, target, value, error_msgs, assign):
    if not isinstance(value, Tensor):
        error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                          f"or Tensor-like object from checkpoint but received {type(value)}")
        return
    if type(target).__name__ in _LAZY_TYPES:   # uninitialized into uninitialized: stays so
        return
    if value.shape != target.shape:
        error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} "
                          f"from checkpoint, the shape in current model is {target.shape}.")
        return
    with no_grad():
        if not assign:
            if target.is_meta and not value.is_meta:
                kind = "parameter" if name in module._parameters else "buffer"
                warnings.warn(f"for {key}: copying from a non-meta {kind} in the checkpoint to "
                              f"a meta {kind} in the current model, which is a no-op. (Did you "
                              "mean to pass `assign=True` to assign items in the state "
                              "dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", UserWarning, stacklevel=4)
            target.copy_(value)
        elif name in module._parameters:
            module._parameters[name] = value if isinstance(value, Parameter) else \
                Parameter(value.detach(), requires_grad=target.requires_grad)
        else:
            module._buffers[name] = value


def _raise_load_errors(class_name, strict, missing, unexpected, errors):
    errors = list(errors)
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {class_name}:\n\t"
                           + "\n\t".join(errors))
