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

from conftest import needs_device
from device_samples import check_against_cpu, failures, not_implemented_derivative, to_device
from samples import all_samples
from samples._inputs import make_inputs

pytestmark = needs_device

_HELPER_ON_HOST = "core builds a helper array on the host for it (not moved to the input's device)"
_SAMPLE_CONSTANT = "its samples use a CPU tensor captured at import (a weight or a target)"
UNSUPPORTED = {
    "cat": "block_diag's zero blocks are made on the host (cr.zeros without device=)",
    "clamp": _SAMPLE_CONSTANT,
    "conv2d_input_grad": "the transposed convolution's im2col view goes through np.asarray",
    "conv2d_weight_grad": "the transposed convolution's im2col view goes through np.asarray",
    "convolution": "conv1d/conv3d samples build their windows through np.asarray",
    "cummax": "needs cr_scan_with_indices (values and indices); DeviceArray calls cr_scan",
    "cummin": "needs cr_scan_with_indices (values and indices); DeviceArray calls cr_scan",
    "embedding": _HELPER_ON_HOST,
    "embedding_dense_backward": _HELPER_ON_HOST,
    "index_add": _HELPER_ON_HOST,
    "index_fill": "duplicate indices: the scatter-assignment sums them (no scatter kernel)",
    "index_fill_tensor": "duplicate indices: the scatter-assignment sums them (no scatter kernel)",
    "index_select": "interpolate/unfold samples build index arrays through np.asarray",
    "linalg_cholesky": _HELPER_ON_HOST,
    "linalg_inv": _HELPER_ON_HOST,
    "linalg_lu": "the LU forward copies its input with np.array (no device LU kernel)",
    "linalg_matrix_exp": "scipy.linalg.expm takes host arrays only",
    "linalg_qr": _HELPER_ON_HOST,
    "linalg_slogdet": _HELPER_ON_HOST,
    "linalg_solve": _HELPER_ON_HOST,
    "linalg_solve_triangular": _HELPER_ON_HOST,
    "logsumexp": "ctc_loss builds its alignment arrays on the host",
    "max_dim": "pooling samples build window indices through np.asarray",
    "nll_loss": _SAMPLE_CONSTANT,
    "nll_loss_backward": _HELPER_ON_HOST,
    "pow_scalar": "lp_pool's window indices are made on the host",
    "scatter": "index arrays broadcast against src differently from the CPU path",
    "scatter_add": "index arrays broadcast against src differently from the CPU path",
    "scatter_reduce": "duplicate indices: the scatter-assignment sums them (no scatter kernel)",
    "scatter_value": "duplicate indices: the scatter-assignment sums them (no scatter kernel)",
    "softmax": "attention samples mix a host mask or constant",
    "softplus": _SAMPLE_CONSTANT,
    "sum_dim": "avg_pool's window indices are made on the host",
    "where": "rrelu's random slopes are drawn on the host",
}

SAMPLES = all_samples()
SUPPORTED = [s for s in SAMPLES if s.op not in UNSUPPORTED]
FIRST_PER_OP = list({s.op: s for s in reversed(SUPPORTED)}.values())


@pytest.mark.parametrize("sample", SUPPORTED, ids=[s.id() for s in SUPPORTED])
def test_values_and_gradients_equal_the_cpus(sample):
    check_against_cpu(sample)


@pytest.mark.parametrize("sample", FIRST_PER_OP, ids=[s.id() for s in FIRST_PER_OP])
def test_gradcheck_through_the_device(sample):
    inputs = [to_device(v) for v in make_inputs(sample)]
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
    assert len(covered) >= 188, f"{len(covered)} of {len(ops)} table ops run on the device"
