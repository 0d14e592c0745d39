"""The meta device (Note [meta arrays] in chainrule/_meta.py): factories, modules,
every op of the derivative table (shapes, dtypes and strides as on the CPU, gradients
on meta), the errors of reading values or mixing devices, and no memory spent."""
import copy
import tracemalloc

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn as nn
import chainrule.nn.functional as F
from chainrule._meta import DATA_DEPENDENT, NO_DATA, NO_ITEM, MetaArray

from samples import all_samples
from samples._inputs import make_inputs

HUGE = 10 ** 6          # a (HUGE, HUGE) float32 tensor would take 4 TB


def meta(*shape, **kwargs):
    return cr.empty(*shape, device="meta", **kwargs)


def _assert_meta(t, shape, dtype=cr.float32):
    assert t.is_meta and t.device == cr.device("meta") and type(t._data) is MetaArray
    assert t.shape == shape and t.dtype == dtype


# -- devices and factories ---------------------------------------------------------------------
def test_meta_device_objects():
    assert cr.device("meta").type == "meta" and str(cr.device("meta")) == "meta"
    assert cr.ones(2).to("meta").device == "meta"
    assert not cr.ones(2).is_meta and not meta(2).is_cuda and meta(2).get_device() == -1
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta device type"):
        cr.device("foo")


@pytest.mark.parametrize("make, dtype", [
    (lambda: cr.empty(HUGE, HUGE, device="meta"), cr.float32),
    (lambda: cr.zeros(HUGE, HUGE, device="meta"), cr.float32),
    (lambda: cr.ones((HUGE, HUGE), dtype=cr.float64, device=cr.device("meta")), cr.float64),
    (lambda: cr.full((HUGE, HUGE), 7, device="meta"), cr.int64),
    (lambda: cr.rand(HUGE, HUGE, device="meta"), cr.float32),
    (lambda: cr.randn(HUGE, HUGE, dtype=cr.complex64, device="meta"), cr.complex64),
    (lambda: cr.randint(0, 5, (HUGE, HUGE), device="meta"), cr.int64),
    (lambda: cr.eye(HUGE, HUGE, device="meta"), cr.float32),
    (lambda: cr.empty_like(meta(HUGE, HUGE)), cr.float32),
    (lambda: cr.full_like(meta(HUGE, HUGE), 2.0, dtype=cr.float16), cr.float16),
    (lambda: cr.randn_like(meta(HUGE, HUGE)), cr.float32),
])
def test_factories_make_meta_tensors_without_memory(make, dtype):
    make()                                 # imports done before measuring
    tracemalloc.start()
    try:
        t = make()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _assert_meta(t, (HUGE, HUGE), dtype)
    assert peak < 1 << 20


def test_small_factories_and_like_across_devices():
    _assert_meta(cr.arange(10 ** 12, device="meta"), (10 ** 12,), cr.int64)
    _assert_meta(cr.linspace(0, 1, 5, device="meta"), (5,))
    _assert_meta(cr.tensor([[1, 2], [3, 4]], device="meta"), (2, 2), cr.int64)
    _assert_meta(cr.zeros_like(cr.ones(2, 3), device="meta"), (2, 3))
    host = cr.ones_like(meta(2, 3), device="cpu")       # a meta input, a host result
    assert host.device == cr.device("cpu") and host.tolist() == [[1.0] * 3] * 2
    with cr.device("meta"):
        _assert_meta(cr.ones(2), (2,))
    cr.set_default_device("meta")
    try:
        _assert_meta(cr.zeros(3), (3,))
    finally:
        cr.set_default_device(None)
    assert not cr.ones(1).is_meta


