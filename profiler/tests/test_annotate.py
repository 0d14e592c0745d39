"""emit_nvtx / emit_itt, for real: the NVTX and ITT libraries load the test tool
named by their environment variable (tests/tools/*.c), which records each range
into a file read back here. Each run is a fresh process, since both libraries
read the variable at their first call."""
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

import chainrule as cr
from chainrule.autograd import profiler
from chainrule_profiler import annotate

SCRIPT = textwrap.dedent("""
    import sys
    import chainrule as cr
    from chainrule.autograd import profiler
    emit = getattr(profiler, sys.argv[1])
    x = cr.ones(2, 3, requires_grad=True)
    with emit(record_shapes=True):
        with profiler.record_function("step"):
            y = (x * 2).sum()
        y.backward()
    cr.ones(1) * 2          # outside: no range
""")


def _ranges(tmp_path, emit, env):
    record = tmp_path / "ranges.txt"
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, **env, **{"CHAINRULE_" + emit.split("_")[1].upper() + "_RECORD":
                                      str(record)})
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    subprocess.run([sys.executable, str(script), emit], env=env, check=True)
    return record.read_text().splitlines()


def _node(push, pop, name, seq=None):
    """A node's range inside its evaluate_function range (Note [reference event names])."""
    tail = f", stashed seq={seq}" if seq is not None else ""
    return [f"{push} autograd::engine::evaluate_function: {name}{tail}",
            f"{push} {name}{tail}", pop, pop]


def _expected(push, pop, mul_seq, sum_seq):
    return [f"{push} step",
            f"{push} aten::mul, seq={mul_seq}, sizes = [[2, 3], []]", pop,
            f"{push} aten::sum, seq={sum_seq}, sizes = [[2, 3]]", pop,
            pop] + \
        _node(push, pop, "SumBackward0", sum_seq) + _node(push, pop, "MulBackward0", mul_seq) + \
        _node(push, pop, "torch::autograd::AccumulateGrad")


def _check(lines, push, pop):
    assert len(lines) == 18, lines
    mul_seq = int(lines[1].split("seq=")[1].split(",")[0])
    sum_seq = int(lines[3].split("seq=")[1].split(",")[0])
    assert sum_seq == mul_seq + 1
    assert lines == _expected(push, pop, mul_seq, sum_seq)


def test_emit_nvtx_ranges(tmp_path, tool_library):
    pytest.importorskip("nvtx")
    lines = _ranges(tmp_path, "emit_nvtx",
                    {"NVTX_INJECTION64_PATH": tool_library("nvtx_recorder")})
    _check(lines, "push", "pop")


def test_emit_itt_ranges(tmp_path, tool_library):
    pytest.importorskip("ittapi")
    lines = _ranges(tmp_path, "emit_itt",
                    {"INTEL_LIBITTNOTIFY64": tool_library("itt_recorder")})
    _check(lines, "begin", "end")


@pytest.mark.parametrize("emit, package", [("emit_nvtx", "nvtx"), ("emit_itt", "ittapi")])
def test_missing_library_warns_once_and_does_nothing(emit, package, monkeypatch):
    monkeypatch.setitem(sys.modules, package, None)
    monkeypatch.setattr(annotate, "_warned", set())
    with pytest.warns(RuntimeWarning, match=f"'{package}' package"):
        with getattr(profiler, emit)():
            cr.ones(1) * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with getattr(profiler, emit)():
            cr.ones(1) * 2


def test_disabled_emit_does_nothing(monkeypatch):
    from chainrule._ops import _registry
    with profiler.emit_nvtx(enabled=False):
        assert _registry._dispatch is None


def test_annotation_texts():
    from chainrule_profiler import _state
    r = _state.new_range("mul", _state.FORWARD, None, None, 4)
    r[_state.SHAPES] = [[2], [2]]
    assert annotate.annotation(r, False) == "mul, seq=4"
    assert annotate.annotation(r, True) == "mul, seq=4, sizes = [[2], [2]]"
    node = _state.new_range("MulBackward0", _state.BACKWARD, None, None, 4)
    assert annotate.annotation(node, True) == "MulBackward0, stashed seq=4"
