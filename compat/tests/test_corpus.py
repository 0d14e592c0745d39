"""The corpus of Variable-era programs (corpus/): each runs under compat with its
expected warnings, and `chainrule-migrate --write` turns it into a program that
runs with no deprecation warning and prints the same numbers."""
import os
import shutil
import subprocess
import sys

import pytest

from chainrule_compat.migrate.cli import main as migrate

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

# program -> the warnings (text) it must print under compat.
EXPECTED_WARNINGS = {
    "mlp_sgd.py": ["add_(scalar, tensor) is deprecated", "use tensor.item()"],
    "volatile_eval.py": ["volatile is deprecated", "with chainrule.no_grad():",
                         "reduction='sum'", "clip_grad_norm_"],
    "old_function.py": ["old-style autograd Function", "use tensor.item()"],
    "double_backward.py": ["retain_variables option is deprecated; use retain_graph",
                           "'grad_variables' is deprecated", "use tensor.item()"],
    "linear_regression.py": ["add_(scalar, tensor) is deprecated", "use tensor.item()"],
}


def _run(path, *warning_options):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, *warning_options, path], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def test_the_corpus_is_complete():
    assert sorted(EXPECTED_WARNINGS) == sorted(f for f in os.listdir(CORPUS) if f.endswith(".py"))


@pytest.mark.parametrize("program", sorted(EXPECTED_WARNINGS))
def test_runs_under_compat_then_migrated(program, tmp_path, capsys):
    old = os.path.join(CORPUS, program)
    printed, warned = _run(old, "-W", "always")
    for text in EXPECTED_WARNINGS[program]:
        assert text in warned
    new = tmp_path / program
    shutil.copy(old, new)
    assert migrate([str(new), "--write"]) == 0          # nothing legacy remains
    imports = [line for line in new.read_text().splitlines() if "import" in line]
    assert not [line for line in imports if "Variable" in line]       # the import dropped
    migrated_printed, migrated_warned = _run(str(new), "-W", "error")
    assert migrated_printed == printed
    assert migrated_warned == ""
    assert migrate([str(new)]) == 0 and new.read_text() == open(new).read()
    capsys.readouterr()
