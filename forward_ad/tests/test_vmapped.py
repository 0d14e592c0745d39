"""Tangents through vmap (Note [tangents of batched tensors]), generated from every
Sample of the derivative table: ``vmap`` of a forward-mode evaluation, and a
forward-mode evaluation of a ``vmap``, against one evaluation per entry. Both must run
the function once: core's vmap evaluates it per entry only where it does so without
tangents too (random draws, values read outside the table)."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from chainrule._ops import _batching_rules
from chainrule._cpu_stream import one_draw_for

from samples import all_samples
from samples._inputs import make_inputs
from jvp_support import _call, _declares_no_jvp, _documented_refusal, _tangents

SAMPLES = [s for s in all_samples() if not _declares_no_jvp(s)]
IDS = [s.id() for s in SAMPLES]
BATCH = 3
_WHOLE_CALL = {"ValuesOutsideTable", "_DrawPerEntry"}


def _entries(sample):
    """Per entry: inputs (the differentiable ones differ, the others are entry 0's) and
    tangents; and which positions are differentiable."""
    first = make_inputs(sample)
    rng = np.random.default_rng(5)
    live = [t is not None for t in _tangents(first, rng)]
    rows = []
    for k in range(BATCH):
        fresh = make_inputs(sample, seed=k) if k else first
        rows.append([x if d else y for x, y, d in zip(fresh, first, live)])
    return rows, [_tangents(row, rng) for row in rows], live


def _per_entry(sample, rows, tangents):
    out = []        # random ops (dropout): one draw for the batch, sliced per entry
    with one_draw_for(len(rows)) as draws:    # (Note [one draw for a batch])
        for i, (row, row_t) in enumerate(zip(rows, tangents)):
            draws.start(i)
            with fwAD.dual_level():
                duals = [fwAD.make_dual(x.detach(), t) if t is not None else x
                         for x, t in zip(row, row_t)]
                out.append([_tangent(o) for o in _call(sample, duals)])
    return out


def _tangent(out):
    tangent = fwAD.unpack_dual(out).tangent
    return cr.zeros_like(out).detach() if tangent is None else tangent.detach()


def _stacked(rows, live):
    return [cr.stack([r[k].detach() for r in rows]) for k, d in enumerate(live) if d]


def _filled(template, live, values):
    values = iter(values)
    return [next(values) if d else x for x, d in zip(template, live)]


def _vmap_of_jvp(sample, rows, tangents, live):
    def entry(*args):
        primals, tans = args[:len(args) // 2], args[len(args) // 2:]
        with fwAD.dual_level():
            duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tans)]
            return tuple(_tangent(o) for o in _call(sample, _filled(rows[0], live, duals)))
    return cr.vmap(entry, randomness="different")(*_stacked(rows, live),
                                                   *_stacked(tangents, live))


def _jvp_of_vmap(sample, rows, tangents, live):
    entry = cr.vmap(lambda *ps: tuple(_call(sample, _filled(rows[0], live, ps))),
                    randomness="different")
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(_stacked(rows, live),
                                                       _stacked(tangents, live))]
        return tuple(_tangent(o) for o in entry(*duals))


def _plain_vmap_log(sample, rows, live):
    """Core's loop log of the same vmap without tangents."""
    _batching_rules.LOOP_LOG = log = set()
    try:
        cr.vmap(lambda *ps: tuple(_call(sample, _filled(rows[0], live, ps))),
                randomness="different")(*_stacked(rows, live))
    finally:
        _batching_rules.LOOP_LOG = None
    return log


@pytest.mark.parametrize("nesting", [_vmap_of_jvp, _jvp_of_vmap], ids=["vmap_jvp", "jvp_vmap"])
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_tangents_through_vmap_match_per_entry(sample, nesting):
    rows, tangents, live = _entries(sample)
    if not any(live):
        return
    try:
        expected = _per_entry(sample, rows, tangents)
        plain_log = _plain_vmap_log(sample, rows, live)
    except (NotImplementedError, RuntimeError) as e:     # refused with or without vmap
        assert _documented_refusal(e) or "vmap" in str(e) or "Trying to use forward AD" in \
            str(e), e
        return
    _batching_rules.LOOP_LOG = log = set()
    try:
        got = nesting(sample, rows, tangents, live)
    except NotImplementedError as e:       # documented: in-place on views of duals
        assert "batched tangents" in str(e) or _documented_refusal(e), e
        return
    finally:
        _batching_rules.LOOP_LOG = None
    for k, g in enumerate(got):
        want = np.stack([e[k].numpy() for e in expected])
        np.testing.assert_allclose(g.numpy(), want, atol=1e-8, rtol=1e-6)
    assert log & _WHOLE_CALL <= plain_log, f"tangents made vmap run per entry: {log}"
