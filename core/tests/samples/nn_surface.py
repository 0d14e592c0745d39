"""Samples for the torch.nn surface built as compositions of table ops
(conv_transpose3d, grid_sample, affine_grid, lp_pool3d, max_unpool3d, fractional max
pooling, ...): each names the table op it mostly exercises, so gradcheck,
gradgradcheck and the torch-parity tier run on the composite through that op."""
from .nn import _both


def _conv_transpose3d_samples():
    return [
        _both("conv2d_input_grad", "conv_transpose3d", ((1, 2, 2, 3, 2), (2, 3, 2, 2, 2), (3,)),
              {"stride": 2, "padding": (1, 0, 1), "output_padding": (1, 1, 0)}),
        _both("conv2d_input_grad", "conv_transpose3d", ((4, 2, 2, 2), (4, 1, 3, 2, 2)),
              {"groups": 2, "dilation": (2, 1, 1), "stride": (1, 2, 1)}),
    ]


SAMPLES = _conv_transpose3d_samples()
