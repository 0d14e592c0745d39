"""chainrule.amp: autocast's state, its dispatcher (registered only inside regions), the
op policies, the weight cache, threads, custom_fwd/custom_bwd, GradScaler's arithmetic
and the deprecated spellings. Parity with torch: tests/test_parity_amp.py."""
import threading
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule._ops import _registry
from chainrule.amp import _policy, _state

F = cr.nn.functional


def test_dispatcher_is_registered_only_while_autocast_is_on():
    assert _registry._dispatch is None and not _policy.ACTIVE[0]
    with cr.autocast("cpu"):
        assert _registry._dispatch is not None and _policy.ACTIVE[0]
        with cr.autocast("cpu", enabled=False):
            assert _policy.ACTIVE[0] is False
    assert _registry._dispatch is None and not _policy.ACTIVE[0]


def test_an_exception_leaves_the_state_restored():
    with pytest.raises(ValueError):
        with cr.autocast("cpu", dtype=cr.float16):
            raise ValueError
    assert not cr.is_autocast_enabled("cpu") and cr.get_autocast_dtype("cpu") is cr.bfloat16
    assert _registry._dispatch is None and _state.STATE.nesting == 0


def test_policies():
    a, b = cr.ones(2, 2), cr.ones(2, 2, dtype=cr.bfloat16)
    with cr.autocast("cpu"):
        assert (a @ a).dtype is cr.bfloat16                     # lower
        assert F.mse_loss(b, b).dtype is cr.float32             # fp32
        assert cr.cat([a, b]).dtype is cr.float32               # promote: the widest
        assert cr.cat([b, b]).dtype is cr.bfloat16
        assert cr.cat([b, a.double()]).dtype is cr.float64
        assert (b.exp()).dtype is cr.bfloat16                   # unlisted: as it comes
        assert (a.double() @ a.double()).dtype is cr.float64    # float64 is never cast
        assert (cr.ones(2, 2, dtype=cr.int64) + 1).dtype is cr.int64


def test_listed_composites_cast_once_and_run_below_autocast():
    a = cr.ones(3, 3)
    with cr.autocast("cpu"):
        assert cr.addmm(a, a, a).dtype is cr.bfloat16           # its add is not promoted
        assert F.cross_entropy(a.bfloat16(), cr.tensor([0, 1, 2])).dtype is cr.float32
        assert F.adaptive_avg_pool2d(a[None], 2).dtype is cr.float32     # not lowered
        assert cr.Tensor.addmm(a, a, a).dtype is cr.bfloat16    # the method form too


def test_wrapped_composites_keep_their_module_and_docstring():
    assert F.cross_entropy.__globals__ is vars(cr.nn.functional)
    assert F.cross_entropy.__doc__ == F.cross_entropy.__wrapped__.__doc__
    # the public function and method dispatch __torch_function__ around the amp wrapper
    assert cr.addmm.__wrapped__ is cr._ops.FUNCTIONS["addmm"] is cr.Tensor.addmm.__wrapped__


def test_weight_cache_within_a_region():
    w = cr.ones(2, 2, requires_grad=True)
    x = cr.ones(1, 2)
    with cr.autocast("cpu"):
        first, second = x @ w, x @ w
        cast_node = first.grad_fn.next_functions[1][0]
        assert second.grad_fn.next_functions[1][0] is cast_node
        assert len(_state.STATE.cache) == 1
    assert _state.STATE.cache == {}
    with cr.autocast("cpu", cache_enabled=False):
        first, second = x @ w, x @ w
        assert first.grad_fn.next_functions[1][0] is not second.grad_fn.next_functions[1][0]
    (first.sum() + second.sum()).backward()
    assert w.grad.dtype is cr.float32 and w.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_cache_holds_only_float32_leaf_weights():
    w = cr.ones(2, 2, requires_grad=True)
    with cr.autocast("cpu"):
        _ = cr.ones(2, 2) @ (w * 1)                  # not a leaf
        _ = cr.ones(2, 2) @ w[0:2]                   # a view
        _ = cr.ones(2, 2) @ cr.ones(2, 2)            # does not require grad
        assert _state.STATE.cache == {}


