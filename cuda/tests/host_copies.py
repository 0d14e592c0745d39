"""Counting the copies between host and device memory a piece of code makes (every
device -> host copy goes through ``DeviceArray.get``, every host -> device copy of an
array through ``DeviceArray.from_host``), for the tests that a device op keeps its data
on the device. Copies of one value (a count that sizes a result, an index check's flag,
a Python number's constant) are counted apart from copies of arrays."""
import contextlib

import numpy as np

from chainrule_cuda import DeviceArray


class Copies:
    def __init__(self):
        self.to_host = 0            # arrays of more than one element
        self.scalar_reads = 0
        self.to_device = 0          # arrays of more than one element


@contextlib.contextmanager
def counted_copies():
    """A Copies whose counts grow with each copy made inside."""
    copies = Copies()
    get, from_host = DeviceArray.get, DeviceArray.from_host.__func__

    def counted_get(self):
        if self.size > 1:
            copies.to_host += 1
        else:
            copies.scalar_reads += 1
        return get(self)

    def counted_from_host(cls, arr, *args, **kwargs):
        if np.size(arr) > 1:
            copies.to_device += 1
        return from_host(cls, arr, *args, **kwargs)

    DeviceArray.get = counted_get
    DeviceArray.from_host = classmethod(counted_from_host)
    try:
        yield copies
    finally:
        DeviceArray.get, DeviceArray.from_host = get, classmethod(from_host)
