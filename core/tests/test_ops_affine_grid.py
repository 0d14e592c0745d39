"""The affine_grid_generator table op (Note [affine grids are linear in theta])."""
import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._ops import affine_grid


def test_one_node_over_theta():
    theta = cr.zeros(2, 2, 3, requires_grad=True)
    grid = F.affine_grid(theta, (2, 1, 3, 4), align_corners=False)
    assert type(grid.grad_fn).__name__ == "AffineGridGeneratorBackward0"
    assert [type(f).__name__ for f, _ in grid.grad_fn.next_functions] == ["AccumulateGrad"]


def test_base_points_are_pixel_centres_or_corners():
    base = affine_grid._base((1, 1, 2, 3), False, np.dtype(np.float64))
    assert base[:, 0].tolist() == [-2 / 3, 0.0, 2 / 3] * 2
    assert affine_grid._base((1, 1, 1, 2), True, np.dtype(np.float64)).tolist() == \
        [[-1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]


def test_gradient_is_the_base_transposed_times_the_grid_gradient(rng):
    theta = cr.tensor(rng.standard_normal((1, 3, 4)), requires_grad=True)
    grid = F.affine_grid(theta, (1, 1, 2, 3, 2), align_corners=True)
    g = cr.tensor(rng.standard_normal(tuple(grid.shape)))
    grid.backward(g)
    base = affine_grid._base((1, 1, 2, 3, 2), True, np.dtype(np.float64))
    np.testing.assert_allclose(theta.grad.numpy()[0], (base.T @ g.numpy().reshape(-1, 3)).T)