def test_gradients_flow_back_in_each_inputs_dtype():
    w = cr.ones(3, 2, requires_grad=True)
    x = cr.ones(4, 3, dtype=cr.float64, requires_grad=True)
    with cr.autocast("cpu"):
        y = x.float() @ w
        loss = (y.float() ** 2).sum()
    loss.backward()
    assert (w.grad.dtype, x.grad.dtype) == (cr.float32, cr.float64)
    assert w.grad.tolist() == [[24.0] * 2] * 3


def test_decorator_and_nesting():
    @cr.autocast("cpu")
    def product(a):
        with cr.autocast("cpu", enabled=False):
            inner = (a @ a).dtype
        return (a @ a).dtype, inner, _state.STATE.nesting
    assert product(cr.ones(2, 2)) == (cr.bfloat16, cr.float32, 1)
    assert product.__name__ == "product"
    with pytest.raises(TypeError, match="requires a callable"):
        cr.autocast("cpu")(3)


def test_autocast_state_is_thread_local():
    seen = []
    with cr.autocast("cpu"):
        thread = threading.Thread(
            target=lambda: seen.append((cr.is_autocast_enabled("cpu"),
                                        (cr.ones(2, 2) @ cr.ones(2, 2)).dtype)))
        thread.start()
        thread.join()
        assert (cr.ones(2, 2) @ cr.ones(2, 2)).dtype is cr.bfloat16
    assert seen == [(False, cr.float32)]


def test_state_functions_and_errors():
    assert cr.is_autocast_enabled() is False              # "cuda" by default
    cr.set_autocast_enabled(True)
    assert cr.is_autocast_enabled("cuda") and _policy.ACTIVE[0]
    cr.set_autocast_enabled(False)
    assert _registry._dispatch is None
    with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
        cr.get_autocast_dtype("foo")
    with pytest.raises(RuntimeError, match="unsupported scalarType"):
        cr.get_autocast_dtype("meta")
    with pytest.raises(RuntimeError, match="unknown device type for autocast"):
        cr.set_autocast_enabled("meta", True)
    with pytest.raises(TypeError, match="must be chainrule.dtype"):
        cr.set_autocast_dtype("cpu", 3)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        cr.autocast(0)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'xpu'"):
        cr.autocast("xpu")


def test_deprecated_per_device_functions():
    with pytest.warns(DeprecationWarning, match=r"get_autocast_dtype\('cpu'\)"):
        assert cr.get_autocast_cpu_dtype() is cr.bfloat16
    with pytest.warns(DeprecationWarning):
        cr.set_autocast_gpu_dtype(cr.bfloat16)
    with pytest.warns(DeprecationWarning):
        assert cr.get_autocast_dtype("cuda") is cr.bfloat16 and cr.get_autocast_gpu_dtype()
    cr.set_autocast_dtype("cuda", cr.float16)
    assert not hasattr(cr, "is_autocast_gpu_enabled")


def test_unsupported_dtype_disables_with_a_warning():
    with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of"):
        region = cr.autocast("cpu", dtype=cr.float64)
    with region:
        assert not cr.is_autocast_enabled("cpu")


def test_float16_autocast_on_cpu():
    with cr.autocast("cpu", dtype=cr.float16):
        assert (cr.ones(2, 2) @ cr.ones(2, 2)).dtype is cr.float16


class _Scaled(cr.autograd.Function):
    @staticmethod
    @cr.amp.custom_fwd(device_type="cpu")
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x @ x

    @staticmethod
    @cr.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        ctx.bwd_dtype = (x @ x).dtype
        return g @ x.T + x.T @ g


def test_custom_fwd_without_cast_inputs_keeps_the_autocast_state_for_backward():
    x = cr.ones(2, 2, requires_grad=True)
    with cr.autocast("cpu"):
        y = _Scaled.apply(x)
    assert y.dtype is cr.bfloat16
    y.float().sum().backward()
    assert y.grad_fn.bwd_dtype is cr.bfloat16          # backward ran under autocast too
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        cr.amp.custom_fwd(lambda: 0, device_type=None)


def test_custom_fwd_outside_autocast_is_a_no_op():
    assert _Scaled.apply(cr.ones(2, 2)).dtype is cr.float32


