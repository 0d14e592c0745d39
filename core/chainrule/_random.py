"""Random numbers from seedable generators: ``chainrule.Generator``, the default
generator that ``manual_seed`` seeds, and the sampling functions and in-place
methods that take ``generator=`` (randperm, normal, bernoulli, multinomial, poisson,
Tensor.uniform_/normal_/bernoulli_/exponential_/random_/...).

A CPU Generator is the reference's: the same mt19937 engine, seeding and samplers
(Note [the reference's CPU stream] in _cpu_stream.py), so a seeded program draws the
reference's numbers; its state (``get_state``) is the reference's 5056-byte layout.
``numpy_rng`` hands NumPy's samplers the same engine (their transforms are NumPy's).

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

from ._batched import FUNC_TRANSFORMS as _TRANSFORMS, LEVELS as _LEVELS

from . import _cpu_stream as _stream

from . import _dtypes
from ._grad_mode import STATE as _MODE
from ._tensor import DEVICE_ARRAY_TYPES, Tensor, asarray, device as _device

_DEFAULT_SEED = 67280421310721          # the reference's default seed
_MASK64 = (1 << 64) - 1
_STATE_BYTES = 5056                     # Note [the reference's CPU generator state]
_KEY = slice(24, 24 + 624 * 8)


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
        """Reset the state from ``seed`` (an int; negative ones wrap modulo 2**64; the
        engine takes its low 32 bits)."""
        seed = int(seed)
        if not -(1 << 63) <= seed <= _MASK64:
            raise RuntimeError(f"Overflow when unpacking long long")
        self._seed = seed & _MASK64
        self._bitgen = np.random.MT19937()
        self._bitgen._legacy_seeding(self._seed & 0xFFFFFFFF)
        self._rng = np.random.Generator(self._bitgen)
        self._normal_cache = None      # the reference's next double normal sample
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
        """The state as a uint8 tensor (a snapshot: later draws do not change it): the
        reference's layout (Note [the reference's CPU generator state]); a device
        generator's is its seed and offset (16 bytes, like the reference's)."""
        if self.device.type != "cpu":
            words = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
            return Tensor._wrap(np.frombuffer(words, np.uint8).copy())
        return Tensor._wrap(_pack_state(self))

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
        _unpack_state(self, raw)
        return self

    def _set_device_state(self, raw):
        if len(raw) != 16:
            raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got {len(raw)}")
        self.manual_seed(int.from_bytes(raw[:8], "little"))
        self._offset = int.from_bytes(raw[8:], "little")
        return self

    def __repr__(self):
        return f"<chainrule.Generator object at {id(self):#x}>"


def _pack_state(gen):
    """Note [the reference's CPU generator state]
    5056 bytes, little-endian: the initial seed (u64), ``left`` and ``seeded`` (i32),
    ``next`` (u64), the 624 words of mt19937 (each a u64), three unused doubles of which
    the second holds the cached double normal, its validity (i32, padded to 8), the
    cached float normal (f32) and its validity (one byte, padded). mt19937 twists when
    ``left`` drops to 0: NumPy's ``pos`` (the next word's index) is ``625 - left``.
    """
    state = gen._bitgen.state["state"]
    pos = int(state["pos"])
    fresh = pos == 624 and np.array_equal(state["key"], _seeded_key(gen._seed))
    raw = np.zeros(_STATE_BYTES, np.uint8)
    header = np.array([gen._seed, (1 << 32) + 625 - pos, 0 if fresh else pos], np.uint64)
    raw[:24] = header.view(np.uint8)
    raw[_KEY] = state["key"].astype(np.uint64).view(np.uint8)
    if gen._normal_cache is not None:
        raw[5024:5032] = np.array([gen._normal_cache], np.float64).view(np.uint8)
        raw[5040] = 1
    return raw


def _seeded_key(seed):
    bitgen = np.random.MT19937()
    bitgen._legacy_seeding(seed & 0xFFFFFFFF)
    return bitgen.state["state"]["key"]


def _unpack_state(gen, raw):
    """Set ``gen`` from the reference's layout (Note [the reference's CPU generator
    state])."""
    words = np.frombuffer(raw, np.uint8)
    seed, left = int(words[:8].view(np.uint64)[0]), int(words[8:12].view(np.int32)[0])
    if not 1 <= left <= 624:
        raise RuntimeError("The input RNG state has an invalid 'left' value")
    gen.manual_seed(seed)
    key = words[_KEY].view(np.uint64).astype(np.uint32)
    gen._bitgen.state = {"bit_generator": "MT19937",
                         "state": {"key": key, "pos": 625 - left}}
    if words[5040]:
        gen._normal_cache = float(words[5024:5032].view(np.float64)[0])


default_generator = Generator()


def numpy_rng(generator=None):
    """The NumPy Generator behind ``generator`` (the default one when None)."""
    if _LEVELS.stack or _TRANSFORMS.randomness:    # vmap or jacfwd: ``randomness`` decides
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
    if _LEVELS.stack or _TRANSFORMS.randomness:    # vmap or jacfwd: ``randomness`` decides
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
    dtype = input._data.dtype
    arr = draw_like(input._data, "uniform", low, high, generator,
                    lambda gen, shape: _stream.uniform(gen, shape, dtype, low, high))
    return _constant(arr.astype(dtype, copy=False))


def rrelu_slopes(input, lower, upper, generator=None):
    """rrelu's slopes shaped like ``input``: on the host, like the reference, one float64
    uniform in [lower, upper) per element <= 0 in memory order (1 elsewhere); on a
    device, uniforms for every element.

    >>> import chainrule as cr
    >>> _random = cr._random
    >>> _random.rrelu_slopes(cr.tensor([1., -1.]), 0.25, 0.25).tolist()
    [1.0, 0.25]
    """
    meta = drawn_on_meta(input, input._data.shape, input._data.dtype)
    if meta is not None:
        return _constant(meta)
    dtype = input._data.dtype
    low, high = (float(np.asarray(v, dtype)) for v in (lower, upper))   # bounds in the dtype

    def host_draw(gen, shape):
        negative = input._data <= 0
        slopes = np.ones(shape)
        slopes[negative] = _stream.uniform(gen, (int(negative.sum()),), np.float64, low, high)
        return slopes
    arr = draw_like(input._data, "uniform", lower, upper, generator, host_draw)
    return _constant(arr.astype(dtype, copy=False))


def bernoulli_mask(shape, keep, dtype, generator=None, like=None):
    """An array of 1s (probability ``keep``) and 0s in ``dtype``, on the device of the
    array ``like`` (the host when None)."""
    drawn = device_draw("bernoulli", shape, dtype, like, generator, keep, 0.0)
    if drawn is not None:
        return drawn
    return _stream.bernoulli(cpu_generator(generator), keep, shape).astype(dtype)


def draw_like(like, kind, arg0, arg1, generator, host_draw, shape=None, dtype=np.float64):
    """Samples shaped like the array ``like`` (or ``shape``) where it lives: the device's
    kernels (``kind``, ``arg0``, ``arg1``), or ``host_draw(cpu_generator, shape)``."""
    shape = like.shape if shape is None else shape
    drawn = device_draw(kind, shape, dtype, like, generator, arg0, arg1)
    return host_draw(cpu_generator(generator), shape) if drawn is None else drawn


def cpu_generator(generator=None):
    """The chainrule Generator to draw from on the host (the default one when None)."""
    if _LEVELS.stack or _TRANSFORMS.randomness:    # vmap or jacfwd: ``randomness`` decides
        from ._vmap import check_random
        check_random()
    if generator is None:
        return default_generator
    if isinstance(generator, Generator):
        return generator
    raise TypeError(f"generator must be a chainrule.Generator, not "
                    f"{type(generator).__name__}")


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
    return _constant(_stream.randperm(cpu_generator(generator), n).astype(d.np), requires_grad)


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
    if like is not None:
        z = draw_like(like, "normal", 0.0, 1.0, generator, None, shape)
        return _constant((m + s * z).astype(dt), requires_grad)
    return _constant(_host_normal(m, s, shape, dt, cpu_generator(generator)), requires_grad)


def _host_normal(mean, std, shape, dtype, gen):
    """The reference's order: normal(0, std) plus a mean tensor when std is a number,
    else standard normals times std plus mean, in ``dtype``."""
    m, s = np.asarray(mean, dtype), np.asarray(std, dtype)
    if np.ndim(mean) == 0 and np.ndim(std) == 0 and not isinstance(mean, np.ndarray):
        return _stream.normal(gen, shape, dtype, float(mean), float(std))
    if not isinstance(std, np.ndarray):
        return _stream.normal(gen, shape, dtype, 0.0, float(std)) + m
    return _stream.normal(gen, shape, dtype) * s + m


def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (or ``p``, when given), else 0, in input's dtype.

    >>> import chainrule as cr
    >>> cr.bernoulli(cr.tensor([0., 1.])).tolist()
    [0.0, 1.0]
    """
    probs = _probabilities(input._data if p is None else p, input._data.shape)
    if np.size(probs) and (np.min(probs) < 0 or np.max(probs) > 1):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    shape = input._data.shape
    if type(input._data) is not np.ndarray:
        draws = draw_like(input._data, "uniform", 0.0, 1.0, generator, None) < probs
    else:
        draws = _stream.bernoulli(cpu_generator(generator), probs, shape)
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
    weights = input._data.reshape(rows.shape)
    weights = weights if weights.dtype.kind == "f" else rows
    picks = _stream.multinomial_rows(cpu_generator(generator), weights, num_samples, replacement)
    out = picks.reshape(w.shape[:-1] + (num_samples,))
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
                    lambda gen, shape: _stream.integers(gen, shape, low, high, d),
                    dtype=np.int64).astype(d)
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
    dtype = self._data.dtype
    return fill_random(self, draw_like(
        self._data, "uniform", from_, to, generator,
        lambda gen, shape: _stream.uniform(gen, shape, dtype, from_, to)))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples.

    >>> import chainrule as cr
    >>> cr.zeros(2).normal_(5.0, 0.0).tolist()
    [5.0, 5.0]
    """
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return fill_random(self, _normal_like(self, mean, std, generator))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability ``p``, a number or tensor) and 0.

    >>> import chainrule as cr
    >>> cr.zeros(2).bernoulli_(1.0).tolist()
    [1.0, 1.0]
    """
    probs = _probabilities(p, self._data.shape)
    if np.size(probs) and (np.min(probs) < 0 or np.max(probs) > 1):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if type(self._data) is not np.ndarray:
        return fill_random(self, _uniform(self, generator) < probs)
    return fill_random(self, _stream.bernoulli(cpu_generator(generator), probs,
                                               self._data.shape))


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
    return fill_random(self, _stream.exponential(cpu_generator(generator), self._data.shape,
                                                 lambd))


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
    unbounded = to is None and type(self._data) is np.ndarray
    if to is None:
        to = _random_bound(self._data.dtype)
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={from_} >= to={to}")
    dtype = self._data.dtype
    if unbounded:
        return fill_random(self, _stream.full_range(cpu_generator(generator),
                                                    self._data.shape, dtype))
    return fill_random(self, draw_like(
        self._data, "randint", from_, to, generator,
        lambda gen, shape: _stream.integers(gen, shape, from_, to, dtype), dtype=np.int64))