def test_meta_factories_and_fills_draw_no_random_numbers():
    state = cr.get_rng_state()
    cr.rand(3, device="meta"), cr.randn(3, device="meta")
    t = meta(4, 5)
    t.uniform_(), t.normal_(), t.bernoulli_(0.5), t.random_(0, 3)
    for init in (nn.init.kaiming_uniform_, nn.init.xavier_normal_, nn.init.trunc_normal_,
                 nn.init.orthogonal_, nn.init.eye_, nn.init.zeros_):
        assert init(t) is t
    nn.Linear(4, 5, device="meta")
    huge = meta(HUGE, HUGE)
    _assert_meta(F.dropout(huge, 0.5), (HUGE, HUGE))       # no mask drawn either
    _assert_meta(cr.randint_like(huge, 3), (HUGE, HUGE))
    assert (cr.get_rng_state() == state).all()


# -- what a meta tensor shows and refuses ----------------------------------------------------
def test_repr_names_size_and_what_differs_from_the_default():
    assert repr(meta(2, 3)) == "tensor(..., device='meta', size=(2, 3))"
    assert str(meta(0)) == "tensor(..., device='meta', size=(0,))"
    assert repr(cr.ones(3, dtype=cr.int64, device="meta")) == \
        "tensor(..., device='meta', size=(3,), dtype=chainrule.int64)"
    w = meta(2, requires_grad=True)
    assert repr(w) == "tensor(..., device='meta', size=(2,), requires_grad=True)"
    assert repr(w * 2) == "tensor(..., device='meta', size=(2,), grad_fn=<MulBackward0>)"


@pytest.mark.parametrize("read, error, message", [
    (lambda t: t.sum().item(), RuntimeError, NO_ITEM),
    (lambda t: bool(t.sum()), RuntimeError, NO_ITEM),
    (lambda t: float(t[0, 0]), RuntimeError, NO_ITEM),
    (lambda t: t.tolist(), NotImplementedError, NO_DATA),
    (lambda t: t.cpu(), NotImplementedError, NO_DATA),
    (lambda t: t.to("cpu"), NotImplementedError, NO_DATA),
    (lambda t: cr.zeros(2, 3).copy_(t), NotImplementedError, NO_DATA),
    (lambda t: t.numpy(), TypeError, "can't convert meta device type tensor to numpy"),
    (lambda t: t.nonzero(), NotImplementedError, DATA_DEPENDENT[:40]),
    (lambda t: t[t > 0], NotImplementedError, DATA_DEPENDENT[:40]),
    (lambda t: cr.allclose(t, t), RuntimeError, NO_ITEM),
    (lambda t: f"{t.sum():.3f}", TypeError, "unsupported format string passed to Tensor"),
])
def test_reading_values_raises_the_references_errors(read, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        read(meta(2, 3))


def test_mixing_meta_and_cpu_is_the_mixed_device_error():
    x = meta(2, 3)
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected "
                                           "device meta!"):
        x + cr.ones(2, 3)
    with pytest.raises(RuntimeError, match="Tensor on device meta is not on the expected "
                                           "device cpu!"):
        cr.ones(2, 3) @ x.t()
    with pytest.raises(RuntimeError, match="not on the expected device"):
        cr.cat([x, cr.ones(2, 3)])
    _assert_meta(x + cr.tensor(1.0), (2, 3))          # a 0-d host tensor joins, as a scalar
    _assert_meta(x[cr.tensor([0, 1, 1])], (3, 3))      # host indices index a meta tensor


def test_writes_into_meta_tensors_do_nothing():
    x = meta(2, 3)
    assert x.fill_(3) is x and x.zero_() is x and x.add_(1) is x
    assert x.copy_(cr.ones(2, 3)) is x                  # host to meta is allowed
    x[0] = 5.0
    _assert_meta(x, (2, 3))