def _train(scaler, poison):
    w = cr.ones(2, requires_grad=True)
    opt = cr.optim.SGD([w], lr=0.1)
    history = []
    for step in range(6):
        opt.zero_grad()
        loss = (w * w).sum() * (float("inf") if step in poison else 1.0)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker(), w.tolist()[0]))
    return history


def test_grad_scaler_backs_off_skips_and_grows():
    scaler = cr.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    history = _train(scaler, poison=(1,))
    assert [h[:2] for h in history] == [(16.0, 1), (8.0, 0), (8.0, 1), (16.0, 0), (16.0, 1),
                                        (32.0, 0)]
    steps = [h[2] for h in history]
    assert steps[1] == steps[0]                          # the poisoned step was skipped
    assert steps[0] == pytest.approx(0.8) and steps[2] == pytest.approx(0.64)


def test_grad_scaler_growth_that_overflows_keeps_the_scale():
    from chainrule.amp.grad_scaler import _update_scale_
    scale, tracker = cr.tensor(2.0 ** 127), cr.tensor(0, dtype=cr.int32)
    _update_scale_(scale, tracker, cr.tensor(0.0), 2.0, 0.5, 1)
    assert (scale.item(), tracker.item()) == (2.0 ** 127, 0)
    _update_scale_(scale, tracker, cr.tensor(1.0), 2.0, 0.5, 1)
    assert (scale.item(), tracker.item()) == (2.0 ** 126, 0)


def test_grad_scaler_errors_and_disabled():
    scaler = cr.amp.GradScaler("cpu")
    opt = cr.optim.SGD([cr.ones(1, requires_grad=True)], lr=0.1)
    with pytest.raises(AssertionError, match="did not use scaler.scale"):
        scaler.step(opt)
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        cr.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="outputs must be a Tensor"):
        scaler.scale([3])
    off = cr.amp.GradScaler("cpu", enabled=False)
    assert off.get_scale() == 1.0 and off.state_dict() == {} and off.scale(3) == 3


def test_grad_scaler_refuses_float16_grads():
    w = cr.ones(2, dtype=cr.float16, requires_grad=True)
    scaler = cr.amp.GradScaler("cpu")
    scaler.scale(w.sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.step(cr.optim.SGD([w], lr=0.1))


def test_grad_scaler_pickles_between_iterations():
    import pickle
    scaler = cr.amp.GradScaler("cpu", init_scale=4.0)
    _ = scaler.scale(cr.ones(1))
    scaler.update(2.0)
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy.get_scale() == 2.0 and copy.state_dict() == scaler.state_dict()


def test_cuda_spellings_without_a_gpu_switch_off():
    import chainrule.cuda.amp as cuda_amp
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = cuda_amp.GradScaler()
        with cuda_amp.autocast():
            enabled = cr.is_autocast_enabled("cuda")
    messages = [str(w.message) for w in caught]
    assert "`torch.cuda.amp.GradScaler(args...)` is deprecated" in messages[0]
    if not cr.cuda.is_available():
        assert not scaler.is_enabled() and not enabled
        assert any("CUDA is not available" in m for m in messages)


def test_cpu_module():
    assert cr.cpu.is_available() and cr.cpu.device_count() == 1
    with pytest.warns(FutureWarning, match=r"torch.amp.autocast\('cpu', args...\)"):
        region = cr.cpu.amp.autocast(dtype=cr.float16)
    assert region.fast_dtype is cr.float16 and region.device == "cpu"
    assert cr.cpu.amp.autocast.__module__ == "chainrule.cpu.amp"


def test_low_precision_products_round_once_like_accumulating_in_float32():
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((8, 5), (3, 5), (3,)))
    bf = cr.bfloat16
    got = F.linear(cr.tensor(x).to(bf), cr.tensor(w).to(bf), cr.tensor(b).to(bf))
    xs, ws, bs = (cr.tensor(a).to(bf).float().numpy() for a in (x, w, b))
    want = cr.tensor(xs @ ws.T + bs).to(bf)
    assert got.dtype is bf and got.float().tolist() == want.float().tolist()
    half = cr.tensor(x).half() @ cr.tensor(w).half().T
    assert half.dtype is cr.float16
    assert half.tolist() == cr.tensor(x.astype(np.float16).astype(np.float32) @
                                      w.astype(np.float16).astype(np.float32).T).half().tolist()
