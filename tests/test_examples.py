"""The examples run end to end: the digits MLP trains to > 0.95 test accuracy, the
digits CNN (chainrule.nn and chainrule.optim) to > 0.97."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def _example(name):
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "examples" / name,
                      Path(os.environ.get("TEST_SRCDIR", "/nonexistent")) / "__main__" / "examples" / name):
        if candidate.exists():
            return candidate
    pytest.fail(f"example {name} not found")


def test_train_digits_reaches_accuracy():
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    env = dict(os.environ, TQDM_DISABLE="1")
    result = subprocess.run([sys.executable, str(_example("train_digits.py")), "--epochs", "15"],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    accuracy = float(re.search(r"final test accuracy: ([0-9.]+)", result.stdout).group(1))
    assert accuracy > 0.95
    assert re.search(r"autograd totals: \d+ ops recorded, backward time [0-9.]+ s", result.stdout)


def test_train_digits_profile_writes_a_trace(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    trace = tmp_path / "trace.json"
    env = dict(os.environ, TQDM_DISABLE="1")
    result = subprocess.run([sys.executable, str(_example("train_digits.py")), "--epochs", "2",
                             "--min-accuracy", "0", "--profile", str(trace)],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    header = next(line for line in result.stdout.splitlines() if "Self CPU %" in line)
    assert header.split()[0] == "Name"
    for name in ("aten::addmm", "AddmmBackward0", "TBackward0"):   # Note [linear's graph]
        assert re.search(rf"^\s*{name}\s", result.stdout, re.M), name
    import json
    records = json.loads(trace.read_text())["traceEvents"]
    steps = [r for r in records if r.get("name") == "optimizer.step"]
    assert len(steps) == 43             # one epoch: ceil(1347 / 32) batches
    assert any(r["ph"] == "s" for r in records) and any(r["ph"] == "f" for r in records)


def test_train_digits_cnn_reaches_accuracy():
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    env = dict(os.environ, TQDM_DISABLE="1")
    result = subprocess.run([sys.executable, str(_example("train_digits_cnn.py"))],
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    accuracy = float(re.search(r"final test accuracy: ([0-9.]+)", result.stdout).group(1))
    assert accuracy > 0.97
    assert re.search(r"epoch 15: train loss [0-9.]+, lr [0-9.]+, test accuracy", result.stdout)
