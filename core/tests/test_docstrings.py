"""Every docstring example in chainrule runs and prints what it shows."""
import doctest
import importlib
import pkgutil

import pytest

import chainrule


# Thin public paths of the upper layers: they only re-export their layer's package
# (whose own tests run its docstrings); test_layers.py checks them.
LAYER_PATHS = {"chainrule.autograd." + name for name in
               ("functional", "forward_ad", "profiler", "variable")} | {"chainrule.profiler"}


def _modules():
    names = ["chainrule"]
    for info in pkgutil.walk_packages(chainrule.__path__, "chainrule."):
        if info.name not in LAYER_PATHS:
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name, globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
