"""``chainrule.utils.data``: datasets, samplers and ``DataLoader``, as
``torch.utils.data``.

Random order (``shuffle=True``, ``RandomSampler``, ``random_split``, ...) comes from
chainrule's generators: reproducible under ``cr.manual_seed``, but not torch's
numbers. ``num_workers > 0`` runs its workers in the main process (Note [in-process
workers] in ``_worker.py``).
"""
from ._collate import (collate, collate_float_fn, collate_int_fn,  # noqa: F401
                       collate_numpy_array_fn, collate_numpy_scalar_fn, collate_str_fn,
                       collate_tensor_fn, default_collate, default_collate_fn_map,
                       default_convert)
from ._worker import WorkerInfo, get_worker_info  # noqa: F401
from .dataloader import DataLoader, _DatasetKind  # noqa: F401
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,  # noqa: F401
                      StackDataset, Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
           "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
