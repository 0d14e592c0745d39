"""Process-wide settings (threads, determinism, matmul precision, warnings), dtype
limits (finfo/iinfo), print options and compile."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import _config, _printing


@pytest.fixture(autouse=True)
def restore_settings():
    saved = (dict(_config._THREADS), dict(_config._DETERMINISM), dict(_config._MATMUL),
             dict(_printing.PRINT_OPTIONS))
    yield
    for live, old in zip((_config._THREADS, _config._DETERMINISM, _config._MATMUL,
                          _printing.PRINT_OPTIONS), saved):
        live.clear()
        live.update(old)


@pytest.mark.parametrize("dtype, eps, resolution, bits", [
    (cr.float16, 2 ** -10, 1e-3, 16), (cr.bfloat16, 2 ** -7, 1e-2, 16),
    (cr.float32, 2 ** -23, 1e-6, 32), (cr.float64, 2 ** -52, 1e-15, 64),
    (cr.complex128, 2 ** -52, 1e-15, 64)])
def test_finfo(dtype, eps, resolution, bits):
    f = cr.finfo(dtype)
    assert (f.eps, f.resolution, f.bits) == (eps, resolution, bits)
    assert f.min == -f.max and f.tiny == f.smallest_normal > 0
    assert repr(f).startswith(f"finfo(resolution={resolution:g}, min=")
    assert cr.finfo().dtype == "float32"
    with pytest.raises(TypeError, match="requires a floating point input type"):
        cr.finfo(cr.int32)


def test_iinfo():
    assert (cr.iinfo(cr.uint8).min, cr.iinfo(cr.uint8).max) == (0, 255)
    assert cr.iinfo(cr.int64).max == 2 ** 63 - 1 and cr.iinfo(cr.int16).bits == 16
    assert repr(cr.iinfo(cr.int8)) == "iinfo(min=-128, max=127, dtype=int8)"
    with pytest.raises(TypeError, match="requires an integer input type"):
        cr.iinfo(cr.float32)
    with pytest.raises(TypeError, match="torch.bool is not supported by torch.iinfo"):
        cr.iinfo(cr.bool)


def test_threads():
    cr.set_num_threads(1)
    assert cr.get_num_threads() == 1
    cr.set_num_interop_threads(3)
    assert cr.get_num_interop_threads() == 3
    for bad in (0, -1, 1.5, True):
        with pytest.raises(RuntimeError, match="positive"):
            cr.set_num_threads(bad)


def test_determinism_switches_and_debug_mode():
    assert cr.get_deterministic_debug_mode() == 0
    cr.use_deterministic_algorithms(True, warn_only=True)
    assert cr.are_deterministic_algorithms_enabled()
    assert cr.is_deterministic_algorithms_warn_only_enabled()
    assert cr.get_deterministic_debug_mode() == 1
    cr.set_deterministic_debug_mode("error")
    assert cr.get_deterministic_debug_mode() == 2
    assert not cr.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        cr.set_deterministic_debug_mode("loud")
    with pytest.raises(TypeError):
        cr.use_deterministic_algorithms(1)


def test_matmul_precision_and_bad_value_warns():
    cr.set_float32_matmul_precision("medium")
    assert cr.get_float32_matmul_precision() == "medium"
    with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
        cr.set_float32_matmul_precision("bad")
    assert cr.get_float32_matmul_precision() == "medium"


def test_typename_and_is_storage():
    assert cr.typename(cr.ones(1, dtype=cr.int64)) == "chainrule.LongTensor"
    assert cr.typename(3) == "int" and cr.typename(np.zeros(1)) == "numpy.ndarray"
    assert not cr.is_storage(cr.ones(1))


def test_compile_returns_the_callable_and_works_as_a_decorator():
    model = cr.nn.Linear(2, 2)
    assert cr.compile(model) is model
    decorated = cr.compile(fullgraph=True, dynamic=False)(lambda x: x + 1)
    assert decorated(cr.zeros(1)).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="Either mode or options"):
        cr.compile(model, mode="default", options={})


def test_print_options():
    cr.set_printoptions(precision=2)
    assert repr(cr.tensor([1.23456, 2.5])) == "tensor([1.23, 2.50])"
    cr.set_printoptions(sci_mode=False)
    assert repr(cr.tensor([1e-5, 1.0])) == "tensor([0.00, 1.00])"
    cr.set_printoptions(profile="default", threshold=5, edgeitems=2)
    assert repr(cr.arange(10.0)) == "tensor([0., 1.,  ..., 8., 9.])"
    cr.set_printoptions(profile="short")
    assert repr(cr.arange(2000.0) / 3) == "tensor([0.00e+00, 3.33e-01,  ..., 6.66e+02, 6.66e+02])"
    cr.set_printoptions(profile="default", sci_mode=True, precision=3)
    assert repr(cr.tensor(1.5)) == "tensor(1.500e+00)"
    cr.set_printoptions(profile="default", linewidth=30)
    assert repr(cr.arange(6.0) / 3).count("\n") == 2
