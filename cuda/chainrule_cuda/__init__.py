"""chainrule-cuda: ``device="cuda"`` for chainrule (import ``chainrule_cuda``).

Importing it registers the layer with core: the ``cuda`` backend of core's device
registry (Note [device backend] in chainrule/_backends.py), whose tensors hold
DeviceArrays; users call ``chainrule.cuda``, which forwards here
(``chainrule_cuda.runtime``: devices, streams, events, memory).
``CHAINRULE_CUDA_EMULATE=1`` runs the same kernels on the host (no GPU needed).

>>> import chainrule_cuda
>>> isinstance(chainrule_cuda.runtime.is_available(), bool)
True
"""
from chainrule import _backends

from . import runtime  # noqa: F401
from ._array import DeviceArray  # noqa: F401
from ._backend import CudaBackend

BACKEND = CudaBackend()
_backends.register_backend("cuda", BACKEND)
