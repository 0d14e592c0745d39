"""Every op of core's derivative table on the CUDA device, generated from core's table
Samples (core/tests/samples): the values and gradients of each sample equal the CPU's,
and float64 gradcheck holds through the device path (one sample per op). Core's
formulas run unchanged on DeviceArrays (Note [device array protocols]).

UNSUPPORTED lists the ops that do not run on the device, with the reason; it is asserted
exactly (an op that breaks cannot hide, one that starts working must leave it)."""
import pytest

import chainrule as cr
from chainrule._ops import _registry

from runtime_support import needs_device
from device_samples import (check_against_cpu, device_call, not_implemented_derivative,
                            survey, to_device)
from samples import all_samples
from samples._inputs import make_inputs

pytestmark = needs_device

_GRID_TAPS = ("finds its taps with host NumPy (np.asarray of the grid, bincount and "
              "np.add.at for the input gradient); no device path yet")
UNSUPPORTED = {"grid_sampler_2d": _GRID_TAPS, "grid_sampler_3d": _GRID_TAPS}

# The table ops whose device run goes through the host, and the host-run functions it
# calls (Note [host-run functions] in chainrule_cuda/_functions.py: LAPACK-type
# decompositions only); asserted exactly, and per sample: any other op that copies an
# array to the host (reading one value, a count or a flag, is not a copy) fails.
HOST_RUN_OPS = {
    "linalg_cholesky": {"cholesky", "solve"},
    "linalg_det": {"det", "inv"},
    "linalg_eig": {"eig", "solve"},
    "linalg_eigh": {"eigh"},
    "linalg_inv": {"inv"},
    "linalg_lstsq": {"svd"},
    "linalg_lu": {"solve"},
    "linalg_matrix_exp": {"solve"},
    "linalg_pinv": {"eigh", "svd"},
    "linalg_qr": {"qr", "solve"},
    "linalg_slogdet": {"inv", "slogdet"},
    "linalg_solve": {"solve"},
    "linalg_solve_triangular": {"solve"},
    "linalg_svd": {"svd"},
    "cholesky_solve": {"solve"},
    "cholesky_inverse": {"cholesky", "solve"},      # its samples factor with cholesky
    "fft_c2c": {"fftn", "ifftn"},
    "fft_r2c": {"rfftn", "fftn", "ifftn"},
    "fft_c2r": {"fftn", "ifftn", "irfftn", "rfftn"},     # hfftn: a c2c first
}

SAMPLES = all_samples()
SUPPORTED = [s for s in SAMPLES if s.op not in UNSUPPORTED]
FIRST_PER_OP = list({s.op: s for s in reversed(SUPPORTED)}.values())


@pytest.mark.parametrize("sample", SUPPORTED, ids=[s.id() for s in SUPPORTED])
def test_values_and_gradients_equal_the_cpus(sample):
    called = check_against_cpu(sample)
    assert called <= HOST_RUN_OPS.get(sample.op, set()), f"went through the host: {called}"


@pytest.mark.parametrize("sample", FIRST_PER_OP, ids=[s.id() for s in FIRST_PER_OP])
def test_gradcheck_through_the_device(sample):
    inputs = [to_device(v) for v in make_inputs(sample)]      # new leaves
    fast = sum(t.numel() for t in inputs if isinstance(t, cr.Tensor) and t.requires_grad) > 48
    try:
        assert cr.autograd.gradcheck(device_call(sample), inputs, atol=sample.atol, rtol=sample.rtol,
                                     fast_mode=fast)
    except RuntimeError as e:
        if not not_implemented_derivative(sample, e):
            raise


def test_unsupported_and_host_run_lists_are_exact():
    failing, host_run = survey()
    assert sorted(failing) == sorted(UNSUPPORTED), {
        "now working (remove)": sorted(set(UNSUPPORTED) - set(failing)),
        "failing (fix or list)": {op: failing[op] for op in set(failing) - set(UNSUPPORTED)}}
    assert host_run == HOST_RUN_OPS


def test_coverage_of_the_table():
    """Every table op runs on the device in some sample, but the listed ones."""
    ops = set(_registry.OPS)
    assert set(UNSUPPORTED) <= ops
    covered = {s.op for s in SUPPORTED}
    assert covered == ops - set(UNSUPPORTED), \
        f"{len(covered)} of {len(ops)} table ops run on the device"
