"""export_chrome_trace (Note [chrome trace]) and export_stacks."""
import json
import threading

import chainrule as cr
from chainrule.autograd.profiler import profile, record_function


def _trace(prof, tmp_path):
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return json.load(f)["traceEvents"]


def test_trace_counts_nesting_and_flows(tmp_path):
    x = cr.ones(3, requires_grad=True)
    with profile() as prof:
        with record_function("step"):
            for _ in range(4):
                (x.exp() * 2).sum().backward()
    records = _trace(prof, tmp_path)
    slices = [r for r in records if r["ph"] == "X"]
    assert len(slices) == len(prof.function_events) == 1 + 4 * 11
    names = [s["name"] for s in slices]
    for name in ("aten::exp", "aten::mul", "aten::sum", "ExpBackward0", "MulBackward0",
                 "SumBackward0", "torch::autograd::AccumulateGrad",
                 "autograd::engine::evaluate_function: ExpBackward0",
                 "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"):
        assert names.count(name) == 4
    assert {s["cat"] for s in slices if s["name"] != "step"} == {"cpu_op"}
    step = next(s for s in slices if s["name"] == "step")
    assert step["cat"] == "user_annotation" and step["args"]["External id"] == 1
    for s in slices:          # everything nests inside the step's slice on its track
        assert s["tid"] == step["tid"]
        assert step["ts"] <= s["ts"] and s["ts"] + s["dur"] <= step["ts"] + step["dur"] + 1e-3
    starts = [r for r in records if r["ph"] == "s"]
    ends = [r for r in records if r["ph"] == "f"]
    assert len(starts) == len(ends) == 4 * 3         # one per forward/backward pair
    assert sorted(r["id"] for r in starts) == sorted(r["id"] for r in ends)
    by_id = {r["id"]: r for r in starts}
    for end in ends:
        assert by_id[end["id"]]["ts"] <= end["ts"]
        node = next(s for s in slices if s["ts"] == end["ts"] and s["name"].endswith("Backward0"))
        assert node["args"]["Sequence number"] == end["id"]    # ends at the node itself
    thread = prof.function_events[0].thread
    assert [r for r in records if r["ph"] == "M"][0]["args"]["name"] == \
        f"thread {thread} (python)"


def test_one_track_per_thread(tmp_path):
    def work():
        cr.ones(2) * 2

    with profile(use_kineto=True) as prof:
        cr.ones(2) + 1
        t = threading.Thread(target=work)
        t.start()
        t.join()
    records = _trace(prof, tmp_path)
    tracks = {r["tid"] for r in records if r["ph"] == "X"}
    named = {r["tid"] for r in records if r["ph"] == "M"}
    assert len(tracks) == 2 and tracks == named


def test_export_stacks(tmp_path):
    def model(x):
        return (x * 2).sum()

    with profile(with_stack=True) as prof:
        for _ in range(20):
            model(cr.ones(1000))
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines
    for line in lines:
        frames, value = line.rsplit(" ", 1)
        assert int(value) > 0
        parts = frames.split(";")
        assert parts[-1] in ("aten::mul", "aten::sum")
        assert parts[-2].endswith("model") and "test_export_stacks" in parts[-3]


def test_trace_layout_and_memory_instants(tmp_path):
    with profile(profile_memory=True, record_shapes=True) as prof:
        t = cr.ones(100, dtype=cr.float64).neg()
        del t                                        # freed outside any range
        u = cr.ones(2, 3) * 2
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        trace = json.load(f)
    assert {"schemaVersion", "deviceProperties", "displayTimeUnit", "traceEvents",
            "traceName"} <= set(trace)
    records = trace["traceEvents"]
    (memory,) = [r for r in records if r["name"] == "[memory]"]
    assert (memory["ph"], memory["cat"], memory["args"]["Bytes"]) == \
        ("i", "cpu_instant_event", -800)
    (mul,) = [r for r in records if r["name"] == "aten::mul"]
    assert mul["args"]["Input Dims"] == [[2, 3], []] and "Sequence number" in mul["args"]
    assert u.shape == (2, 3)
