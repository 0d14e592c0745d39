"""IterableDatasets through DataLoader: batching and drop_last, batch_size=None,
ChainDataset, worker replicas split with get_worker_info (num_workers=2, in order),
worker_init_fn, persistent workers, a map-style dataset under workers, and errors."""
import math

import torch
from torch.utils.data import (ChainDataset, DataLoader, Dataset, IterableDataset,
                              get_worker_info)


class Range(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        start, end = self.start, self.end
        if info is not None:                      # split the range between the workers
            per_worker = math.ceil((end - start) / info.num_workers)
            start = start + info.id * per_worker
            end = min(start + per_worker, end)
        return iter(torch.arange(float(start), float(end)))

    def __len__(self):
        return self.end - self.start


class Plain(IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


print(list(DataLoader(Range(0, 7), batch_size=3)))
print(list(DataLoader(Range(0, 7), batch_size=3, drop_last=True)))
print(list(DataLoader(Range(3, 6), batch_size=None)))
print(len(DataLoader(Range(0, 7), batch_size=3)), len(DataLoader(Range(0, 7), batch_size=3, drop_last=True)))
print(list(DataLoader(ChainDataset([Plain([1, 2]), Plain([3])]), batch_size=2)))
print(list(DataLoader(Plain([[1, 2], [3, 4], [5, 6]]), batch_size=2)))
print(list(Plain([1]) + Plain([2])))

print("workers", list(DataLoader(Range(0, 10), batch_size=2, num_workers=2)))
print("replicas", list(DataLoader(Plain([1, 2, 3]), batch_size=2, num_workers=2)))


def init_fn(worker_id):
    info = get_worker_info()
    info.dataset.items = [worker_id * 100 + x for x in info.dataset.items]


loader = DataLoader(Plain([1, 2, 3]), batch_size=None, num_workers=2, worker_init_fn=init_fn)
print("init_fn", list(loader))
print("main copy untouched", loader.dataset.items, get_worker_info())
persistent = DataLoader(Plain([5, 6, 7]), batch_size=2, num_workers=2, persistent_workers=True,
                        worker_init_fn=init_fn)
print("epoch 1", list(persistent))
print("epoch 2", list(persistent))
print("same iterator", iter(persistent) is iter(persistent))


class Squares(Dataset):
    def __len__(self):
        return 9

    def __getitem__(self, i):
        return i * i, get_worker_info().id


print("map workers", list(DataLoader(Squares(), batch_size=2, num_workers=3, prefetch_factor=1)))
print(len(DataLoader(Squares(), batch_size=2, num_workers=3)))


class Failing(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        raise ValueError(f"bad index {i}")


try:
    list(DataLoader(Failing(), num_workers=1))
except ValueError as e:
    print("ValueError", str(e).splitlines()[0])
for kwargs in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])):
    try:
        DataLoader(Plain([1]), **kwargs)
    except ValueError as e:
        print("ValueError:", str(e).split(", but got")[0])
