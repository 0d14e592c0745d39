"""Every op of core's derivative table on the CUDA device, generated from core's table
Samples (core/tests/samples): the values and gradients of each sample equal the CPU's,
and float64 gradcheck holds through the device path (one sample per op). Core's
formulas run unchanged on DeviceArrays (Note [device array protocols]).

UNSUPPORTED lists the ops that do not run on the device yet, with the reason; the list
is asserted exactly (an op that starts working must leave it, an op that breaks cannot
hide in it)."""
import pytest

import chainrule as cr
from chainrule._ops import _registry

from runtime_support import needs_device
from device_samples import check_against_cpu, failures, not_implemented_derivative, to_device
from samples import all_samples
from samples._inputs import make_inputs

pytestmark = needs_device

# Samples that pass a CPU tensor in their keyword arguments (a class weight, a mask):
# on the device that is the reference's mixed-device error, as it should be.
_CPU_KEYWORD = "a sample passes a CPU tensor as a keyword argument (weight/pos_weight/mask)"
UNSUPPORTED = {
    "clamp": _CPU_KEYWORD,
    "index_add": "fold builds its output array on the host",
    "index_select": "repeat_interleave(tensor repeats) computes its indices with np.repeat",
    "linalg_lu": "the LU forward copies its input with np.array (no device LU)",
    "linalg_matrix_exp": "scipy.linalg.expm takes host arrays only",
    "logsumexp": "ctc_loss builds its alignment constants on the host",
    "max_dim": "max_pool builds its window index array on the host",
    "nll_loss": _CPU_KEYWORD,
    "nll_loss_backward": "ignore_index/weight: the mask and weights are made on the host",
    "scatter": "max_unpool builds its output array on the host",
    "scatter_reduce": "reduce='mean' counts into an array made on the host",
    "softmax": _CPU_KEYWORD,
    "softplus": _CPU_KEYWORD,
}

SAMPLES = all_samples()
SUPPORTED = [s for s in SAMPLES if s.op not in UNSUPPORTED]
FIRST_PER_OP = list({s.op: s for s in reversed(SUPPORTED)}.values())


@pytest.mark.parametrize("sample", SUPPORTED, ids=[s.id() for s in SUPPORTED])
def test_values_and_gradients_equal_the_cpus(sample):
    check_against_cpu(sample)


@pytest.mark.parametrize("sample", FIRST_PER_OP, ids=[s.id() for s in FIRST_PER_OP])
def test_gradcheck_through_the_device(sample):
    inputs = [to_device(v) for v in make_inputs(sample)]      # new leaves
    fast = sum(t.numel() for t in inputs if isinstance(t, cr.Tensor) and t.requires_grad) > 48
    try:
        assert cr.autograd.gradcheck(sample.call, inputs, atol=sample.atol, rtol=sample.rtol,
                                     fast_mode=fast)
    except NotImplementedError as e:
        if not not_implemented_derivative(sample, e):
            raise


def test_unsupported_list_is_exact():
    failing = failures()
    assert sorted(failing) == sorted(UNSUPPORTED), {
        "now working (remove)": sorted(set(UNSUPPORTED) - set(failing)),
        "failing (fix or list)": {op: failing[op] for op in set(failing) - set(UNSUPPORTED)}}


def test_coverage_of_the_table():
    ops = set(_registry.OPS)
    assert set(UNSUPPORTED) <= ops
    covered = ops - set(UNSUPPORTED)
    assert len(covered) >= 209, f"{len(covered)} of {len(ops)} table ops run on the device"
