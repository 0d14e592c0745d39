"""Parity tier for the optimizers ASGD, Adafactor, SparseAdam and Muon and for
``optim.swap_in_optimizer_params_and_state`` against PyTorch (skips without torch).

The same model trained 20 steps on both sides: every parameter equal to 1e-6 after
every step, the same state keys and values; constructor and step errors with the
same types and messages; a state_dict taken from torch's optimizer continues in
chainrule as in torch.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402
from chainrule import nn  # noqa: E402

RNG = np.random.default_rng(1)
DATA = RNG.standard_normal((8, 4)), RNG.standard_normal((8, 2))


def to_cr(t):
    return cr.tensor(t.detach().numpy().copy())


def arr(t):
    return t.detach().numpy()


def model_pair(bias=True):
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5, bias=bias), torch.nn.Tanh(),
                                 torch.nn.Linear(5, 2, bias=bias)).double()
    ours = nn.Sequential(nn.Linear(4, 5, bias=bias), nn.Tanh(), nn.Linear(5, 2, bias=bias))
    ours.double().load_state_dict({k: to_cr(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def loss_of(lib, model):
    inputs, targets = (lib.tensor(a) for a in DATA)
    return ((model(inputs) - targets) ** 2).mean() + (model[0].weight ** 2).sum() * 0.01


def train(pairs, steps):
    """``steps`` steps of each (library, model, optimizer); parameters compared after
    every step."""
    for _ in range(steps):
        for lib, model, opt in pairs:
            opt.zero_grad()
            loss_of(lib, model).backward()
            opt.step()
        (_, ours, _), (_, theirs, _) = pairs
        for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(arr(a), arr(b), rtol=1e-6, atol=1e-9, err_msg=n)


def assert_same_state(opt_c, opt_t):
    sd_c, sd_t = opt_c.state_dict(), opt_t.state_dict()
    assert sd_c["param_groups"] == sd_t["param_groups"]
    assert sd_c["state"].keys() == sd_t["state"].keys()
    for key, state in sd_t["state"].items():
        assert sorted(sd_c["state"][key]) == sorted(state)
        for name, value in state.items():
            ours = sd_c["state"][key][name]
            if isinstance(value, torch.Tensor):
                assert ours.dtype.itemsize == value.dtype.itemsize, name
                np.testing.assert_allclose(arr(ours), arr(value), rtol=1e-6, atol=1e-9,
                                           err_msg=name)
            else:
                assert ours == value, name


OPTIMIZERS = [
    ("ASGD", dict()), ("ASGD", dict(lr=0.05, t0=5, lambd=0.01, alpha=0.5)),
    ("ASGD", dict(lr=0.05, t0=0, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.05, t0=3, foreach=False, differentiable=False, capturable=False)),
    ("Adafactor", dict()), ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, d=1.5)),
    ("Adafactor", dict(lr=0.02, eps=(1e-20, 1e-2), weight_decay=0.1, maximize=True)),
    ("Adafactor", dict(lr=0.02, eps=(None, 0.5), foreach=False)),
]


@pytest.mark.parametrize("name, options", OPTIMIZERS,
                         ids=[f"{o[0]}-{i}" for i, o in enumerate(OPTIMIZERS)])
def test_trajectory_and_state_match_torch(name, options):
    ours, theirs = model_pair()
    opt_c = getattr(cr.optim, name)(ours.parameters(), **options)
    opt_t = getattr(torch.optim, name)(theirs.parameters(), **options)
    train([(cr, ours, opt_c), (torch, theirs, opt_t)], 20)
    assert_same_state(opt_c, opt_t)
    assert repr(opt_c) == repr(opt_t)


MUON = [dict(), dict(lr=0.02, nesterov=False, momentum=0.9, weight_decay=0.01),
        dict(lr=0.02, adjust_lr_fn="match_rms_adamw", ns_steps=3, eps=1e-5),
        dict(lr=0.01, adjust_lr_fn="original", ns_coefficients=(2.0, -1.5, 0.5))]


def train_on_torch_gradients(ours, opt_c, theirs, opt_t, steps):
    """Muon's steps from torch's state: before each step chainrule's parameters and
    momentum buffers are set to torch's and its gradients are torch's. Muon rounds
    its update to bfloat16, where a last-bit difference (of a float32 sum, of the
    engines' gradients) now and then moves one element by a bfloat16 ulp, and such a
    change spreads through the Newton-Schulz iteration: each step's result is
    compared within a few bfloat16 ulps of the update (a wrong update is off by the
    update itself)."""
    for _ in range(steps):
        opt_t.zero_grad()
        loss_of(torch, theirs).backward()
        with cr.no_grad():
            for a, b in zip(ours.parameters(), theirs.parameters()):
                a.copy_(to_cr(b))
                a.grad = to_cr(b.grad)
                if "momentum_buffer" in opt_t.state[b]:
                    opt_c.state[a]["momentum_buffer"] = to_cr(opt_t.state[b]["momentum_buffer"])
        opt_c.step()
        opt_t.step()
        for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            ulps = 4 * _muon_lr(opt_t, b) * 2.0 ** -8
            np.testing.assert_allclose(arr(a), arr(b), rtol=1e-6, atol=ulps, err_msg=n)


def _muon_lr(opt, p):
    from torch.optim._muon import _adjust_lr
    group = opt.param_groups[0]
    return float(_adjust_lr(float(group["lr"]), group["adjust_lr_fn"], p.shape))


@pytest.mark.parametrize("shape", [(5, 4), (2, 5), (8, 3), (6, 6)])
def test_muon_orthogonalization_matches_torch(shape):
    from torch.optim._muon import _zeropower_via_newtonschulz
    from chainrule.optim.muon import _orthogonalize
    rng = np.random.default_rng(3)
    same = total = 0
    for scale in (1e-3, 0.1, 10.0) * 10:
        g = rng.standard_normal(shape) * scale
        ours = _orthogonalize(cr.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7).float().numpy()
        theirs = _zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.775, 2.0315), 5,
                                             1e-7).float().numpy()
        np.testing.assert_allclose(ours, theirs, rtol=2.0 ** -6, atol=2.0 ** -12)
        same, total = same + (ours == theirs).sum(), total + ours.size
    assert same >= 0.98 * total


@pytest.mark.parametrize("name, options", [("ASGD", dict(lr=0.05, t0=4)),
                                           ("Adafactor", dict(lr=0.05)),
                                           ("Muon", dict(lr=0.02))])
def test_torch_state_dict_continues_in_chainrule(name, options):
    _, theirs = model_pair(bias=name != "Muon")
    opt_t = getattr(torch.optim, name)(theirs.parameters(), **options)
    train([(torch, theirs, opt_t), (torch, theirs, opt_t)], 5)
    saved = opt_t.state_dict()
    # loading casts the floating state to the parameters' dtype (except 'step') on
    # both sides: continue from a torch optimizer that loaded it too
    ours, again = model_pair(bias=name != "Muon")
    again.load_state_dict(theirs.state_dict())
    ours.load_state_dict({k: to_cr(v) for k, v in theirs.state_dict().items()})
    opt_again = getattr(torch.optim, name)(again.parameters(), **options)
    opt_again.load_state_dict(saved)
    opt_c = getattr(cr.optim, name)(ours.parameters(), **options)
    opt_c.load_state_dict({"param_groups": saved["param_groups"], "state": {
        k: {n: to_cr(v) if isinstance(v, torch.Tensor) else v for n, v in s.items()}
        for k, s in saved["state"].items()}})
    if name == "Muon":
        train_on_torch_gradients(ours, opt_c, again, opt_again, 10)
    else:
        train([(cr, ours, opt_c), (torch, again, opt_again)], 10)
    assert_same_state(opt_c, opt_again)


@pytest.mark.parametrize("foreach", [True, None])
def test_foreach_asgd_and_adafactor_match_torch(foreach):
    for name in ("ASGD", "Adafactor"):
        ours, theirs = model_pair()
        opt_c = getattr(cr.optim, name)(ours.parameters(), lr=0.05, foreach=foreach)
        opt_t = getattr(torch.optim, name)(theirs.parameters(), lr=0.05, foreach=foreach)
        train([(cr, ours, opt_c), (torch, theirs, opt_t)], 20)
        assert opt_c.defaults == opt_t.defaults


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are compared
        return type(exc).__name__, str(exc)
    return None


BAD_ARGUMENTS = [
    ("ASGD", dict(lr=-1.0)), ("ASGD", dict(weight_decay=-0.1)),
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))), ("Adafactor", dict(eps=(None, -1.0))),
    ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1.0)),
    ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(eps=0.0)),
    ("SparseAdam", dict(betas=(1.0, 0.9))), ("SparseAdam", dict(betas=(0.9, -0.1))),
    ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-0.5)), ("Muon", dict(weight_decay=-1.0)),
    ("Muon", dict(adjust_lr_fn="other")),
]


@pytest.mark.parametrize("name, options", BAD_ARGUMENTS,
                         ids=[f"{o[0]}-{i}" for i, o in enumerate(BAD_ARGUMENTS)])
def test_constructor_errors_match_torch(name, options):
    got = [_error(lambda lib=lib: getattr(lib.optim, name)([lib.ones(2, 2, requires_grad=True)],
                                                           **options)) for lib in (cr, torch)]
    assert got[0] is not None and got[0] == got[1]


def test_tensor_lr_must_have_one_element():
    for name in ("ASGD", "Adafactor", "SparseAdam", "Muon"):
        got = [_error(lambda lib=lib: getattr(lib.optim, name)(
            [lib.ones(2, 2, requires_grad=True)], lr=lib.tensor([0.1, 0.2]))) for lib in (cr, torch)]
        assert got[0] == got[1] == ("ValueError", "Tensor lr must be 1-element")


def _step_error(lib, name, param, grad, **options):
    def run():
        p = param(lib)
        opt = getattr(lib.optim, name)([p], **options)
        p.grad = grad(lib)
        opt.step()
    return _error(run)


STEP_ERRORS = [
    ("SparseAdam", lambda lib: lib.ones(3, requires_grad=True), lambda lib: lib.ones(3), {}),
    ("SparseAdam", lambda lib: lib.ones(3, dtype=lib.complex64, requires_grad=True),
     lambda lib: None, {}),
    ("Muon", lambda lib: lib.ones(3, requires_grad=True), lambda lib: lib.ones(3), {}),
    ("Muon", lambda lib: lib.ones(2, 2, dtype=lib.complex64, requires_grad=True),
     lambda lib: lib.ones(2, 2, dtype=lib.complex64), {}),
    ("Muon", lambda lib: lib.ones(2, 2, requires_grad=True), lambda lib: lib.ones(2, 2),
     dict(ns_steps=100)),
    ("Muon", lambda lib: lib.ones(2, 2, requires_grad=True), lambda lib: lib.ones(2, 2),
     dict(ns_coefficients=(1.0, 2.0))),
    ("Adafactor", lambda lib: lib.ones(2, dtype=lib.complex64, requires_grad=True),
     lambda lib: lib.ones(2, dtype=lib.complex64), {}),
    ("ASGD", lambda lib: lib.ones(2, requires_grad=True), lambda lib: lib.ones(2),
     dict(capturable=True)),
    ("ASGD", lambda lib: lib.ones(2, requires_grad=True), lambda lib: lib.ones(2),
     dict(differentiable=True)),
]


@pytest.mark.parametrize("name, param, grad, options", STEP_ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(STEP_ERRORS)])
def test_step_errors_match_torch(name, param, grad, options):
    got = [_step_error(lib, name, param, grad, **options) for lib in (cr, torch)]
    assert got[0] is not None
    assert got[0] == (got[1][0], got[1][1].replace("torch.Size", "chainrule.Size"))


def test_sparse_adam_without_gradients_returns_the_closure_loss():
    for lib in (cr, torch):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p, lib.ones(2, requires_grad=True)], lr=0.1)
        assert opt.step(lambda: 1.5) == 1.5 and not opt.state
        assert opt.defaults == dict(lr=0.1, betas=(0.9, 0.999), eps=1e-8, maximize=False)


def _differentiable_steps(lib, grad_of, name="ASGD", **options):
    """Three differentiable steps on a non-leaf parameter; the gradients of the result
    with respect to the initial value and to the gradients' factor."""
    base = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
    g = lib.tensor([0.5, 0.25], dtype=lib.float64, requires_grad=True)
    p = base.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **options)
    for _ in range(3):
        p.grad = grad_of(g, p)
        opt.step()
    return [arr(t) for t in lib.autograd.grad((p * p).sum(), (base, g))]


