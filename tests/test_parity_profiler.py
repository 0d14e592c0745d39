"""The profiler's rows against torch.autograd.profiler on the reference's example
(skips without torch). Names are compared without torch's ``aten::`` and
``torch::autograd::`` prefixes; chainrule's backward formulas run as ops only with
create_graph=True (profiler/README.md), so that is the run compared."""
import warnings

import pytest

import chainrule as cr
from chainrule.autograd.profiler import profile

torch = pytest.importorskip("torch")

ROWS = ("pow", "mul", "PowBackward0", "AccumulateGrad")


def _strip(name):
    for prefix in ("aten::", "torch::autograd::"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _torch_counts(n):
    x = torch.randn((1, 1), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.profiler.profile() as prof:
            for _ in range(n):
                y = x ** 2
                y.backward()
    counts = {_strip(e.key): e.count for e in prof.key_averages()}
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
        {"pow": 40, "mul": 40, "PowBackward0": 20, "AccumulateGrad": 20}


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
            if _strip(e.name) in ("exp", "mul", "sum") and e.sequence_nr >= 0:
                forward.setdefault(e.sequence_nr, _strip(e.name))
        return {e.name: forward[e.sequence_nr] for e in events if e.name.endswith("Backward0")
                and not e.name.startswith("autograd::")}

    assert pairs(cprof.function_events) == pairs(tprof.function_events) == \
        {"SumBackward0": "sum", "MulBackward0": "mul", "ExpBackward0": "exp"}
