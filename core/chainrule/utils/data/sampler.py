"""Samplers: iterables of dataset indices (or of index batches) that ``DataLoader``
draws from (``torch.utils.data.sampler``).

Random samplers draw from chainrule's generators (``cr.randperm``, ``cr.randint``,
``cr.multinomial``): reproducible under one seed, but not torch's numbers (another
algorithm). A program compared with torch should shuffle nothing, or compare results
that do not depend on the order.
"""
import itertools
from typing import Generic, TypeVar

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define ``__iter__`` (and ``__len__`` when
    the number of indices is known; ``len(DataLoader)`` needs it).

    >>> from chainrule.utils.data import Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> list(Backwards(3))
    [2, 1, 0]
    """

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``.

    >>> from chainrule.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _is_count(value):
    """A positive int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _fresh_generator():
    """A generator seeded from the default one: what a sampler without ``generator=``
    uses for one pass (the reference draws the seed the same way)."""
    from ... import Generator, empty, int64
    return Generator().manual_seed(int(empty((), dtype=int64).random_().item()))


class RandomSampler(Sampler):
    """Indices in random order: a permutation of the data source (repeated when
    ``num_samples`` exceeds its length), or ``num_samples`` independent draws with
    ``replacement=True``.

    Without ``generator`` each pass seeds a new generator from the default one
    (``cr.manual_seed`` makes passes reproducible). The order is chainrule's, not
    torch's.

    >>> import chainrule as cr
    >>> from chainrule.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(4), generator=cr.Generator().manual_seed(0)))
    [0, 1, 2, 3]
    >>> len(RandomSampler(range(4), replacement=True, num_samples=10))
    10
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        """How many indices a pass yields (the data source's current length by default)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ... import randint, randperm
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            # In chunks of 32 like the reference, so a partly consumed pass draws as
            # many numbers from the generator as the reference would.
            for size in [32] * (self.num_samples // 32) + [self.num_samples % 32]:
                yield from randint(high=n, size=(size,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in random order (chainrule's, not torch's).

    >>> import chainrule as cr
    >>> from chainrule.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([7, 3, 5], generator=cr.Generator().manual_seed(0)))
    [3, 5, 7]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        from ... import randperm
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices into ``weights`` drawn with probabilities proportional
    to them (``cr.multinomial``), with replacement by default. ``weights`` is kept as
    a float64 tensor.

    >>> import chainrule as cr
    >>> from chainrule.utils.data import WeightedRandomSampler
    >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=cr.Generator().manual_seed(0))
    >>> list(s), s.weights
    ([1, 1, 1, 1], tensor([0., 1., 0.], dtype=chainrule.float64))
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        from ... import as_tensor, float64
        if not _is_count(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights = as_tensor(weights, dtype=float64)
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have "
                             f"shape {tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ... import multinomial
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` (any iterable) into lists of ``batch_size``;
    the last, shorter one is dropped with ``drop_last=True``.

    >>> from chainrule.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> len(BatchSampler(range(5), 2, drop_last=True))
    2
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_count(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        batch = list(itertools.islice(indices, self.batch_size))
        while batch and (len(batch) == self.batch_size or not self.drop_last):
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
