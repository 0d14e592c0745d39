"""Parity tier for the CPU random streams against PyTorch (skips without torch): the
same seed draws the same numbers (Note [the reference's CPU stream]), bit for bit
except float32 normal blocks (the reference's SIMD log/sin/cos: a few ulp), in the same
order across calls, and the generator state has the reference's bytes.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402


def both(program, seed=0):
    """``program(lib)`` under torch and chainrule after ``manual_seed(seed)``."""
    torch.manual_seed(seed)
    theirs = program(torch)
    cr.manual_seed(seed)
    ours = program(cr)
    return theirs, ours


def as_np(values):
    return [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v) for v in values]


def assert_same(program, seed=0, ulp=0):
    theirs, ours = both(program, seed)
    for t, o in zip(as_np(theirs), as_np(ours)):
        assert t.dtype == o.dtype and t.shape == o.shape
        if ulp:
            np.testing.assert_array_max_ulp(o, t, maxulp=ulp)
        else:
            np.testing.assert_array_equal(o, t)


EXACT = {
    "rand": lambda L: [L.rand(5), L.rand(3, 4, dtype=L.float64), L.rand(40)],
    "uniform_": lambda L: [L.empty(7).uniform_(-2, 3), L.empty(20, dtype=L.float64).uniform_(1, 5)],
    "randn_small": lambda L: [L.randn(3, dtype=L.float64), L.randn(2), L.randn(1, dtype=L.float64)],
    "randn_blocks64": lambda L: [L.randn(16, dtype=L.float64), L.randn(37, dtype=L.float64),
                                 L.empty(50, dtype=L.float64).normal_(2.0, 3.0)],
    "randn_complex": lambda L: [L.randn(5, dtype=L.complex128)],
    "randint": lambda L: [L.randint(0, 10, (20,)), L.randint(-5, 5, (3, 3)),
                          L.randint(0, 2 ** 40, (4,)), L.randint(3, (6,), dtype=L.int32)],
    "random_": lambda L: [L.empty(5).random_(), L.empty(5, dtype=L.float64).random_(),
                          L.empty(5, dtype=L.int64).random_(), L.empty(6).random_(3, 9),
                          L.empty(4, dtype=L.uint8).random_()],
    "randperm": lambda L: [L.randperm(1), L.randperm(10), L.randperm(300),
                           L.randperm(5, dtype=L.float32)],
    "bernoulli": lambda L: [L.empty(30).bernoulli_(0.3), L.bernoulli(L.full((25,), 0.6)),
                            L.bernoulli(L.full((9,), 0.6, dtype=L.float64)),
                            L.empty(8).bernoulli_(L.full((8,), 0.5)),
                            L.bernoulli(L.ones(5), 0.2)],
    "dropout": lambda L: [L.nn.functional.dropout(L.ones(4, 30), 0.4),
                          L.nn.Dropout(0.25)(L.ones(100, dtype=L.float64))],
    "exponential_": lambda L: [L.empty(6, dtype=L.float64).exponential_(),
                               L.empty(20).exponential_(2.5)],
    "multinomial": lambda L: [L.multinomial(L.tensor([0.1, 0.2, 0.3, 0.4]), 2),
                              L.multinomial(L.tensor([[1., 2., 3.], [3., 0., 1.]]), 5, True),
                              L.multinomial(L.tensor([1., 5., 2., 2.], dtype=L.float64), 1),
                              L.multinomial(L.rand(3, 10), 4)],
    "normal_forms": lambda L: [L.normal(L.zeros(5, dtype=L.float64), 2.0),
                               L.normal(1.0, L.ones(4, dtype=L.float64)),
                               L.normal(L.zeros(20, dtype=L.float64),
                                        L.full((20,), 0.5, dtype=L.float64)),
                               L.normal(3.0, 2.0, size=(2, 3))],
    "like": lambda L: [L.rand_like(L.zeros(3, 2)), L.randn_like(L.zeros(4, dtype=L.float64)),
                       L.randint_like(L.zeros(5), 7)],
    "cauchy_geometric_lognormal": lambda L: [
        L.empty(5, dtype=L.float64).cauchy_(), L.empty(5, dtype=L.float64).geometric_(0.3),
        L.empty(5, dtype=L.float64).log_normal_()],
    "sequence": lambda L: [L.randn(3), L.rand(2), L.randint(0, 100, (4,)), L.randn(1),
                           L.randperm(6), L.rand(1, dtype=L.float64)],
    "generator": lambda L: [L.rand(3, generator=L.Generator().manual_seed(42)),
                            L.randn(20, dtype=L.float64, generator=L.Generator().manual_seed(7))],
    "init": lambda L: [L.nn.init.uniform_(L.empty(4, 5), -1, 1),
                       L.nn.init.normal_(L.empty(6, dtype=L.float64), 0, 0.1),
                       L.nn.init.kaiming_uniform_(L.empty(8, 3)),
                       L.nn.init.xavier_uniform_(L.empty(3, 7)),
                       L.nn.init.kaiming_normal_(L.empty(2, 3, dtype=L.float64))],
    "reduced_precision": lambda L: [L.rand(20, dtype=L.float16),
                                    L.empty(9, dtype=L.bfloat16).uniform_(-1, 1).float(),
                                    L.randn(5, dtype=L.float16)],
    "random_every_dtype": lambda L: [L.empty(7, dtype=getattr(L, d)).random_().double()
                                     for d in ("float16", "bfloat16", "float32", "int16",
                                               "int8", "int32", "bool")],
    "rrelu_sparse_randperm_large": lambda L: [
        L.nn.functional.rrelu(L.arange(-20., 5.) / 7, training=True),
        L.nn.init.sparse_(L.empty(6, 3, dtype=L.float64), 0.5), L.randperm(70000)],
    "linear_conv_init": lambda L: [p for m in (L.nn.Linear(5, 3), L.nn.Conv2d(2, 4, 3),
                                               L.nn.Linear(7, 2, dtype=L.float64))
                                   for p in m.parameters()],
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_same_numbers_bit_for_bit(name):
    assert_same(EXACT[name])


@pytest.mark.parametrize("seed", [0, 1, 12345, 2 ** 40 + 3, -7])
def test_seeds(seed):
    assert_same(EXACT["sequence"], seed)


def test_float32_normal_blocks_within_a_few_ulp():
    assert_same(lambda L: [L.randn(16), L.randn(1000), L.randn(37, 3),
                           L.empty(50).normal_(1.0, 0.5)], ulp=4)


def test_float32_init_through_normal_blocks():
    assert_same(lambda L: [L.nn.init.xavier_normal_(L.empty(10, 10)),
                           L.nn.init.trunc_normal_(L.empty(5, 4), std=0.02),
                           L.nn.Embedding(10, 4).weight], ulp=8)


def test_state_bytes_match():
    theirs, ours = both(lambda L: [L.get_rng_state(), L.randn(3, dtype=L.float64),
                                   L.get_rng_state(), L.rand(700), L.get_rng_state()], 3)
    for t, o in zip(as_np(theirs), as_np(ours)):
        np.testing.assert_array_equal(o, t)


def test_set_rng_state_from_the_reference():
    torch.manual_seed(9)
    torch.randn(5, dtype=torch.float64)
    state = torch.get_rng_state()
    cr.set_rng_state(cr.tensor(state.numpy()))
    np.testing.assert_array_equal(cr.randn(7, dtype=cr.float64).numpy(),
                                  torch.randn(7, dtype=torch.float64).numpy())


def test_fork_rng_restores_the_stream():
    def program(L):
        L.rand(2)
        with L.random.fork_rng():
            L.randn(5)
        return [L.rand(3), L.initial_seed()]
    assert_same(program, 4)


def test_a_large_float64_normal_draw_is_vectorized_within_an_ulp_and_keeps_the_stream():
    # past _cpu_stream.EXACT_LIMIT elements NumPy's log/cos/sin run (last-bit
    # differences allowed); the generator's position is torch's all the same
    from chainrule import _cpu_stream
    n = _cpu_stream.EXACT_LIMIT * 2 + 5
    torch.manual_seed(3)
    cr.manual_seed(3)
    a, b = cr.randn(n, dtype=cr.float64).numpy(), torch.randn(n, dtype=torch.float64).numpy()
    np.testing.assert_allclose(a, b, rtol=0, atol=4 * np.finfo(np.float64).eps * 8)
    assert cr.rand(4, dtype=cr.float64).tolist() == torch.rand(4, dtype=torch.float64).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2024])
def test_randperm_draws_the_references_permutation_for_every_size(seed):
    sizes = [0, 1, 2, 3, 15, 16, 17, 1000, 65537, 10 ** 6]
    assert_same(lambda L: [L.randperm(n) for n in sizes] + [L.rand(2)], seed)