# the optimizers whose step chainrule records with differentiable=True
DIFFERENTIABLE = [("ASGD", dict(lr=0.1, t0=0)), ("SGD", dict(lr=0.1, momentum=0.9)),
                  ("RAdam", dict(lr=0.1)), ("Adadelta", dict(rho=0.8))]


@pytest.mark.parametrize("name, options", DIFFERENTIABLE)
def test_differentiable_step_matches_torch(name, options):
    ours, theirs = (_differentiable_steps(lib, lambda g, p: g * 2 + 1, name, **options)
                    for lib in (cr, torch))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-15)


def test_differentiable_stale_parameter_error_matches_torch():
    # a gradient that saved the parameter: the step's in-place update makes it stale
    got = [_error(lambda lib=lib: _differentiable_steps(lib, lambda g, p: g * p, lr=0.1))
           for lib in (cr, torch)]
    assert got[0] is not None and got[0][0] == got[1][0] == "RuntimeError"
    assert got[0][1] == got[1][1].replace("torch.", "chainrule.")


def test_swap_in_optimizer_params_and_state_matches_torch():
    results = []
    for lib in (cr, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.1)
        w.grad = lib.tensor([0.5, -1.0]); opt.step()
        saved = opt.state_dict()
        saved["param_groups"][0]["lr"] = 0.5
        other = lib.tensor([3.0, 4.0]); other.grad = lib.tensor([1.0, 1.0])
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, saved):
            inside = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is other)
            opt.step()
        results.append([*inside, *other.tolist(), *w.tolist(), opt.param_groups[0]["lr"],
                        *arr(saved["state"][0]["exp_avg"]).tolist(),
                        float(saved["state"][0]["step"]), float(opt.state[w]["step"])])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