def test_shape_errors_are_the_references_meta_errors():
    with pytest.raises(RuntimeError, match=r"Attempting to broadcast a dimension of length 4 "
                       r"at -1! Mismatching argument at index 1 had chainrule.Size\(\[4\]\); "
                       r"but expected shape should be broadcastable to \[2, 3\]"):
        meta(2, 3) + meta(4)
    with pytest.raises(RuntimeError, match=r"length 4 at -3! .* broadcastable to \[5, 2, 3\]"):
        meta(5, 2, 3) - meta(4, 1, 3)
    with pytest.raises(RuntimeError, match=r"a and b must have same reduction dim, but got "
                                           r"\[2, 3\] X \[4, 5\]."):
        meta(2, 3) @ meta(4, 5)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        meta(2, 3).t().view(6)
    with pytest.raises(IndexError, match="Dimension out of range"):
        meta(2, 3).sum(5)


# -- ops: the derivative table on meta tensors -------------------------------------------------
# Samples that cannot run on meta tensors: data-dependent shapes (masks, repeats given
# by a tensor, a 0-d index tensor), as in the reference; a derivative that is not
# implemented; forwards that compute on the host (SciPy's expm and LU, scatter-mean's
# counts, max-pool indices, fold and unpool build host index arrays; three losses read
# their targets on the host). Samples whose
# call holds host tensors of its own (weights, targets) may raise the mixed-device error.
UNSUPPORTED = {"scatter_reduce", "index", "masked_select", "masked_scatter", "select",
               "floor_divide", "heaviside", "scatter_multiply", "index_select",
               "linalg_matrix_exp", "linalg_lu", "linalg_lu_factor", "linalg_lu_solve",
               "lu_unpack", "linalg_ldl_factor", "linalg_ldl_solve", "max_dim", "index_add",
               "scatter"}
HOST_LOSSES = ("multilabel", "multi_margin", "ctc_loss")     # read targets on the host
HOST_LOSSES += ("istft",)             # reads its window envelope's minimum, as torch's
MESSAGES = (NO_DATA, NO_ITEM, DATA_DEPENDENT[:40], "not on the expected device",
            "is not implemented")
# Layouts that differ from the CPU's: NumPy returns a view there (einsum "ij->ji", cross
# along dim 0) or picks strides for an advanced index that the meta rule makes dense.
OTHER_STRIDES = {"einsum", "linalg_cross", "index"}
SAMPLES = all_samples()


def _to_meta(value):
    if not isinstance(value, cr.Tensor):
        return value
    moved = value.detach().to("meta")
    return moved.requires_grad_() if value.requires_grad else moved


def _tensors(out):
    if isinstance(out, cr.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    return []


def _holds_host_tensors(fn):
    """Whether a sample's call holds host tensors of its own (in its closure)."""
    stack = [c.cell_contents for c in fn.__closure__ or ()]
    while stack:
        value = stack.pop()
        if isinstance(value, cr.Tensor) and not value.is_meta:
            return True
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif callable(value) and getattr(value, "__closure__", None):
            stack.extend(c.cell_contents for c in value.__closure__)
    return False


def _run_on_meta(sample):
    inputs = [_to_meta(v) for v in make_inputs(sample)]
    with cr.device("meta"):             # tensors the call makes (weights) are meta too
        outputs = _tensors(sample.call(*inputs))
    diff = [o for o in outputs if o.requires_grad]
    leaves = [t for t in inputs if isinstance(t, cr.Tensor) and t.requires_grad]
    grads = cr.autograd.grad([(o.sum().real if o.is_complex() else o.sum()) for o in diff],
                             leaves, allow_unused=True) if diff else []
    return outputs, list(zip(leaves, grads))


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id() for s in SAMPLES])
def test_every_table_op_runs_on_meta_tensors(sample):
    """Outputs with the CPU's shapes, dtypes and strides; meta gradients of the leaves'
    shapes; or, for the UNSUPPORTED ones, one of the meta errors."""
    try:
        expected = _tensors(sample.call(*make_inputs(sample)))
    except Exception:
        return                                   # an error sample: test_derivatives covers it
    try:
        outputs, grads = _run_on_meta(sample)
    except (RuntimeError, NotImplementedError) as e:
        mixed = "not on the expected device" in str(e) and _holds_host_tensors(sample.call)
        unsupported = sample.op in UNSUPPORTED or any(n in sample.note for n in HOST_LOSSES)
        assert mixed or (unsupported and any(m in str(e) for m in MESSAGES)), e
        return
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.is_meta and (got.shape, got.dtype) == (want.shape, want.dtype)
        if sample.op not in OTHER_STRIDES and want.numel() > 1:
            assert [s for s, n in zip(got.stride(), got.shape) if n > 1] == \
                [s for s, n in zip(want.stride(), want.shape) if n > 1]
    for leaf, g in grads:
        assert g is None or (g.is_meta and g.shape == leaf.shape and g.dtype == leaf.dtype)


