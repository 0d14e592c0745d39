"""Autocast and GradScaler on the CUDA device (the host build stands in for the GPU):
CUDA's op lists (float16 products, float32 softmax and losses), CPU tensors untouched
by a CUDA region, gradients back in float32, the scaler enabled by default."""
import chainrule as cr

from runtime_support import needs_device

pytestmark = needs_device


def test_cuda_autocast_runs_cudas_lists_on_cuda_tensors_only():
    a = cr.ones(2, 2, device="cuda")
    w = cr.ones(2, 2, device="cuda", requires_grad=True)
    with cr.autocast("cuda"):
        y = a @ w
        assert (y.dtype, y.device.type) == (cr.float16, "cuda")
        assert y.softmax(-1).dtype is cr.float32              # CUDA's fp32 list
        assert (cr.ones(2, 2) @ cr.ones(2, 2)).dtype is cr.float32     # a CPU tensor
        loss = cr.nn.functional.mse_loss(y, cr.zeros(2, 2, device="cuda"))
    assert loss.dtype is cr.float32
    loss.backward()
    assert (w.grad.dtype, w.grad.device.type) == (cr.float32, "cuda")


def test_grad_scaler_on_cuda_by_default():
    w = cr.ones(2, device="cuda", requires_grad=True)
    opt = cr.optim.SGD([w], lr=0.5)
    scaler = cr.amp.GradScaler(init_scale=8.0, growth_interval=1)
    assert scaler.is_enabled()
    scaler.scale(w.sum()).backward()
    assert w.grad.tolist() == [8.0, 8.0]
    scaler.step(opt)
    scaler.update()
    assert w.cpu().tolist() == [0.5, 0.5] and scaler.get_scale() == 16.0
