"""The reference's CPU streams (chainrule/_cpu_stream.py)."""
import numpy as np
import pytest

from chainrule import _cpu_stream


def _swaps_one_by_one(z, n):
    perm = list(range(n))
    for i, j in enumerate(z.tolist()):
        perm[i], perm[j] = perm[j], perm[i]
    return perm


@pytest.mark.parametrize("n", [2, 3, 4, 7, 16, 100, 5000])
def test_fisher_yates_without_a_loop_makes_the_swaps_permutation(n):
    rng = np.random.default_rng(n)
    steps = np.arange(n - 1)
    for z in (steps + rng.integers(0, 2 ** 32, n - 1) % (n - steps),     # random draws
              steps.copy(), np.full(n - 1, n - 1), steps + (steps < n - 2)):  # edge cases
        assert _cpu_stream._fisher_yates(z.astype(np.int64), n).tolist() == \
            _swaps_one_by_one(z, n)


def test_randperm_of_a_million_is_a_permutation():
    gen = np.random.Generator(np.random.MT19937(0))

    class Gen:
        _bitgen = gen.bit_generator
    perm = _cpu_stream.randperm(Gen, 10 ** 6)
    assert perm.dtype == np.int64 and np.array_equal(np.sort(perm), np.arange(10 ** 6))
