"""nn.Module: registration and attribute semantics, iteration with prefixes,
state_dict/load_state_dict, train/eval, to/apply/zero_grad/requires_grad_, hooks,
repr; Parameter; the containers."""
import collections
import copy
import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2)
        self.register_buffer("steps", cr.zeros(1))
        self.register_buffer("scratch", cr.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


# -- Parameter ---------------------------------------------------------------------------
def test_parameter_is_a_leaf_tensor_sharing_memory():
    data = cr.zeros(3)
    p = nn.Parameter(data)
    assert isinstance(p, cr.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    data.add_(1)
    assert p.tolist() == [1.0, 1.0, 1.0]
    assert not nn.Parameter(cr.zeros(1), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")


def test_parameter_ops_give_plain_tensors_and_grads_accumulate():
    p = nn.Parameter(cr.tensor([1.0, 2.0]))
    y = p * 3
    assert type(y) is cr.Tensor
    y.sum().backward()
    assert p.grad.tolist() == [3.0, 3.0]


def test_parameter_deepcopy_and_pickle_keep_the_type():
    p = nn.Parameter(cr.tensor([1.0, 2.0]))
    p.grad = cr.ones(2)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.grad.tolist() == [1.0, 1.0]
    assert q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.tolist() == [1.0, 2.0]


# -- registration ------------------------------------------------------------------------
def test_assignment_registers_parameters_modules_buffers():
    net = Net()
    assert list(net._parameters) == []
    assert list(net._modules) == ["fc1", "act", "fc2"]
    assert list(net._buffers) == ["steps", "scratch"]
    net.extra = nn.Parameter(cr.ones(1))
    assert "extra" in net._parameters and "extra" not in net.__dict__
    net.steps = cr.ones(1)                       # assigning a tensor to a buffer name
    assert net._buffers["steps"].tolist() == [1.0]
    net.plain = 5
    assert net.__dict__["plain"] == 5


def test_reassigning_a_name_moves_it_between_registries():
    net = Net()
    net.fc1 = nn.Parameter(cr.ones(1))          # module -> parameter
    assert "fc1" not in net._modules and "fc1" in net._parameters
    net.fc1 = None                               # parameter slot cleared
    assert net._parameters["fc1"] is None and net.fc1 is None


def test_assignment_errors_match_torch():
    net = Net()
    net.p = nn.Parameter(cr.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'p'|"
                                        "cannot assign '.*' as parameter 'p' \\(torch.nn.Parameter or None expected\\)"):
        net.p = cr.ones(1)
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module 'fc1' \(torch.nn.Module or None expected\)"):
        net.fc1 = 3
    with pytest.raises(TypeError, match=r"cannot assign 'str' as buffer 'steps' \(torch.Tensor or None expected\)"):
        net.steps = "x"


def test_assigning_before_init_raises():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(cr.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()

    class EarlyModule(nn.Module):
        def __init__(self):
            self.child = nn.ReLU()

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        EarlyModule()


def test_register_buffer_and_parameter_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="buffer name can.*t contain"):
        m.register_buffer("a.b", cr.ones(1))
    with pytest.raises(KeyError, match="buffer name can.*t be empty string"):
        m.register_buffer("", cr.ones(1))
    with pytest.raises(TypeError, match="buffer name should be a string. Got int"):
        m.register_buffer(1, cr.ones(1))
    with pytest.raises(TypeError, match=r"cannot assign 'list' object to buffer 'b' \(torch Tensor or None required\)"):
        m.register_buffer("b", [1])
    m.attr = 1
    with pytest.raises(KeyError, match="attribute 'attr' already exists"):
        m.register_buffer("attr", cr.ones(1))
    with pytest.raises(TypeError, match=r"cannot assign '.*' object to parameter 'q' \(torch.nn.Parameter or None required\)"):
        m.register_parameter("q", cr.ones(1))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("c", 3)


def test_getattr_and_delattr():
    net = Net()
    assert net.fc1 is net._modules["fc1"] and net.steps is net._buffers["steps"]
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nothing'"):
        net.nothing
    del net.fc1
    assert "fc1" not in net._modules
    del net.steps
    assert "steps" not in net._buffers
    net.plain = 1
    del net.plain
    assert not hasattr(net, "plain")
    assert "fc2" in dir(net)


def test_buffer_object_registers_with_its_persistence():
    m = nn.Module()
    m.a = nn.Buffer(cr.zeros(1))
    m.b = nn.Buffer(cr.zeros(1), persistent=False)
    assert set(m._buffers) == {"a", "b"} and list(m.state_dict()) == ["a"]


# -- iteration -----------------------------------------------------------------------------
def test_named_members_with_prefixes_and_recursion():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                      "fc2.bias"]
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.fc1.weight"
    assert list(net.named_parameters(recurse=False)) == []
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules(prefix="m")] == ["m", "m.fc1", "m.act", "m.fc2"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert len(list(net.modules())) == 4 and len(list(net.buffers())) == 2


def test_shared_parameters_and_modules_come_once_unless_asked():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]


def test_get_submodule_parameter_buffer():
    net = nn.Sequential(Net())
    assert net.get_submodule("0.fc2") is net[0].fc2
    assert net.get_parameter("0.fc1.bias") is net[0].fc1.bias
    assert net.get_buffer("0.steps") is net[0].steps
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.get_submodule("0.nope")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        net.get_parameter("0.steps")


# -- modes and bulk changes ------------------------------------------------------------------
def test_train_eval_reach_every_module():
    net = Net()
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_zero_grad_and_requires_grad_():
    net = Net()
    net(cr.randn(2, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_casts_floating_state_in_place_keeping_parameter_identity():
    net = Net()
    weight = net.fc1.weight
    net(cr.randn(2, 3)).sum().backward()
    net.to(cr.float64)
    assert net.fc1.weight is weight and weight.dtype == cr.float64
    assert weight.grad.dtype == cr.float64 and net.steps.dtype == cr.float64
    assert net.double().float().fc2.bias.dtype == cr.float32
    bn = nn.BatchNorm1d(2).to(cr.float64)
    assert bn.num_batches_tracked.dtype == cr.int64         # integer buffers stay
    assert net.to(cr.zeros(1, dtype=cr.float64)).fc1.weight.dtype == cr.float64
    assert net.to("cpu", cr.float32).fc1.weight.dtype == cr.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        net.to(cr.int64)


def test_apply_visits_children_before_parents():
    seen = []
    nn.Sequential(nn.Sequential(nn.ReLU()), nn.Tanh()).apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["ReLU", "Sequential", "Tanh", "Sequential"]


# -- state_dict -------------------------------------------------------------------------------
def test_state_dict_keys_detach_and_keep_vars():
    net = Net()
    sd = net.state_dict()
    # a module's own entries come before its children's, as in torch
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert isinstance(sd, collections.OrderedDict)
    assert not sd["fc1.weight"].requires_grad
    assert sd["fc1.weight"].data_ptr() == net.fc1.weight.data_ptr()
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight
    assert list(net.state_dict(prefix="m."))[:2] == ["m.steps", "m.fc1.weight"]
    assert sd._metadata[""]["version"] == 1


def test_load_state_dict_copies_values_into_the_same_parameters():
    a, b = Net(), Net()
    weight = b.fc1.weight
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert b.fc1.weight is weight and cr.equal(weight, a.fc1.weight)


def test_load_state_dict_strict_reports_missing_and_unexpected():
    net = Net()
    sd = net.state_dict()
    del sd["fc2.bias"]
    sd["extra"] = cr.ones(1)
    with pytest.raises(RuntimeError) as info:
        Net().load_state_dict(sd)
    message = str(info.value)
    assert message.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "fc2.bias".' in message
    assert 'Unexpected key(s) in state_dict: "extra".' in message
    result = Net().load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc2.bias"] and result.unexpected_keys == ["extra"]


def test_load_state_dict_size_mismatch_and_assign():
    sd = Net().state_dict()
    sd["fc1.bias"] = cr.zeros(5)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc1.bias: copying a param with "
                                           r"shape .*\[5\].* from checkpoint, the shape in "
                                           r"current model is .*\[4\]"):
        Net().load_state_dict(sd)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        Net().load_state_dict([1, 2])
    net, src = Net(), Net()
    net.load_state_dict(src.state_dict(), assign=True)
    assert isinstance(net.fc1.weight, nn.Parameter)
    assert net.fc1.weight.data_ptr() == src.fc1.weight.data_ptr()


def test_state_dict_hooks():
    net = nn.Linear(1, 1)
    calls = []
    net.register_state_dict_pre_hook(lambda m, prefix, keep: calls.append(("pre", prefix)))
    net.register_load_state_dict_post_hook(lambda m, keys: calls.append(("post", keys.missing_keys)))
    net.load_state_dict(net.state_dict())
    assert calls == [("pre", ""), ("post", [])]


# -- hooks ------------------------------------------------------------------------------------
def test_forward_pre_and_post_hooks_order_and_replacement():
    m = nn.Linear(2, 2)
    calls = []
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)
    h = m.register_forward_hook(lambda mod, args, out: out * 0)
    m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(("kw", kwargs)),
                            with_kwargs=True)
    assert m(cr.ones(1, 2)).abs().sum().item() == 0
    assert calls == ["pre0", "pre1", ("kw", {})]
    h.remove()
    assert m(cr.ones(1, 2)).abs().sum().item() > 0


