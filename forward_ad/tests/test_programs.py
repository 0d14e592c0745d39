"""Note [JVP programs]: a program run as the engine runs it (``run_program``) gives
the tangent the op's JVP formula gives on the raw path, for every sample of the
derivative table with each input alone and all inputs carrying a tangent; and what a
program cannot replay has none."""
import sys

import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from chainrule._ops import elementwise
from chainrule_forward_ad import _programs, _tangents

from samples import all_samples
from samples._inputs import make_inputs

# the elementwise ops the engine's fast methods run: each must have programs
FAST_OPS = {"add", "sub", "mul", "div", "ceil", "cos", "erf", "exp", "expm1", "floor",
            "log", "log1p", "neg", "relu", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "tan",
            "tanh", "trunc"}


def _fits(r, out):
    return type(r) is np.ndarray and r.shape == out.shape and r.dtype == out.dtype


def _op_of(raw):
    return next(op for op, plan in _tangents._RAW.items() if plan is raw)


@pytest.fixture
def compared(monkeypatch):
    """Every raw-path tangent is also computed by the op's program, where it has one."""
    names = set()
    original = _tangents._raw_tangent

    def both(raw, inputs, attrs, out, t, missing, is_view):
        r = original(raw, inputs, attrs, out, t, missing, is_view)
        mask = sum(1 << i for i, g in enumerate(t) if g is not None)
        program = _programs.jvp_programs(_op_of(raw), attrs, len(inputs))[mask]
        if program is not None and r is not None and out._data.ndim:
            got = _programs.run_program(program, t, [x._data for x in inputs], out._data)
            if _fits(got, out._data):
                np.testing.assert_array_equal(got, r, err_msg=_op_of(raw).name)
                names.add(_op_of(raw).name)
        return r
    monkeypatch.setattr(_tangents, "_raw_tangent", both)
    engine = sys.modules.get("chainrule_engine")
    if engine is not None:              # its dual fast methods would skip the raw path
        engine._configure_dual_methods(enabled=False)
    try:
        yield names
    finally:
        if engine is not None:
            engine._configure_dual_methods()


def _tangent_sets(inputs, rng):
    tangents = []
    for x in inputs:
        differentiable = isinstance(x, cr.Tensor) and x.requires_grad
        v = rng.standard_normal(x.shape) if differentiable else None
        if v is not None and x.is_complex():
            v = v + 1j * rng.standard_normal(x.shape)
        tangents.append(None if v is None else cr.tensor(v, dtype=x.dtype))
    live = [i for i, t in enumerate(tangents) if t is not None]
    alone = [[t if i == k else None for i, t in enumerate(tangents)] for k in live]
    return [tangents] + (alone if len(live) > 1 else [])


def test_programs_give_the_formulas_tangents(compared):
    rng = np.random.default_rng(5)
    for sample in all_samples():
        inputs = make_inputs(sample)
        for tangents in _tangent_sets(inputs, rng):
            with fwAD.dual_level(), np.errstate(all="ignore"):
                duals = [fwAD.make_dual(x.detach(), t) if t is not None else x
                         for x, t in zip(inputs, tangents)]
                try:
                    cr.manual_seed(0)
                    sample.call(*duals)
                except NotImplementedError:
                    pass                    # no forward rule: test_jvp_table checks it
    assert FAST_OPS <= compared, sorted(FAST_OPS - compared)


def test_what_a_program_cannot_replay_has_none():
    add = _programs.jvp_programs(elementwise.ADD, {"alpha": 1}, 2)
    assert add[1] is None and add[2] is None      # t[0] + ZERO: the tangent itself
    assert add[3] is not None
    maximum = _programs.jvp_programs(elementwise.MAXIMUM, {}, 2)
    assert maximum == (None,) * 4                 # F.where is not a ufunc
    constants, code, result = _programs.jvp_programs(elementwise.SIN, {}, 1)[1]
    assert code == ((np.cos, 1), (_programs.CODES["mul"], 0, 3)) and result == 4


def test_a_program_replays_the_formulas_calls():
    x, t = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    result = np.tanh(x)
    program = _programs.jvp_programs(elementwise.TANH, {}, 1)[1]
    np.testing.assert_array_equal(_programs.run_program(program, [t], [x], result),
                                  t * (1 - result * result))