def test_set_functions_on_meta_tensors():
    x, edges = meta(4, 3), meta(5)
    _assert_meta(cr.isin(x, edges), (4, 3), cr.bool)
    _assert_meta(cr.searchsorted(edges, x), (4, 3), cr.int64)
    _assert_meta(cr.bucketize(x, edges, out_int32=True), (4, 3), cr.int32)
    with pytest.raises(NotImplementedError, match="aten::_unique2: attempted to run this "
                                                  "operator with Meta tensors"):
        cr.unique(x)


def test_huge_graphs_record_and_run_backward_without_memory():
    F.cross_entropy(meta(2, 3, requires_grad=True), cr.zeros(2, dtype=cr.int64,
                                                              device="meta")).backward()
    tracemalloc.start()
    try:
        x = meta(HUGE, 4096)
        w = meta(4096, HUGE, requires_grad=True)
        b = meta(HUGE, requires_grad=True)
        logits = F.linear(x, w.t(), b).softmax(-1)
        loss = F.cross_entropy(logits, cr.zeros(HUGE, dtype=cr.int64, device="meta"))
        loss.backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _assert_meta(loss, ())
    _assert_meta(w.grad, (4096, HUGE))
    _assert_meta(b.grad, (HUGE,))
    assert peak < 1 << 26            # index arrays of the batch's length; 4 TB were it dense


def test_views_keep_strides_and_offsets():
    x = meta(4, 6)
    assert x.t().stride() == (1, 6) and (x.t() + 1).stride() == (1, 6)
    assert x[1:, 2:].storage_offset() == 8 and x[:, ::2].stride() == (6, 2)
    assert x.unsqueeze(1).expand(4, 3, 6).stride() == (6, 0, 1)
    assert x.view(2, 12).stride() == (12, 1) and not x.t().is_contiguous()
    assert x.t().contiguous().stride() == (4, 1)
    assert cr.ones(2, 3).t().to("meta").stride() == (1, 3)


# -- modules ----------------------------------------------------------------------------------
MODULES = [
    (lambda **d: nn.Linear(5, 3, **d), (4, 5)),
    (lambda **d: nn.Bilinear(5, 5, 2, **d), None),
    (lambda **d: nn.Conv2d(3, 4, 3, padding=1, **d), (2, 3, 8, 8)),
    (lambda **d: nn.ConvTranspose1d(3, 2, 3, **d), (2, 3, 7)),
    (lambda **d: nn.BatchNorm2d(3, **d), (2, 3, 4, 4)),
    (lambda **d: nn.LayerNorm(5, **d), (2, 4, 5)),
    (lambda **d: nn.GroupNorm(2, 4, **d), (2, 4, 3)),
    (lambda **d: nn.Embedding(10, 4, **d), None),
    (lambda **d: nn.PReLU(**d), (2, 3)),
    (lambda **d: nn.LSTM(5, 6, batch_first=True, **d), (2, 3, 5)),
    (lambda **d: nn.GRU(5, 6, **d), (3, 2, 5)),
    (lambda **d: nn.MultiheadAttention(8, 2, batch_first=True, **d), None),
    (lambda **d: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, **d),
     (2, 3, 8)),
]


