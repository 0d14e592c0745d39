"""Programs written for torch (tests/programs/*.py) print the same words and numbers
when ``torch`` is chainrule: each runs once with real torch and once with an import
alias that maps ``torch`` and ``torch.X`` onto ``chainrule`` and ``chainrule.X``,
the program unchanged (skips without torch)."""
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

RTOL, ATOL = 1e-6, 1e-9

# Programs that do not match yet, with why (strict: a fixed one fails here until it
# is moved back to the passing list).
KNOWN_FAILING = {}

# Runs the program with every ``torch`` import answered by chainrule; real torch is
# unreachable from this process.
ALIAS_RUNNER = r'''
import importlib, importlib.abc, importlib.util, runpy, sys

class TorchIsChainrule(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module("chainrule" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass

sys.meta_path.insert(0, TorchIsChainrule())
program = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(program, run_name="__main__")
'''

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b")
WORD = re.compile(r"[A-Za-z_]+|[^\sA-Za-z_]")


def _programs_dir():
    here = Path(__file__).resolve().parent / "programs"
    if here.is_dir():
        return here
    return Path(os.environ.get("TEST_SRCDIR", "/nonexistent")) / "__main__" / "tests" / "programs"


PROGRAMS = sorted(p.name for p in _programs_dir().glob("*.py"))


def tokens(text):
    """(kind, value, line) per word, punctuation mark and number; addresses masked and
    the library's name unified, whitespace dropped."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text).replace("chainrule.", "torch.")
    out = []
    for line_no, line in enumerate(text.splitlines(), 1):
        pos = 0
        for m in NUMBER.finditer(line):
            out += [("word", w, line_no) for w in WORD.findall(line[pos:m.start()])]
            out.append(("number", float(m.group()), line_no))
            pos = m.end()
        out += [("word", w, line_no) for w in WORD.findall(line[pos:])]
    return out


def _same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "word":
        return a[1] == b[1]
    x, y = a[1], b[1]
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y or abs(x - y) <= ATOL + RTOL * max(abs(x), abs(y))


def first_difference(expected, got):
    """None when the outputs match, else where they part."""
    ta, tb = tokens(expected), tokens(got)
    for a, b in zip(ta, tb):
        if not _same(a, b):
            return f"torch line {a[2]}: {a[1]!r}, chainrule line {b[2]}: {b[1]!r}"
    if len(ta) != len(tb):
        return "chainrule printed " + ("less" if len(ta) > len(tb) else "more") + " than torch"
    return None


def _run(args):
    # The subprocess sees this test's imports (Bazel puts them on sys.path only).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=_programs_dir())


def test_comparison_sees_numbers_words_and_tolerance():
    assert first_difference("loss 1.0000001 tensor([1., 2.])", "loss 1.0 tensor([1., 2.])") is None
    assert first_difference("x 1.001", "x 1.0") == "torch line 1: 1.001, chainrule line 1: 1.0"
    assert first_difference("torch.float32 0x7f12", "chainrule.float32 0x9a") is None
    assert first_difference("grad_fn=<SumBackward0>", "grad_fn=<ViewBackward0>") is not None
    assert first_difference("a\nb", "a") == "chainrule printed less than torch"


@pytest.mark.parametrize("program", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[name]))
    if name in KNOWN_FAILING else name for name in PROGRAMS])
def test_program_prints_the_same_with_chainrule(program):
    with_torch = _run([program])
    assert with_torch.returncode == 0, "the torch run failed:\n" + with_torch.stderr[-3000:]
    with_chainrule = _run(["-c", ALIAS_RUNNER, program])
    assert with_chainrule.returncode == 0, with_chainrule.stderr[-3000:]
    difference = first_difference(with_torch.stdout, with_chainrule.stdout)
    assert difference is None, (difference + "\n--- torch\n" + with_torch.stdout
                                + "\n--- chainrule\n" + with_chainrule.stdout)


def test_every_known_failure_names_a_program():
    assert set(KNOWN_FAILING) <= set(PROGRAMS) and len(PROGRAMS) >= 15
