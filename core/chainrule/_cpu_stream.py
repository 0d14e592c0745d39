"""The reference's CPU random streams: how its samplers turn the 32-bit outputs of the
generator's mt19937 engine into numbers (Note [the reference's CPU stream]).

Note [the reference's CPU stream]
    A CPU Generator is mt19937 seeded by init_genrand with the seed's low 32 bits
    (NumPy's ``MT19937`` with legacy seeding is the same engine; ``random_raw`` gives its
    outputs). The reference draws "random" (one 32-bit output) or "random64" (two, the
    first one the high word) and transforms them one element after another, in memory
    order:
    - uniform in [from, to): float64 from the low 53 bits of a random64, every other
      dtype from the low 24 bits of a random (``x * 2**-digits * (to - from) + from``,
      one rounding, in the dtype; half/bfloat16 in float32, then rounded);
    - normal: a tensor of 16+ elements is filled with uniforms, transformed by
      Box-Muller in blocks of 16 (``u1 = 1 - d[j]``, ``u2 = d[j + 8]``), and when the size
      is not a multiple of 16 the last 16 are drawn again and transformed; a smaller one
      draws each element from a pair of float64 uniforms (``r = sqrt(-2 log1p(-u2))``,
      ``theta = 2 pi u1``), returns ``r cos theta`` and keeps ``r sin theta`` for the next
      element (the generator's normal cache, which seeding clears);
    - bernoulli(p): float64 uniform < p (a float32 p tensor: float32 uniforms);
      exponential: ``-log1p(-u) / lambda`` of float64 uniforms;
    - integers: ``bits % range + low``, random64 when the range is 2**32 or more;
    - randperm: Fisher-Yates, swapping ``i`` with ``i + random % (n - i)``.
    Float64 transcendental functions are the C library's (``math``, element by element:
    NumPy's SIMD ones differ in the last bit now and then), as the reference's scalar
    code calls them, up to EXACT_LIMIT elements (NumPy's above: speed first there); its float32 normal blocks are vectorized (SIMD log/sin/cos), which
    this emulates with correctly rounded float32 functions (within a few ulp). Every
    ``a * b + c`` of the reference's kernels is fused by its compiler: ``fma``.
"""
import contextlib
import math

import numpy as np

_MASK53 = np.uint64((1 << 53) - 1)


# Note [one draw for a batch]
#     vmap(randomness="different") runs a function that draws random numbers once per
#     entry (Note [batched tensors] in _batched.py), but the reference's batching rules
#     draw once for the whole batch, shaped (batch, *shape): a normal fill of B * n
#     elements is not B fills of n (the blocks of 16), and draws of several ops come in
#     the ops' order, not the entries'. While REPLAY holds a BatchDraws, each draw of
#     entry 0 is made for every entry and the next entries take their slice, in order.
REPLAY = [None]


class BatchDraws:
    """The draws of the first entry, made for the whole batch (Note [one draw for a
    batch])."""

    def __init__(self, size):
        self.size, self.entry, self.drawn, self.next = size, 0, [], 0

    def start(self, entry):
        self.entry, self.next = entry, 0

    def take(self, draw, shape):
        shape = tuple(shape)
        if self.entry == 0:
            self.drawn.append(draw((self.size,) + shape))
        k, self.next = self.next, self.next + 1
        if k >= len(self.drawn) or self.drawn[k].shape[1:] != shape:
            return draw(shape)          # the entries drew differently: their own draw
        return self.drawn[k][self.entry]


class SharedDraws(BatchDraws):
    """The draws of the first entry, taken again by every next entry (a jacfwd's
    randomness="same": Note [randomness of jacfwd] in _vmap.py)."""

    def take(self, draw, shape):
        if self.entry == 0:
            self.drawn.append(draw(tuple(shape)))
        k, self.next = self.next, self.next + 1
        if k >= len(self.drawn) or self.drawn[k].shape != tuple(shape):
            return draw(shape)
        return self.drawn[k].copy()     # each entry may write into its own


@contextlib.contextmanager
def one_draw_for(size, shared=False):
    """Within: draws are made for ``size`` entries (the same one for all of them when
    ``shared``); ``start(i)`` before entry ``i``'s work (Note [one draw for a batch])."""
    draws, outer = (SharedDraws if shared else BatchDraws)(size), REPLAY[0]
    REPLAY[0] = draws
    try:
        yield draws
    finally:
        REPLAY[0] = outer


