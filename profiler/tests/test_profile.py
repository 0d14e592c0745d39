"""chainrule.autograd.profiler.profile and record_function: what is recorded, under
both engines (the suite runs under each)."""
import threading
import warnings

import pytest

import chainrule as cr
from chainrule._ops import _registry
from chainrule.autograd import engine
from chainrule.autograd.profiler import profile, record_function


def _counts(prof):
    return {e.key: e.count for e in prof.key_averages()}


ACC = "torch::autograd::AccumulateGrad"
EVAL = "autograd::engine::evaluate_function: "


def test_seeds_example_rows_and_counts(leaf):
    with profile() as prof:
        for _ in range(100):
            y = leaf ** 2
            y.backward()
    # The reference's rows (Note [reference event names]), less the ops its
    # backward runs inside the nodes (profiler/README.md).
    assert _counts(prof) == {"aten::pow": 100, EVAL + "PowBackward0": 100, "PowBackward0": 100,
                             EVAL + ACC: 100, ACC: 100}
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    for name in ("aten::pow", "PowBackward0", ACC, EVAL + "PowBackward0"):
        assert name in table


def test_create_graph_backward_shows_the_ops_it_runs(leaf):
    # With create_graph the backward's formulas run as ops (as the reference's
    # backward always does): PowBackward0 runs pow and mul.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile() as prof:
            for _ in range(100):
                y = leaf ** 2
                y.backward(create_graph=True)
                leaf.grad = None
    counts = _counts(prof)
    assert counts["aten::pow"] == 200 and counts["aten::mul"] == 200, counts
    assert counts["PowBackward0"] == 100 and counts[ACC] == 100
    node = next(e for e in prof.function_events if e.name == "PowBackward0")
    assert node.cpu_parent.name == EVAL + "PowBackward0"
    assert sorted(c.name for c in node.cpu_children) == ["aten::mul", "aten::mul", "aten::pow"]


def test_times_nest_and_self_time_excludes_children():
    x = cr.ones(3, requires_grad=True)
    with profile() as prof:
        with record_function("outer"):
            (x * 2).sum().backward()
    outer = prof.function_events[0]
    assert outer.name == "outer" and outer.cpu_parent is None
    assert [c.name for c in outer.cpu_children] == \
        ["aten::mul", "aten::sum", EVAL + "SumBackward0", EVAL + "MulBackward0", EVAL + ACC]
    assert [[c.name for c in e.cpu_children] for e in outer.cpu_children[2:]] == \
        [["SumBackward0"], ["MulBackward0"], [ACC]]
    for child in outer.cpu_children:
        assert outer.time_range.start <= child.time_range.start <= child.time_range.end \
            <= outer.time_range.end
        assert child.cpu_parent is outer
    expected = outer.cpu_time_total - sum(c.cpu_time_total for c in outer.cpu_children)
    assert outer.self_cpu_time_total == pytest.approx(expected)
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    assert prof.self_cpu_time_total == pytest.approx(outer.cpu_time_total)


def test_sequence_numbers_pair_forward_ops_with_their_nodes():
    x = cr.ones(2, requires_grad=True)
    with profile() as prof:
        y = x.exp()
        z = (y * y).sum()
        z.backward()
    forward = {e.name: e.sequence_nr for e in prof.function_events if e.kind == "forward"}
    backward = {e.name: e.sequence_nr for e in prof.function_events if e.kind == "backward"}
    assert forward["aten::exp"] == y.grad_fn._sequence_nr()
    assert backward == {"ExpBackward0": forward["aten::exp"], "MulBackward0": forward["aten::mul"],
                        "SumBackward0": forward["aten::sum"], ACC: -1}
    assert all(e.sequence_nr == e.cpu_parent.sequence_nr for e in prof.function_events
               if e.kind == "backward")
    assert {e.fwd_thread for e in prof.function_events if e.sequence_nr >= 0
            and e.kind in ("backward", "engine")} == {prof.function_events[0].thread}
    assert {e.fwd_thread for e in prof.function_events if e.kind == "forward"} == {0}


