"""_ops/_common.py: registration of public functions and methods, with NumPy's
argument spellings (Note [NumPy spellings of arguments])."""
import inspect

import numpy as np
import pytest

import chainrule as cr
from chainrule import _torch_function

SPELLINGS = [
    ("sum", lambda x, k: cr.sum(x, **k)), ("mean", lambda x, k: x.mean(**k)),
    ("amax", lambda x, k: cr.amax(x, **k)), ("max", lambda x, k: x.max(**k).values),
    ("logsumexp", lambda x, k: cr.logsumexp(x, **k)), ("std", lambda x, k: x.std(**k)),
    ("var", lambda x, k: cr.var(x, **k)), ("prod", lambda x, k: x.prod(**k)),
    ("norm", lambda x, k: x.norm(**k)),
    ("linalg.vector_norm", lambda x, k: cr.linalg.vector_norm(x, **k)),
]


@pytest.mark.parametrize("name,fn", SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_keepdims_and_axis_spell_keepdim_and_dim(name, fn):
    # issue 9, wrong today 7: x.sum(1, keepdims=True) raised TypeError
    x = cr.arange(1.0, 7.0).reshape(2, 3)
    expected = fn(x, {"dim": 1, "keepdim": True})
    for kwargs in ({"axis": 1, "keepdims": True}, {"dim": 1, "keepdims": True},
                   {"axis": 1, "keepdim": True}):
        out = fn(x, kwargs)
        assert out.shape == (2, 1)
        np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_dim_spelled_axis_in_non_reductions():
    x = cr.ones(2, 3)
    assert cr.cat([x, x], axis=1).shape == (2, 6)
    assert x.softmax(axis=0).shape == (2, 3)
    assert x.cumsum(axis=1)[0].tolist() == [1.0, 2.0, 3.0]


def test_both_spellings_at_once_is_an_error_like_the_reference():
    with pytest.raises(TypeError, match="sum\\(\\) got an unexpected keyword argument 'keepdims'"):
        cr.ones(2).sum(0, keepdim=True, keepdims=True)


def _python_function(fn):
    """The Python function behind an accelerated method (Note [method slot]: the
    replacement calls it for every call with keywords) and behind the dispatching
    wrapper of Note [torch function slot]."""
    fn = fn.__wrapped__ if type(fn).__name__ == "FastMethod" else fn
    return fn.__wrapped__ if _torch_function.is_wrapper(fn) else fn


def _dim_and_keepdim_functions():
    for owner in (cr, cr.Tensor, cr.linalg):
        for name in dir(owner):
            fn = _python_function(getattr(owner, name))
            if name.startswith("__") or name in ("size", "stride") or not callable(fn):
                continue
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                continue
            if "dim" in params or "keepdim" in params:
                yield owner.__name__, name, fn


def test_every_public_function_and_method_with_dim_or_keepdim_takes_numpy_spellings():
    found = list(_dim_and_keepdim_functions())
    assert len(found) > 50
    assert [(owner, name) for owner, name, fn in found
            if not getattr(fn, "numpy_spellings", False)] == []


def test_the_wrapper_keeps_name_signature_and_docstring():
    from chainrule._ops import reduction
    wrapper = _python_function(cr.sum)
    assert wrapper is not reduction.sum and wrapper.__wrapped__ is reduction.sum
    assert cr.sum.__name__ == "sum" and cr.sum.__doc__ == reduction.sum.__doc__
    assert list(inspect.signature(cr.sum).parameters) == ["input", "dim", "keepdim", "dtype"]
    add = _python_function(cr.add)
    assert add is cr._FUNCTIONS["add"] and not hasattr(add, "__wrapped__")  # no dim


def test_torch_parity_of_numpy_spellings(torch):
    data = np.arange(1.0, 7.0).reshape(2, 3)
    for M in (cr, torch):
        x = M.tensor(data)
        out = [x.sum(axis=0, keepdims=True), M.amax(x, axis=1, keepdims=True),
               M.cat([x, x], axis=1), x.max(axis=1, keepdims=True)[0]]
        if M is cr:
            ours = out
    for a, b in zip(ours, out):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_scalar_constants_stay_cached_after_many_distinct_numbers():
    # a schedule's changing numbers fill the bounded cache; it empties and keeps going
    from chainrule._ops import _common
    x = cr.ones(2)
    for k in range(3000):
        x * (1.0 + k / 1e6)
    x * 1.0001
    assert (float, 1.0001, np.dtype(np.float32)) in _common._SCALARS
    assert len(_common._SCALARS) <= 1024


def test_formula_helpers_and_method_only_functions_stay_off_the_top_level():
    # formulas find view/expand/repeat/to_device in TENSOR_NS; the reference has them
    # as Tensor methods (view, expand, repeat) or not at all (to_device)
    from chainrule._ops import TENSOR_NS, _common
    for name in ("view", "expand", "repeat", "to_device", "sum_to"):
        assert not hasattr(cr, name), name
        assert callable(getattr(TENSOR_NS, name))
    assert set(_common.NOT_EXPORTED) >= {"view", "expand", "repeat", "to_device"}
    assert [n for n in _common.NOT_EXPORTED if hasattr(cr, n) and not n.startswith("_")
            and getattr(cr, n) is _common.NOT_EXPORTED[n]] == []
    x = cr.ones(3, 1)
    assert x.view(3).shape == (3,) and x.expand(3, 2).shape == x.repeat(1, 2).shape == (3, 2)


def test_refusing_raises_each_kinds_own_error_from_one_wrapper():
    # Note [kernels without a dtype]: one wrapper for several kinds (not one per kind)
    from chainrule._ops._common import raising, refusing
    floor = refusing(np.floor, {"b": raising(TypeError, "no bool"),
                                "iu": raising(ValueError, "no integers")})
    assert floor(np.array([1.5])).tolist() == [1.0]
    with pytest.raises(TypeError, match="no bool"):
        floor(np.array([True]))
    for dtype in (np.int8, np.uint8):
        with pytest.raises(ValueError, match="no integers"):
            floor(np.array([1], dtype))
    # it wraps np.floor itself: one extra frame a call, however many kinds it refuses
    assert any(c.cell_contents is np.floor for c in floor.__closure__)


def test_floor_and_relu_refuse_bool_and_complex_like_the_reference():
    for name, bool_error, complex_error in (
            ("floor", (NotImplementedError, "\"floor_vml_cpu\" not implemented for 'Bool'"),
             (NotImplementedError, "floor is not supported for complex inputs")),
            ("relu", (RuntimeError, "Boolean inputs not supported for relu"),
             (NotImplementedError, "clamp is not supported for complex types"))):
        for dtype, (error, message) in ((cr.bool, bool_error), (cr.complex64, complex_error)):
            with pytest.raises(error) as info:
                getattr(cr, name)(cr.ones(2, dtype=dtype))
            assert str(info.value) == message


# --- Note [tensor-only arguments] ---------------------------------------------------------
@pytest.mark.parametrize("call,message", [
    (lambda x: cr.atan2(x, 2.0), "atan2(): argument 'other' (position 2) must be Tensor, not float"),
    (lambda x: x.atan2(2.0), "atan2(): argument 'other' (position 1) must be Tensor, not float"),
    (lambda x: x.atan2_(1), "atan2_(): argument 'other' (position 1) must be Tensor, not int"),
    (lambda x: cr.arctan2(x, 1), "arctan2(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda x: cr.logical_and(x, True),
     "logical_and(): argument 'other' (position 2) must be Tensor, not bool"),
    (lambda x: x.logical_or_(1), "logical_or_(): argument 'other' (position 1) must be Tensor, not int"),
    (lambda x: cr.maximum(2.0, x), "maximum(): argument 'input' (position 1) must be Tensor, not float"),
    (lambda x: x.heaviside(0.5), "heaviside(): argument 'values' (position 1) must be Tensor, not float"),
    (lambda x: cr.masked_select(x, 1), "masked_select(): argument 'mask' (position 2) must be Tensor, not int"),
    (lambda x: x.mm(2.0), "mm(): argument 'mat2' (position 1) must be Tensor, not float"),
    (lambda x: x.view_as(1), "view_as(): argument 'other' (position 1) must be Tensor, not int"),
    (lambda x: cr.nn.functional.prelu(x, 0.25),
     "prelu(): argument 'weight' (position 2) must be Tensor, not float"),
    (lambda x: x.prelu(0.25), "prelu(): argument 'weight' (position 1) must be Tensor, not float"),
])
def test_a_number_for_a_tensor_only_argument_names_the_call_as_made(call, message):
    with pytest.raises(TypeError) as info:
        call(cr.tensor([1.0, 2.0]))
    assert str(info.value) == message


def test_integer_tensor_only_ops_name_their_in_place_function_form():
    with pytest.raises(TypeError, match=r"^gcd_\(\): argument 'other' \(position 2\)"):
        cr.gcd_(cr.tensor([4]), 2)
    with pytest.raises(TypeError, match=r"^lcm_\(\): argument 'other' \(position 1\)"):
        cr.tensor([4]).lcm_(2)


def test_ops_with_a_scalar_overload_still_take_numbers():
    x = cr.tensor([3.0, -4.0])
    assert cr.copysign(x, -1).tolist() == [-3.0, -4.0] and cr.fmod(x, 2).tolist() == [1.0, -0.0]
    assert cr.eq(x, 3).tolist() == [True, False] and cr.xlogy(x, 1).tolist() == [0.0, 0.0]
