"""The upsample table ops (Note [separable upsampling]): node names, the reference's
index arithmetic and shortcuts, the adjoint, and the size errors."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import upsample as up


@pytest.mark.parametrize("mode,shape,node", [
    ("nearest", (1, 1, 4), "UpsampleNearest1DBackward0"),
    ("nearest", (1, 1, 2, 4), "UpsampleNearest2DBackward0"),
    ("nearest", (1, 1, 2, 2, 4), "UpsampleNearest3DBackward0"),
    ("nearest-exact", (1, 1, 2, 4), "UpsampleNearestExact2DBackward0"),
    ("linear", (1, 1, 4), "UpsampleLinear1DBackward0"),
    ("bilinear", (1, 1, 2, 4), "UpsampleBilinear2DBackward0"),
    ("bicubic", (1, 1, 2, 4), "UpsampleBicubic2DBackward0"),
    ("trilinear", (1, 1, 2, 2, 4), "UpsampleTrilinear3DBackward0"),
])
def test_each_mode_records_its_own_node(mode, shape, node):
    y = F.interpolate(cr.ones(*shape, requires_grad=True), scale_factor=2, mode=mode)
    assert type(y.grad_fn).__name__ == node


def test_nearest_index_is_computed_in_float32():
    # 10 -> 3, nearest-exact: (1 + 0.5) * float32(10/3) rounds to 5.0 (4.99.. in float64)
    assert up._nearest_index(10, 3, None, True, False).tolist() == [1, 5, 8]


def test_nearest_shortcuts_follow_the_reference():
    x = cr.arange(7.).reshape(1, 1, 7)
    # the 1-D forward has no same-size shortcut: floor(o / 1.1)
    assert F.interpolate(x, scale_factor=1.1).flatten().tolist() == [0, 0, 1, 2, 3, 4, 5]
    # the 2-D forward copies along a dim whose size is unchanged
    x2 = cr.arange(7.).reshape(1, 1, 7, 1)
    assert F.interpolate(x2, scale_factor=1.1).flatten().tolist() == list(range(7))
    # every nearest backward copies too
    leaf = cr.zeros(1, 1, 7, requires_grad=True)
    F.interpolate(leaf, scale_factor=1.1).sum().backward()
    assert leaf.grad.flatten().tolist() == [1.0] * 7


def test_backward_is_the_adjoint(rng):
    x = cr.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    y = F.interpolate(x, size=(5, 7), mode="bicubic", align_corners=True)
    g = cr.tensor(rng.standard_normal(tuple(y.shape)))
    (y * g).sum().backward()
    np.testing.assert_allclose((x.grad * x).sum().item(), (y * g).sum().item())


@pytest.mark.parametrize("shape,kwargs,message", [
    ((1, 1, 3), {"scale_factor": 0.3},
     r"but got input \(W: 3\) and output \(W: 0\)"),
    ((1, 1, 3, 4), {"size": (0, 2)}, r"but got input \(H: 3, W: 4\) output \(H: 0, W: 2\)"),
    ((1, 1, 5, 3, 4), {"scale_factor": 0.3, "mode": "trilinear"},
     r"but got input \(D: 5, H: 3, W: 4\) output \(D: 1, H: 0, W: 1\)"),
])
def test_empty_output_sizes_raise_the_reference_error(shape, kwargs, message):
    with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0, "
                                           + message):
        F.interpolate(cr.zeros(*shape), **kwargs)
