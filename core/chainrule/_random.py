"""Random numbers from seedable generators: ``chainrule.Generator``, the default
generator that ``manual_seed`` seeds, and the sampling functions and in-place
methods that take ``generator=`` (randperm, normal, bernoulli, multinomial, poisson,
Tensor.uniform_/normal_/bernoulli_/exponential_/random_/...).

A Generator wraps NumPy's PCG64 bit generator; its state (``get_state``) is a uint8
tensor holding the bit generator's words and the initial seed, so ``set_state``
restores the exact stream. Streams differ from torch's (another algorithm): code may
rely on reproducibility under one seed, never on torch's numbers.

Samples are constants, like the reference's (its gradients through them are zero).

Note [random numbers on a device]
    A draw for a tensor on a device (dropout's mask, rand_like, bernoulli, the in-place
    samplers, ...) is made there by its backend's counter-based kernels
    (``device_draw``; Note [device backend]), never on the host and copied: from the
    device's default generator (``chainrule.manual_seed`` / ``chainrule.cuda.manual_seed``
    seed it) or from a Generator of that device (``Generator("cuda")``: a seed and an
    offset that advances by one per draw, its state those two numbers), so the same
    seed gives the same numbers. A generator of another device is the reference's
    error. Distributions the kernels lack are transforms of their uniform draws.
"""
import functools
import os
import sys

import numpy as np

from ._batched import LEVELS as _LEVELS

from . import _dtypes
from ._grad_mode import STATE as _MODE
from ._tensor import DEVICE_ARRAY_TYPES, Tensor, asarray, device as _device

_DEFAULT_SEED = 67280421310721          # the reference's default seed
_MASK64 = (1 << 64) - 1
_STATE_BYTES = 16 + 16 + 1 + 4 + 8      # PCG64 state, increment, has_uint32, uinteger, seed


class Generator:
    """A random number generator with its own state.

    >>> import chainrule as cr
    >>> g = cr.Generator().manual_seed(3)
    >>> a = cr.rand(2, generator=g)
    >>> _ = g.manual_seed(3)
    >>> cr.equal(a, cr.rand(2, generator=g))
    True
    """

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._offset = 0       # a device generator's (Note [random numbers on a device])
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Reset the state from ``seed`` (an int; negative ones wrap modulo 2**64)."""
        seed = int(seed)
        if not -(1 << 63) <= seed <= _MASK64:
            raise RuntimeError(f"Overflow when unpacking long long")
        self._seed = seed & _MASK64
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        self._offset = 0
        return self

    def next_philox(self):
        """(seed, offset) for one draw of a device's counter-based kernels from this
        generator; advances the offset (Note [random numbers on a device]).

        >>> import chainrule as cr
        >>> g = cr.Generator().manual_seed(2)
        >>> g.next_philox(), g.next_philox()
        ((2, 0), (2, 1))
        """
        offset, self._offset = self._offset, self._offset + 1
        return self._seed, offset

    def seed(self):
        """Seed from the operating system's entropy; returns the seed."""
        seed = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        """The seed the current stream started from."""
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (a snapshot: later draws do not change it); a
        device generator's is its seed and offset (16 bytes, like the reference's)."""
        if self.device.type != "cpu":
            words = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
            return Tensor._wrap(np.frombuffer(words, np.uint8).copy())
        state = self._rng.bit_generator.state
        words = (state["state"]["state"].to_bytes(16, "little")
                 + state["state"]["inc"].to_bytes(16, "little")
                 + bytes([state["has_uint32"]]) + state["uinteger"].to_bytes(4, "little")
                 + self._seed.to_bytes(8, "little"))
        return Tensor._wrap(np.frombuffer(words, np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state returned by ``get_state``; returns the generator."""
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = new_state._data.tobytes()
        if self.device.type != "cpu":
            return self._set_device_state(raw)
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {len(raw)}")
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:37], "little")}
        self._rng = np.random.Generator(bit_generator)
        self._seed = int.from_bytes(raw[37:], "little")
        return self

    def _set_device_state(self, raw):
        if len(raw) != 16:
            raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got {len(raw)}")
        self.manual_seed(int.from_bytes(raw[:8], "little"))
        self._offset = int.from_bytes(raw[8:], "little")
        return self

    def __repr__(self):
        return f"<chainrule.Generator object at {id(self):#x}>"


