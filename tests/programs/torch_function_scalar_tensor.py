"""The "Extending torch with a Tensor-like type" pattern: a diagonal ScalarTensor that
is no Tensor, with HANDLED_FUNCTIONS, and the torch.overrides helpers."""
import functools

import torch
import torch.overrides

HANDLED_FUNCTIONS = {}


class ScalarTensor(object):
    def __init__(self, N, value):
        self._N = N
        self._value = value

    def __repr__(self):
        return "ScalarTensor(N={}, value={})".format(self._N, self._value)

    def tensor(self):
        return self._value * torch.eye(self._N)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if func not in HANDLED_FUNCTIONS or not all(
                issubclass(t, (torch.Tensor, ScalarTensor)) for t in types):
            return NotImplemented
        return HANDLED_FUNCTIONS[func](*args, **kwargs)


def implements(torch_function):
    """Register a torch function override for ScalarTensor"""
    def decorator(func):
        functools.update_wrapper(func, torch_function)
        HANDLED_FUNCTIONS[torch_function] = func
        return func
    return decorator


@implements(torch.mean)
def mean(input):
    return float(input._value) / input._N


@implements(torch.add)
def add(input, other):
    try:
        if input._N == other._N:
            return ScalarTensor(input._N, input._value + other._value)
        raise ValueError("Shape mismatch!")
    except AttributeError:
        return torch.add(input.tensor(), other)


@implements(torch.nn.functional.relu)
def relu(input, inplace=False):
    return ScalarTensor(input._N, max(input._value, 0))


d = ScalarTensor(5, 2)
print(d)
print(d.tensor())
print("mean", torch.mean(d))
s = ScalarTensor(2, 2)
print("add", torch.add(s, s))
t = torch.tensor([[1, 1], [1, 1]])
print("add tensor", torch.add(s, t))
print("relu", torch.nn.functional.relu(ScalarTensor(3, -1.5)))
try:
    torch.mul(s, 3)
except TypeError as e:
    print("TypeError:", str(e).splitlines()[0])
try:
    torch.nn.functional.mse_loss(s, s)
except TypeError as e:
    print("TypeError:", str(e).split(":")[0])

# the helpers
print(torch.overrides.is_tensor_like(s), torch.overrides.is_tensor_like(t),
      torch.overrides.is_tensor_like(3.0))
print(torch.overrides.has_torch_function((s,)), torch.overrides.has_torch_function((t, 1)),
      torch.overrides.has_torch_function_unary(s),
      torch.overrides.has_torch_function_variadic(t, t))
print(torch.add in torch.overrides.get_overridable_functions()[torch])
print(torch.zeros in torch.overrides.get_ignored_functions(),
      torch.add in torch.overrides.get_ignored_functions())
print(torch.Tensor.grad.__get__ in torch.overrides.get_default_nowrap_functions())
print(torch.overrides.is_tensor_method_or_property(torch.Tensor.add),
      torch.overrides.is_tensor_method_or_property(torch.add))


def scale(x, factor=2.0):
    if torch.overrides.has_torch_function_unary(x):
        return torch.overrides.handle_torch_function(scale, (x,), x, factor=factor)
    return x * factor


@implements(scale)
def scale_scalar(x, factor=2.0):
    return ScalarTensor(x._N, x._value * factor)


print("scale", scale(torch.ones(2)), scale(s), scale(s, factor=0.5))


@torch.overrides.wrap_torch_function(lambda x, y: (x, y))
def dist(x, y):
    return (x - y).abs().sum()


@implements(dist)
def dist_scalar(x, y):
    return abs(x._value - y._value) * x._N


print("dist", dist(torch.ones(3), torch.zeros(3)), dist(s, ScalarTensor(2, 5)))
