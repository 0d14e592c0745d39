"""``utils.data.distributed.DistributedSampler``: the share of a dataset that one of
``num_replicas`` processes reads. chainrule has no process groups, so ``num_replicas``
and ``rank`` must be given (without them the error is torch's for a process group
that was never initialized)."""
import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]

NO_PROCESS_GROUP = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class DistributedSampler(Sampler):
    """Every ``num_replicas``-th index from ``rank`` on, of the dataset's indices
    (shuffled with a generator seeded by ``seed + epoch`` when ``shuffle``; call
    ``set_epoch`` before each epoch for a new order), padded by repeating the first
    indices so that each replica gets ``ceil(len / num_replicas)`` of them, or, with
    ``drop_last``, cut so that each gets ``floor(len / num_replicas)``. The shuffled
    order is chainrule's, not torch's; the rest is torch's.

    >>> from chainrule.utils.data import DistributedSampler
    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False))
    ...  for r in (0, 1)]
    [[0, 2, 4], [1, 3, 0]]
    >>> len(DistributedSampler(range(5), num_replicas=2, rank=1, drop_last=True))
    2
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            raise ValueError(NO_PROCESS_GROUP)
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        indices = self._ordered_indices()
        if self.drop_last:
            indices = indices[:self.total_size]
        else:                                    # pad with the first indices, cyclically
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding else []
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match "
                                 f"total_size ({self.total_size})")
        mine = indices[self.rank:self.total_size:self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(mine)}) does not match "
                                 f"num_samples ({self.num_samples})")
        return iter(mine)

    def _ordered_indices(self):
        if not self.shuffle:
            return list(range(len(self.dataset)))
        from ... import Generator, randperm
        generator = Generator().manual_seed(self.seed + self.epoch)
        return randperm(len(self.dataset), generator=generator).tolist()

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use ``epoch`` in the shuffle's seed: each epoch then gets its own order, the
        same on every replica."""
        self.epoch = epoch
