"""The ready queue: nodes whose gradients have all arrived, newest first.

See Note [sequence numbers] in node.py. A heap keyed on the negated sequence number;
a counter breaks ties (several AccumulateGrad nodes share the maximum).
"""
import heapq
import itertools


class ReadyQueue:
    __slots__ = ("_heap", "_tie")

    def __init__(self):
        self._heap = []
        self._tie = itertools.count()

    def push(self, node):
        heapq.heappush(self._heap, (-node._seq, next(self._tie), node))

    def pop(self):
        return heapq.heappop(self._heap)[2]

    def __len__(self):
        return len(self._heap)