def test_forward_pre_hook_with_kwargs_replaces_both():
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs),
                                with_kwargs=True)
    assert m(cr.zeros(1)).item() == 1.0


def test_always_call_forward_hook_runs_on_error():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m, calls = Boom(), []
    m.register_forward_hook(lambda *a: calls.append("always"), always_call=True)
    m.register_forward_hook(lambda *a: calls.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(cr.ones(1))
    assert calls == ["always"]


def test_full_backward_hook_sees_grad_input_and_grad_output():
    m = nn.Linear(3, 2)
    x = cr.randn(4, 3, requires_grad=True)
    seen = {}

    def hook(module, grad_input, grad_output):
        seen["in"], seen["out"] = grad_input, grad_output
        return (grad_input[0] * 2,)

    m.register_full_backward_hook(hook)
    m(x).sum().backward()
    assert seen["out"][0].shape == (4, 2) and seen["out"][0].tolist() == [[1.0, 1.0]] * 4
    expected = cr.ones(4, 2) @ m.weight.detach()
    assert np.allclose(seen["in"][0].numpy(), expected.numpy())
    assert np.allclose(x.grad.numpy(), 2 * expected.numpy())
    assert m.weight.grad is not None


def test_full_backward_hook_without_input_grad_gets_none():
    m = nn.Linear(3, 2)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go[0].shape)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are "
                                         "computed with respect to module outputs"):
        m(cr.randn(4, 3)).sum().backward()
    assert seen == [((None,), (4, 2))]


