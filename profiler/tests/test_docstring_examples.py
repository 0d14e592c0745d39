"""Every docstring example in chainrule_profiler runs and prints what it shows."""
import pkgutil

import pytest
from docstring_runner import failed_examples

import chainrule_profiler


def _modules():
    return ["chainrule_profiler"] + sorted(
        info.name for info in pkgutil.walk_packages(chainrule_profiler.__path__, "chainrule_profiler."))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    failed = failed_examples(name)
    assert failed == 0, f"{failed} docstring example(s) failed in {name}"