default_generator = Generator()


def numpy_rng(generator=None):
    """The NumPy Generator behind ``generator`` (the default one when None)."""
    if _LEVELS.stack:                  # inside vmap: its ``randomness`` decides
        from ._vmap import check_random
        check_random()
    if generator is None:
        return default_generator._rng
    if isinstance(generator, Generator):
        return generator._rng
    if isinstance(generator, np.random.Generator):     # a NumPy generator works as is
        return generator
    raise TypeError(f"generator must be a chainrule.Generator, not "
                    f"{type(generator).__name__}")


def device_draw(kind, shape, dtype, like, generator=None, arg0=0.0, arg1=1.0):
    """Samples of ``dtype`` drawn on the device of the array ``like`` (Note [random
    numbers on a device]): ``kind`` "uniform" (low, high), "normal" (mean, std),
    "bernoulli" (p) or "randint" (low, high); None when ``like`` is a host array (the
    caller draws with NumPy)."""
    if type(like) is np.ndarray or type(like) not in DEVICE_ARRAY_TYPES:
        return None
    if _LEVELS.stack:                  # inside vmap: its ``randomness`` decides
        from ._vmap import check_random
        check_random()
    device = like.device
    check_generator_device(generator, device)
    from ._backends import BACKENDS
    return BACKENDS[device.type].random(kind, tuple(shape), np.dtype(dtype), device, arg0,
                                        arg1, generator)


def check_generator_device(generator, device):
    """The reference's error for a generator of another device type than the draw's."""
    found = getattr(generator, "device", None)
    if generator is not None and (found is None or found.type != device.type):
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{'cpu' if found is None else found.type}'")


def _seed_cuda(seed):
    """Seeds every CUDA device too, like the reference's ``manual_seed``, when the
    chainrule-cuda layer is already loaded; a device's generator made later starts
    from the default generator's initial seed (the reference's lazy seeding)."""
    from .cuda import _LAYER, _runtime
    runtime = _runtime() if _LAYER or "chainrule_cuda" in sys.modules else None
    if runtime is not None:
        runtime.manual_seed_all(seed)


def manual_seed(seed):
    """Seed the default generator (what every random function uses without
    ``generator=``) and every CUDA device's; returns the default generator.

    >>> import chainrule as cr
    >>> _ = cr.manual_seed(0); a = cr.rand(2); _ = cr.manual_seed(0); cr.equal(a, cr.rand(2))
    True
    """
    generator = default_generator.manual_seed(seed)
    _seed_cuda(seed)
    return generator


def seed():
    """Seed the default generator (and the CUDA devices') from the operating system's
    entropy; returns the seed.

    >>> import chainrule as cr
    >>> s = cr.seed(); cr.initial_seed() == s
    True
    """
    seed = default_generator.seed()
    _seed_cuda(seed)
    return seed


