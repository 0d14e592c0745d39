"""The public paths of the upper layers: without a layer's wheel they raise an
ImportError that names the wheel, and core itself never needs them."""
import importlib
import sys

import pytest

import chainrule as cr
from chainrule.autograd import _layers


@pytest.fixture(autouse=True)
def forget_layer_modules():
    """Importing a submodule also sets it as an attribute of chainrule.autograd: drop
    both afterwards so each test (and later tests) resolve the layers afresh."""
    yield
    for name in _layers.LAYERS:
        sys.modules.pop(f"chainrule.autograd.{name}", None)
        cr.autograd.__dict__.pop(name, None)


@pytest.mark.parametrize("name", sorted(_layers.LAYERS))
def test_missing_layer_names_its_wheel(name, monkeypatch):
    package, wheel = _layers.LAYERS[name]
    monkeypatch.setitem(sys.modules, package, None)        # as if not installed
    sys.modules.pop(f"chainrule.autograd.{name}", None)
    with pytest.raises(ImportError, match=f"needs the {wheel} wheel"):
        importlib.import_module(f"chainrule.autograd.{name}")


def test_attribute_access_goes_through_the_layer(monkeypatch):
    monkeypatch.setitem(sys.modules, "chainrule_functional", None)
    sys.modules.pop("chainrule.autograd.functional", None)
    with pytest.raises(ImportError, match="chainrule-functional"):
        cr.autograd.functional
    with pytest.raises(AttributeError):
        cr.autograd.no_such_thing


def test_installed_layer_is_re_exported(monkeypatch):
    fake = type(sys)("chainrule_profiler")
    fake.profile = "the profiler's profile"
    monkeypatch.setitem(sys.modules, "chainrule_profiler", fake)
    sys.modules.pop("chainrule.autograd.profiler", None)
    assert cr.autograd.profiler.profile == "the profiler's profile"


def test_core_imports_no_layer():
    for package, _ in _layers.LAYERS.values():
        assert package not in sys.modules or sys.modules[package] is None


def test_chainrule_profiler_names_the_wheel(monkeypatch):
    monkeypatch.setitem(sys.modules, "chainrule_profiler", None)
    sys.modules.pop("chainrule.profiler", None)
    try:
        with pytest.raises(ImportError, match="chainrule.profiler needs the chainrule-profiler "
                                              "wheel"):
            importlib.import_module("chainrule.profiler")
        with pytest.raises(ImportError, match="chainrule-profiler"):
            cr.profiler
    finally:
        sys.modules.pop("chainrule.profiler", None)
        cr.__dict__.pop("profiler", None)
