"""``torch.utils.data._utils.worker``'s public names (defined in ``.._worker``)."""
from .._worker import WorkerInfo, get_worker_info  # noqa: F401