def initial_seed():
    """The default generator's initial seed.

    >>> import chainrule as cr
    >>> _ = cr.manual_seed(5); cr.initial_seed()
    5
    """
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state (a uint8 tensor).

    >>> import chainrule as cr
    >>> state = cr.get_rng_state(); a = cr.rand(1); _ = cr.set_rng_state(state)
    >>> cr.equal(a, cr.rand(1))
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from ``get_rng_state()``.

    >>> import chainrule as cr
    >>> cr.set_rng_state(cr.get_rng_state()) is None
    True
    """
    default_generator.set_state(new_state)


# --- sampling ---------------------------------------------------------------------------
def _constant(arr, requires_grad=False):
    t = Tensor._wrap(arr)
    if _MODE.inference:
        t._extras().inference = True
    if requires_grad:
        t.requires_grad_(True)
    return t


def drawn_on_meta(input, shape, dtype):
    """A meta array of ``shape`` standing in for samples drawn for a meta ``input``: no
    values, and the host generator stays put (Note [meta arrays]); None otherwise."""
    data = input._data
    if type(data) is np.ndarray or not input.is_meta:
        return None
    from ._meta import MetaArray
    return MetaArray.empty(shape, dtype)


def uniform_like(input, low, high, generator=None):
    """Uniform samples in [low, high) shaped like ``input``, in its dtype, on its device
    (a constant)."""
    meta = drawn_on_meta(input, input._data.shape, input._data.dtype)
    if meta is not None:
        return _constant(meta)
    arr = draw_like(input._data, "uniform", low, high, generator,
                    lambda rng, shape: rng.uniform(low, high, shape))
    return _constant(arr.astype(input._data.dtype, copy=False))


def bernoulli_mask(shape, keep, dtype, generator=None, like=None):
    """An array of 1s (probability ``keep``) and 0s in ``dtype``, on the device of the
    array ``like`` (the host when None)."""
    drawn = device_draw("bernoulli", shape, dtype, like, generator, keep, 0.0)
    if drawn is not None:
        return drawn
    return (numpy_rng(generator).random(shape) < keep).astype(dtype)


def draw_like(like, kind, arg0, arg1, generator, host_draw, shape=None, dtype=np.float64):
    """Samples shaped like the array ``like`` (or ``shape``) where it lives: the device's
    kernels (``kind``, ``arg0``, ``arg1``), or ``host_draw(numpy_generator, shape)``."""
    shape = like.shape if shape is None else shape
    drawn = device_draw(kind, shape, dtype, like, generator, arg0, arg1)
    return host_draw(numpy_rng(generator), shape) if drawn is None else drawn


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of ``0 .. n-1``.

    >>> import chainrule as cr
    >>> sorted(cr.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    from ._factories import _on_device
    keys = _on_device("uniform", (n,), _dtypes.float64, device, generator, 0.0, 1.0)
    if keys is not None:               # the order of uniform keys (the device's sort)
        return _constant(np.argsort(keys, kind="stable").astype(d.np), requires_grad)
    return _constant(numpy_rng(generator).permutation(n).astype(d.np), requires_grad)


def _as_array(value):
    return value._data if isinstance(value, Tensor) else value


def _probabilities(p, shape):
    """``p`` (a number, or a tensor's array broadcast to ``shape``) where it lives."""
    p = _as_array(p)
    return np.broadcast_to(p, shape) if np.ndim(p) else p


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Normal samples: ``mean`` and ``std`` are tensors (broadcast together) or numbers
    (then ``size`` gives the shape).

    >>> import chainrule as cr
    >>> cr.normal(cr.zeros(3), 1.0).shape
    chainrule.Size([3])
    >>> cr.normal(2.0, 0.0, size=(2,)).tolist()
    [2.0, 2.0]
    """
    m, s = _as_array(mean), _as_array(std)
    if np.any(asarray(s) < 0):
        raise RuntimeError(f"normal expects std >= 0.0, but found std "
                           f"{float(np.min(s)):g}")
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if tensors:
        if size is not None:
            raise TypeError("normal(): 'size' is only allowed with a float mean and std")
        dt = np.result_type(*[t._data for t in tensors])
        shape = np.broadcast_shapes(*[np.shape(v) for v in (m, s)])
    else:
        if size is None:
            raise TypeError("normal() missing 1 required positional argument: 'size'")
        from ._factories import _on_device, _size_args, _float_dtype
        dt, shape = _float_dtype(dtype).np, _size_args((size,))
        drawn = _on_device("normal", shape, _float_dtype(dtype), device, generator, m, s)
        if drawn is not None:
            return _constant(drawn, requires_grad)
    like = next((t._data for t in tensors if type(t._data) is not np.ndarray), None)
    z = draw_like(like, "normal", 0.0, 1.0, generator,
                  lambda rng, shape: rng.standard_normal(shape), shape)
    return _constant((m + s * z).astype(dt), requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (or ``p``, when given), else 0, in input's dtype.

    >>> import chainrule as cr
    >>> cr.bernoulli(cr.tensor([0., 1.])).tolist()
    [0.0, 1.0]
    """
    probs = _probabilities(input._data if p is None else p, input._data.shape)
    if np.size(probs) and (np.min(probs) < 0 or np.max(probs) > 1):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = draw_like(input._data, "uniform", 0.0, 1.0, generator,
                      lambda rng, shape: rng.random(shape)) < probs
    return _constant(draws.astype(input._data.dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categorical distributions in the rows of ``input``
    (non-negative weights, 1-D or 2-D).

    >>> import chainrule as cr
    >>> cr.multinomial(cr.tensor([0., 1., 0.]), 2, replacement=True).tolist()
    [1, 1]
    """
    w = asarray(input._data, np.float64)
    if w.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > w.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not bool(np.all(np.isfinite(w))) or bool(np.any(w < 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = w.reshape(-1, w.shape[-1])
    totals = rows.sum(axis=1)
    if bool(np.any(totals == 0)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if type(w) is not np.ndarray:
        picks = _device_multinomial(rows, totals, num_samples, replacement, generator)
        return _constant(picks.reshape(w.shape[:-1] + (num_samples,)))
    rng = numpy_rng(generator)
    picks = [rng.choice(len(r), num_samples, replace=replacement, p=r / t)
             for r, t in zip(rows, totals)]
    out = np.asarray(picks, np.int64).reshape(w.shape[:-1] + (num_samples,))
    return _constant(out)


def _device_multinomial(rows, totals, num_samples, replacement, generator):
    """Categorical draws on the device (Note [random numbers on a device]): with
    replacement, each uniform draw scaled by its row's total is located in the row's
    cumulative weights (the categories whose cumulative weight it passes, counted);
    without, the Gumbel-top-k trick (the largest log w + Gumbel noise, sorted)."""
    n, c = rows.shape
    if replacement:
        u = device_draw("uniform", (n, num_samples), np.float64, rows, generator, 0.0, 1.0)
        cumulative = np.cumsum(rows, axis=1)
        passed = cumulative[:, None, :] <= (u * totals[:, None])[:, :, None]
        return np.sum(passed, axis=2, dtype=np.int64)
    u = device_draw("uniform", (n, c), np.float64, rows, generator, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        keys = np.log(rows) - np.log(-np.log1p(-u))      # log w + Gumbel(0, 1); -log(1 - u) > 0
    return np.argsort(-keys, axis=1)[:, :num_samples]


def poisson(input, generator=None):
    """Poisson samples with the rates in ``input`` (same dtype).

    >>> import chainrule as cr
    >>> cr.poisson(cr.zeros(2)).tolist()
    [0.0, 0.0]
    """
    if np.any(input._data < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _constant(numpy_rng(generator).poisson(input._data).astype(input._data.dtype))


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    """Random integers in [low, high) shaped like ``input``.

    >>> import chainrule as cr
    >>> cr.randint_like(cr.zeros(3), 1).tolist()
    [0.0, 0.0, 0.0]
    """
    if high is None:
        low, high = 0, low
    d = input._data.dtype if dtype is None else _dtypes.to_dtype(dtype).np
    meta = drawn_on_meta(input, input._data.shape, d)
    if meta is not None:
        return _constant(meta, requires_grad)
    arr = draw_like(input._data, "randint", low, high, generator,
                    lambda rng, shape: rng.integers(low, high, shape), dtype=np.int64).astype(d)
    if device is not None:
        from ._backends import move_array
        arr = move_array(arr, device)
    return _constant(arr, requires_grad)


# --- in-place methods ---------------------------------------------------------------------
def fill_random(t, arr):
    """Overwrite ``t`` with the samples ``arr``: a constant written in place, whose
    gradient is zero (when ``t`` has history, the zero op records that)."""
    from ._ops._common import commit_inplace
    from ._ops.operators import ZERO
    from ._ops._registry import apply_op
    values = Tensor._wrap(arr.astype(t._data.dtype, copy=False))
    if _MODE.grad_enabled and t.requires_grad and t.grad_fn is not None:
        values = apply_op(ZERO, (t,), {}) + values
    return commit_inplace(t, values)


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill with uniform samples in [from, to).

    >>> import chainrule as cr
    >>> x = cr.zeros(3).uniform_(2, 3); bool(((x >= 2) & (x < 3)).all())
    True
    """
    from_ = kwargs.pop("from", from_)
    return fill_random(self, draw_like(self._data, "uniform", from_, to, generator,
                                       lambda rng, shape: rng.uniform(from_, to, shape)))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples.

    >>> import chainrule as cr
    >>> cr.zeros(2).normal_(5.0, 0.0).tolist()
    [5.0, 5.0]
    """
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return fill_random(self, draw_like(self._data, "normal", mean, std, generator,
                                       lambda rng, shape: rng.normal(mean, std, shape)))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability ``p``, a number or tensor) and 0.

    >>> import chainrule as cr
    >>> cr.zeros(2).bernoulli_(1.0).tolist()
    [1.0, 1.0]
    """
    probs = _probabilities(p, self._data.shape)
    if np.size(probs) and (np.min(probs) < 0 or np.max(probs) > 1):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return fill_random(self, _uniform(self, generator) < probs)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential samples of rate ``lambd``.

    >>> import chainrule as cr
    >>> bool((cr.zeros(4).exponential_() >= 0).all())
    True
    """
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    if type(self._data) is not np.ndarray:          # -log(1 - u) / lambda
        return fill_random(self, -np.log1p(-_uniform(self, generator)) / lambd)
    return fill_random(self, numpy_rng(generator).exponential(1.0 / lambd, self._data.shape))


def random_(self, from_=0, to=None, *, generator=None, **kwargs):
    """Fill with integers from [from, to) (``random_(to)``: [0, to); no bounds: [0, 2**24]
    for float32, [0, 2**53] for float64, the dtype's range for integers).

    >>> import chainrule as cr
    >>> cr.zeros(3).random_(0, 1).tolist()
    [0.0, 0.0, 0.0]
    """
    from_ = kwargs.pop("from", from_)
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        to = _random_bound(self._data.dtype)
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={from_} >= to={to}")
    return fill_random(self, draw_like(self._data, "randint", from_, to, generator,
                                       lambda rng, shape: rng.integers(from_, to, shape),
                                       dtype=np.int64))


def _random_bound(dtype):
    if dtype.kind == "b":
        return 2
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).max) + 1
    return (1 << (np.finfo(dtype).nmant + 1)) + 1


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy samples.

    >>> import chainrule as cr
    >>> cr.zeros(2).cauchy_(1.0, 0.0).tolist()
    [1.0, 1.0]
    """
    if type(self._data) is not np.ndarray:          # tan(pi (u - 1/2))
        draws = np.tan(np.pi * (_uniform(self, generator) - 0.5))
    else:
        draws = numpy_rng(generator).standard_cauchy(self._data.shape)
    return fill_random(self, median + sigma * draws)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with samples whose logarithm is normal(mean, std).

    >>> import chainrule as cr
    >>> bool((cr.zeros(3).log_normal_() > 0).all())
    True
    """
    return fill_random(self, np.exp(draw_like(self._data, "normal", mean, std, generator,
                                              lambda rng, shape: rng.normal(mean, std, shape))))


def geometric_(self, p, *, generator=None):
    """Fill with geometric samples (trials until the first success, from 1).

    >>> import chainrule as cr
    >>> cr.zeros(2).geometric_(1.0).tolist()
    [1.0, 1.0]
    """
    if type(self._data) is not np.ndarray:          # trials to the first success
        trials = np.ceil(np.log1p(-_uniform(self, generator)) / np.log1p(-p))
        return fill_random(self, np.maximum(trials, 1.0))
    return fill_random(self, numpy_rng(generator).geometric(p, self._data.shape))


def _uniform(t, generator):
    """Uniform samples in [0, 1) shaped like ``t``, where it lives."""
    return draw_like(t._data, "uniform", 0.0, 1.0, generator, lambda rng, shape: rng.random(shape))


def _method_bernoulli(self, p=None, *, generator=None):
    """``chainrule.bernoulli(self)``, or with the probability ``p`` for every element.

    >>> import chainrule as cr
    >>> cr.zeros(2).bernoulli(1.0).tolist()
    [1.0, 1.0]
    """
    return bernoulli(self, p, generator=generator)


FUNCTIONS = {"randperm": randperm, "normal": normal, "bernoulli": bernoulli,
             "multinomial": multinomial, "poisson": poisson, "randint_like": randint_like}
METHODS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_,
           "exponential_": exponential_, "random_": random_, "cauchy_": cauchy_,
           "log_normal_": log_normal_, "geometric_": geometric_,
           "bernoulli": _method_bernoulli, "multinomial": multinomial}
def _skip_on_meta(fill):
    """An in-place random fill that leaves a meta tensor as it is: no values to write,
    and the host generator stays where it was (Note [meta arrays])."""
    @functools.wraps(fill)
    def method(self, *args, **kwargs):
        if type(self._data) is not np.ndarray and self.is_meta:
            return self
        return fill(self, *args, **kwargs)
    return method


for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _skip_on_meta(_fn) if _name.endswith("_") else _fn)
