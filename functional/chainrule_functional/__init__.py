"""chainrule-functional: higher-order autograd on whole functions.

Imported as ``chainrule.autograd.functional`` (vjp, jvp, jacobian, hessian, vhp, hvp,
with torch.autograd.functional's arguments, result nesting and errors) and as
``chainrule.func`` (the composable transforms: grad, grad_and_value, vjp, jvp,
jacrev, jacfwd, hessian, vmap). Forward mode is used where it pays (``jvp``, ``hvp``,
``strategy="forward-mode"``, ``jacfwd``) when the chainrule-forward-ad wheel is
installed; otherwise reverse-mode equivalents give the same values.

>>> import chainrule as cr
>>> from chainrule.autograd.functional import jacobian
>>> jacobian(lambda x: 3 * x, cr.tensor([1.0])).tolist()
[[3.0]]
"""
from ._functional import hessian, hvp, jacobian, jvp, vhp, vjp

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]
