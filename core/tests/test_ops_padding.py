"""The reflection / replication padding table ops (Note [gathered padding])."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import padding


@pytest.mark.parametrize("mode,name", [("reflect", "Reflection"), ("replicate", "Replication")])
@pytest.mark.parametrize("shape,pad", [((1, 2, 5), (1, 2)), ((2, 4, 3), (1, 0, 2, 1)),
                                       ((1, 2, 3, 3, 4), (1, 1, 0, 2, 1, 0))])
def test_one_node_per_mode_and_padded_dims(mode, name, shape, pad):
    y = F.pad(cr.ones(*shape, requires_grad=True), pad, mode=mode)
    assert type(y.grad_fn).__name__ == f"{name}Pad{len(pad) // 2}DBackward0"


def test_source_index_mirrors_without_the_edge_or_repeats_it():
    assert padding.source_index("reflect", 3, 2, 2).tolist() == [2, 1, 0, 1, 2, 1, 0]
    assert padding.source_index("replicate", 3, 2, 1).tolist() == [0, 0, 0, 1, 2, 2]


def test_backward_adds_the_copies_back(rng):
    x = cr.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    y = F.pad(x, (2, 3), mode="reflect")
    g = cr.tensor(rng.standard_normal(tuple(y.shape)))
    (y * g).sum().backward()
    np.testing.assert_allclose((x.grad * x).sum().item(), (y * g).sum().item())


def test_reflect_padding_as_large_as_the_input_raises():
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the "
                                           r"corresponding input dimension, but got: padding "
                                           r"\(3, 0\) at dimension 2"):
        F.pad(cr.zeros(1, 2, 3), (3, 0), mode="reflect")
