"""chainrule.optim.SparseAdam: lazy Adam on the rows a sparse embedding gradient lists,
torch's error for a dense gradient; the constructor's checks, groups and state_dict."""
import pytest

import chainrule as cr
from chainrule import optim


def test_dense_gradient_raises_and_leaves_the_parameter():
    w = cr.ones(3, requires_grad=True)
    opt = optim.SparseAdam([w], lr=0.1)
    (w * w).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                           "please consider Adam instead"):
        opt.step()
    assert w.tolist() == [1.0, 1.0, 1.0] and not opt.state


def test_dense_embedding_gradients_are_refused():
    emb = cr.nn.Embedding(4, 2)
    opt = optim.SparseAdam(emb.parameters())
    emb(cr.tensor([1, 2])).sum().backward()
    assert not emb.weight.grad.is_sparse
    with pytest.raises(RuntimeError, match="dense gradients"):
        opt.step()


def test_sparse_step_moves_only_the_touched_rows_with_torchs_arithmetic():
    emb = cr.nn.Embedding(4, 2, sparse=True)
    with cr.no_grad():
        emb.weight.copy_(cr.arange(8.0).reshape(4, 2))
    opt = optim.SparseAdam(emb.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (emb(cr.tensor([1, 3, 3])) * cr.tensor([[1.0, -2.0]])).sum().backward()
        opt.step()
    w = emb.weight.detach()
    assert w[0].tolist() == [0.0, 1.0] and w[2].tolist() == [4.0, 5.0]
    # two equal gradients: Adam's bias-corrected step is lr * sign(g) (up to eps)
    assert [round(v, 6) for v in w[1].tolist()] == [1.8, 3.2]
    assert opt.state[emb.weight]["step"] == 2


def test_step_without_gradients_and_state_dict():
    opt = optim.SparseAdam([cr.ones(2, requires_grad=True)], lr=0.1, betas=(0.8, 0.9))
    assert opt.step(lambda: 3.0) == 3.0
    sd = opt.state_dict()
    assert sd["state"] == {} and sd["param_groups"][0]["betas"] == (0.8, 0.9)
    opt.load_state_dict(sd)


@pytest.mark.parametrize("options, message", [
    (dict(lr=0.0), "Invalid learning rate: 0.0"), (dict(eps=0.0), "Invalid epsilon value: 0.0"),
    (dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (dict(betas=(0.9, 1.5)), "Invalid beta parameter at index 1: 1.5")])
def test_errors(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        optim.SparseAdam([cr.ones(1, requires_grad=True)], **options)


def test_complex_parameters_are_refused():
    params = [cr.ones(1, requires_grad=True), cr.ones(1, dtype=cr.complex64, requires_grad=True)]
    with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 1\]\]"):
        optim.SparseAdam(params)
