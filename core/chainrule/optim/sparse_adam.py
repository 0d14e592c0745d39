"""SparseAdam: Adam for sparse gradients. chainrule has no sparse tensors, so every
gradient it produces is dense, and SparseAdam's ``step`` raises torch's error for a
dense gradient; the constructor and its checks are torch's."""
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
    """Adam restricted to the entries a sparse gradient touches. Parameters must be
    dense and real; a dense gradient (the only kind chainrule makes) raises, as in
    torch, pointing to ``Adam``: only parameters without a gradient may be stepped.

    >>> import chainrule as cr
    >>> w = cr.ones(3, requires_grad=True); opt = cr.optim.SparseAdam([w], lr=0.1)
    >>> opt.step()          # no gradient yet: nothing to do
    >>> (w * w).sum().backward(); opt.step()
    Traceback (most recent call last):
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

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
        """Raise for the first parameter with a (dense) gradient; returns
        ``closure()``'s loss when no parameter has one."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for _ in self._params_with_grad(group):
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
        return loss
