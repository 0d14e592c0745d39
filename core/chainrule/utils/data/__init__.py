"""``chainrule.utils.data``: datasets, samplers and ``DataLoader``, as
``torch.utils.data``.

Random order (``shuffle=True``, ``RandomSampler``, ``random_split``, ...) comes from
chainrule's generators: reproducible under ``cr.manual_seed``, but not torch's
numbers. ``num_workers > 0`` runs its workers in the main process (Note [in-process
workers] in ``_worker.py``).
"""
from . import _utils  # noqa: F401  (the reference's paths of collate and worker helpers)
from ._collate import default_collate, default_convert  # noqa: F401
from ._worker import get_worker_info  # noqa: F401
from .dataloader import DataLoader, _DatasetKind  # noqa: F401
from . import distributed  # noqa: F401
from .distributed import DistributedSampler  # noqa: F401
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,  # noqa: F401
                      StackDataset, Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
           "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
           "random_split", "DistributedSampler"]
