"""Samples for the torch.nn surface built as compositions of table ops
(conv_transpose3d, grid_sample, affine_grid, lp_pool3d, max_unpool3d, fractional max
pooling, ...): each names the table op it mostly exercises, so gradcheck,
gradgradcheck and the torch-parity tier run on the composite through that op."""
import chainrule as cr

from . import Sample
from .nn import TF, _both, _to_torch


def _conv_transpose3d_samples():
    return [
        _both("convolution", "conv_transpose3d", ((1, 2, 2, 3, 2), (2, 3, 2, 2, 2), (3,)),
              {"stride": 2, "padding": (1, 0, 1), "output_padding": (1, 1, 0)}),
        _both("convolution", "conv_transpose3d", ((4, 2, 2, 2), (4, 1, 3, 2, 2)),
              {"groups": 2, "dilation": (2, 1, 1), "stride": (1, 2, 1)}),
    ]


def _grid_sample(x_shape, grid_shape, **kwargs):
    note = "grid_sample " + " ".join(f"{v}" for v in kwargs.values())
    op = f"grid_sampler_{len(x_shape) - 2}d"
    return _both(op, "grid_sample", (x_shape, grid_shape), dict(kwargs), note=note,
                 domain=(-1.3, 1.3))


def _grid_samples():
    samples = [_grid_sample((2, 2, 3, 4), (2, 3, 2, 2), mode=m, padding_mode=p, align_corners=a)
               for m in ("bilinear", "bicubic") for p in ("zeros", "border", "reflection")
               for a in (True, False)]
    samples += [_grid_sample((1, 2, 2, 3, 3), (1, 2, 2, 1, 3), mode="bilinear", padding_mode=p,
                             align_corners=a) for p in ("zeros", "border", "reflection")
                for a in (True, False)]
    samples += [_grid_sample((2, 1, 3, 3), (2, 2, 2, 2), mode="nearest", padding_mode=p,
                             align_corners=False) for p in ("zeros", "border", "reflection")]
    samples.append(_grid_sample((1, 2, 2, 3, 2), (1, 1, 2, 2, 3), mode="nearest",
                                padding_mode="reflection", align_corners=True))
    samples += [_both("affine_grid_generator", "affine_grid", ((2, 2, 3),), {"size": (2, 1, 3, 4),
                                                             "align_corners": a}) for a in (True, False)]
    samples.append(_both("affine_grid_generator", "affine_grid", ((1, 3, 4),),
                         {"size": (1, 2, 2, 3, 2), "align_corners": False}))
    return samples


_UNPOOL3D_IDX = cr.tensor([[[[[0, 3], [9, 14]], [[17, 22], [40, 63]]]]], dtype=cr.int64)
_SAMPLES_2D = cr.tensor([[[0.3, 0.8], [0.6, 0.1]]], dtype=cr.float64)
_SAMPLES_3D = cr.tensor([[[0.3, 0.8, 0.5]]], dtype=cr.float64)


def _fractional(name, x_shape, draws, **kwargs):
    def call(module, x):
        return getattr(module, name)(x, _random_samples=draws if module is not TF
                                     else _to_torch(draws), **kwargs)
    return Sample("gather", lambda x: call(cr.nn.functional, x), x_shape,
                  torch_call=lambda x: call(TF, x), note=name)


def _pool_samples():
    return [
        _both("max_unpool3d", "max_unpool3d", ((1, 1, 2, 2, 2), _UNPOOL3D_IDX), {"kernel_size": 2}),
        _both("max_unpool3d", "max_unpool3d", ((1, 2, 2, 2), _UNPOOL3D_IDX[0] % 59),
              {"kernel_size": 2, "stride": (2, 1, 3), "output_size": (4, 3, 5)}),
        _both("avg_pool3d", "lp_pool3d", ((1, 2, 4, 2, 4),),
              {"norm_type": 2, "kernel_size": (2, 1, 2)}, domain=(0.5, 2.0)),
        _both("avg_pool3d", "lp_pool3d", ((2, 3, 3, 4),),
              {"norm_type": 1.5, "kernel_size": 2, "stride": 1}, domain=(0.5, 2.0)),
        _fractional("fractional_max_pool2d", (1, 2, 5, 6), _SAMPLES_2D, kernel_size=2,
                    output_size=(3, 4)),
        _fractional("fractional_max_pool3d", (1, 1, 4, 5, 4), _SAMPLES_3D, kernel_size=(2, 2, 1),
                    output_ratio=0.5),
    ]


SAMPLES = _conv_transpose3d_samples() + _grid_samples() + _pool_samples()
