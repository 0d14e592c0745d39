"""``chainrule.utils.dlpack``: the reference's ``torch.utils.dlpack`` (DLPack through
NumPy's implementation; CPU tensors).

>>> import chainrule as cr
>>> from chainrule.utils.dlpack import from_dlpack, to_dlpack
>>> from_dlpack(to_dlpack(cr.tensor([1.0, 2.0]))).tolist()
[1.0, 2.0]
"""
from .._ops.torch_surface import from_dlpack, to_dlpack  # noqa: F401
