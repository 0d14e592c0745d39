"""chainrule.cuda in core: without the chainrule-cuda layer it answers "no GPU" and names
the wheel; with it, every function forwards to chainrule_cuda.runtime (a stand-in
runtime here: core's tests run without the layer)."""
import types

import pytest

import chainrule as cr
from chainrule import cuda


@pytest.fixture
def layer(monkeypatch):
    """Installs ``runtime`` (None: the layer is missing) as the layer core sees."""
    def install(runtime):
        monkeypatch.setattr(cuda, "_LAYER", [runtime])
    return install


def test_without_the_layer_the_queries_say_no_gpu(layer):
    layer(None)
    assert (cuda.is_available(), cuda.device_count(), cuda.is_initialized()) == (False, 0, False)
    assert cuda.unavailable_reason() == cuda.NOT_INSTALLED
    assert "install the chainrule-cuda wheel" in cuda.NOT_INSTALLED
    assert (cuda.memory_allocated(), cuda.max_memory_allocated(), cuda.memory_reserved(),
            cuda.max_memory_reserved(), cuda.memory_stats()) == (0, 0, 0, 0, {})
    cuda.empty_cache(), cuda.reset_peak_memory_stats(), cuda.manual_seed(1), cuda.seed_all()


@pytest.mark.parametrize("call", [
    lambda: cuda.current_device(), lambda: cuda.synchronize(), lambda: cuda.set_device(0),
    lambda: cuda.Stream(), lambda: cuda.Event(), lambda: cuda.stream(None),
    lambda: cuda.get_device_name(), lambda: cuda.mem_get_info(), lambda: cuda.init(),
])
def test_without_the_layer_what_needs_a_device_names_the_wheel(layer, call):
    layer(None)
    with pytest.raises(RuntimeError, match="install the chainrule-cuda wheel"):
        call()


def test_unknown_attributes_are_attribute_errors(layer):
    layer(None)
    with pytest.raises(AttributeError, match="has no attribute 'Streem'"):
        cuda.Streem


def _recording_runtime(calls):
    def recorder(name):
        return lambda *args: calls.append((name, args)) or name
    names = ["is_available", "unavailable_reason", "device_count", "current_device",
             "set_device", "synchronize", "memory_allocated", "memory_stats", "empty_cache",
             "manual_seed", "manual_seed_all", "stream", "mem_get_info", "initial_seed"]
    runtime = types.SimpleNamespace(**{n: recorder(n) for n in names})
    runtime.Stream = "the layer's Stream"
    return runtime


def test_with_the_layer_every_call_forwards(layer):
    calls = []
    layer(_recording_runtime(calls))
    assert cuda.Stream == "the layer's Stream"
    assert cuda.device_count() == "device_count"
    cuda.set_device("cuda:1"), cuda.synchronize(1), cuda.memory_allocated(0)
    cuda.stream(None), cuda.empty_cache(), cuda.manual_seed(3)
    assert calls == [("device_count", ()), ("set_device", ("cuda:1",)), ("synchronize", (1,)),
                     ("memory_allocated", (0,)), ("stream", (None,)), ("empty_cache", ()),
                     ("manual_seed", (3,))]


def test_chainrule_manual_seed_seeds_the_devices_once_the_layer_is_loaded(layer):
    calls = []
    layer(_recording_runtime(calls))
    cr.manual_seed(9)
    assert calls == [("manual_seed_all", (9,))]
    layer(None)
    cr.manual_seed(9)  # core alone: nothing to seed


def test_out_of_memory_error_is_a_runtime_error():
    assert issubclass(cr.cuda.OutOfMemoryError, RuntimeError)
    assert cr.OutOfMemoryError is cr.cuda.OutOfMemoryError
