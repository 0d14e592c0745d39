"""_ops/composites.py: addcmul/addcdiv, bit shifts, cov/corrcoef, result_type/can_cast.
Composed from table ops, so gradcheck and gradgradcheck hold through them."""
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def leaf(*shape):
    return cr.tensor(RNG.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda a, b, c: cr.addcmul(a, b, c, value=0.5),
    lambda a, b, c: cr.addcdiv(a, b, c.exp(), value=-2),
    lambda a, b, c: cr.cov(cr.stack([a, b, c])),
    lambda a, b, c: cr.cov(cr.stack([a, b]), correction=0, aweights=c.exp()),
    lambda a, b, c: cr.corrcoef(cr.stack([a, b, c])),
])
def test_gradients(fn):
    inputs = (leaf(4), leaf(4), leaf(4))
    assert gradcheck(fn, inputs) and gradgradcheck(fn, inputs)


def test_addcmul_addcdiv_values_and_in_place():
    x = cr.ones(2, dtype=cr.float64)
    a, b = cr.tensor([1.0, 2.0], dtype=cr.float64), cr.tensor([4.0, 4.0], dtype=cr.float64)
    assert cr.addcmul(x, a, b, value=0.5).tolist() == [3.0, 5.0]
    assert x.clone().addcdiv_(a, b, value=2).tolist() == [1.5, 2.0]
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        cr.addcdiv(cr.ones(2, dtype=cr.int64), cr.ones(2, dtype=cr.int64),
                   cr.ones(2, dtype=cr.int64))


def test_shifts():
    assert (cr.tensor([1, 2]) << 2).tolist() == [4, 8]
    assert cr.bitwise_right_shift(cr.tensor([16, 9]), cr.tensor([2, 1])).tolist() == [4, 4]
    s = cr.tensor([5, 6])
    s <<= 1
    assert s.tolist() == [10, 12] and s._version == 1


def test_cov_matches_numpy():
    obs = RNG.standard_normal((3, 6))
    fw, aw = np.array([1, 2, 1, 1, 3, 1]), RNG.random(6)
    np.testing.assert_allclose(cr.cov(cr.tensor(obs)).numpy(), np.cov(obs))
    np.testing.assert_allclose(
        cr.cov(cr.tensor(obs), fweights=cr.tensor(fw), aweights=cr.tensor(aw)).numpy(),
        np.cov(obs, fweights=fw, aweights=aw))
    np.testing.assert_allclose(cr.corrcoef(cr.tensor(obs)).numpy(), np.corrcoef(obs))
    assert cr.cov(cr.tensor([1.0, 2.0, 4.0])).shape == ()
    with pytest.warns(RuntimeWarning, match="degrees of freedom is <= 0"):
        cr.cov(cr.tensor([[1.0]]))
    with pytest.raises(RuntimeError, match="fweights to have integral dtype"):
        cr.cov(cr.tensor(obs), fweights=cr.tensor(aw))


def test_result_type_and_can_cast():
    assert cr.result_type(cr.tensor([1], dtype=cr.int32), 1.0) == cr.float32
    assert cr.result_type(cr.tensor(1.0, dtype=cr.float64), cr.ones(2)) == cr.float32
    assert not cr.can_cast(cr.float32, cr.int32) and cr.can_cast(cr.int32, cr.float16)
    assert not cr.can_cast(cr.int64, cr.bool)


def test_addcmul_and_addcdiv_write_their_out_tensor():
    out = cr.full((3,), 7.)
    assert cr.addcmul(cr.ones(3), cr.ones(3), cr.ones(3), value=2, out=out) is out
    assert out.tolist() == [3., 3., 3.]
    assert cr.addcdiv(cr.ones(3), cr.ones(3), cr.full((3,), 2.), out=out) is out
    assert out.tolist() == [1.5, 1.5, 1.5]
