"""The profiler's events against torch.autograd.profiler (skips without torch): the
same names (Note [reference event names] in profiler/chainrule_profiler/_state.py),
counts, nesting, sequence numbers and node input shapes. chainrule's backward
formulas run as ops only with create_graph=True (profiler/README.md), so that is the
run compared where the ops inside a node count."""
import warnings

import pytest

import chainrule as cr
from chainrule.autograd.profiler import profile

torch = pytest.importorskip("torch")

EVAL = "autograd::engine::evaluate_function: "
ACC = "torch::autograd::AccumulateGrad"
ROWS = ("aten::pow", "aten::mul", "PowBackward0", ACC, EVAL + "PowBackward0", EVAL + ACC)


def _torch_counts(n):
    x = torch.randn((1, 1), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.profiler.profile() as prof:
            for _ in range(n):
                y = x ** 2
                y.backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    return {name: counts.get(name) for name in ROWS}


def _chainrule_counts(n):
    x = cr.randn(1, 1, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile() as prof:
            for _ in range(n):
                y = x ** 2
                y.backward(create_graph=True)
                x.grad = None
    counts = {e.key: e.count for e in prof.key_averages()}
    return {name: counts.get(name) for name in ROWS}


def test_seeds_example_rows_match_torch():
    assert _chainrule_counts(20) == _torch_counts(20) == \
        {"aten::pow": 40, "aten::mul": 40, "PowBackward0": 20, ACC: 20,
         EVAL + "PowBackward0": 20, EVAL + ACC: 20}


def test_sequence_numbers_pair_like_torch():
    """In both, each backward node's sequence number is its forward op's."""
    tx = torch.ones(3, requires_grad=True)
    with torch.autograd.profiler.profile() as tprof:
        (tx.exp() * 2).sum().backward()
    cx = cr.ones(3, requires_grad=True)
    with profile() as cprof:
        (cx.exp() * 2).sum().backward()

    def pairs(events):
        forward = {}
        for e in events:
            if e.name in ("aten::exp", "aten::mul", "aten::sum") and e.sequence_nr >= 0:
                forward.setdefault(e.sequence_nr, e.name)
        return {e.name: forward[e.sequence_nr] for e in events if e.scope == 1
                and e.sequence_nr >= 0}

    assert pairs(cprof.function_events) == pairs(tprof.function_events) == \
        {"SumBackward0": "aten::sum", "MulBackward0": "aten::mul", "ExpBackward0": "aten::exp"}


def _engine_events(lib, prof_cls):
    """(name, parent, scope, input shapes, fwd_thread given, sequence number of the
    parent is its own) of each backward node and evaluate_function range of a
    broadcasting backward with a custom Function, in order."""
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    w = lib.ones(2, 3, requires_grad=True)
    b = lib.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with prof_cls(record_shapes=True) as prof:
            Twice.apply(w + b).sum().backward()
    rows = []
    for e in prof.function_events:
        if e.scope == 1 or e.name.startswith(EVAL):
            parent = e.cpu_parent
            rows.append((e.name, parent.name if parent is not None else None, e.scope,
                         e.input_shapes, e.fwd_thread == (e.thread if e.sequence_nr >= 0 else 0),
                         parent is None or parent.sequence_nr == e.sequence_nr))
    return rows


def test_nodes_nest_in_evaluate_function_ranges_like_torch():
    def ordered(rows):        # AccumulateGrad runs at the pass's end in chainrule
        return sorted(rows, key=lambda row: ACC in row[0])
    expected = _engine_events(torch, torch.autograd.profiler.profile)
    assert ordered(_engine_events(cr, profile)) == ordered(expected)
    assert [row[0] for row in expected[:4]] == [EVAL + "SumBackward0", "SumBackward0",
                                               EVAL + "TwiceBackward", "TwiceBackward"]
