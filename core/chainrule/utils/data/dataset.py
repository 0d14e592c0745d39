"""Datasets: the map-style ``Dataset`` and stream ``IterableDataset`` bases, and the
ready-made ``TensorDataset``, ``ConcatDataset``, ``Subset``, ``ChainDataset``,
``StackDataset`` and ``random_split`` (``torch.utils.data.dataset``).

A map-style dataset answers ``dataset[i]`` (and usually ``len``); an iterable one
answers ``iter(dataset)``. ``DataLoader`` treats the two kinds differently (see
``dataloader.py``).
"""
import bisect
import itertools
import math
import warnings
from collections.abc import Iterable
from typing import Generic, TypeVar

from ... import _random

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually
    ``__len__``, which the default samplers need). ``a + b`` concatenates.

    A subclass may also define ``__getitems__(indices)`` returning a list of samples:
    ``DataLoader`` then fetches a whole batch with one call.

    >>> from chainrule.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> ds = Squares() + Squares()
    >>> len(ds), ds[5]
    (8, 1)
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable):
    """A dataset that is a stream: subclasses define ``__iter__`` (an abstract
    method: without it the class cannot be instantiated). ``a + b`` chains.

    With ``DataLoader(num_workers=N)`` every worker iterates its own copy of the
    dataset; ``get_worker_info()`` inside ``__iter__`` tells which part to produce.

    >>> from chainrule.utils.data import IterableDataset
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(Count(2) + Count(3))
    [0, 1, 0, 1, 2]
    """

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the ``i``-th rows of each tensor (all of the same first size).

    >>> import chainrule as cr
    >>> from chainrule.utils.data import TensorDataset
    >>> ds = TensorDataset(cr.arange(6.).reshape(3, 2), cr.tensor([0, 1, 0]))
    >>> len(ds), ds[1]
    (3, (tensor([2., 3.]), tensor(1)))
    """

    def __init__(self, *tensors):
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


def _equal_lengths(datasets):
    """The common length of ``datasets``, or the reference's ValueError."""
    length = len(datasets[0])
    if any(len(d) != length for d in datasets):
        raise ValueError("Size mismatch between datasets")
    return length


class StackDataset(Dataset):
    """Zips datasets of one length: ``StackDataset(a, b)[i] == (a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``.

    >>> from chainrule.utils.data import StackDataset
    >>> StackDataset(x=[1, 2], y="ab")[1]
    {'x': 2, 'y': 'b'}
    >>> StackDataset([1, 2], "ab").__getitems__([0, 1])
    [(1, 'a'), (2, 'b')]
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self._length = _equal_lengths(list(args or kwargs.values()))
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        keyed = isinstance(self.datasets, dict)
        parts = self.datasets.items() if keyed else enumerate(self.datasets)
        columns = {key: _fetch_many(d, indices) for key, d in parts}
        if keyed:
            return [{key: col[i] for key, col in columns.items()} for i in range(len(indices))]
        return [tuple(col[i] for col in columns.values()) for i in range(len(indices))]

    def __len__(self):
        return self._length


def _fetch_many(dataset, indices):
    """``dataset``'s samples at ``indices``, in one ``__getitems__`` call when it has one."""
    if not callable(getattr(dataset, "__getitems__", None)):
        return [dataset[i] for i in indices]
    items = dataset.__getitems__(indices)
    if len(items) != len(indices):
        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                         f"got {len(items)}")
    return items


class ConcatDataset(Dataset):
    """Map-style datasets one after another; ``cumulative_sizes[k]`` is the total
    length of the first ``k + 1``.

    >>> from chainrule.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2, 3], [10, 20]])
    >>> len(ds), ds[3], ds[-1], ds.cumulative_sizes
    (5, 10, 20, [3, 5])
    """

    @staticmethod
    def cumsum(sequence):
        """Running totals of the lengths of ``sequence``'s items."""
        return list(itertools.accumulate(len(item) for item in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self):
        """The old (misspelt) name of ``cumulative_sizes``; warns."""
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained lazily.

    >>> from chainrule.utils.data import ChainDataset, IterableDataset
    >>> class Letters(IterableDataset):
    ...     def __init__(self, s):
    ...         self.s = s
    ...     def __iter__(self):
    ...         return iter(self.s)
    ...     def __len__(self):
    ...         return len(self.s)
    >>> ds = ChainDataset([Letters("ab"), Letters("c")])
    >>> list(ds), len(ds)
    (['a', 'b', 'c'], 3)
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            _check_iterable(d)
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            _check_iterable(d)
            total += len(d)
        return total


def _check_iterable(dataset):
    if not isinstance(dataset, IterableDataset):
        raise AssertionError("ChainDataset only supports IterableDataset")


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    A subclass that overrides ``__getitem__`` must override ``__getitems__`` too
    (``DataLoader`` fetches batches through it), or construction raises
    NotImplementedError, as in the reference.

    >>> from chainrule.utils.data import Subset
    >>> s = Subset("abcdef", [4, 0, 2])
    >>> len(s), s[0], s.__getitems__([1, 2])
    (3, 'e', ['a', 'c'])
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        wanted = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(wanted)
        return [self.dataset[i] for i in wanted]

    def __len__(self):
        return len(self.indices)


def _lengths_from_fractions(n, fractions):
    """Split sizes for ``fractions`` of ``n`` items: each rounded down, then the
    remainder handed out one by one from the first split on (the reference's rule)."""
    sizes = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        sizes.append(math.floor(n * frac))
    for i in range(n - sum(sizes)):
        sizes[i % len(sizes)] += 1
    for i, size in enumerate(sizes):
        if size == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                          f"empty dataset.", stacklevel=3)
    return sizes


def random_split(dataset, lengths, generator=_random.default_generator):
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given
    ``lengths``: counts summing to ``len(dataset)``, or fractions summing to 1.

    The permutation comes from ``generator`` (``cr.randperm``), whose stream is the
    reference's (Note [the reference's CPU stream]): under one seed the split is the
    reference's. Sizes follow the reference exactly.

    >>> import chainrule as cr
    >>> from chainrule.utils.data import random_split
    >>> parts = random_split(range(10), [0.35, 0.35, 0.3], generator=cr.Generator().manual_seed(1))
    >>> [len(p) for p in parts]
    [4, 3, 3]
    >>> sorted(i for p in parts for i in p)
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    from ... import randperm
    order = randperm(sum(lengths), generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - size:end]) for end, size in zip(ends, lengths)]