def _replayed(draw, shape):
    """``draw(shape)``, or its slice of one draw for the batch (Note [one draw for a
    batch])."""
    replay = REPLAY[0]
    return draw(shape) if replay is None else replay.take(draw, shape)


def bits32(gen, n):
    """``n`` 32-bit outputs of the engine (as uint64)."""
    return gen._bitgen.random_raw(n).astype(np.uint64) if n else np.zeros(0, np.uint64)


def bits64(gen, n):
    """``n`` random64 draws: two outputs each, the first one the high word."""
    raw = bits32(gen, 2 * n)
    return (raw[0::2] << np.uint64(32)) | raw[1::2]


def unit_uniform(gen, n, dtype):
    """``n`` uniforms in [0, 1) of ``dtype`` (float32 for half/bfloat16)."""
    if dtype == np.float64:
        return (bits64(gen, n) & _MASK53).astype(np.float64) * 2.0 ** -53
    mask = np.uint64((1 << 24) - 1)
    return (bits32(gen, n) & mask).astype(np.float32) * np.float32(2.0 ** -24)


def _split(a):
    """Veltkamp's split of float64 ``a`` into two halves of 26 bits."""
    c = 134217729.0 * a
    high = c - (c - a)
    return high, a - high


def fma(a, b, c):
    """``a * b + c`` of float64 arrays rounded once (the reference's compiler fuses it),
    from error-free transformations of the product and the sum."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    product_error = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    back = s - p
    sum_error = (p - (s - back)) + (c - back)
    return s + (sum_error + product_error)


def uniform(gen, shape, dtype, low=0.0, high=1.0):
    """Uniform samples in [low, high) of ``dtype`` (a floating NumPy dtype):
    ``x * (high - low) + low`` with the bounds and their difference in the dtype (in
    float32 for half/bfloat16) and one rounding of the multiply-add."""
    return _replayed(lambda s: _uniform(gen, s, dtype, low, high), shape)


def _uniform(gen, shape, dtype, low, high):
    dtype = np.dtype(dtype)
    compute = np.float64 if dtype == np.float64 else np.float32
    low, high = (compute(np.asarray(v).astype(dtype)) for v in (low, high))
    x = unit_uniform(gen, int(np.prod(shape)), dtype).astype(np.float64)
    span = np.float64(high - low)
    if compute is np.float64:
        return fma(x, span, np.float64(low)).reshape(shape)
    return (x * span + np.float64(low)).astype(np.float32).astype(dtype).reshape(shape)


EXACT_LIMIT = 1 << 16     # elements drawn with the C library's functions, one by one


def _map(fn, arr):
    """``fn`` (a ``math`` function: the C library's) on each element of float64 ``arr``;
    above EXACT_LIMIT elements NumPy's (vectorized, a last-bit difference now and then:
    a million normals in milliseconds, not seconds; the stream's position is the same)."""
    if arr.size > EXACT_LIMIT:
        return getattr(np, fn.__name__)(arr)
    return np.fromiter(map(fn, arr.tolist()), np.float64, arr.size)


def _block_transform(d, mean, std):
    """Box-Muller on consecutive blocks of 16 float64 uniforms (the rows of ``d``)."""
    u1, u2 = 1.0 - d[:, :8], d[:, 8:]
    radius = np.sqrt(-2.0 * _map(math.log, u1.ravel())).reshape(u1.shape)
    theta = 2.0 * np.pi * u2
    cos = _map(math.cos, theta.ravel()).reshape(theta.shape)
    sin = _map(math.sin, theta.ravel()).reshape(theta.shape)
    std, mean = np.full_like(cos, std), np.full_like(cos, mean)
    return np.concatenate([fma(radius * cos, std, mean), fma(radius * sin, std, mean)], axis=1)


def _rounded(fn, x):
    """``fn`` (a NumPy ufunc) of float32 ``x`` in float64, rounded to float32: correctly
    rounded but for ties too close to see (NumPy's float64 functions are within an ulp
    or so of float64, far finer than float32's)."""
    return fn(x.astype(np.float64)).astype(np.float32)


def _block_transform32(d, mean, std):
    """The vectorized float32 Box-Muller: float32 arithmetic, a fused multiply-add."""
    u1, u2 = np.float32(1) - d[:, :8], d[:, 8:]
    radius = np.sqrt(np.float32(-2) * _rounded(np.log, u1))
    theta = np.float32(2 * np.pi) * u2
    n1, n2 = radius * _rounded(np.cos, theta), radius * _rounded(np.sin, theta)
    mean, std = np.float64(np.float32(mean)), np.float64(np.float32(std))
    fused = [(n.astype(np.float64) * std + mean).astype(np.float32) for n in (n1, n2)]
    return np.concatenate(fused, axis=1)


def _normal_blocks(gen, n, dtype, mean, std):
    """The reference's fill of 16+ elements (Note [the reference's CPU stream])."""
    block = _block_transform if dtype == np.float64 else _block_transform32
    values = unit_uniform(gen, n, dtype)
    out = values.copy()
    whole = n // 16 * 16
    out[:whole] = block(values[:whole].reshape(-1, 16), mean, std).ravel()
    if n % 16:
        tail = unit_uniform(gen, 16, dtype).reshape(1, 16)
        out[n - 16:] = block(tail, mean, std).ravel()
    return out


def normal_scalar(gen, mean, std):
    """One float64 normal sample, using and refilling the generator's cache."""
    cached, gen._normal_cache = gen._normal_cache, None
    if cached is not None:
        return cached * std + mean
    u1, u2 = unit_uniform(gen, 2, np.float64).tolist()
    radius = math.sqrt(-2.0 * math.log1p(-u2))
    theta = 2.0 * math.pi * u1
    gen._normal_cache = radius * math.sin(theta)
    return radius * math.cos(theta) * std + mean


def normal(gen, shape, dtype, mean=0.0, std=1.0, contiguous=True):
    """Normal samples of ``dtype``: blocks for 16+ contiguous elements, else one by one."""
    return _replayed(lambda s: _normal(gen, s, dtype, mean, std, contiguous), shape)


def _normal(gen, shape, dtype, mean, std, contiguous):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if n >= 16 and contiguous:
        return _normal_blocks(gen, n, dtype, mean, std).astype(dtype).reshape(shape)
    values = [normal_scalar(gen, mean, std) for _ in range(n)]
    return np.asarray(values, np.float64).astype(dtype).reshape(shape)


def integers(gen, shape, low, high, dtype):
    """Integers in [low, high): ``bits % range + low``; random64 for a range of 2**32 or
    more (for int64 and floating dtypes)."""
    return _replayed(lambda s: _integers(gen, s, low, high, dtype), shape)


def _integers(gen, shape, low, high, dtype):
    span, n = int(high) - int(low), int(np.prod(shape))
    wide = span >= 1 << 32 and np.dtype(dtype) in (np.int64, np.float64, np.float32)
    bits = bits64(gen, n) if wide else bits32(gen, n)
    values = (bits % np.uint64(span)).astype(np.int64) + np.int64(low)
    return values.reshape(shape)


def full_range(gen, shape, dtype):
    """``random_()`` without bounds: [0, 2**digits] for floating dtypes, [0, max] for
    integers, {0, 1} for bool (random64 for float64 and int64)."""
    dtype, n = np.dtype(dtype), int(np.prod(shape))
    bits = bits64(gen, n) if dtype in (np.float64, np.int64) else bits32(gen, n)
    if dtype.kind == "b":
        return (bits & np.uint64(1)).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        span = int(np.iinfo(dtype).max) + 1
    else:
        span = (1 << _significand_bits(dtype)) + 1
    return (bits % np.uint64(span)).astype(dtype).reshape(shape)


def _significand_bits(dtype):
    """The dtype's significand bits (ml_dtypes' finfo knows bfloat16's)."""
    import ml_dtypes
    return ml_dtypes.finfo(dtype).nmant + 1


def randperm(gen, n):
    """The reference's permutation of 0 .. n-1 (Fisher-Yates; random64 for huge n)."""
    if n < (2 ** 32 - 1) // 20:
        steps = np.arange(max(n - 1, 0), dtype=np.int64)
        draws = bits32(gen, steps.size).astype(np.int64)
        return _fisher_yates(steps + draws % (n - steps), n)
    perm = list(range(n))
    for i, bits in enumerate(bits64(gen, n).tolist()):     # the "inside-out" variant
        z = bits % (i + 1)
        perm[i], perm[z] = perm[z], i
    return np.asarray(perm, np.int64)


def _fisher_yates(z, n):
    """The permutation the swaps ``perm[i] <-> perm[z[i]]`` (i = 0, 1, ..., z[i] >= i)
    make of 0 .. n-1, without a loop over i. Note [Fisher-Yates without a loop]: step
    i moves V[i], the value then at position i, to z[i] and fixes position i for good.
    Position p's value before step i is V[k] for the last step k < i that wrote p
    (z[k] == p), else p itself: so V[i] = V[last writer of i] (a forest of pointers,
    resolved by doubling), and out[i] is the value at z[i] before step i."""
    if n < 2:
        return np.arange(n, dtype=np.int64)
    steps = np.arange(z.size, dtype=np.int64)
    order = np.argsort(z, kind="stable")             # the writes, by position then step
    sorted_z = z[order]
    value = _first_values(order, sorted_z, n)
    rank = np.empty_like(order)
    rank[order] = steps
    before = order[np.maximum(rank - 1, 0)]          # the write before i's, same position?
    writer = np.where((rank > 0) & (sorted_z[np.maximum(rank - 1, 0)] == z), before, -1)
    out = np.where(writer >= 0, value[np.maximum(writer, 0)], z)
    out = np.where(z == steps, value[:z.size], out)
    return np.append(out, value[n - 1:])


def _first_values(order, sorted_z, n):
    """V (Note [Fisher-Yates without a loop]): every write to position p comes from a
    step k <= p, so p's last writer before step p is its group's last write, or the one
    before that when the last is p's own (z[p] == p)."""
    every = np.arange(n, dtype=np.int64)
    counts = np.bincount(sorted_z, minlength=n)
    end = np.cumsum(counts) - 1                      # p's writes: order[start:end + 1]
    start = end + 1 - counts
    last = order[np.maximum(end, 0)]
    last = np.where(last == every, order[np.maximum(end - 1, 0)], last)
    has = end - (order[np.maximum(end, 0)] == every) >= start
    parent = np.where(has & (end >= 0), last, every)
    while True:                                      # pointer doubling to the roots
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return parent
        parent = grand


def bernoulli(gen, probs, shape):
    """1.0 where a uniform is below ``probs`` (a number, or an array broadcast to
    ``shape``): float64 uniforms, float32 ones for a float32 probability array."""
    is_float32 = isinstance(probs, np.ndarray) and probs.dtype == np.float32
    dtype = np.float32 if is_float32 else np.float64
    u = _replayed(lambda s: unit_uniform(gen, int(np.prod(s)), dtype).reshape(s), shape)
    return u < probs


def exponential(gen, shape, lambd):
    """Exponential samples (float64): ``-1 / lambda * log1p(-u)``."""
    u = unit_uniform(gen, int(np.prod(shape)), np.float64)
    return (-1.0 / lambd * _map(math.log1p, -u)).reshape(shape)


def multinomial_rows(gen, rows, num_samples, replacement):
    """The reference's categorical draws for the rows of ``rows`` (weights of the
    input's dtype): with replacement, a binary search of float64 uniforms in each row's
    normalized cumulative weights; without (or one sample), the largest ``w / q`` with
    ``q`` exponential (Gumbel-max), sorted."""
    if not replacement or num_samples == 1:
        q = exponential(gen, rows.shape, 1.0).astype(rows.dtype)
        keys = rows / q
        return np.argsort(-keys, axis=1, kind="stable")[:, :num_samples].astype(np.int64)
    picks = []
    for row in rows:
        cumulative = np.cumsum(row)
        total = cumulative[-1]
        cumulative = cumulative / total
        cumulative[-1] = 1
        u = unit_uniform(gen, num_samples, np.float64)
        picks.append(np.searchsorted(cumulative.astype(np.float64), u, side="left"))
    return np.asarray(picks, np.int64)
