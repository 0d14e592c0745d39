"""affine_grid and grid_sample (nn/_grid.py): what the sampling means, its gradients
with respect to input and grid, its errors (torch parity: tests/test_parity_nn_surface.py
and the generated sample tests)."""
import itertools

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

IDENTITY_2D = cr.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=cr.float64)
IDENTITY_3D = cr.tensor([[[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]]], dtype=cr.float64)


@pytest.mark.parametrize("mode, padding_mode, align_corners", list(itertools.product(
    ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (True, False))))
def test_the_identity_grid_reproduces_the_image(mode, padding_mode, align_corners):
    x = cr.randn(2, 3, 4, 5, dtype=cr.float64)
    grid = F.affine_grid(IDENTITY_2D.expand(2, 2, 3), (2, 3, 4, 5), align_corners=align_corners)
    out = F.grid_sample(x, grid, mode, padding_mode, align_corners)
    np.testing.assert_allclose(out.numpy(), x.numpy(), atol=1e-12)


def test_the_identity_grid_reproduces_a_volume():
    x = cr.randn(1, 2, 3, 4, 2, dtype=cr.float64)
    grid = F.affine_grid(IDENTITY_3D, (1, 2, 3, 4, 2), align_corners=False)
    assert grid.shape == (1, 3, 4, 2, 3)
    np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=False).numpy(), x.numpy(),
                               atol=1e-12)


def test_bilinear_reads_between_pixels_and_zero_outside():
    image = cr.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    grid = cr.tensor([[[[0.0, 0.0], [1.0, -1.0], [3.0, 0.0]]]])
    assert F.grid_sample(image, grid, align_corners=True).tolist() == [[[[1.5, 1.0, 0.0]]]]
    assert F.grid_sample(image, grid, padding_mode="border", align_corners=True).tolist() == \
        [[[[1.5, 1.0, 2.0]]]]
    # reflection folds x = 3 back to x = -1 (the left column), between its rows
    assert F.grid_sample(image, grid, padding_mode="reflection",
                         align_corners=True).tolist() == [[[[1.5, 1.0, 1.0]]]]


@pytest.mark.parametrize("mode, padding_mode", [("bilinear", "zeros"), ("bilinear", "reflection"),
                                                ("bicubic", "border")])
def test_gradients_with_respect_to_input_and_grid(mode, padding_mode):
    rng = np.random.default_rng(3)
    x = cr.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = cr.tensor(rng.uniform(-1.2, 1.2, (1, 2, 3, 2)), requires_grad=True)
    fn = lambda a, g: F.grid_sample(a, g, mode, padding_mode, False)  # noqa: E731
    assert cr.autograd.gradcheck(fn, (x, grid))
    if mode == "bilinear":                      # bicubic's: in the generated sample tests
        assert cr.autograd.gradgradcheck(fn, (x, grid))


def test_nearest_gives_the_grid_a_zero_gradient():
    grid = cr.tensor([[[[0.1, 0.2]]]], dtype=cr.float64, requires_grad=True)
    out = F.grid_sample(cr.ones(1, 1, 2, 2, dtype=cr.float64), grid, "nearest",
                        align_corners=False)
    (g,) = cr.autograd.grad(out.sum(), grid)
    assert g.tolist() == [[[[0.0, 0.0]]]]


def test_affine_grid_gradient_and_translation():
    theta = cr.tensor([[[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]], dtype=cr.float64, requires_grad=True)
    grid = F.affine_grid(theta, (1, 1, 2, 2), align_corners=True)
    assert grid.tolist() == [[[[-0.5, -1.0], [1.5, -1.0]], [[-0.5, 1.0], [1.5, 1.0]]]]
    assert cr.autograd.gradcheck(lambda t: F.affine_grid(t, (1, 2, 3, 2), align_corners=False),
                                 (theta,))


def test_errors_and_the_align_corners_warning():
    x, grid = cr.ones(2, 3, 4, 5), cr.zeros(2, 3, 3, 2)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.grid_sample(x, grid)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or "
                                         "'bicubic', but got: 'area'"):
        F.grid_sample(x, grid, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or "
                                         "'reflection', but got: 'edge'"):
        F.grid_sample(x, grid, padding_mode="edge", align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid to have size 2 in last dimension"):
        F.grid_sample(x, cr.zeros(2, 3, 3, 3), align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        F.grid_sample(x, cr.zeros(1, 3, 3, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(cr.ones(1, 1, 2, 2, 2), cr.zeros(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape "
                                         "Nx2x3 for size"):
        F.affine_grid(cr.zeros(1, 3, 4), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(cr.zeros(1, 2, 3, dtype=cr.int64), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(cr.zeros(1, 2, 3), (1, 1, 2), align_corners=False)
