"""A fake device backend for core's device plumbing tests (Note [device backend]):
``FakeDeviceArray`` keeps its values in an ndarray and says it lives on "cuda:N", so
core's device code (Tensor.device, to/cuda/cpu, the factories, printing, the mixed
device error) is tested without the chainrule-cuda layer. It implements NumPy's
protocols the way a real device array does: results stay on the device, and a host
array other than a 0-d constant in the same operation is an error."""
import contextlib

import numpy as np

import chainrule as cr
from chainrule import _backends
from chainrule._tensor import DEVICE_ARRAY_TYPES, mixed_device_error


class FakeDeviceArray:
    __array_priority__ = 2000

    def __init__(self, arr, index=0):
        self.arr = np.asarray(arr)
        self.index = index

    @property
    def device(self):
        return cr.device("cuda", self.index)

    def get(self):
        return self.arr.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def _unwrap(self, x):
        if isinstance(x, FakeDeviceArray):
            if x.index != self.index:
                raise mixed_device_error(x.device, self.device)
            return x.arr
        if isinstance(x, np.ndarray) and x.ndim > 0:
            raise mixed_device_error(self.device, cr.device("cpu"))
        if isinstance(x, (list, tuple)):
            return type(x)(self._unwrap(v) for v in x)
        return x

    def _wrap(self, x):
        if isinstance(x, (np.ndarray, np.generic)):
            return FakeDeviceArray(np.asarray(x), self.index)
        if isinstance(x, tuple):
            return tuple(self._wrap(v) for v in x)
        return x

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            outs = kwargs["out"]
            kwargs["out"] = tuple(self._unwrap(o) for o in outs)
            getattr(ufunc, method)(*self._unwrap(inputs), **kwargs)
            return outs[0] if len(outs) == 1 else outs
        return self._wrap(getattr(ufunc, method)(*self._unwrap(inputs), **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        if "like" in kwargs:
            kwargs = {k: v for k, v in kwargs.items() if k != "like"}
        return self._wrap(func(*self._unwrap(args), **self._unwrap_dict(kwargs)))

    def _unwrap_dict(self, kwargs):
        return {k: self._unwrap(v) for k, v in kwargs.items()}

    def __getattr__(self, name):
        attr = getattr(self.arr, name)
        if not callable(attr):
            return self._wrap(attr) if isinstance(attr, np.ndarray) else attr
        return lambda *a, **k: self._wrap(attr(*self._unwrap(a), **self._unwrap_dict(k)))

    def __getitem__(self, key):
        return self._wrap(self.arr[self._unwrap(key)])

    def __setitem__(self, key, value):
        self.arr[self._unwrap(key)] = self._unwrap(value)

    def __len__(self):
        return len(self.arr)

    def __bool__(self):
        return bool(self.arr)

    def __repr__(self):
        return f"FakeDeviceArray({self.arr!r}, cuda:{self.index})"


def _operator(name):
    def op(self, *others):
        return self._wrap(getattr(self.arr, name)(*self._unwrap(others)))
    return op


for _name in ["add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv",
              "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "pos",
              "abs", "invert", "and", "rand", "or", "ror", "xor", "rxor", "lt", "le", "gt",
              "ge", "eq", "ne", "iadd", "isub", "imul", "itruediv", "ipow", "iand", "ior"]:
    setattr(FakeDeviceArray, f"__{_name}__", _operator(f"__{_name}__"))
for _name in ["iadd", "isub", "imul", "itruediv", "ipow", "iand", "ior"]:
    def _inplace(self, other, _name=_name):
        getattr(self.arr, f"__{_name}__")(self._unwrap(other))
        return self
    setattr(FakeDeviceArray, f"__{_name}__", _inplace)


class FakeBackend:
    array_type = FakeDeviceArray

    def __init__(self, count=2):
        self.count = count
        self.pinned = set()
        self.recorded = []
        self.seed = 0

    def is_available(self):
        return True

    def device_count(self):
        return self.count

    def synchronize(self, device=None):
        pass

    def canonical(self, device):
        index = 0 if device.index is None else device.index
        if index >= self.count:
            raise RuntimeError("CUDA error: invalid device ordinal")
        return cr.device("cuda", index)

    def to_device_array(self, arr, device, non_blocking=False):
        host = arr.get() if isinstance(arr, FakeDeviceArray) else np.array(arr)
        return FakeDeviceArray(host, device.index)

    def random(self, kind, shape, dtype, device, arg0, arg1, generator=None):
        rng = np.random.default_rng(self.seed if generator is None else
                                    generator.next_philox())
        values = {"uniform": lambda: rng.uniform(arg0, arg1, shape),
                  "normal": lambda: rng.normal(arg0, arg1, shape),
                  "bernoulli": lambda: rng.random(shape) < arg0,
                  "randint": lambda: rng.integers(arg0, arg1, shape)}[kind]()
        return FakeDeviceArray(values.astype(dtype), device.index)

    def pin_memory(self, arr):
        out = arr.copy()
        self.pinned.add(id(out))
        return out

    def is_pinned(self, arr):
        return id(arr) in self.pinned

    def record_stream(self, arr, stream):
        self.recorded.append((arr, stream))


@contextlib.contextmanager
def fake_cuda():
    """Register the fake backend for ``cuda`` for the duration of the block."""
    saved = _backends.BACKENDS.get("cuda")
    backend = FakeBackend()
    _backends.register_backend("cuda", backend)
    try:
        yield backend
    finally:
        DEVICE_ARRAY_TYPES.discard(FakeDeviceArray)
        if saved is None:
            _backends.BACKENDS.pop("cuda", None)
        else:
            _backends.BACKENDS["cuda"] = saved
