"""nn.utils.fusion: a fused module computes what the layer followed by the eval-mode
BatchNorm computes; the originals are left untouched."""
import pytest

import chainrule as cr


def _bn(bn):
    with cr.no_grad():
        n = bn.num_features
        bn.running_mean.copy_(cr.linspace(-1, 1, n))
        bn.running_var.copy_(cr.linspace(0.5, 2, n))
        bn.weight.copy_(cr.linspace(0.3, 1.7, n))
    return bn.eval()


@pytest.mark.parametrize("conv,bn,transpose,shape", [
    (cr.nn.Conv2d(2, 3, 2, bias=False), cr.nn.BatchNorm2d(3), False, (1, 2, 5, 5)),
    (cr.nn.ConvTranspose1d(3, 2, 3), cr.nn.BatchNorm1d(2), True, (2, 3, 4)),
])
def test_fused_conv_matches_conv_then_bn(conv, bn, transpose, shape):
    conv, bn = conv.eval(), _bn(bn)
    before = conv.weight.clone()
    fused = cr.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    x = cr.randn(*shape, dtype=cr.float64).float()
    assert cr.allclose(fused(x), bn(conv(x)), atol=1e-5)
    assert cr.equal(conv.weight, before) and fused is not conv


def test_fused_linear_broadcasts_a_single_feature_bn():
    linear, bn = cr.nn.Linear(3, 4).eval(), _bn(cr.nn.BatchNorm1d(1))
    fused = cr.nn.utils.fuse_linear_bn_eval(linear, bn)
    x = cr.randn(5, 3)
    expected = bn(linear(x).reshape(-1, 1)).reshape(5, 4)
    assert cr.allclose(fused(x), expected, atol=1e-5)


def test_training_modules_are_refused():
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        cr.nn.utils.fuse_conv_bn_eval(cr.nn.Conv1d(1, 1, 1), cr.nn.BatchNorm1d(1).eval())
    bn = cr.nn.BatchNorm1d(2, track_running_stats=False).eval()
    with pytest.raises(AssertionError, match="must not be None"):
        cr.nn.utils.fuse_linear_bn_eval(cr.nn.Linear(2, 2).eval(), bn)
