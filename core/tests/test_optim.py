"""chainrule.optim: update rules (against NumPy transcriptions of the formulas),
param groups, add_param_group, zero_grad, state_dict/load_state_dict, errors,
LBFGS. Trajectories against torch are in tests/test_parity_nn.py."""
import copy

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim


def quadratic_grad(w):
    """Gradient of sum(w**4 / 4 - w): w**3 - 1 (so that updates are not linear)."""
    return w ** 3 - 1


def run(opt_cls, steps=5, w0=(0.5, -1.5), **options):
    w = cr.tensor(list(w0), dtype=cr.float64, requires_grad=True)
    opt = opt_cls([w], **options)
    for _ in range(steps):
        opt.zero_grad()
        (w ** 4 / 4 - w).sum().backward()
        opt.step()
    return w.detach().numpy(), opt


def numpy_sgd(w, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
              maximize=False):
    buf = None
    for _ in range(steps):
        g = quadratic_grad(w) * (-1 if maximize else 1) + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def numpy_adam(w, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
               decoupled=False):
    m, v, vmax = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t in range(1, steps + 1):
        g = quadratic_grad(w)
        if decoupled:
            w = w * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        second = vmax if amsgrad else v
        denom = np.sqrt(second) / np.sqrt(1 - betas[1] ** t) + eps
        w = w - lr / (1 - betas[0] ** t) * m / denom
    return w


W0 = np.array([0.5, -1.5])


@pytest.mark.parametrize("options", [
    dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.1, momentum=0.5, dampening=0.3, weight_decay=0.1), dict(lr=0.05, maximize=True)])
def test_sgd_matches_the_formula(options):
    w, _ = run(optim.SGD, **options)
    assert np.allclose(w, numpy_sgd(W0.copy(), 5, **options), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("options", [dict(lr=0.1), dict(lr=0.1, amsgrad=True),
                                     dict(lr=0.1, weight_decay=0.1)])
def test_adam_matches_the_formula(options):
    w, opt = run(optim.Adam, **options)
    assert np.allclose(w, numpy_adam(W0.copy(), 5, **options), rtol=1e-12, atol=1e-12)
    state = opt.state[opt.param_groups[0]["params"][0]]
    assert state["step"].item() == 5.0
    assert ("max_exp_avg_sq" in state) == options.get("amsgrad", False)


def test_adamw_decouples_weight_decay():
    w, _ = run(optim.AdamW, lr=0.1, weight_decay=0.1)
    assert np.allclose(w, numpy_adam(W0.copy(), 5, 0.1, weight_decay=0.1, decoupled=True))
    assert optim.AdamW([cr.zeros(1, requires_grad=True)]).defaults["weight_decay"] == 1e-2


def test_rmsprop_and_adagrad_first_steps():
    # RMSprop's first step: square_avg = (1 - alpha) g^2, so w -= lr * g / (sqrt(.01) |g| + eps)
    w, _ = run(optim.RMSprop, steps=1, lr=0.01)
    g = quadratic_grad(W0)
    assert np.allclose(w, W0 - 0.01 * g / (np.sqrt(0.01 * g * g) + 1e-8))
    w, _ = run(optim.Adagrad, steps=1, lr=0.1)
    assert np.allclose(w, W0 - 0.1 * g / (np.abs(g) + 1e-10))


@pytest.mark.parametrize("opt_cls, options", [
    (optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.Adam, dict(lr=0.1)),
    (optim.AdamW, dict(lr=0.1, amsgrad=True)), (optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.5)),
    (optim.Adagrad, dict(lr=0.5, lr_decay=0.01))])
def test_optimizers_converge(opt_cls, options):
    w, _ = run(opt_cls, steps=300, **options)
    assert np.allclose(w, 1.0, atol=2e-2)


def test_param_groups_take_defaults_and_own_options():
    a, b = cr.zeros(2, requires_grad=True), cr.zeros(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    c = cr.zeros(3, requires_grad=True)
    opt.add_param_group({"params": [c], "momentum": 0.0})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["lr"] == 0.1
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_named_parameters_are_accepted():
    model = cr.nn.Linear(2, 1)
    opt = optim.Adam(model.named_parameters())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]


