"""chainrule-cuda: ``device="cuda"`` for chainrule. Importing it registers the ``cuda``
backend in core's device registry (Note [device backend] in chainrule/_backends.py);
``CHAINRULE_CUDA_EMULATE=1`` runs the same kernels on the host (no GPU needed)."""
from chainrule import _backends

from ._array import DeviceArray  # noqa: F401
from ._backend import CudaBackend

BACKEND = CudaBackend()
_backends.register_backend("cuda", BACKEND)