def _random_bound(dtype):
    if dtype.kind == "b":
        return 2
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).max) + 1
    import ml_dtypes                   # its finfo knows bfloat16 too
    return (1 << (ml_dtypes.finfo(dtype).nmant + 1)) + 1


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy samples.

    >>> import chainrule as cr
    >>> cr.zeros(2).cauchy_(1.0, 0.0).tolist()
    [1.0, 1.0]
    """
    draws = np.tan(np.pi * (_uniform(self, generator) - 0.5))     # tan(pi (u - 1/2))
    return fill_random(self, median + sigma * draws)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with samples whose logarithm is normal(mean, std).

    >>> import chainrule as cr
    >>> bool((cr.zeros(3).log_normal_() > 0).all())
    True
    """
    if type(self._data) is not np.ndarray:
        return fill_random(self, np.exp(_normal_like(self, mean, std, generator)))
    values = _stream.normal(cpu_generator(generator), self._data.shape, np.float64, mean, std,
                            contiguous=False)     # one by one, like the reference
    return fill_random(self, np.exp(values))


def geometric_(self, p, *, generator=None):
    """Fill with geometric samples (trials until the first success, from 1).

    >>> import chainrule as cr
    >>> bool((cr.zeros(3).geometric_(0.5) >= 1).all())
    True
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if type(self._data) is not np.ndarray:          # trials to the first success
        trials = np.ceil(np.log1p(-_uniform(self, generator)) / np.log1p(-p))
        return fill_random(self, np.maximum(trials, 1.0))
    return fill_random(self, np.ceil(np.log(_uniform(self, generator)) / np.log1p(-p)))


def _uniform(t, generator):
    """Uniform samples in [0, 1) shaped like ``t``, where it lives."""
    return draw_like(t._data, "uniform", 0.0, 1.0, generator,
                     lambda gen, shape: _stream.uniform(gen, shape, np.float64))


def _normal_like(t, mean, std, generator):
    """Normal samples shaped like ``t`` in its dtype, where it lives (on the host one by
    one when ``t`` is not contiguous, like the reference)."""
    dtype, contiguous = t._data.dtype, t._data.flags.c_contiguous
    return draw_like(t._data, "normal", mean, std, generator, lambda gen, shape: _stream.normal(
        gen, shape, dtype, mean, std, contiguous))


def _method_bernoulli(self, p=None, *, generator=None):
    """``chainrule.bernoulli(self)``, or with the probability ``p`` for every element.

    >>> import chainrule as cr
    >>> cr.zeros(2).bernoulli(1.0).tolist()
    [1.0, 1.0]
    """
    return bernoulli(self, p, generator=generator)


def _writes_out(fn):
    """``fn`` whose ``out=`` tensor receives the draws (the reference's out= forms)."""
    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        from ._factories import written_out
        result = fn(*args, **kwargs)
        return result if out is None else written_out(out, result, fn.__name__)
    return wrapper


FUNCTIONS = {"randperm": _writes_out(randperm), "normal": _writes_out(normal),
             "bernoulli": _writes_out(bernoulli), "multinomial": multinomial,
             "poisson": poisson, "randint_like": randint_like}
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