def test_constructor_errors():
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable of Tensors or dicts"):
        optim.SGD(cr.zeros(1, requires_grad=True), lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([cr.zeros(1, requires_grad=True)], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([cr.zeros(1, requires_grad=True)], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([cr.zeros(1, requires_grad=True)], lr=0.1, nesterov=True)
    x = cr.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([x * 2], lr=0.1)


def test_zero_grad_set_to_none_or_zero():
    w = cr.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_parameters_without_grad_are_skipped():
    a, b = cr.ones(1, requires_grad=True), cr.ones(1, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert a.item() != 1.0 and b.item() == 1.0 and b not in opt.state


def test_step_bumps_the_version_and_records_nothing():
    w = cr.ones(2, requires_grad=True)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    optim.SGD([w], lr=0.1).step()
    assert w.grad_fn is None and w.is_leaf
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_state_dict_round_trip_continues_identically():
    def make():
        w = cr.tensor([0.5, -1.5], dtype=cr.float64, requires_grad=True)
        return w, optim.Adam([w], lr=0.1, amsgrad=True)

    def steps(w, opt, n):
        for _ in range(n):
            opt.zero_grad()
            (w ** 4 / 4 - w).sum().backward()
            opt.step()

    w1, opt1 = make()
    steps(w1, opt1, 3)
    saved = copy.deepcopy(opt1.state_dict())
    assert list(saved["state"]) == [0] and saved["param_groups"][0]["params"] == [0]
    w2, opt2 = make()
    with cr.no_grad():
        w2.copy_(w1)
    opt2.load_state_dict(saved)
    steps(w1, opt1, 3)
    steps(w2, opt2, 3)
    assert cr.equal(w1, w2)
    assert opt2.state[w2]["exp_avg"] is not saved["state"][0]["exp_avg"]


def test_load_state_dict_checks_groups():
    w = cr.ones(1, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    other = optim.SGD([{"params": [cr.ones(1, requires_grad=True)]},
                       {"params": [cr.ones(1, requires_grad=True)]}], lr=0.1)
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        opt.load_state_dict(other.state_dict())
    bigger = optim.SGD([cr.ones(1, requires_grad=True), cr.ones(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(bigger.state_dict())


def test_load_state_dict_casts_state_to_the_parameter_dtype():
    w = cr.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["momentum_buffer"] = sd["state"][0]["momentum_buffer"].double()
    opt.load_state_dict(sd)
    assert opt.state[w]["momentum_buffer"].dtype == cr.float32


def test_step_hooks_and_closure():
    w = cr.ones(1, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    handle = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 1.0
    assert calls == ["pre", "post"] and abs(w.item() - 0.8) < 1e-7
    handle.remove()
    opt.step(closure)
    assert calls == ["pre", "post", "pre"]


def test_repr_lists_groups():
    opt = optim.SGD([cr.zeros(1, requires_grad=True)], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.1" in text


def rosenbrock_closure(x, opt):
    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_minimizes_rosenbrock(line_search):
    x = cr.tensor([-1.2, 1.0], dtype=cr.float64, requires_grad=True)
    lr = 1 if line_search else 0.1
    opt = optim.LBFGS([x], lr=lr, line_search_fn=line_search, max_iter=50)
    closure = rosenbrock_closure(x, opt)
    for _ in range(40 if line_search else 200):
        opt.step(closure)
    assert np.allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-3)
    state = opt.state[x]
    assert state["func_evals"] > 0 and state["n_iter"] > 0


def test_lbfgs_errors():
    x = cr.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [x]}, {"params": [cr.zeros(1, requires_grad=True)]}])
    opt = optim.LBFGS([x], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    with pytest.raises(TypeError, match="closure"):
        opt.step()


def test_state_dict_hooks():
    w = cr.ones(1, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("load-pre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load-post"))
    sd = opt.state_dict()
    assert sd["extra"] == 1
    opt.load_state_dict(sd)
    assert calls == ["pre", "load-pre", "load-post"]


@pytest.mark.parametrize("opt_cls, options", [
    (optim.Adamax, dict(lr=0.05)), (optim.NAdam, dict(lr=0.05)), (optim.RAdam, dict(lr=0.05)),
    (optim.Adadelta, dict(lr=5.0)), (optim.Rprop, dict(lr=0.01))])
def test_more_optimizers_converge(opt_cls, options):
    w, opt = run(opt_cls, steps=400, **options)
    assert np.allclose(w, 1.0, atol=2e-2)
    assert opt.state[opt.param_groups[0]["params"][0]]["step"].item() == 400


def test_radam_starts_as_momentum_sgd():
    w, _ = run(optim.RAdam, steps=1, lr=0.1)
    # rho_1 < 5: the bias-corrected momentum itself, i.e. the gradient
    assert np.allclose(w, W0 - 0.1 * quadratic_grad(W0))


def test_rprop_shrinks_steps_when_the_sign_flips():
    w = cr.tensor([1.0], dtype=cr.float64, requires_grad=True)
    opt = optim.Rprop([w], lr=0.5, etas=(0.5, 1.2))
    for target in (0.0, 2.0):          # the gradient's sign flips between the two steps
        opt.zero_grad()
        ((w - target) ** 2).sum().backward()
        opt.step()
    assert opt.state[w]["step_size"].item() == 0.25 and w.item() == 0.5