@pytest.mark.parametrize("make, shape", MODULES)
def test_modules_built_on_meta_run_as_on_the_cpu(make, shape):
    state = cr.get_rng_state()
    module = make(device="meta")
    assert (cr.get_rng_state() == state).all()            # no initialisation drawn
    tensors = list(module.parameters()) + list(module.buffers())
    assert tensors and all(t.is_meta for t in tensors)
    if shape is None:
        return
    cpu = make().eval()
    out, want = module.eval()(meta(*shape)), cpu(cr.ones(*shape))
    out, want = _tensors(out), _tensors(want)
    assert [(o.is_meta, o.shape) for o in out] == [(True, w.shape) for w in want]


def test_module_to_meta_deepcopy_and_state_dict():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    moved = copy.deepcopy(model).to("meta")
    assert all(t.is_meta for t in moved.state_dict().values())
    assert not any(t.is_meta for t in model.state_dict().values())
    again = copy.deepcopy(moved)
    assert again[0].weight.is_meta and again[0].weight is not moved[0].weight
    assert repr(again[0].weight).startswith("Parameter containing:\ntensor(..., device='meta'")


def test_save_and_load_meta_tensors():
    import io
    buffer = io.BytesIO()
    cr.save({"model": nn.Linear(3, 4, device="meta").state_dict(), "view": meta(4, 6)[:, ::2],
             "host": cr.ones(2)}, buffer)
    for where in (None, "cpu"):
        buffer.seek(0)
        loaded = cr.load(buffer, map_location=where)
        _assert_meta(loaded["model"]["weight"], (4, 3))
        assert loaded["view"].is_meta and loaded["view"].stride() == (6, 2)
        assert loaded["host"].tolist() == [1.0, 1.0]


def test_to_empty_then_initialise_or_load():
    model = nn.Linear(3, 4, device="meta").to_empty(device="cpu")
    assert model.weight.device == cr.device("cpu") and model.weight.shape == (4, 3)
    model.reset_parameters()
    assert float(model.weight.abs().sum()) > 0
    target = nn.Linear(3, 4, device="meta")
    source = nn.Linear(3, 4)
    with pytest.warns(UserWarning, match="for weight: copying from a non-meta parameter in "
                                         "the checkpoint to a meta parameter .* a no-op"):
        target.load_state_dict(source.state_dict())
    assert target.weight.is_meta
    target.load_state_dict(source.state_dict(), assign=True)
    assert not target.weight.is_meta and isinstance(target.weight, nn.Parameter)
    assert target.weight.tolist() == source.weight.tolist()


def test_model_ensembling_over_a_meta_base_module():
    """The torch.func tutorial's pattern: every parameter of a meta copy replaced."""
    from chainrule.nn.utils.stateless import functional_call
    models = [nn.Linear(3, 2) for _ in range(4)]
    params = {name: cr.stack([dict(m.named_parameters())[name].detach() for m in models])
              for name, _ in models[0].named_parameters()}
    base = copy.deepcopy(models[0]).to("meta")
    x = cr.randn(5, 3)
    got = cr.vmap(lambda p, x: functional_call(base, p, (x,)), in_dims=(0, None))(params, x)
    want = cr.stack([m(x) for m in models])
    assert np.allclose(got.detach().numpy(), want.detach().numpy())


