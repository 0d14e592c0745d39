"""Core's device plumbing (Note [device backend], Note [device arrays]), tested with the
fake backend of fake_device.py so it needs no chainrule-cuda layer."""
import io

import numpy as np
import pytest

import chainrule as cr
from chainrule import _backends

from fake_device import FakeDeviceArray, fake_cuda


@pytest.fixture
def cuda():
    with fake_cuda() as backend:
        yield backend


def test_core_alone_names_the_wheel_to_install():
    if "cuda" in _backends.BACKENDS:
        pytest.skip("a cuda backend is registered in this process")
    for call in (lambda: cr.zeros(2, device="cuda"), lambda: cr.ones(2).cuda(),
                 lambda: cr.ones(2).to("cuda:0")):
        with pytest.raises(RuntimeError, match="install the chainrule-cuda wheel"):
            call()


def test_cpu_tensors_say_cpu():
    x = cr.ones(2)
    assert x.device == cr.device("cpu") and not x.is_cuda and x.get_device() == -1
    assert x.cpu() is x and x.to("cpu") is x


def test_device_comes_from_the_array(cuda):
    y = cr.ones(2, device="cuda:1")
    assert isinstance(y._data, FakeDeviceArray)
    assert y.device == cr.device("cuda", 1) and y.is_cuda and y.get_device() == 1
    assert cr.ones(2, device="cuda").device == cr.device("cuda:0")


@pytest.mark.parametrize("make", [
    lambda **k: cr.zeros(2, 3, **k), lambda **k: cr.ones(2, **k), lambda **k: cr.empty(2, **k),
    lambda **k: cr.full((2,), 3.0, **k), lambda **k: cr.eye(2, **k),
    lambda **k: cr.arange(3.0, **k), lambda **k: cr.linspace(0, 1, 3, **k),
    lambda **k: cr.rand(2, **k), lambda **k: cr.randn(2, **k),
    lambda **k: cr.tensor([1.0, 2.0], **k)])
def test_factories_take_device_and_make_leaves(cuda, make):
    t = make(device="cuda", requires_grad=True)
    assert t.device == cr.device("cuda:0") and t.is_leaf and t.requires_grad


@pytest.mark.parametrize("like", [cr.zeros_like, cr.ones_like, cr.empty_like, cr.rand_like,
                                  cr.randn_like, lambda x, **k: cr.full_like(x, 2.0, **k)])
def test_like_factories_follow_the_input_device(cuda, like):
    x = cr.ones(2, 3, device="cuda:1")
    assert like(x).device == cr.device("cuda:1")
    assert like(x, device="cpu").device == cr.device("cpu")


def test_default_device_and_device_context(cuda):
    cr.set_default_device("cuda")
    try:
        assert cr.zeros(2).device == cr.device("cuda:0")
    finally:
        cr.set_default_device(None)
    with cr.device("cuda:1"):
        assert cr.ones(1).device == cr.device("cuda:1")
    assert cr.ones(1).device == cr.device("cpu")


def test_to_overloads(cuda):
    x = cr.ones(2)
    assert x.to("cuda").device == cr.device("cuda:0")
    assert x.to(cr.device("cuda", 1)).device == cr.device("cuda:1")
    assert x.to(1).device == cr.device("cuda:1")
    y = x.to("cuda", cr.float64)
    assert (y.device, y.dtype) == (cr.device("cuda:0"), cr.float64)
    y = x.to(device="cuda", dtype=cr.float16, non_blocking=True)
    assert (y.device, y.dtype) == (cr.device("cuda:0"), cr.float16)
    z = x.to(y)
    assert (z.device, z.dtype) == (y.device, y.dtype)
    assert x.to(cr.float64, False, True).dtype == cr.float64
    assert x.to(cr.float32, copy=True) is not x and x.to(cr.float32) is x
    assert y.to("cuda:0") is y and y.cuda() is y and y.cuda(0) is y
    w = x.to(None, cr.float64)
    assert (w.device, w.dtype) == (cr.device("cpu"), cr.float64)
    with pytest.raises(TypeError):
        x.to(cr.float64, False, True, True)


def test_to_cuda_cpu_record_a_copy_whose_gradient_goes_back(cuda):
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x.cuda()
    assert y.grad_fn.name() == "ToCopyBackward0"
    z = (y * y).sum()
    z.backward()
    assert x.grad.device == cr.device("cpu") and x.grad.tolist() == [2.0, 4.0]
    w = cr.tensor([3.0], device="cuda", requires_grad=True)
    (w.cpu() * 2).sum().backward()
    assert w.grad.device == cr.device("cuda:0") and w.grad.tolist() == [2.0]