def test_double_backward_sequence_numbers():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    with profile() as prof:
        (g,) = cr.autograd.grad((x ** 3).sum(), x, create_graph=True)
        (h,) = cr.autograd.grad(g.sum(), x)
    events = prof.function_events
    made_in_backward = [e for e in events if e.kind == "forward" and e.sequence_nr >= 0
                        and e.cpu_parent is not None and e.cpu_parent.kind == "backward"]
    assert made_in_backward, "create_graph backward records ops with sequence numbers"
    forward_seqs = {e.sequence_nr for e in events if e.kind == "forward"}
    second = [e for e in events if e.kind == "backward"][-4:]
    assert any(e.sequence_nr in {f.sequence_nr for f in made_in_backward} for e in second)
    assert all(e.sequence_nr in forward_seqs for e in events
               if e.kind == "backward" and e.sequence_nr >= 0)
    assert h.tolist() == [6.0, 12.0]


def test_custom_function_forward_and_backward():
    class Square(cr.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = cr.ones(3, requires_grad=True)
    with profile() as prof:
        Square.apply(x).sum().backward()
    by_name = {e.name: e for e in prof.function_events}
    assert by_name["Square"].kind == "forward"
    assert by_name["SquareBackward"].kind == "backward"
    assert by_name["Square"].sequence_nr == by_name["SquareBackward"].sequence_nr >= 0
    assert [c.name for c in by_name["Square"].cpu_children] == ["aten::mul"]
    assert by_name["SquareBackward"].cpu_parent is by_name[EVAL + "SquareBackward"]


def test_shapes_memory_and_flops_of_known_ops():
    a, b = cr.ones(2, 3), cr.ones(3, 4)
    with profile(record_shapes=True, profile_memory=True, with_flops=True) as prof:
        c = a @ b
        d = cr.mm(a, b) * 2
    mm = [e for e in prof.function_events if e.name in ("aten::matmul", "aten::mm")]
    assert [e.input_shapes for e in mm] == [[[2, 3], [3, 4]]] * 2
    assert [e.flops for e in mm] == [2 * 2 * 4 * 3] * 2
    assert all(e.cpu_memory_usage == 2 * 4 * 4 for e in mm)      # float32 (2, 4)
    mul = next(e for e in prof.function_events if e.name == "aten::mul")
    assert mul.flops == 8
    assert c.shape == d.shape
    grouped = prof.key_averages(group_by_input_shape=True)
    assert any(avg.input_shapes == [[2, 4], [2, 4]] or avg.input_shapes == [[2, 4], []]
               or avg.key == "aten::mul" for avg in grouped)


def test_memory_freed_is_recorded():
    with profile(profile_memory=True) as prof:
        with record_function("scope"):
            t = cr.ones(100, dtype=cr.float64) * 2
            del t
    scope = prof.function_events[0]
    mul = scope.cpu_children[0]
    assert mul.cpu_memory_usage == 800
    assert scope.cpu_memory_usage == -800          # freed inside the scope
    assert scope.self_cpu_memory_usage == -1600


def test_conv2d_flops():
    x, w = cr.ones(1, 3, 8, 8), cr.ones(4, 3, 3, 3)
    with profile(with_flops=True, record_shapes=True) as prof:
        cr.nn.functional.conv2d(x, w, padding=1)
    conv = next(e for e in prof.function_events if e.name == "aten::convolution")
    assert conv.flops == 2 * (1 * 4 * 8 * 8) * (3 * 3 * 3)


def test_stack_records_the_callers_line():
    x = cr.ones(2)
    with profile(with_stack=True) as prof:
        x * 2                                       # the line the stack must name
    (mul,) = prof.function_events
    assert __file__ in mul.stack[0] and "test_stack_records_the_callers_line" in mul.stack[0]
    assert not any("chainrule" + "/_ops" in frame for frame in mul.stack)
    by_stack = prof.key_averages(group_by_stack_n=1)
    assert by_stack[0].stack == mul.stack[:1]


def test_record_function_as_decorator_and_nesting():
    @record_function("step")
    def step(x):
        with record_function("inner"):
            return x + 1

    with profile() as prof:
        step(cr.ones(2))
        step(cr.ones(2))
    steps = [e for e in prof.function_events if e.name == "step"]
    assert len(steps) == 2
    assert all([c.name for c in s.cpu_children] == ["inner"] for s in steps)
    assert all([c.name for c in s.cpu_children[0].cpu_children] == ["aten::add"] for s in steps)
    assert {e.scope for e in prof.function_events} == {0, 7}      # an op's, a user's range


def test_a_profile_sees_only_its_thread_unless_asked():
    def work():
        with record_function("worker"):
            cr.ones(2) * 3

    def run_in_thread():
        t = threading.Thread(target=work)
        t.start()
        t.join()

    with profile() as mine:
        cr.ones(2) + 1
        run_in_thread()
    assert [e.name for e in mine.function_events] == ["aten::add"]
    with profile(use_kineto=True) as every:
        cr.ones(2) + 1
        run_in_thread()
    here = every.function_events[0].thread       # threads numbered as they first record
    assert 1 <= here < max(e.thread for e in every.function_events)
    names = {(e.name, e.thread == here) for e in every.function_events}
    assert names == {("aten::add", True), ("worker", False), ("aten::mul", False)}
    worker = next(e for e in every.function_events if e.name == "worker")
    assert [c.name for c in worker.cpu_children] == ["aten::mul"]


def test_record_function_nests_per_thread():
    barrier = threading.Barrier(2)

    def work(name):
        with record_function(name):
            barrier.wait()
            cr.ones(2) * 2
            barrier.wait()

    with profile(use_kineto=True) as prof:
        threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for name in ("a", "b"):
        outer = next(e for e in prof.function_events if e.name == name)
        assert [c.name for c in outer.cpu_children] == ["aten::mul"]
        assert outer.cpu_children[0].thread == outer.thread


def test_slots_are_empty_outside_a_profile():
    assert _registry._dispatch is None and engine._node_observer is None
    with profile():
        assert _registry._dispatch is not None and engine._node_observer is not None
        with profile():
            pass
        assert engine._node_observer is not None
    assert _registry._dispatch is None and engine._node_observer is None


def test_slots_are_emptied_when_the_profiled_code_raises():
    with pytest.raises(ValueError):
        with profile() as prof:
            cr.ones(1) * 2
            raise ValueError("boom")
    assert _registry._dispatch is None and engine._node_observer is None
    assert [e.name for e in prof.function_events] == ["aten::mul"]


def test_a_failing_backward_closes_its_node():
    x = cr.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: (_ for _ in ()).throw(KeyError("hook")))
    with profile() as prof:
        with pytest.raises(KeyError):
            y.sum().backward()
    names = [e.name for e in prof.function_events]
    assert names[-1] == "SumBackward0"     # MulBackward0 never runs: the hook raised first
    (x * 2).sum().backward()               # the library stays usable
    assert x.grad.tolist() == [2.0, 2.0]


