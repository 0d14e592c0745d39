"""_factories.py: the out= forms of the factories."""
import chainrule as cr


def test_factories_write_their_out_tensor_in_its_dtype():
    out = cr.full((2,), 7., dtype=cr.float64)
    assert cr.zeros(3, out=out) is out and out.tolist() == [0., 0., 0.]
    assert out.dtype is cr.float64
    assert cr.ones(2, out=out) is out and out.tolist() == [1., 1.]
    assert cr.logspace(0, 2, 3, out=out) is out and out.tolist() == [1., 10., 100.]