SWAP_ERRORS = [
    lambda lib, opt, sd: {"w": lib.ones(2)} and None,
    lambda lib, opt, sd: [],
    lambda lib, opt, sd: dict(sd, state=[]),
    lambda lib, opt, sd: dict(sd, state={0: 1.0}),
    lambda lib, opt, sd: dict(sd, param_groups={}),
    lambda lib, opt, sd: dict(sd, param_groups=[]),
    lambda lib, opt, sd: dict(sd, param_groups=[[0]]),
    lambda lib, opt, sd: dict(sd, param_groups=[dict(sd["param_groups"][0], params=["a"])]),
    lambda lib, opt, sd: dict(sd, param_groups=[dict(sd["param_groups"][0], params=[0, 1])]),
    lambda lib, opt, sd: dict(sd, param_groups=[dict(sd["param_groups"][0], extra=1)]),
    lambda lib, opt, sd: dict(sd, state={0: {}, 7: {}}),
]


@pytest.mark.parametrize("make", SWAP_ERRORS)
def test_swap_in_errors_match_torch(make):
    got = []
    for lib in (cr, torch):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        w.grad = lib.ones(2); opt.step()
        state = make(lib, opt, opt.state_dict())
        swap = lib.optim.swap_in_optimizer_params_and_state
        got.append(_error(lambda: swap(opt, {"w": lib.zeros(2)}, state).__enter__()))
    assert got[0] is not None and got[0] == got[1]