def test_full_backward_pre_hook_replaces_grad_output():
    m = nn.Linear(2, 1)
    x = cr.ones(1, 2, requires_grad=True)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0,))
    m(x).sum().backward()
    assert x.grad.abs().sum().item() == 0 and m.weight.grad.abs().sum().item() == 0


def _hooks_logging_into(log, m):
    """A module's own hooks of the four kinds, each logging its name."""
    m.register_forward_pre_hook(lambda mod, args: log.append("own pre") or (args[0] * 2,))
    m.register_forward_hook(lambda mod, args, out: log.append("own post") or out + 1)
    m.register_full_backward_pre_hook(lambda mod, g: log.append("own bwd pre"))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("own bwd", gi[0].tolist())))


def test_global_module_hooks_run_before_the_modules_own():
    # Note [global module hooks]; values and order as torch 2.13 gives them
    from chainrule.nn.modules import module as mm
    log = []
    m = nn.Linear(2, 1)
    with cr.no_grad():
        m.weight.fill_(1.0)
        m.bias.fill_(0.5)
    _hooks_logging_into(log, m)
    handles = [
        mm.register_module_forward_pre_hook(lambda mod, a: log.append("global pre") or (a[0] + 1,)),
        mm.register_module_forward_hook(lambda mod, a, kw, out: log.append(("global post", kw))
                                        or out * 10, with_kwargs=True),
        mm.register_module_full_backward_pre_hook(lambda mod, g: log.append("global bwd pre")
                                                  or (g[0] * 3,)),
        mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(
            ("global bwd", gi[0].tolist(), go[0].tolist())))]
    x = cr.tensor([[1.0, 2.0]], requires_grad=True)
    y = m(x)
    y.sum().backward()
    for h in handles:
        h.remove()
    assert y.tolist() == [[106.0]] and x.grad.tolist() == [[60.0, 60.0]]
    assert log == ["global pre", "own pre", ("global post", {}), "own post", "global bwd pre",
                   "own bwd pre", ("global bwd", [[30.0, 30.0]], [[3.0]]),
                   ("own bwd", [[30.0, 30.0]])]
    assert not (mm._global_forward_hooks or mm._global_forward_hooks_with_kwargs)
    assert m(x).tolist() == [[7.5]]            # only the module's own hooks now


def test_global_always_call_forward_hook_runs_when_forward_raises():
    from chainrule.nn.modules.module import register_module_forward_hook

    class Boom(nn.Module):
        def forward(self, x):
            raise KeyError("boom")

    seen = []
    with register_module_forward_hook(lambda mod, a, out: seen.append(out), always_call=True):
        with pytest.raises(KeyError, match="boom"):
            Boom()(cr.ones(1))
    assert seen == [None]


