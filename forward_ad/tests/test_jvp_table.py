"""Forward-mode tests generated from the derivative table, like core's
test_derivatives.py for VJPs: every Sample (core/tests/samples) runs in float64
(complex128 for complex samples) with a random tangent per differentiable input, and
the output tangents must equal

- central finite differences along the tangent, and
- the VJP through the inner-product identity Re<g, J t> = Re<J^H g, t> for a random g.

An op whose JVP the table declares NOT_IMPLEMENTED must raise the reference's message
naming it. Forward-over-reverse is checked the same way: the tangent of each sample's
VJP (a create_graph backward run on duals) against finite differences of the VJP.
"""
import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from chainrule._ops import _registry
from chainrule_forward_ad import _batched
from chainrule_forward_ad._batched import batched_dual_level, make_batched_dual

from jvp_support import (_call, _declares_no_jvp, _differentiable, _documented_refusal,  # noqa: F401
                         _float_outputs, _tangents)
from samples import all_samples
from samples._inputs import make_inputs

SAMPLES = all_samples()
EPS = 1e-6


def _forward_tangents(sample, inputs, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x.detach(), t) if t is not None else x
                 for x, t in zip(inputs, tangents)]
        outs = _call(sample, duals)
        return [_tangent_array(o) for o in outs]


def _tangent_array(out):
    tangent = fwAD.unpack_dual(out).tangent
    if tangent is None:
        return np.zeros(out.shape, out.detach().numpy().dtype)
    return tangent.detach().numpy()


def _finite_differences(sample, inputs, tangents):
    def shifted(sign):
        moved = [x.detach() + sign * EPS * t if t is not None else x
                 for x, t in zip(inputs, tangents)]
        return [o.detach().numpy() for o in _call(sample, moved)]
    plus, minus = shifted(1), shifted(-1)
    with np.errstate(invalid="ignore"):       # equal infinities (an empty logsumexp): 0
        return [np.where(p == m, 0, (p - m) / (2 * EPS)) for p, m in zip(plus, minus)]


def _inner_product_sides(sample, inputs, tangents, jvps, rng):
    outs = _call(sample, inputs)
    grads = []
    for o in outs:
        g = rng.standard_normal(o.shape)
        if o.is_complex():
            g = g + 1j * rng.standard_normal(o.shape)
        grads.append(cr.tensor(g, dtype=o.dtype))
    used = [(o, g) for o, g in zip(outs, grads) if o.requires_grad]
    diff = [x for x in inputs if _differentiable(x)]
    vjps = cr.autograd.grad([o for o, _ in used], diff, [g for _, g in used],
                            allow_unused=True, materialize_grads=True)
    # nan_to_num: an output may be nan (the mean of nothing), its tangent too
    left = sum(np.real(np.vdot(g.numpy(), np.nan_to_num(j))) for g, j in zip(grads, jvps))
    right = sum(np.real(np.vdot(v.numpy(), t.numpy()))
                for v, t in zip(vjps, [t for t in tangents if t is not None]))
    return left, right


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id() for s in SAMPLES])
def test_jvp(sample):
    rng = np.random.default_rng(1)
    inputs = make_inputs(sample)
    tangents = _tangents(inputs, rng)
    if _declares_no_jvp(sample):
        op = _registry.OPS[sample.op]
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with") as raised:
            _forward_tangents(sample, inputs, tangents)
        assert _registry.raised_by_marker(op, raised.value) or \
            f"with {sample.op} that does not support it" in str(raised.value), raised.value
        return
    try:
        jvps = _forward_tangents(sample, inputs, tangents)
    except NotImplementedError as e:      # a formula that refuses a case, saying so
        assert _documented_refusal(e), e
        return
    expected = _finite_differences(sample, inputs, tangents)
    assert len(jvps) == len(expected)
    atol, rtol = max(sample.atol, 1e-5) * 10, max(sample.rtol, 1e-3)
    for got, want in zip(jvps, expected):
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol)
    left, right = _inner_product_sides(sample, inputs, tangents, jvps, rng)
    assert abs(left - right) <= atol * 10 + rtol * max(abs(left), abs(right)), (left, right)


