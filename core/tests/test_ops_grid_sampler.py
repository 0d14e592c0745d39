"""The grid_sampler_2d / grid_sampler_3d table ops (Note [grid sampling as weighted taps])."""
import itertools

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import grid_sampler as sampler_op

MODES = list(itertools.product(("bilinear", "nearest", "bicubic"),
                               ("zeros", "border", "reflection")))


@pytest.mark.parametrize("dims, node", [(2, "GridSampler2DBackward0"),
                                        (3, "GridSampler3DBackward0")])
def test_one_node_listing_the_input_and_the_grid(dims, node):
    x = cr.ones((1, 1) + (2,) * dims, requires_grad=True)
    grid = cr.zeros((1,) + (3,) * dims + (dims,), requires_grad=True)
    y = F.grid_sample(x, grid, align_corners=False)
    assert type(y.grad_fn).__name__ == node
    assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    y = cr.grid_sampler(x.detach(), grid, 0, 0, False)
    assert [type(f).__name__ if f else None for f, _ in y.grad_fn.next_functions] == \
        [None, "AccumulateGrad"]


def test_borders_count_as_outside_for_the_grid_gradient():
    # border padding clamps: at the edge pixel's centre and beyond it the position no
    # longer moves with the grid (the reference's convention at the border itself)
    image = cr.tensor([[[[0.0, 1.0, 4.0]]]], dtype=cr.float64)
    grid = cr.tensor([[[[1.0, 0.0], [0.5, 0.0], [1.5, 0.0]]]], dtype=cr.float64,
                     requires_grad=True)
    y = F.grid_sample(image, grid, padding_mode="border", align_corners=True)
    (g,) = cr.autograd.grad(y.sum(), grid)
    assert g[0, 0, :, 0].tolist() == [0.0, 3.0, 0.0]


def test_reflection_folds_back_with_a_negative_slope():
    image = cr.tensor([[[[0.0, 1.0, 4.0]]]], dtype=cr.float64)
    grid = cr.tensor([[[[1.5, 0.0]]]], dtype=cr.float64, requires_grad=True)  # x = 2.5 -> 1.5
    y = F.grid_sample(image, grid, padding_mode="reflection", align_corners=True)
    (g,) = cr.autograd.grad(y.sum(), grid)
    assert y.item() == 2.5 and g[0, 0, 0, 0].item() == -3.0


def test_spreading_matches_adding_at_each_tap(rng):
    index = rng.integers(0, 5, (2, 2, 4))                          # (taps, N, points)
    rows, weights = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 2, 4))
    expected = np.zeros((2, 3, 5))
    for w, taps in zip(weights, index):
        for n in range(2):
            np.add.at(expected[n], (slice(None), taps[n]), rows[n] * w[n])
    got = sampler_op._spread(rows, weights, index, 5)
    np.testing.assert_allclose(got, expected, atol=1e-14)


@pytest.mark.parametrize("mode, padding_mode", MODES)
def test_double_backward_works_where_the_reference_has_none(mode, padding_mode, rng):
    x = cr.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = cr.tensor(rng.uniform(-1.2, 1.2, (1, 2, 2, 2)), requires_grad=True)
    fn = lambda a, g: F.grid_sample(a, g, mode, padding_mode, False)  # noqa: E731
    assert cr.autograd.gradgradcheck(fn, (x, grid))


def test_a_batch_runs_as_more_samples_under_vmap(rng):
    x = cr.tensor(rng.standard_normal((3, 2, 2, 4, 4)))
    grid = cr.tensor(rng.uniform(-1, 1, (2, 3, 3, 2)))
    got = cr.vmap(lambda a: F.grid_sample(a, grid, align_corners=True))(x)
    expected = cr.stack([F.grid_sample(a, grid, align_corners=True) for a in x])
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-14)