# -- the NumPy protocols of MetaArray (Note [meta arrays]) ------------------------------------
NUMPY_CALLS = [
    (lambda a, b: np.add(a, b, dtype=np.float64), [(2, 1, 3), (4, 1)]),
    (lambda a, b: np.divmod(a, b), [(2, 3), (3,)]),
    (lambda a, b: np.einsum("...ij,jk->...ki", a, b), [(5, 2, 3), (3, 4)]),
    (lambda a, b: np.einsum("ij,ij", a, b), [(2, 3), (2, 3)]),
    (lambda a, b: np.einsum("bij,bjk", a, b), [(2, 2, 3), (2, 3, 4)]),
    (lambda a, b: np.matmul(a, b), [(3,), (2, 3, 4)]),
    (lambda a, b: np.dot(a, b), [(2, 2, 3), (4, 3, 5)]),
    (lambda a, b: np.multiply.outer(a, b), [(2,), (3, 4)]),
    (lambda a, b: np.concatenate([a, b], axis=1), [(2, 3), (2, 5)]),
    (lambda a, b: np.where(a > 0, a, b.astype(np.float32)), [(2, 3), (3,)]),
    (lambda a: np.add.reduce(a, axis=(0, 2), keepdims=True), [(2, 3, 4)]),
    (lambda a: np.maximum.accumulate(a, axis=1), [(2, 3)]),
    (lambda a: np.logaddexp.reduce(a, axis=-1), [(2, 3)]),
    (lambda a: np.std(a, axis=1, ddof=1), [(2, 3)]),
    (lambda a: np.argmax(a, axis=0, keepdims=True), [(2, 3)]),
    (lambda a: np.cumsum(a), [(2, 3)]),
    (lambda a: np.linalg.norm(a, axis=(1, 2)), [(2, 3, 4)]),
    (lambda a: np.trace(a, axis1=1, axis2=2), [(2, 3, 4)]),
    (lambda a: np.take_along_axis(a, np.zeros((2, 5), np.intp), axis=1), [(2, 3)]),
    (lambda a: np.pad(a, ((1, 0), (2, 3))), [(2, 3)]),
    (lambda a: np.tile(a, (2, 1, 3)), [(2, 3)]),
    (lambda a: np.moveaxis(a, 0, -1), [(2, 3, 4)]),
    (lambda a: a[None, ..., ::-2, 1], [(2, 5, 3)]),
    (lambda a: a[[0, 1, 1], :, np.array([0, 2, 1])], [(2, 5, 3)]),
    (lambda a: a.view(np.complex64), [(2, 4)]),
    (lambda a: np.linalg.inv(a), [(2, 3, 3)]),
    (lambda a, b: np.kron(a, b), [(2, 3), (4,)]),
    (lambda a: np.diff(a, 2, axis=0), [(5, 3)]),
    (lambda a, b: np.isin(a, b), [(2, 3), (2,)]),
    (lambda a: np.copy(a[:, ::2]), [(2, 5)]),
    (lambda a: np.linalg.qr(a), [(4, 3)]),
]


def _real_and_meta(shape):
    real = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return real, MetaArray.empty(shape, np.float32)


@pytest.mark.parametrize("call, shapes", NUMPY_CALLS)
def test_numpy_calls_on_meta_arrays_infer_what_numpy_returns(call, shapes):
    real, metas = zip(*[_real_and_meta(s) for s in shapes])
    want, got = call(*real), call(*metas)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert [(type(g), g.shape, g.dtype) for g in got] == \
        [(MetaArray, np.shape(w), np.asarray(w).dtype) for w in want]
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray) and w.base is not None and w.size > 1 and w.ndim:
            assert g.strides == w.strides                    # views: NumPy's strides


def test_numpy_calls_without_a_rule_run_on_templates_only_when_small():
    small = MetaArray.empty((3, 4), np.float64)
    assert np.convolve(small[0], small[1]).shape == (7,)
    with pytest.raises(NotImplementedError, match="no shape rule for numpy.convolve"):
        np.convolve(MetaArray.empty((HUGE,), np.float64), small[0])
    out = MetaArray.empty((2, 3), np.float64)
    assert np.add(small[:2, :3], 1.0, out=out) is out
    with pytest.raises(ValueError, match="could not be broadcast together"):
        np.add(small, 1.0, out=out)
    with pytest.raises(ValueError, match="non-broadcastable output operand with shape"):
        np.add(small, 1.0, out=MetaArray.empty((3, 1), np.float64))