FOR_SAMPLES = [s for s in SAMPLES if s.gradgrad and not _declares_no_jvp(s)]


def _vjp_at(sample, inputs, cotangents):
    outs = [o for o in _call(sample, inputs) if o.requires_grad]
    diff = [x for x in inputs if _differentiable(x)]
    return cr.autograd.grad(outs, diff, cotangents[:len(outs)], create_graph=True,
                            allow_unused=True, materialize_grads=True)


def _cotangents(sample, inputs, rng):
    out = []
    for o in _call(sample, inputs):
        g = rng.standard_normal(o.shape)
        if o.is_complex():
            g = g + 1j * rng.standard_normal(o.shape)
        out.append(cr.tensor(g, dtype=o.dtype))
    return out


@pytest.mark.parametrize("sample", FOR_SAMPLES, ids=[s.id() for s in FOR_SAMPLES])
def test_forward_over_reverse(sample):
    rng = np.random.default_rng(2)
    inputs = make_inputs(sample)
    tangents = _tangents(inputs, rng)
    cotangents = _cotangents(sample, inputs, rng)

    def moved(sign):
        return [x.detach() + sign * EPS * t if t is not None else x
                for x, t in zip(inputs, tangents)]

    def at(xs):
        return [g.detach().numpy() for g in
                _vjp_at(sample, [x.requires_grad_() if t is not None else x
                                 for x, t in zip(xs, tangents)], cotangents)]
    try:
        with fwAD.dual_level():
            duals = [fwAD.make_dual(x, t) if t is not None else x
                     for x, t in zip(inputs, tangents)]
            got = [_tangent_array(g) for g in _vjp_at(sample, duals, cotangents)]
    except RuntimeError as e:                # a VJP or JVP the table does not implement
        assert _registry.raised_by_marker(_registry.OPS[sample.op], e) or \
            "Trying to use forward AD with" in str(e) or _documented_refusal(e), e
        return
    plus, minus = at(moved(1)), at(moved(-1))
    atol, rtol = max(sample.atol, 1e-5) * 10, max(sample.rtol, 1e-3)
    for g, p, m in zip(got, plus, minus):
        np.testing.assert_allclose(g, (p - m) / (2 * EPS), atol=atol, rtol=rtol)


def test_every_op_of_the_table_is_covered():
    covered = {s.op for s in SAMPLES}
    assert not sorted(set(_registry.OPS) - covered)


# --- Note [batched tangents]: one pass with B directions equals B passes ------------------
BATCHED_SAMPLES = [s for s in SAMPLES if not _declares_no_jvp(s)]
BATCH = 3


# Ops whose batched JVP runs one formula call per direction (their formula reads values
# outside the table under vmap), and why; asserted exactly (every other op runs once).
ROW_BY_ROW = {}


@pytest.mark.parametrize("sample", BATCHED_SAMPLES, ids=[s.id() for s in BATCHED_SAMPLES])
def test_batched_tangents_equal_one_pass_per_direction(sample):
    _batched.ROW_LOG = log = set()
    try:
        _check_batched_tangents(sample)
    finally:
        _batched.ROW_LOG = None
    assert log <= set(ROW_BY_ROW), f"{sorted(log)} ran per direction"
    ROWS_SEEN.update(log)


ROWS_SEEN = set()


def test_row_by_row_ops_are_exactly_the_listed_ones():
    for sample in BATCHED_SAMPLES:
        if sample.op in ROW_BY_ROW and sample.op not in ROWS_SEEN:
            test_batched_tangents_equal_one_pass_per_direction(sample)
    assert ROWS_SEEN == set(ROW_BY_ROW)


