"""chainrule.profiler: profile with activities, schedule, on_trace_ready, step()."""
import json
import os

import pytest

import chainrule as cr
from chainrule.profiler import (ProfilerAction, ProfilerActivity, profile, record_function,
                                schedule, tensorboard_trace_handler)


def test_schedule_cycles():
    s = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    actions = [s(i) for i in range(11)]
    A = ProfilerAction
    assert actions == [A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE,
                       A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE]
    with pytest.raises(ValueError):
        schedule(wait=0, warmup=0, active=0)


def test_only_active_steps_are_recorded():
    x = cr.ones(2, requires_grad=True)
    cycles = []
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: cycles.append(p.events())) as prof:
        for step in range(6):
            with record_function(f"work{step}"):
                (x * 2).sum().backward()
            prof.step()
    assert len(cycles) == 1
    names = [e.name for e in cycles[0]]
    # Each step is a ProfilerStep* row, numbered only in the trace (trace_name).
    assert [e.trace_name for e in cycles[0] if e.name == "ProfilerStep*"] == \
        ["ProfilerStep#2", "ProfilerStep#3"]
    assert {n for n in names if n.startswith("work")} == {"work2", "work3"}
    assert names.count("aten::mul") == 2
    step2 = next(e for e in cycles[0] if e.trace_name == "ProfilerStep#2")
    assert [c.name for c in step2.cpu_children] == ["work2"]
    assert step2.scope == 7


def test_without_schedule_everything_until_exit():
    seen = []
    with profile(on_trace_ready=lambda p: seen.append(p.key_averages())) as prof:
        cr.ones(2) * 2
        prof.step()
        cr.ones(2) + 1
    (averages,) = seen
    assert {a.key: a.count for a in averages} == {"ProfilerStep*": 2, "aten::mul": 1,
                                                  "aten::add": 1}


def test_tensorboard_trace_handler_writes_one_trace_per_active_cycle(tmp_path):
    folder = str(tmp_path / "traces")
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=3),
                 on_trace_ready=tensorboard_trace_handler(folder, worker_name="w")) as prof:
        for _ in range(5):
            cr.ones(2) * 2
            prof.step()
    files = sorted(os.listdir(folder))
    assert len(files) == 3 and all(f.startswith("w.") and f.endswith(".pt.trace.json")
                                   for f in files)
    for name in files:
        with open(os.path.join(folder, name)) as f:
            slices = [r["name"] for r in json.load(f)["traceEvents"] if r["ph"] == "X"]
        assert slices.count("aten::mul") == 1


def test_records_every_thread():
    import threading

    def work():
        cr.ones(2) * 2

    with profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
    mul = [e for e in prof.events() if e.name == "aten::mul"]
    (step,) = [e for e in prof.events() if e.name == "ProfilerStep*"]
    assert len(mul) == 1 and mul[0].thread != step.thread and mul[0].cpu_parent is None
