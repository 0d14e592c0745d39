"""cr_random (Philox 4x32-10, Note [random streams]) against a NumPy transcription of
Philox checked on Random123's known-answer vector: the same (seed, offset) gives the
same numbers whatever out's layout."""
import numpy as np
import pytest

from kernel_abi import DTYPES, KernelError, call, op_codes, view
from kernel_cases import FLOATS, empty_out

RNG = op_codes("rng")
M32 = np.uint64(0xFFFFFFFF)


def philox(key, counters):
    """Philox 4x32-10 of counters (n, 4) uint32 words under key (2 words)."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        hi0, lo0, hi1, lo1 = p0 >> np.uint64(32), p0 & M32, p1 >> np.uint64(32), p1 & M32
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M32, (k1 + np.uint64(0xBB67AE85)) & M32
    return np.stack(c, axis=1)


def test_philox_transcription_matches_random123_known_answer():
    out = philox((0, 0), np.zeros((1, 4), np.uint64))
    assert [hex(int(v)) for v in out[0]] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]


def _words(seed, offset, n):
    e = np.arange(n, dtype=np.uint64)
    counters = np.stack([e & M32, e >> np.uint64(32), np.full(n, offset & 0xFFFFFFFF, np.uint64),
                         np.full(n, offset >> 32, np.uint64)], axis=1)
    return philox((seed & 0xFFFFFFFF, seed >> 32), counters).astype(np.float64)


def _unit(a, b):
    return (np.floor(a / 32) * 67108864.0 + np.floor(b / 64)) / 9007199254740992.0


SEED, OFFSET = 0x1234_5678_9ABC, 7


@pytest.mark.parametrize("shape", [(), (5,), (33, 7), (2, 0, 3), (3, 4, 5)])
def test_uniform_is_philox_in_any_layout(shape):
    n = int(np.prod(shape))
    w = _words(SEED, OFFSET, n)
    expected = (-2.0 + 5.0 * _unit(w[:, 0], w[:, 1])).reshape(shape)
    for transposed in (False, True):
        out = empty_out(shape, np.float64, transposed=transposed)
        call("random", RNG["uniform"], view(out), SEED, OFFSET, -2.0, 3.0)
        np.testing.assert_array_equal(out, expected)


def test_normal_bernoulli_randint_are_philox():
    n = 1000
    w = _words(SEED, OFFSET, n)
    rad = np.sqrt(-2 * np.log(1 - _unit(w[:, 0], w[:, 1])))
    normal = 1.5 + 2.0 * rad * np.cos(2 * np.pi * _unit(w[:, 2], w[:, 3]))
    out = np.empty(n)
    call("random", RNG["normal"], view(out), SEED, OFFSET, 1.5, 2.0)
    np.testing.assert_allclose(out, normal, rtol=1e-12, atol=1e-12)
    call("random", RNG["bernoulli"], view(out), SEED, OFFSET, 0.3, 0.0)
    np.testing.assert_array_equal(out, (_unit(w[:, 0], w[:, 1]) < 0.3).astype(np.float64))
    ints = np.empty(n, np.int64)
    call("random", RNG["randint"], view(ints), SEED, OFFSET, -5.0, 17.0)
    bits = (w[:, 0].astype(np.uint64) << np.uint64(32)) | w[:, 1].astype(np.uint64)
    np.testing.assert_array_equal(ints, -5 + (bits % np.uint64(22)).astype(np.int64))


@pytest.mark.parametrize("dt", FLOATS + [np.dtype(np.complex64), np.dtype(np.complex128)], ids=str)
def test_distributions_in_float_dtypes(dt):
    out = np.empty(20000, dt)
    call("random", RNG["normal"], view(out), 3, 0, 0.0, 1.0)
    values = out.astype(np.complex128 if dt.kind == "c" else np.float64)
    assert abs(values.mean()) < 0.03 and abs((np.abs(values) ** 2).mean() - 1) < 0.05
    call("random", RNG["uniform"], view(out), 3, 1, 2.0, 4.0)
    real = out.real.astype(np.float64) if dt.kind == "c" else out.astype(np.float64)
    assert real.min() >= 2.0 and real.max() <= 4.0 and abs(real.mean() - 3.0) < 0.03


@pytest.mark.parametrize("dt", [d for d in DTYPES if d.kind != "c"], ids=str)
def test_bernoulli_and_randint_in_every_dtype(dt):
    out = np.empty(5000, dt)
    call("random", RNG["bernoulli"], view(out), 9, 2, 0.25, 0.0)
    assert set(np.unique(out.astype(np.float64))) <= {0.0, 1.0}
    assert abs(out.astype(np.float64).mean() - 0.25) < 0.03
    if dt != np.bool_:
        call("random", RNG["randint"], view(out), 9, 3, 0.0, 2.0)
        assert set(np.unique(out.astype(np.float64))) == {0.0, 1.0}


def test_offsets_and_seeds_give_different_streams():
    a, b, c = np.empty(64), np.empty(64), np.empty(64)
    call("random", RNG["uniform"], view(a), 1, 0, 0.0, 1.0)
    call("random", RNG["uniform"], view(b), 1, 1, 0.0, 1.0)
    call("random", RNG["uniform"], view(c), 2, 0, 0.0, 1.0)
    assert not np.array_equal(a, b) and not np.array_equal(a, c)


def test_argument_errors():
    with pytest.raises(KernelError, match="expects 'from' to be less than 'to'"):
        call("random", RNG["randint"], view(np.empty(3, np.int64)), 0, 0, 3.0, 3.0)
    with pytest.raises(KernelError, match=r"p to be in \[0, 1\]"):
        call("random", RNG["bernoulli"], view(np.empty(3)), 0, 0, 1.5, 0.0)