def test_device_gradients_and_double_backward(cuda):
    x = cr.tensor([1.0, 2.0], dtype=cr.float64, device="cuda", requires_grad=True)
    (g,) = cr.autograd.grad((x.cpu() ** 3).sum(), x, create_graph=True)
    assert g.device == x.device
    (gg,) = cr.autograd.grad(g.sum(), x)
    assert gg.device == x.device and gg.tolist() == [6.0, 12.0]


def test_mixing_devices_names_both(cuda):
    a, b = cr.ones(2, device="cuda"), cr.ones(2)
    for call in (lambda: a + b, lambda: b * a, lambda: cr.cat([a, b])):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, "
                           "but found at least two devices, cuda:0 and cpu!"):
            call()
    assert (a * 2.0).device == a.device           # Python scalars are fine


def test_numpy_of_a_cuda_tensor(cuda):
    y = cr.ones(2, device="cuda")
    message = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
               "the tensor to host memory first.")
    with pytest.raises(TypeError, match=message.replace(".", r"\.").replace("(", r"\(")
                       .replace(")", r"\)")):
        y.numpy()
    with pytest.raises(TypeError, match="can't convert cuda:0"):
        np.asarray(y)
    assert y.numpy(force=True).tolist() == [1.0, 1.0]
    assert y.cpu().numpy().tolist() == [1.0, 1.0] and y.tolist() == [1.0, 1.0]


def test_printing_names_the_device(cuda):
    assert repr(cr.tensor([1.0, 2.0], device="cuda:1")) == "tensor([1., 2.], device='cuda:1')"
    assert repr(cr.tensor([1, 2], dtype=cr.int32, device="cuda")) == \
        "tensor([1, 2], device='cuda:0', dtype=chainrule.int32)"
    assert repr(cr.ones(1, device="cuda", requires_grad=True)) == \
        "tensor([1.], device='cuda:0', requires_grad=True)"


def test_pin_memory(cuda):
    x = cr.ones(3)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.tolist() == x.tolist() and p.pin_memory() is p
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        x.cuda().pin_memory()


def test_record_stream_reaches_the_backend(cuda):
    x = cr.ones(2, device="cuda")
    stream = object()
    x.record_stream(stream)
    assert cuda.recorded == [(x._data, stream)]
    with pytest.raises(NotImplementedError, match="'aten::record_stream' .* 'CPU' backend"):
        cr.ones(2).record_stream(stream)


def test_save_on_cpu_moves_saved_tensors_to_pinned_host_memory(cuda):
    x = cr.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    with cr.autograd.graph.save_on_cpu(pin_memory=True) as hooks:
        y = x * x
    device, host = hooks.pack_hook(x)
    assert (device, host.device, host.is_pinned()) == (x.device, cr.device("cpu"), True)
    assert hooks.unpack_hook((device, host)).device == x.device
    y.sum().backward()
    assert x.grad.device == x.device and x.grad.tolist() == [2.0, 4.0]


def test_serialization_keeps_the_device_and_map_location(cuda):
    buffer = io.BytesIO()
    cr.save({"w": cr.tensor([1.0, 2.0], device="cuda:1", requires_grad=True)}, buffer)
    buffer.seek(0)
    w = cr.load(buffer)["w"]
    assert w.device == cr.device("cuda:1") and w.is_leaf and w.requires_grad
    buffer.seek(0)
    assert cr.load(buffer, map_location="cpu")["w"].device == cr.device("cpu")
    buffer.seek(0)
    moved = cr.load(buffer, map_location={"cuda:1": "cuda:0"})["w"]
    assert moved.device == cr.device("cuda:0") and moved.tolist() == [1.0, 2.0]


def test_bad_device_index(cuda):
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cr.ones(2, device="cuda:7")


def test_random_factories_draw_on_the_device_from_manual_seed(cuda):
    cr.manual_seed(3)
    a = cr.rand(4, device="cuda")
    cr.manual_seed(3)
    b = cr.rand(4, device="cuda")
    assert a.device == cr.device("cuda:0") and a.tolist() == b.tolist()
    assert cr.randint(0, 5, (3,), device="cuda").dtype == cr.int64
    assert cr.randn(2, 2, device="cuda", requires_grad=True).is_leaf
