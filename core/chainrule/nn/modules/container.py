"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
import collections
import operator

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _indent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(idx, size):
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


class Sequential(Module):
    """Modules called in order, each on the previous one's output; built from
    modules or from an ordered dict of named modules. Indexing gives a module,
    slicing a Sequential.

    >>> import chainrule as cr
    >>> net = cr.nn.Sequential(cr.nn.Linear(4, 3), cr.nn.ReLU(), cr.nn.Linear(3, 1))
    >>> net(cr.ones(2, 4)).shape, type(net[1]).__name__, len(net[:2])
    (chainrule.Size([2, 1]), 'ReLU', 2)
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(collections.OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]):
            del self._modules[key]
        # keep the names 0..n-1, as torch does
        self.__dict__["_modules"] = collections.OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        """Append every module of ``sequential``; returns self."""
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        modules = list(self._modules.values())
        n = len(modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules.insert(index % (n + 1) if index < 0 else index, module)
        self.__dict__["_modules"] = collections.OrderedDict((str(i), m) for i, m in enumerate(modules))
        return self

    def pop(self, key):
        """Remove and return the module at position ``key``."""
        module = self[key]
        del self[key]
        return module

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children (so their parameters are the list's).

    >>> import chainrule as cr
    >>> layers = cr.nn.ModuleList([cr.nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters())), len(layers[1:])
    (6, 2)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self))), module)

    def __delitem__(self, idx):
        modules = list(self._modules.values())
        del modules[idx if isinstance(idx, slice) else _index(idx, len(modules))]
        self.__dict__["_modules"] = collections.OrderedDict((str(i), m) for i, m in enumerate(modules))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def __repr__(self):
        """Like torch's: a run of identical children prints once, as '(i-j): n x ...'."""
        runs = []                                   # [first, last, repr]
        for i, module in enumerate(self):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return self._get_name() + "()"
        lines = [_indent(f"({a}): {text}" if a == b else f"({a}-{b}): {b - a + 1} x {text}", 2)
                 for a, b, text in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Append every module of the iterable ``modules``; returns self."""
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)) \
                or isinstance(modules, (str, bytes)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self.__dict__["_modules"] = collections.OrderedDict()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def pop(self, key):
        """Remove and return the module at position ``key``."""
        module = self[key]
        del self[key]
        return module


class ModuleDict(Module):
    """An ordered dict of modules, registered as children.

    >>> import chainrule as cr
    >>> heads = cr.nn.ModuleDict({"a": cr.nn.Linear(2, 1), "b": cr.nn.Linear(2, 3)})
    >>> list(heads.keys()), heads["b"].out_features
    (['a', 'b'], 3)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove ``key`` and return its module."""
        module = self[key]
        del self[key]
        return module

    def keys(self):
        """The names."""
        return self._modules.keys()

    def items(self):
        """(name, module) pairs."""
        return self._modules.items()

    def values(self):
        """The modules."""
        return self._modules.values()

    def update(self, modules):
        """Add (or replace) modules from a mapping or an iterable of pairs."""
        pairs = modules.items() if hasattr(modules, "items") else modules
        for j, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters, registered (tensors given are wrapped as Parameters).

    >>> import chainrule as cr
    >>> ps = cr.nn.ParameterList([cr.nn.Parameter(cr.ones(2)), cr.zeros(3)])
    >>> [tuple(p.shape) for p in ps.parameters()], type(ps[1]).__name__
    ([(2,), (3,)], 'Parameter')
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self))))

    def __setitem__(self, idx, param):
        setattr(self, str(_index(idx, len(self))), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        """Add ``value`` at the end; returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        """Append every value; returns self."""
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size "
                         f"{'x'.join(map(str, p.shape))}]" for i, p in enumerate(self))


class ParameterDict(Module):
    """An ordered dict of parameters, registered (tensors are wrapped as Parameters).

    >>> import chainrule as cr
    >>> pd = cr.nn.ParameterDict({"scale": cr.ones(1)})
    >>> list(dict(pd.named_parameters())), "scale" in pd
    (['scale'], True)
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        """The names."""
        return self._keys.keys()

    def items(self):
        """(name, parameter) pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The parameters."""
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        """The parameter ``key``, or ``default``."""
        return self[key] if key in self else default

    def pop(self, key):
        """Remove ``key`` and return its parameter."""
        value = self[key]
        del self[key]
        return value

    def clear(self):
        """Remove every parameter."""
        for key in list(self._keys):
            del self[key]

    def update(self, parameters):
        """Add (or replace) parameters from a mapping or an iterable of pairs."""
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self):
        return "\n".join(f"({k}): Parameter containing: [{p.dtype} of size "
                         f"{'x'.join(map(str, p.shape))}]" for k, p in self.items())
