"""SparseAdam: Adam for sparse gradients (an embedding's with ``sparse=True``, Note
[sparse gradients over dense storage]): the moments and the parameter change only at the
rows the gradient lists; a dense gradient raises torch's error."""
import math

from .. import _factories
from .asgd import _check_tensor_lr
from .optimizer import Optimizer, _closure_loss, _use_grad

__all__ = ["SparseAdam"]


def _check_sparse_adam_args(lr, betas, eps):
    _check_tensor_lr(lr)
    if not 0.0 < lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 < eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for index in (0, 1):
        if not 0.0 <= betas[index] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")


class SparseAdam(Optimizer):
    """Adam restricted to the rows a sparse gradient touches (lazy Adam). Parameters
    must be dense and real; a dense gradient raises, as in torch, pointing to ``Adam``.

    >>> import chainrule as cr
    >>> emb = cr.nn.Embedding(3, 2, sparse=True)
    >>> opt = cr.optim.SparseAdam(emb.parameters(), lr=0.1)
    >>> before = emb.weight.detach().clone()
    >>> emb(cr.tensor([1])).sum().backward(); opt.step()
    >>> (emb.weight.detach() != before).any(1).tolist()
    [False, True, False]
    """

    _sparse_grads = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_sparse_adam_args(lr, betas, eps)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[g, i] for g, group in enumerate(self.param_groups)
                          for i, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    @_use_grad
    def step(self, closure=None):
        """One lazy Adam update of the rows each sparse gradient lists; returns
        ``closure()``'s loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad in self._params_with_grad(group):
                if not grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                self._update(p, grad, group, self._state(p))
        return loss

    def _state(self, p):
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = _factories.zeros_like(p)
            state["exp_avg_sq"] = _factories.zeros_like(p)
        return state

    def _update(self, p, grad, group, state):
        """torch's arithmetic on the listed rows: each moment moves by (new - old) * (1 - b)."""
        rows, values = grad.indices()[0], grad.values()
        if group["maximize"]:
            values = -values
        beta1, beta2 = group["betas"]
        state["step"] += 1
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        old_avg, old_sq = exp_avg[rows], exp_avg_sq[rows]
        avg_update = (values - old_avg) * (1 - beta1)
        sq_update = (values * values - old_sq) * (1 - beta2)
        exp_avg.index_add_(0, rows, avg_update)
        exp_avg_sq.index_add_(0, rows, sq_update)
        denom = (sq_update + old_sq).sqrt() + group["eps"]
        step = state["step"]
        step_size = group["lr"] * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        p.index_add_(0, rows, -step_size * ((avg_update + old_avg) / denom))
