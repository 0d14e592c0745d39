"""Tensors on the CUDA device through core's API (the host build stands in for the GPU):
device placement, transfers and their gradients, the reference's errors, printing,
pinned memory, saved tensors on the host, serialization, random numbers, training."""
import io

import numpy as np
import pytest

import chainrule as cr
from chainrule_cuda import DeviceArray

from runtime_support import needs_device

pytestmark = needs_device


def test_a_cuda_tensor_holds_a_device_array_and_says_its_device():
    x = cr.ones(2, 3, device="cuda")
    assert type(x._data) is DeviceArray
    assert x.device == cr.device("cuda:0") and x.is_cuda and x.get_device() == 0
    assert str(x.device) == "cuda:0" and cr.cuda.is_available()


def test_transfers_round_trip_and_gradients_go_back():
    x = cr.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    y = x.cuda()
    assert y.grad_fn.name() == "ToCopyBackward0" and y.device.type == "cuda"
    z = (y.relu() * y).sum()
    z.backward()
    assert x.grad.device == cr.device("cpu") and x.grad.tolist() == [[2.0, 0.0], [6.0, 8.0]]
    w = cr.randn(3, device="cuda", requires_grad=True)
    w.cpu().exp().sum().backward()
    assert w.grad.device == w.device
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.exp(w.detach().cpu().numpy()))


def test_to_overloads_on_the_device():
    x = cr.ones(2)
    y = x.to("cuda", cr.float64)
    assert (y.device.type, y.dtype) == ("cuda", cr.float64)
    assert x.to(y).device == y.device and y.to("cuda") is y and y.cuda() is y
    assert y.to(cr.float32).device == y.device and y.cpu().device == cr.device("cpu")
    assert y.to("cuda", copy=True) is not y


def test_leaves_on_the_device_accumulate_gradients_there():
    w = cr.randn(4, 3, device="cuda", requires_grad=True)
    b = cr.zeros(3, device="cuda", requires_grad=True)
    x = cr.randn(5, 4, device="cuda")
    for _ in range(2):
        ((x @ w + b) ** 2).mean().backward()
    assert w.grad.device == w.device and b.grad.device == b.device
    xh, wh, bh = (t.detach().cpu().numpy() for t in (x, w, b))
    expected = 2 * 2 * xh.T @ (xh @ wh + bh) / 15
    np.testing.assert_allclose(w.grad.cpu().numpy(), expected, rtol=1e-5)


def test_higher_order_gradients_on_the_device():
    x = cr.tensor([0.5, 1.5], dtype=cr.float64, device="cuda", requires_grad=True)
    (g,) = cr.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (h,) = cr.autograd.grad(g.sum(), x)
    assert h.device == x.device and h.tolist() == [3.0, 9.0]


def test_mixing_devices_is_the_references_error():
    a, b = cr.ones(2, device="cuda"), cr.ones(2)
    message = ("Expected all tensors to be on the same device, but found at least two "
               "devices, cuda:0 and cpu!")
    for call in (lambda: a + b, lambda: b * a, lambda: cr.cat([a, b]), lambda: a @ cr.ones(2, 2)):
        with pytest.raises(RuntimeError, match=message.replace("!", "")):
            call()
    assert (a * 2 + 1).tolist() == [3.0, 3.0]          # Python numbers are fine


def test_numpy_of_a_cuda_tensor_names_the_fix():
    y = cr.ones(2, device="cuda")
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host "
                                        r"memory first\."):
        y.numpy()
    assert y.cpu().numpy().tolist() == [1.0, 1.0] and y.tolist() == [1.0, 1.0]
    assert y.sum().item() == 2.0 and float(y[0]) == 1.0


def test_printing():
    assert repr(cr.tensor([1.0, 2.5], device="cuda")) == "tensor([1.0000, 2.5000], device='cuda:0')"
    assert repr(cr.arange(3, device="cuda")) == "tensor([0, 1, 2], device='cuda:0')"
    assert repr(cr.ones(1, device="cuda", dtype=cr.float64, requires_grad=True)) == \
        "tensor([1.], device='cuda:0', dtype=chainrule.float64, requires_grad=True)"


def test_factories_and_default_device():
    for t in (cr.zeros(2, device="cuda"), cr.full((2,), 3, device="cuda"),
              cr.eye(2, device="cuda"), cr.linspace(0, 1, 3, device="cuda"),
              cr.tensor([1, 2], device="cuda"), cr.zeros_like(cr.ones(2, device="cuda"))):
        assert t.device == cr.device("cuda:0")
    cr.set_default_device("cuda")
    try:
        assert cr.ones(2).device.type == "cuda" and cr.randn(2).device.type == "cuda"
    finally:
        cr.set_default_device(None)
    with cr.device("cuda:0"):
        assert cr.rand(3).is_cuda


def test_random_numbers_on_the_device_are_reproducible_from_the_seed():
    cr.manual_seed(11)
    a, n = cr.rand(1000, device="cuda"), cr.randn(1000, device="cuda", dtype=cr.float64)
    cr.manual_seed(11)
    assert cr.rand(1000, device="cuda").tolist() == a.tolist()
    values = a.cpu().numpy()
    assert 0 <= values.min() and values.max() < 1 and abs(values.mean() - 0.5) < 0.05
    assert abs(n.cpu().numpy().std() - 1) < 0.1
    ints = cr.randint(3, 7, (500,), device="cuda").cpu().numpy()
    assert ints.min() == 3 and ints.max() == 6


def test_pin_memory_and_save_on_cpu():
    x = cr.ones(3)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.tolist() == [1.0, 1.0, 1.0]
    w = cr.randn(3, device="cuda", requires_grad=True)
    with cr.autograd.graph.save_on_cpu(pin_memory=True) as hooks:
        y = (w * w).sum()
    device, host = hooks.pack_hook(w)
    assert device == w.device and host.device.type == "cpu" and host.is_pinned()
    y.backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), 2 * w.detach().cpu().numpy())


def test_serialization_keeps_the_device():
    buffer = io.BytesIO()
    cr.save({"w": cr.arange(4.0, device="cuda").requires_grad_()}, buffer)
    buffer.seek(0)
    w = cr.load(buffer)["w"]
    assert w.device == cr.device("cuda:0") and w.is_leaf and w.requires_grad
    buffer.seek(0)
    assert cr.load(buffer, map_location="cpu")["w"].device == cr.device("cpu")


def test_a_small_network_trains_on_the_device():
    cr.manual_seed(0)
    model = cr.nn.Sequential(cr.nn.Linear(4, 8), cr.nn.Tanh(), cr.nn.Linear(8, 1)).cuda()
    opt = cr.optim.Adam(model.parameters(), lr=0.05)
    x = cr.randn(32, 4, device="cuda")
    y = (x[:, :1] * 2 - x[:, 1:2]).detach()
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = cr.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.device.type == "cuda" for p in model.parameters())
    assert losses[-1] < 0.1 * losses[0]


def test_conv2d_on_the_device_matches_the_cpu():
    cr.manual_seed(1)
    x, w = cr.randn(2, 3, 6, 5, dtype=cr.float64), cr.randn(4, 3, 3, 3, dtype=cr.float64)
    out = cr.nn.functional.conv2d(x, w, padding=1, stride=(1, 2))
    dev = cr.nn.functional.conv2d(x.cuda(), w.cuda(), padding=1, stride=(1, 2))
    np.testing.assert_allclose(dev.cpu().numpy(), out.numpy(), rtol=1e-12, atol=1e-12)