def test_disabled_profile_records_nothing():
    with profile(enabled=False) as prof:
        assert _registry._dispatch is None
        cr.ones(1) * 2
    assert prof.function_events is None


def test_results_before_the_end_raise():
    prof = profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.key_averages()


def test_total_average_sums_everything():
    with profile() as prof:
        cr.ones(2) * 2 + 1
    total = prof.total_average()
    assert total.key == "Total" and total.count == 2
    assert total.self_cpu_time_total == pytest.approx(prof.self_cpu_time_total)


def test_use_cpu_false_needs_kineto():
    with pytest.raises(AssertionError):
        profile(use_cpu=False)
    with pytest.warns(FutureWarning, match="use_device"):
        profile(use_cuda=True)


def test_ops_under_grad_mode_carry_the_next_sequence_number():
    # As the reference: an op run with grad mode on carries the number the next node
    # gets, whether or not it makes one; under no_grad it carries -1.
    a, x = cr.ones(3), cr.ones(3, requires_grad=True)
    with profile() as prof:
        a * 2
        y = x * 3
        with cr.no_grad():
            x * 4
        a.neg()
    seq = y.grad_fn._sequence_nr()
    assert [(e.name, e.sequence_nr) for e in prof.function_events] == \
        [("aten::mul", seq), ("aten::mul", seq), ("aten::mul", -1), ("aten::neg", seq + 1)]
    assert [e.id for e in prof.function_events] == [1, 2, 3, 4]


def test_node_input_shapes_are_the_gradients_it_receives():
    x = cr.ones(2, 3, requires_grad=True)
    a, b = x.unbind(0)
    with profile(record_shapes=True) as prof:
        a.sum().backward()                 # b's gradient never arrives at UnbindBackward0
    shapes = {e.name: e.input_shapes for e in prof.function_events if e.scope == 1}
    assert shapes == {"SumBackward0": [[]], "UnbindBackward0": [[3], []], ACC: [[2, 3]]}
    assert all(e.input_shapes == [] for e in prof.function_events if e.kind == "engine")
