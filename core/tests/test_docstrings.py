"""Every docstring example in chainrule runs and prints what it shows."""
import pkgutil

import pytest

import chainrule
from docstring_runner import failed_examples


# Thin public paths of the upper layers: they only re-export their layer's package
# (whose own tests run its docstrings); test_layers.py checks them.
LAYER_PATHS = {"chainrule.autograd." + name for name in
               ("functional", "forward_ad", "profiler", "variable")} | {"chainrule.profiler",
                                                                         "chainrule.func"}


def _modules():
    names = ["chainrule"]
    for info in pkgutil.walk_packages(chainrule.__path__, "chainrule."):
        if info.name not in LAYER_PATHS:
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    failed = failed_examples(name)
    assert failed == 0, f"{failed} docstring example(s) failed in {name}"
