"""vmap and is_grads_batched on every op of the derivative table, generated from the
Samples (core/tests/samples/): each op once on a batch against the op per entry, and
one batched backward against one backward per grad_output row. The ops that still
run per entry (Note [batching rules by family]) are listed here exactly."""
import numpy as np
import pytest

import chainrule as cr
from chainrule._cpu_stream import one_draw_for
from chainrule._ops import _batching_rules, _registry
from chainrule.autograd import batched as _batched_grad

from samples import all_samples
from samples._inputs import make_inputs

SAMPLES = all_samples()
IDS = [s.id() for s in SAMPLES]
BATCH = 3

# Ops whose batching rule is the per-entry loop, and why (asserted exactly below).
LOOPED = {
    "masked_scatter": "how much of the source an entry uses depends on its mask (the "
                      "reference loops too)",
}
# Ops with a rule that runs per entry for some arguments only.
SOME_ARGUMENTS_PER_ENTRY = {
    "conv_tbc": "a batched input with a batched weight or bias",
}
# Ops some of whose public functions compute on values outside the table (indices,
# targets, domain checks) or draw random numbers per entry: vmap then evaluates such a
# call once per entry (Note [batched tensors]).
WHOLE_CALL_PER_ENTRY = {
    "add": "alpha_dropout draws per entry", "mul": "dropout draws per entry",
    "where": "rrelu draws per entry",
    "view_as_complex": "checks strides", "embedding": "max_norm renormalises by value",
    "linalg_lstsq": "the residuals' shape depends on every entry's rank",
}
WHOLE_CALL_PER_ENTRY["fft_c2r"] = "istft checks its window envelope's minimum"
# Ops whose backward formulas compute on values outside the table: is_grads_batched
# runs one backward per row for them (with a one-pass backward for every other op).
BACKWARD_PER_ROW = {"linalg_eig": "eigenvector phases", "linalg_eigh": "eigenvalue gaps",
                    "linalg_svd": "singular value gaps"}
# batch_norm in training updates its (unbatched) running statistics in place with
# batched values: the reference's batch-norm error under vmap.
INPLACE_INTO_UNBATCHED = {"native_batch_norm"}
# Public functions the reference refuses under vmap with a batched argument: they branch
# on its values in Python (its data-dependent control flow error).
CONTROL_FLOW = {"log": "gaussian_nll_loss checks `torch.any(var < 0)`"}
_WHOLE_CALL = {"ValuesOutsideTable", "_DrawPerEntry"}


def _batched_inputs(sample):
    """Per entry inputs (a list of BATCH input lists) and the stacked batch, in_dims."""
    rows = [make_inputs(sample, seed=i) for i in range(BATCH)]
    batch, dims = [], []
    random = [isinstance(i, tuple) for i in sample.inputs]
    if not any(random):         # fixed values only: a batch of copies of the floating ones
        random = [isinstance(v, cr.Tensor) and v.is_floating_point() for v in rows[0]]
    for k, value in enumerate(rows[0]):
        if random[k]:
            stacked = cr.stack([r[k].detach() for r in rows])
            batch.append(stacked.requires_grad_(value.requires_grad))
            dims.append(0)
        else:
            batch.append(value)
            dims.append(None)
    return rows, batch, tuple(dims)


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _leaves(o)]
    return [out] if isinstance(out, cr.Tensor) else []


def _same(a, b, sample):
    a, b = np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy())
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.allclose(a, b, atol=1e-8, rtol=1e-6, equal_nan=True)


def _with_log(fn):
    _batching_rules.LOOP_LOG = log = set()
    try:
        return fn(), log
    finally:
        _batching_rules.LOOP_LOG = None


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_vmap_matches_per_entry(sample):
    rows, batch, dims = _batched_inputs(sample)
    cr.manual_seed(0)            # random ops (dropout): one draw for the batch, sliced
    with one_draw_for(BATCH) as draws:      # (Note [one draw for a batch])
        expected = [draws.start(i) or _leaves(sample.call(*r)) for i, r in enumerate(rows)]
    cr.manual_seed(0)
    mapped = cr.vmap(sample.call, in_dims=dims, randomness="different")
    try:
        got, log = _with_log(lambda: _leaves(mapped(*batch)))
    except RuntimeError as e:
        if "data-dependent control flow" in str(e):
            assert sample.op in CONTROL_FLOW, e
            return
        assert sample.op in INPLACE_INTO_UNBATCHED and (
            "running_mean or running_var" in str(e) or "vmap: inplace arithmetic" in str(e))
        return
    for k, g in enumerate(got):
        _same(g, cr.stack([e[k] for e in expected]), sample)
    if log & _WHOLE_CALL:
        assert sample.op in WHOLE_CALL_PER_ENTRY, f"{sample.op}: the call ran per entry"
    assert log & {sample.op} <= set(LOOPED) | set(SOME_ARGUMENTS_PER_ENTRY), \
        f"{sample.op} ran per entry under vmap"


def _differentiable_outputs(sample):
    inputs = make_inputs(sample)
    wrt = [t for t in inputs if isinstance(t, cr.Tensor) and t.requires_grad]
    outs = [o for o in _leaves(sample.call(*inputs)) if o.requires_grad]
    return wrt, outs


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_is_grads_batched_matches_loop(sample):
    wrt, outs = _differentiable_outputs(sample)
    if not outs or not wrt:
        return
    cr.manual_seed(0)
    cotangents = [cr.randn(BATCH, *o.shape, dtype=o.dtype) for o in outs]
    try:
        expected = _batched_grad._looped_grad(outs, wrt, cotangents, BATCH, True, False,
                                              True, True)
    except RuntimeError as error:
        assert _registry.raised_by_marker(_registry.OPS[sample.op], error), error
        return
    got, log = _with_log(lambda: cr.autograd.grad(
        outs, wrt, cotangents, retain_graph=True, allow_unused=True, materialize_grads=True,
        is_grads_batched=True))
    for g, e in zip(got, expected):
        _same(g, e, sample)
    if "ValuesOutsideTable" in log:
        assert sample.op in BACKWARD_PER_ROW, f"{sample.op}: one backward per row"
    assert log - {"ValuesOutsideTable"} <= set(LOOPED) | set(SOME_ARGUMENTS_PER_ENTRY), log


def test_looped_ops_are_exactly_the_listed_ones():
    assert _batching_rules.LOOPED == frozenset(LOOPED), \
        sorted(_batching_rules.LOOPED ^ frozenset(LOOPED))
