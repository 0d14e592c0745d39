"""cr_matmul of the host build (the kernel's own loop; the GPU build uses cuBLAS for
float and complex dtypes: Note [matmul paths]) against NumPy, in every dtype."""
import numpy as np
import pytest

from kernel_abi import DTYPES, EMULATED, KernelError, call, lib, view
from kernel_cases import as_ref_input, assert_close, is_float, layouts, values

# (batch of a, batch of b, m, k, n): broadcast batches, odd sizes, empty dims.
CASES = [((), (), 5, 7, 3), ((3,), (3,), 4, 6, 5), ((2, 3), (3,), 3, 2, 4),
         ((1,), (4,), 2, 3, 2), ((2, 1), (1, 3), 3, 5, 1), ((), (), 1, 9, 1),
         ((), (), 4, 0, 3), ((2,), (2,), 0, 3, 2), ((), (), 17, 33, 9)]


def _batch(a_b, b_b):
    return np.broadcast_shapes(a_b, b_b)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_matmul(dt):
    rng = np.random.default_rng(12)
    for a_b, b_b, m, k, n in CASES:
        a0 = values(rng, a_b + (m, k), dt, "small")
        b0 = values(rng, b_b + (k, n), dt, "small")
        for (la, a), (lb, b) in zip(layouts(a0), list(layouts(b0))[::-1]):
            for alpha, beta in ((1.0, 0.0), (0.5, 2.0)):
                out = values(rng, _batch(a_b, b_b) + (m, n), dt, "small")
                before = out.copy()
                call("matmul", view(out), view(a), view(b), alpha, beta)
                ra, rb, ro = (as_ref_input(x) if is_float(dt) else x.astype(np.int64)
                              for x in (a, b, before))
                expected = alpha * (ra @ rb) + beta * ro if is_float(dt) else (
                    (ra @ rb) * int(alpha) + ro * int(beta))
                if dt == np.bool_:
                    expected = expected != 0
                assert_close(out, expected, dt, f"{dt} {a_b} {b_b} {m}x{k}x{n} {la} {lb} {alpha} {beta}")


def test_beta_zero_ignores_nan_in_out():
    a, b = np.ones((2, 3)), np.ones((3, 2))
    out = np.full((2, 2), np.nan)
    call("matmul", view(out), view(a), view(b), 1.0, 0.0)
    np.testing.assert_array_equal(out, np.full((2, 2), 3.0))


def test_shape_and_dtype_errors():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(KernelError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        call("matmul", view(np.empty((2, 3), np.float32)), view(a), view(a), 1.0, 0.0)
    with pytest.raises(KernelError, match="same dtype, but got: float32 != float64"):
        call("matmul", view(np.empty((2, 2), np.float32)), view(a), view(a.T.astype(np.float64)), 1.0, 0.0)


def test_blas_library_is_found_on_the_gpu_only():
    # The host build runs its own loop; the GPU library must find cuBLAS (Note [matmul paths]).
    assert (lib.cr_blas_library() == b"") == EMULATED
