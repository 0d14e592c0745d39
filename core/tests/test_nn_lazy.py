"""Lazy modules and uninitialized parameters (nn/modules/lazy.py, nn/parameter.py):
materialization on the first forward, state_dict round trips, optimizers built early."""
import copy
import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy


def test_uninitialized_parameter_has_no_shape_until_materialized():
    p = UninitializedParameter(dtype=cr.float64)
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad and is_lazy(p)
    assert p.dtype == cr.float64 and p.size() == cr.Size([0])
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        p.shape
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized"):
        p.share_memory_()
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == cr.float64
    assert p.is_leaf and p.requires_grad and not is_lazy(p)


def test_uninitialized_tensors_move_copy_and_pickle_uninitialized():
    b = UninitializedBuffer()
    assert not b.requires_grad and b.double().dtype == cr.float64 and is_lazy(b.double())
    p = UninitializedParameter(requires_grad=False)
    for other in (copy.deepcopy(p), pickle.loads(pickle.dumps(p)), p.to(cr.float64)):
        assert type(other) is UninitializedParameter and not other.requires_grad
    b.materialize((4,), dtype=cr.float64)
    assert type(b) is cr.Tensor and b.shape == (4,) and b.dtype == cr.float64


@pytest.mark.parametrize("make, x, becomes, weight_shape", [
    (lambda: nn.LazyLinear(3), cr.ones(2, 5), nn.Linear, (3, 5)),
    (lambda: nn.LazyConv1d(4, 3), cr.ones(2, 5, 8), nn.Conv1d, (4, 5, 3)),
    (lambda: nn.LazyConv2d(4, 3, groups=2), cr.ones(6, 5, 5), nn.Conv2d, (4, 3, 3, 3)),
    (lambda: nn.LazyConv3d(2, 2), cr.ones(1, 3, 3, 3, 3), nn.Conv3d, (2, 3, 2, 2, 2)),
    (lambda: nn.LazyConvTranspose1d(2, 3), cr.ones(1, 4, 5), nn.ConvTranspose1d, (4, 2, 3)),
    (lambda: nn.LazyConvTranspose2d(4, 2, groups=2), cr.ones(1, 6, 3, 3), nn.ConvTranspose2d,
     (6, 2, 2, 2)),
    (lambda: nn.LazyConvTranspose3d(2, 2, stride=2), cr.ones(1, 3, 1, 2, 2),
     nn.ConvTranspose3d, (3, 2, 2, 2, 2)),
    (lambda: nn.LazyBatchNorm1d(), cr.randn(4, 3), nn.BatchNorm1d, (3,)),
    (lambda: nn.LazyBatchNorm2d(), cr.randn(2, 3, 2, 2), nn.BatchNorm2d, (3,)),
    (lambda: nn.LazyBatchNorm3d(), cr.randn(2, 3, 1, 2, 2), nn.BatchNorm3d, (3,)),
    (lambda: nn.LazyInstanceNorm1d(), cr.randn(2, 3, 4), nn.InstanceNorm1d, (3,)),
    (lambda: nn.LazyInstanceNorm2d(), cr.randn(2, 3, 4, 4), nn.InstanceNorm2d, (3,)),
    (lambda: nn.LazyInstanceNorm3d(), cr.randn(2, 3, 2, 2, 2), nn.InstanceNorm3d, (3,))])
def test_lazy_module_materializes_on_first_forward(make, x, becomes, weight_shape):
    m = make()
    assert m.has_uninitialized_params() and is_lazy(m.weight)
    out = m(x)
    assert type(m) is becomes and not any(is_lazy(t) for t in m.state_dict().values())
    assert m.weight.shape == weight_shape and type(m.weight) is nn.Parameter
    assert not hasattr(m, "_initialize_hook")
    np.testing.assert_allclose(m(x).detach().numpy(), out.detach().numpy(), rtol=1e-6)


def test_lazy_linear_is_initialized_as_linear_and_trains_with_an_early_optimizer():
    m = nn.LazyLinear(2)
    assert repr(m) == "LazyLinear(in_features=0, out_features=2, bias=True)"
    opt = cr.optim.SGD(m.parameters(), lr=0.5)
    out = m(cr.ones(4, 3))
    bound = 1 / np.sqrt(3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    out.sum().backward()
    before = m.bias.detach().clone()
    opt.step()
    np.testing.assert_allclose(m.bias.detach().numpy(), (before - 0.5 * 4).numpy())


def test_lazy_batch_norm_buffers_are_state_and_count_batches():
    bn = nn.LazyBatchNorm1d()
    state = bn.state_dict()
    assert [type(v).__name__ for v in state.values()] == [
        "UninitializedParameter", "UninitializedParameter", "UninitializedBuffer",
        "UninitializedBuffer", "Tensor"]
    bn(cr.tensor([[1.0, 2.0], [3.0, 6.0]]))
    assert bn.num_batches_tracked.item() == 1
    np.testing.assert_allclose(bn.running_mean.numpy(), [0.2, 0.4], rtol=1e-6)


def test_state_dict_round_trips_in_both_states():
    trained = nn.LazyLinear(3)
    trained(cr.ones(1, 4))
    fresh = nn.LazyLinear(3)
    fresh.load_state_dict(trained.state_dict())       # materialized by the load hook
    assert type(fresh.weight) is nn.Parameter and cr.equal(fresh.weight, trained.weight)
    assert isinstance(fresh, nn.LazyLinear)            # the class changes on forward only
    still_lazy = nn.LazyLinear(3)
    still_lazy.load_state_dict(nn.LazyLinear(3).state_dict())
    assert is_lazy(still_lazy.weight)
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        nn.Linear(4, 3).load_state_dict(nn.LazyLinear(3).state_dict())


def test_lazy_errors_name_the_problem():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to LazyConv2d, but got input of size"):
        nn.LazyConv2d(3, 2)(cr.ones(3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 2, groups=2)(cr.ones(3, 3, 3))
    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented"):
        type("Lazy", (nn.modules.lazy.LazyModuleMixin, nn.Module), {})()(cr.ones(1))


def test_module_to_keeps_lazy_tensors_lazy():
    m = nn.LazyBatchNorm2d().double()
    assert is_lazy(m.running_mean) and m.running_mean.dtype == cr.float64
    m(cr.randn(2, 3, 2, 2, dtype=cr.float64))
    assert m.running_mean.dtype == cr.float64 and m.weight.dtype == cr.float64


def test_uninitialized_parameters_refuse_use_before_the_first_forward():
    m = nn.LazyLinear(3)
    for use in (lambda: sum(p.numel() for p in m.parameters()), lambda: m.weight + 1,
                lambda: nn.init.xavier_uniform_(m.weight)):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in "
                                             ".* `torch.nn.parameter.UninitializedParameter`"):
            use()
    cr.optim.Adam(m.parameters())            # an optimizer may be built before, as in torch
    m(cr.ones(1, 2))
    assert sum(p.numel() for p in m.parameters()) == 9