def _check_batched_tangents(sample):
    rng = np.random.default_rng(3)
    inputs = make_inputs(sample)
    rows = [_tangents(inputs, rng) for _ in range(BATCH)]
    try:
        expected = [_forward_tangents(sample, inputs, row) for row in rows]
    except NotImplementedError as e:
        assert _documented_refusal(e), e
        return
    stacked = [None if row0 is None else cr.stack([r[i] for r in rows])
               for i, row0 in enumerate(rows[0])]
    with batched_dual_level(BATCH):
        duals = [make_batched_dual(x.detach(), t) if t is not None else x
                 for x, t in zip(inputs, stacked)]
        try:
            outs = _call(sample, duals)
        except NotImplementedError as e:     # documented: in-place on views
            assert "batched tangents" in str(e) or _documented_refusal(e), e
            return
        got = [_batched_tangent(o) for o in outs]
    for k, g in enumerate(got):
        want = np.stack([e[k] for e in expected])
        np.testing.assert_allclose(g, want, atol=1e-10, rtol=1e-10)


def _batched_tangent(out):
    tangent = fwAD.unpack_dual(out).tangent
    if tangent is None:
        return np.zeros((BATCH,) + tuple(out.shape), out.detach().numpy().dtype)
    return tangent.detach().numpy()


# --- Note [symbolic zero tangents]: a missing tangent acts as a zero one ----------------
PARTIAL_SAMPLES = [s for s in SAMPLES if not _declares_no_jvp(s)]


@pytest.mark.parametrize("sample", PARTIAL_SAMPLES, ids=[s.id() for s in PARTIAL_SAMPLES])
def test_missing_tangents_equal_zero_tangents(sample):
    # each differentiable input alone carries a tangent: the others' missing tangents
    # (ZERO, or zero arrays where a formula needs them) must give what zero tangents give
    rng = np.random.default_rng(4)
    inputs = make_inputs(sample)
    tangents = _tangents(inputs, rng)
    live = [i for i, t in enumerate(tangents) if t is not None]
    inputs = [x.detach() if isinstance(x, cr.Tensor) else x for x in inputs]  # raw path
    for keep in (live if len(live) > 1 else []):
        only = [t if i == keep else None for i, t in enumerate(tangents)]
        zeros = [cr.zeros_like(t) if t is not None and i != keep else t
                 for i, t in enumerate(tangents)]
        try:
            got = _forward_tangents(sample, inputs, only)
            want = _forward_tangents(sample, inputs, zeros)
        except NotImplementedError as e:
            assert _documented_refusal(e), e
            return
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=1e-12, rtol=1e-12)


def test_symbolic_zero_meets_only_arithmetic():
    from chainrule_forward_ad._tangents import ZERO
    a = np.ones(2)
    assert ZERO * a is ZERO and a * ZERO is ZERO and a @ ZERO is ZERO and ZERO / a is ZERO
    assert a + ZERO is a and ZERO + a is a and a - ZERO is a and -ZERO is ZERO
    np.testing.assert_array_equal(ZERO - a, -a)
    for refused in (lambda: np.cos(ZERO), lambda: np.asarray(ZERO), lambda: a / ZERO,
                    lambda: ZERO[0], lambda: bool(ZERO), lambda: ZERO == a,
                    lambda: np.where(a > 0, ZERO, a), lambda: ZERO ** 2):
        with pytest.raises(TypeError):
            refused()


def test_tangent_read_twice_is_the_same_tensor():
    with fwAD.dual_level():
        y = fwAD.make_dual(cr.ones(3, dtype=cr.float64), cr.ones(3, dtype=cr.float64)).sin()
        first = fwAD.unpack_dual(y).tangent
        assert fwAD.unpack_dual(y).tangent is first
        first.mul_(2)                                  # the stored tangent itself
        np.testing.assert_allclose(fwAD.unpack_dual(y * 1.0).tangent.numpy(),
                                   2 * np.cos(np.ones(3)))