def test_swap_in_needs_initialized_state():
    got = [_error(lambda lib=lib: lib.optim.swap_in_optimizer_params_and_state(
        lib.optim.SGD([lib.ones(1, requires_grad=True)]), {}, {}).__enter__())
        for lib in (cr, torch)]
    assert got[0] == got[1] and got[0][0] == "RuntimeError"


def test_lr_scheduler_names_and_epoch_warning_match_torch():
    assert set(torch.optim.lr_scheduler.__all__) <= set(cr.optim.lr_scheduler.__all__)
    assert set(torch.optim.__all__) <= set(dir(cr.optim))
    messages = []
    for lib in (cr, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        opt.step()
        with pytest.warns(UserWarning) as caught:
            sched.step(3)
        messages.append((str(caught[0].message), lib.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING,
                         sched.get_last_lr()))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", ["ASGD", "Adafactor", "Muon"])
def test_tensor_learning_rate_matches_torch(name):
    ours, theirs = model_pair(bias=name != "Muon")
    opt_c = getattr(cr.optim, name)(ours.parameters(), lr=cr.tensor(0.03))
    opt_t = getattr(torch.optim, name)(theirs.parameters(), lr=torch.tensor(0.03))
    if name == "Muon":
        train_on_torch_gradients(ours, opt_c, theirs, opt_t, 10)
    else:
        train([(cr, ours, opt_c), (torch, theirs, opt_t)], 10)


@pytest.mark.parametrize("name, options", [("SparseAdam", {"lr": 0.1}), ("SGD", {"lr": 0.5}),
                                           ("Adagrad", {"lr": 0.3})])
def test_sparse_embedding_gradients_train_as_in_torch(name, options):
    """Note [sparse gradients over dense storage]: the same rows move by the same amounts."""
    weight = np.random.default_rng(0).standard_normal((6, 3))
    runs = []
    for lib in (cr, torch):
        emb = lib.nn.Embedding(6, 3, sparse=True, padding_idx=0)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(weight))
        opt = getattr(lib.optim, name)(emb.parameters(), **options)
        for step in range(3):
            opt.zero_grad()
            idx = lib.tensor([[step % 6, 2], [4, (step * 5) % 6]])
            (emb(idx) ** 2).sum().backward()
            assert emb.weight.grad.is_sparse
            opt.step()
        runs.append(emb.weight.detach().numpy())
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-6)
