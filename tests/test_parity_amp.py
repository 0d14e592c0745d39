"""Parity tier for automatic mixed precision against PyTorch (skips without torch): the
dtype every op returns under CPU autocast (float32, bfloat16, mixed and float64
inputs), values and gradients, the weight cache, nested and disabled regions, and
GradScaler's scale history, skipped steps and errors over training loops."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

RNG = np.random.default_rng(0)
MAT = RNG.standard_normal((4, 4)).astype(np.float32)
MAT2 = RNG.standard_normal((4, 4)).astype(np.float32)
IMG = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
KERNEL = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
SPD = (MAT @ MAT.T + 4 * np.eye(4)).astype(np.float32)


def _t(lib, a):
    return lib.tensor(a.copy())


# name -> fn(lib, a, b): a, b are 4x4 tensors of the dtypes under test
CASES = {
    "mm": lambda lib, a, b: lib.mm(a, b),
    "matmul": lambda lib, a, b: a @ b,
    "bmm": lambda lib, a, b: lib.bmm(a[None], b[None]),
    "linear": lambda lib, a, b: lib.nn.functional.linear(a, b, b[0]),
    "addmm": lambda lib, a, b: lib.addmm(a, a, b),
    "baddbmm": lambda lib, a, b: lib.baddbmm(a[None], a[None], b[None]),
    "addbmm": lambda lib, a, b: lib.addbmm(a, a[None], b[None]),
    "einsum": lambda lib, a, b: lib.einsum("ij,jk->ik", a, b),
    "mv": lambda lib, a, b: lib.mv(a, b[0]),
    "outer": lambda lib, a, b: lib.outer(a[0], b[0]),
    "softmax": lambda lib, a, b: a.softmax(-1),
    "log_softmax": lambda lib, a, b: a.log_softmax(-1),
    "exp": lambda lib, a, b: a.exp(),
    "pow": lambda lib, a, b: a.pow(2),
    "sum": lambda lib, a, b: a.sum(),
    "prod": lambda lib, a, b: a.prod(),
    "prod_dim": lambda lib, a, b: a.prod(0),
    "cumsum": lambda lib, a, b: a.cumsum(0),
    "trace": lambda lib, a, b: lib.trace(a),
    "relu": lambda lib, a, b: a.relu(),
    "add": lambda lib, a, b: a + b,
    "cat": lambda lib, a, b: lib.cat([a, b]),
    "stack": lambda lib, a, b: lib.stack([a, b]),
    "index_copy": lambda lib, a, b: a.index_copy(0, lib.tensor([0]), b[:1]),
    "mse_loss": lambda lib, a, b: lib.nn.functional.mse_loss(a, b),
    "l1_loss": lambda lib, a, b: lib.nn.functional.l1_loss(a, b),
    "smooth_l1_loss": lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b),
    "huber_loss": lambda lib, a, b: lib.nn.functional.huber_loss(a, b),
    "cross_entropy": lambda lib, a, b: lib.nn.functional.cross_entropy(a, lib.tensor([0, 1, 2, 3])),
    "nll_loss": lambda lib, a, b: lib.nn.functional.nll_loss(a, lib.tensor([0, 1, 2, 3])),
    "bce_with_logits": lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid()),
    "bce": lambda lib, a, b: lib.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
    "layer_norm": lambda lib, a, b: lib.nn.functional.layer_norm(a, (4,)),
    "gelu": lambda lib, a, b: lib.nn.functional.gelu(a),
    "inverse": lambda lib, a, b: lib.inverse(a + 4 * lib.eye(4, dtype=a.dtype)),
    "linalg_inv": lambda lib, a, b: lib.linalg.inv(a + 4 * lib.eye(4, dtype=a.dtype)),
    "linalg_vector_norm": lambda lib, a, b: lib.linalg.vector_norm(a),
    "cdist": lambda lib, a, b: lib.cdist(a, b),
    "where": lambda lib, a, b: lib.where(a > 0, a, b),
    "prelu": lambda lib, a, b: lib.nn.functional.prelu(a, lib.tensor([0.25], dtype=a.dtype)),
    "sdpa": lambda lib, a, b: lib.nn.functional.scaled_dot_product_attention(a[None], b[None],
                                                                             b[None]),
    "tensordot": lambda lib, a, b: lib.tensordot(a, b, 1),
}
CONV_CASES = {
    "conv2d": lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
    "conv1d": lambda lib, x, w: lib.nn.functional.conv1d(x[:, :, 0], w[:, :, 0]),
    "conv_transpose2d": lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w.transpose(0, 1)),
    "max_pool2d": lambda lib, x, w: lib.nn.functional.max_pool2d(x, 2),
    "avg_pool3d": lambda lib, x, w: lib.nn.functional.avg_pool3d(x[None], 1),
    "adaptive_avg_pool2d": lambda lib, x, w: lib.nn.functional.adaptive_avg_pool2d(x, 1),
}
DTYPES = {"f32": ("float32", "float32"), "bf16": ("bfloat16", "bfloat16"),
          "mixed": ("float32", "bfloat16"), "f64": ("float64", "float64")}


def _run(lib, fn, arrays, dtypes, **autocast):
    """fn under CPU autocast on ``arrays`` cast to ``dtypes``: (dtype name, values)."""
    inputs = [_t(lib, a).to(getattr(lib, d)) for a, d in zip(arrays, dtypes)]
    if "dtype" in autocast:
        autocast["dtype"] = getattr(lib, autocast["dtype"])
    with lib.autocast("cpu", **autocast):
        out = fn(lib, *inputs)
    return str(out.dtype).split(".")[-1], out.detach().float().numpy()


def _compare(fn, arrays, dtypes, **autocast):
    try:
        theirs = _run(torch, fn, arrays, dtypes, **autocast)
    except RuntimeError:                           # (mv of mixed dtypes: not autocast)
        with pytest.raises(RuntimeError):
            _run(cr, fn, arrays, dtypes, **autocast)
        return
    ours = _run(cr, fn, arrays, dtypes, **autocast)
    assert ours[0] == theirs[0]
    # a bfloat16 result may round one ulp apart (the products accumulate in another order)
    tol = 1e-5 if "bfloat16" not in dtypes and ours[0] != "bfloat16" and \
        "float32" not in (ours[0],) else 2e-2
    np.testing.assert_allclose(ours[1], theirs[1], rtol=tol, atol=tol)


# (tensordot of mixed dtypes: the reference raises, chainrule's promotes, autocast or not)
@pytest.mark.parametrize("name,kind", [(n, k) for n in CASES for k in DTYPES
                                       if (n, k) != ("tensordot", "mixed")])
def test_op_dtype_and_value_under_autocast(name, kind):
    _compare(CASES[name], (MAT, MAT2), DTYPES[kind])


# Composites: the reference lists some (cast), runs others below autocast (their own
# kernels), and runs the rest op by op (their matmuls autocast).
A4 = (MAT + 4 * np.eye(4, dtype=np.float32))
VEC = MAT2[0].copy()
IMG4 = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
COMPOSITES = {
    "cov": lambda lib, A, v, X: lib.cov(A),
    "matrix_power": lambda lib, A, v, X: lib.linalg.matrix_power(A, 3),
    "multi_dot": lambda lib, A, v, X: lib.linalg.multi_dot([A, A, A]),
    "chain_matmul": lambda lib, A, v, X: lib.chain_matmul(A, A),
    "inner": lambda lib, A, v, X: lib.inner(A, A),
    "matmul_1d": lambda lib, A, v, X: lib.matmul(v, v),
    "matmul_mv": lambda lib, A, v, X: lib.matmul(A, v),
    "adaptive_avg_pool1d": lambda lib, A, v, X: lib.nn.functional.adaptive_avg_pool1d(A[None], 2),
    "adaptive_avg_pool2d": lambda lib, A, v, X: lib.nn.functional.adaptive_avg_pool2d(X, 3),
    "interpolate_bilinear": lambda lib, A, v, X: lib.nn.functional.interpolate(
        X, scale_factor=2, mode="bilinear"),
    "interpolate_bicubic": lambda lib, A, v, X: lib.nn.functional.interpolate(
        X, scale_factor=2, mode="bicubic"),
    "interpolate_linear": lambda lib, A, v, X: lib.nn.functional.interpolate(
        A[None], scale_factor=2, mode="linear"),
    "bilinear": lambda lib, A, v, X: lib.nn.functional.bilinear(A, A, lib.ones(2, 4, 4)),
    "addmv": lambda lib, A, v, X: lib.addmv(v, A, v),
    "addr": lambda lib, A, v, X: lib.addr(A, v, v),
    "lu_solve": lambda lib, A, v, X: lib.linalg.lu_solve(*lib.linalg.lu_factor(A), A),
    "cholesky_solve": lambda lib, A, v, X: lib.cholesky_solve(A, lib.linalg.cholesky(A @ A.T)),
    "kron": lambda lib, A, v, X: lib.kron(A, A),
    "svd": lambda lib, A, v, X: lib.svd(A)[0],
    "qr": lambda lib, A, v, X: lib.qr(A)[0],
    "linalg_det": lambda lib, A, v, X: lib.linalg.det(A),
    "unfold": lambda lib, A, v, X: lib.nn.functional.unfold(X, 2),
    "embedding": lambda lib, A, v, X: lib.nn.functional.embedding(lib.tensor([1]), A),
    "cosine_similarity": lambda lib, A, v, X: lib.nn.functional.cosine_similarity(A, A),
    "batch_norm": lambda lib, A, v, X: lib.nn.functional.batch_norm(X, None, None, training=True),
    "group_norm": lambda lib, A, v, X: lib.nn.functional.group_norm(X, 2),
    "embedding_bag": lambda lib, A, v, X: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), A),
    "pad_reflect": lambda lib, A, v, X: lib.nn.functional.pad(X, (1, 1), mode="reflect"),
    "triplet_margin_loss": lambda lib, A, v, X: lib.nn.functional.triplet_margin_loss(A, A, A),
    "kl_div": lambda lib, A, v, X: lib.nn.functional.kl_div(A, A.softmax(1),
                                                            reduction="batchmean"),
    "multilabel_soft_margin_loss": lambda lib, A, v, X:
        lib.nn.functional.multilabel_soft_margin_loss(A, A.sigmoid()),
    "cosine_embedding_loss": lambda lib, A, v, X: lib.nn.functional.cosine_embedding_loss(
        A, A, lib.ones(4)),
    "grid_sample": lambda lib, A, v, X: lib.nn.functional.grid_sample(
        X, lib.zeros(1, 2, 2, 2), align_corners=False),
    "affine_grid": lambda lib, A, v, X: lib.nn.functional.affine_grid(
        A[None, :2, :3], (1, 1, 4, 4), align_corners=False),
    "multi_head_attention_forward": lambda lib, A, v, X:
        lib.nn.functional.multi_head_attention_forward(
            A[:, None], A[:, None], A[:, None], 4, 1, lib.ones(12, 4) / 4, lib.ones(12), None,
            None, False, 0.0, lib.ones(4, 4) / 4, lib.ones(4), need_weights=False)[0],
}


@pytest.mark.parametrize("name", COMPOSITES)
def test_composite_dtype_under_autocast(name):
    fn = COMPOSITES[name]
    _compare(lambda lib, a, v, x: fn(lib, a, v, x), (A4, VEC, IMG4), ("float32",) * 3)


NORMS = {
    "batch_norm": lambda lib, x, w, rm: lib.nn.functional.batch_norm(
        x, rm, lib.ones(2), w, w * 0.5, training=True),
    "batch_norm_eval": lambda lib, x, w, rm: lib.nn.functional.batch_norm(
        x, rm, lib.ones(2) * 2, w, w * 0.5),
    "layer_norm": lambda lib, x, w, rm: lib.nn.functional.layer_norm(
        x, (5,), lib.ones(5) * w[0], lib.ones(5) * w[1]),
    "group_norm": lambda lib, x, w, rm: lib.nn.functional.group_norm(x, 2, w, w * 0.5),
}


@pytest.mark.parametrize("kind", ["bf16", "mixed"])
@pytest.mark.parametrize("name", NORMS)
def test_low_precision_normalisation_with_float32_parameters(name, kind):
    """conv -> norm under autocast: a bfloat16 input, float32 weights and statistics."""
    def run(lib):
        x = _t(lib, IMG).to(lib.bfloat16 if kind == "bf16" else lib.float32)
        w = lib.tensor([1.5, -0.75], requires_grad=True)
        rm = lib.zeros(2)
        with lib.autocast("cpu"):
            out = NORMS[name](lib, x, w, rm)
        out.float().pow(2).sum().backward()
        return (str(out.dtype).split(".")[-1], out.detach().float().numpy(), w.grad.numpy(),
                rm.numpy())
    ours, theirs = run(cr), run(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("kind", DTYPES)
@pytest.mark.parametrize("name", CONV_CASES)
def test_conv_and_pool_dtype_under_autocast(name, kind):
    _compare(CONV_CASES[name], (IMG, KERNEL), DTYPES[kind])


@pytest.mark.parametrize("name", ["mm", "linear", "softmax", "cross_entropy", "cat"])
def test_float16_autocast_dtype(name):
    _compare(CASES[name], (MAT, MAT2), DTYPES["f32"], dtype="float16")


def _nested(lib):
    a, b = _t(lib, MAT), _t(lib, MAT2)
    out = []
    with lib.autocast("cpu"):
        e = lib.mm(a, b)
        with lib.autocast("cpu", enabled=False):
            out.append(lib.mm(a, e.float()).dtype)
            with lib.autocast("cpu"):
                out.append(lib.mm(a, b).dtype)
        out.append(lib.mm(e, b).dtype)
        out.append(lib.is_autocast_enabled("cpu"))
    out.append(lib.is_autocast_enabled("cpu"))
    return [str(x).split(".")[-1] for x in out]


def test_nested_and_disabled_regions():
    assert _nested(cr) == _nested(torch)


def _mlp_grads(lib, cache_enabled):
    lib.manual_seed(0)
    w1 = _t(lib, MAT).requires_grad_()
    w2 = _t(lib, MAT2).requires_grad_()
    x = _t(lib, MAT * 0.5)
    with lib.autocast("cpu", cache_enabled=cache_enabled):
        h = lib.nn.functional.linear(x, w1).relu()
        h = lib.nn.functional.linear(h, w1)            # w1 used twice: one cached cast
        logits = h @ w2
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor([0, 1, 2, 3]))
    loss.backward()
    cast_w2 = logits.grad_fn.next_functions[1][0]
    return (str(loss.dtype), str(w1.grad.dtype), w1.grad.numpy(), w2.grad.numpy(),
            loss.item(), type(cast_w2).__name__, type(loss.grad_fn).__name__)


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_gradients_come_back_in_the_parameters_dtype(cache_enabled):
    ours, theirs = _mlp_grads(cr, cache_enabled), _mlp_grads(torch, cache_enabled)
    assert ours[0].split(".")[-1] == theirs[0].split(".")[-1] == "float32"
    assert ours[1].split(".")[-1] == theirs[1].split(".")[-1] == "float32"
    np.testing.assert_allclose(ours[2], theirs[2], rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=3e-2, atol=3e-2)
    assert abs(ours[4] - theirs[4]) < 2e-2
    assert ours[5:] == theirs[5:]


def _autocast_warnings(lib):
    out = []
    for kwargs in ({"dtype": lib.float32}, {}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            device = "cuda" if not kwargs else "cpu"
            with lib.autocast(device, **kwargs):
                out.append(lib.is_autocast_enabled(device))
        out.append([(w.category.__name__, str(w.message).replace("torch.", "").replace(
            "chainrule.", "")) for w in caught])
    return out


def test_autocast_switches_itself_off_like_the_reference():
    if cr.cuda.is_available():                    # (chainrule-cuda's host build loaded)
        assert _autocast_warnings(cr)[0:2] == _autocast_warnings(torch)[0:2]
    else:
        assert _autocast_warnings(cr) == _autocast_warnings(torch)


def _errors(lib):
    out = []
    for fn in (lambda: lib.autocast(1), lambda: lib.autocast("meta"),
               lambda: lib.autocast("cpu")(3), lambda: lib.get_autocast_dtype("foo"),
               lambda: lib.amp.custom_fwd(lambda: 0, device_type=1)):
        try:
            fn()
            out.append(None)
        except Exception as exc:  # noqa: BLE001 - the type and message are compared
            out.append((type(exc).__name__, str(exc).split(":")[0].replace("torch.", "")))
    return out


def test_argument_errors():
    ours, theirs = _errors(cr), _errors(torch)
    assert [o[0] for o in ours] == [t[0] for t in theirs]
    assert ours[:3] == theirs[:3]


def _state_functions(lib):
    out = [lib.get_autocast_dtype("cpu"), lib.get_autocast_dtype("cuda"),
           lib.is_autocast_cache_enabled(), lib.amp.is_autocast_available("cpu")]
    lib.set_autocast_dtype("cpu", lib.float16)
    with lib.autocast("cpu"):
        out.append(lib.mm(_t(lib, MAT), _t(lib, MAT)).dtype)
    lib.set_autocast_dtype("cpu", lib.bfloat16)
    lib.set_autocast_enabled("cpu", True)
    out.append(lib.mm(_t(lib, MAT), _t(lib, MAT)).dtype)
    lib.set_autocast_enabled("cpu", False)
    out += [lib.autocast_increment_nesting(), lib.autocast_decrement_nesting()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out += [lib.get_autocast_cpu_dtype(), lib.is_autocast_cpu_enabled(),
                lib.get_autocast_gpu_dtype()]
    return [str(x).split(".")[-1] for x in out]


def test_state_functions():
    assert _state_functions(cr) == _state_functions(torch)


class _Model:
    """An MLP as both libraries build it, with the same initial weights."""

    def __init__(self, lib):
        self.lib = lib
        torch.manual_seed(0)
        ref = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(),
                                  torch.nn.Linear(16, 3))
        if lib is torch:
            self.net = ref
        else:
            self.net = cr.nn.Sequential(cr.nn.Linear(6, 16), cr.nn.ReLU(), cr.nn.Linear(16, 3))
            self.net.load_state_dict({k: cr.tensor(v.detach().numpy().copy())
                                      for k, v in ref.state_dict().items()})


def _scaler_history(lib, poison_steps, **scaler_kwargs):
    """Train 12 steps with autocast + GradScaler; an inf enters the loss at
    ``poison_steps``. Returns the scale, growth tracker and a weight per step."""
    model = _Model(lib).net
    opt = lib.optim.SGD(model.parameters(), lr=0.05)
    scaler = lib.amp.GradScaler("cpu", **scaler_kwargs)
    x = _t(lib, RNG_FIXED_X)
    y = lib.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    history = []
    for step in range(12):
        opt.zero_grad()
        with lib.autocast("cpu"):
            loss = lib.nn.functional.cross_entropy(model(x), y)
        if step in poison_steps:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker(),
                        float(model[0].weight[0, 0].item()), loss.item()))
    return history, scaler.state_dict()


RNG_FIXED_X = np.random.default_rng(1).standard_normal((8, 6)).astype(np.float32)


@pytest.mark.parametrize("kwargs", [
    {"init_scale": 1024.0, "growth_interval": 3},
    {"init_scale": 2.0 ** 126, "growth_factor": 4.0, "growth_interval": 1},   # growth overflows
    {"init_scale": 8.0, "growth_factor": 1.5, "backoff_factor": 0.25, "growth_interval": 2},
])
def test_grad_scaler_scale_history(kwargs):
    poison = (2, 3, 7)
    ours, ours_state = _scaler_history(cr, poison, **kwargs)
    theirs, theirs_state = _scaler_history(torch, poison, **kwargs)
    assert [h[:2] for h in ours] == [h[:2] for h in theirs]
    np.testing.assert_allclose([h[2] for h in ours], [h[2] for h in theirs], rtol=2e-2, atol=2e-3)
    assert ours_state == theirs_state


def _scaler_calls(lib):
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.5)
    scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
    out = []
    for fn in (lambda: scaler.step(opt), lambda: scaler.update()):
        try:
            fn()
        except AssertionError as exc:
            out.append(str(exc))
    scaler.scale([w.sum(), (w * 2).sum()])[1].backward()
    scaler.unscale_(opt)
    out.append(w.grad.tolist())
    try:
        scaler.unscale_(opt)
    except RuntimeError as exc:
        out.append(str(exc))
    scaler.step(opt)
    for fn in (lambda: scaler.step(opt), lambda: scaler.unscale_(opt),
               lambda: scaler.step(opt, closure=None)):
        try:
            fn()
        except RuntimeError as exc:
            out.append(str(exc))
    scaler.update(2.0)
    out += [w.tolist(), scaler.get_scale(), scaler.state_dict()]
    disabled = lib.amp.GradScaler("cpu", enabled=False)
    out += [disabled.scale(w) is w, disabled.get_scale(), disabled.state_dict()]
    try:
        lib.amp.GradScaler("cpu").load_state_dict({})
    except RuntimeError as exc:
        out.append(str(exc))
    return out


def test_grad_scaler_calls_and_errors():
    assert _scaler_calls(cr) == _scaler_calls(torch)


def test_deprecated_spellings_warn_like_the_reference():
    def record(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.cpu.amp.autocast():
                dtype = lib.mm(_t(lib, MAT), _t(lib, MAT)).dtype
            lib.cpu.amp.GradScaler()
            lib.cuda.amp.autocast(enabled=False)
        return str(dtype).split(".")[-1], [(w.category.__name__, str(w.message)) for w in
                                           caught]
    assert record(cr) == record(torch)


@pytest.mark.parametrize("path", [
    "amp.autocast.__init__", "amp.GradScaler.__init__", "amp.custom_fwd", "amp.custom_bwd",
    "amp.GradScaler.scale", "amp.GradScaler.unscale_", "amp.GradScaler.step",
    "amp.GradScaler.update", "amp.GradScaler.load_state_dict", "cpu.amp.autocast.__init__",
    "cuda.amp.autocast.__init__", "cpu.amp.GradScaler.__init__", "cuda.amp.GradScaler.__init__",
    "cuda.amp.custom_fwd", "cuda.amp.custom_bwd"])
def test_signatures(path):
    import functools
    import inspect
    import re

    def signature(lib):
        fn = inspect.unwrap(functools.reduce(getattr, path.split("."), lib))
        params = inspect.signature(fn).parameters.values()
        return [(p.name, p.kind, re.sub(r"^(torch|chainrule)\.", "", str(p.default)))
                for p in params]
    assert signature(cr) == signature(torch)