def test_removable_handle_as_context_manager():
    m = nn.Identity()
    with m.register_forward_hook(lambda mod, a, out: out + 1):
        assert m(cr.zeros(1)).item() == 1.0
    assert m(cr.zeros(1)).item() == 0.0


# -- repr -------------------------------------------------------------------------------------
def test_repr_nests_children_like_torch():
    assert repr(Net()) == (
        "Net(\n"
        "  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (act): ReLU()\n"
        "  (fc2): Linear(in_features=4, out_features=2, bias=True)\n"
        ")")
    assert repr(nn.Sequential(nn.Sequential(nn.Tanh()))) == (
        "Sequential(\n  (0): Sequential(\n    (0): Tanh()\n  )\n)")


def test_forward_missing_raises():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(cr.ones(1))


# -- containers ---------------------------------------------------------------------------------
def test_sequential_indexing_slicing_append_insert_delete():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[-1], nn.Linear) and isinstance(seq[1:], nn.Sequential)
    assert len(seq[1:]) == 2 and list(seq[1:]._modules) == ["1", "2"]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and isinstance(seq[3], nn.Sigmoid)
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[1], nn.Linear)
    seq.insert(1, nn.Tanh())
    assert isinstance(seq[1], nn.Tanh) and len(seq) == 4
    seq[0] = nn.Linear(2, 3)
    assert seq(cr.ones(5, 2)).shape == (5, 1)
    with pytest.raises(IndexError, match="index 9 is out of range"):
        seq[9]
    named = nn.Sequential(collections.OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    assert list(named._modules) == ["a", "b"] and len(seq + named) == 6
    assert seq.pop(0) is not None and len(seq) == 3


def test_module_list_and_dict():
    layers = nn.ModuleList([nn.Linear(2, 2)])
    layers.append(nn.ReLU()).extend([nn.Tanh()])
    layers.insert(0, nn.Identity())
    assert [type(m).__name__ for m in layers] == ["Identity", "Linear", "ReLU", "Tanh"]
    assert len(layers[1:3]) == 2 and isinstance(layers[-1], nn.Tanh)
    del layers[0]
    assert list(layers._modules) == ["0", "1", "2"]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        layers.extend(nn.ReLU())
    d = nn.ModuleDict({"a": nn.Linear(1, 1)})
    d["b"] = nn.ReLU()
    d.update([("c", nn.Tanh())])
    assert list(d) == ["a", "b", "c"] and "b" in d and len(list(d.parameters())) == 2
    assert isinstance(d.pop("b"), nn.ReLU) and list(d.keys()) == ["a", "c"]


def test_parameter_list_and_dict_wrap_tensors():
    pl = nn.ParameterList([cr.ones(2)])
    pl.append(nn.Parameter(cr.zeros(3)))
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"a": cr.ones(1)})
    pd["b"] = cr.zeros(2)
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["b"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b"]
    del pd["a"]
    assert list(pd) == ["b"]


def test_extra_state_round_trips_through_state_dict():
    class WithExtra(nn.Linear):
        def __init__(self):
            super().__init__(1, 1)
            self.tag = "a"

        def get_extra_state(self):
            return {"tag": self.tag}

        def set_extra_state(self, state):
            self.tag = state["tag"]

    src, dst = WithExtra(), WithExtra()
    src.tag = "b"
    sd = src.state_dict()
    assert list(sd) == ["weight", "bias", "_extra_state"]
    dst.load_state_dict(sd)
    assert dst.tag == "b"
    del sd["_extra_state"]
    assert WithExtra().load_state_dict(sd, strict=False).missing_keys == ["_extra_state"]


def test_set_submodule_share_memory_to_empty():
    net = nn.Sequential(nn.Sequential(nn.ReLU()))
    net.set_submodule("0.0", nn.Tanh())
    assert isinstance(net[0][0], nn.Tanh)
    with pytest.raises(AttributeError, match="has no attribute `x`"):
        net.set_submodule("0.x", nn.Tanh(), strict=True)
    fc = nn.Linear(2, 2)
    weight = fc.weight
    assert fc.share_memory() is fc and fc.to_empty(device="cpu").weight is weight


def test_module_list_repr_groups_identical_children():
    layers = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])
    assert repr(layers) == "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"
    assert repr(nn.ModuleList()) == "ModuleList()"
