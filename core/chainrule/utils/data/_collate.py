"""Turning a list of samples into a batch (``default_collate``) and converting one
sample's NumPy arrays to tensors (``default_convert``), as
``torch.utils.data._utils.collate`` does.

Both walk the sample's Python structure (dicts, named tuples, sequences) and treat
the leaves by type; ``collate`` takes a ``collate_fn_map`` of per-type leaf rules so
a custom collate function can extend the default one.
"""
import collections.abc
import copy
import re

import numpy as np

from ..._tensor import Tensor

# NumPy dtype codes of bytes, strings and objects: arrays of these cannot become tensors.
np_str_obj_array_pattern = re.compile("[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}")


def _is_numpy_value(value):
    """An ndarray or NumPy scalar (not a NumPy string, which stays as it is)."""
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_")


def _rebuild_mapping(template, values):
    """The mapping ``values`` (a dict) in ``template``'s type when that type can be
    copied or rebuilt from a dict, else as the dict."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _rebuild_sequence(template, items):
    """The list ``items`` in ``template``'s (a non-tuple sequence) type when that type
    can be copied or rebuilt from a list, else as the list."""
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(template)(items)
    except TypeError:
        return items


def default_convert(data):
    """One sample with every NumPy array and scalar made a tensor (string and
    object arrays kept), through dicts, named tuples and sequences; plain tuples
    become lists. What ``DataLoader`` applies when batching is off
    (``batch_size=None``).

    >>> import numpy as np
    >>> from chainrule.utils.data import default_convert
    >>> default_convert({"x": np.array([1.0, 2.0]), "tag": ("a", np.int32(3))})
    {'x': tensor([1., 2.], dtype=chainrule.float64), 'tag': ['a', tensor(3, dtype=chainrule.int32)]}
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        from ... import as_tensor
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(item) for item in data))
    if isinstance(data, tuple):
        return [default_convert(item) for item in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(item) for item in data])
    return data


def _leaf_rule(elem, collate_fn_map):
    """The rule of ``collate_fn_map`` for ``elem``: its exact type's, else the first
    entry ``elem`` is an instance of (in the map's order)."""
    if type(elem) in collate_fn_map:
        return collate_fn_map[type(elem)]
    for kind, rule in collate_fn_map.items():
        if isinstance(elem, kind):
            return rule
    return None


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples of one structure): leaves by the rules of
    ``collate_fn_map`` (``{type or tuple of types: fn(batch, *, collate_fn_map)}``),
    dicts key by key, named tuples field by field, other sequences position by
    position (plain tuples give lists).

    >>> import chainrule as cr
    >>> from chainrule.utils.data._utils.collate import collate, default_collate_fn_map
    >>> rules = {**default_collate_fn_map, str: lambda b, *, collate_fn_map: "".join(b)}
    >>> collate([("a", 1), ("b", 2)], collate_fn_map=rules)
    ['ab', tensor([1, 2])]
    """
    elem = batch[0]
    rule = _leaf_rule(elem, collate_fn_map) if collate_fn_map is not None else None
    if rule is not None:
        return rule(batch, collate_fn_map=collate_fn_map)

    def collate_part(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate_part([d[key] for d in batch])
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(collate_part(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate_part(samples) for samples in transposed]
        return _rebuild_sequence(elem, [collate_part(samples) for samples in transposed])
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Tensors stacked along a new first dimension (``cr.stack``).

    >>> import chainrule as cr
    >>> from chainrule.utils.data._utils.collate import collate_tensor_fn
    >>> collate_tensor_fn([cr.zeros(2), cr.ones(2)]).shape
    chainrule.Size([2, 2])
    """
    if getattr(batch[0], "is_nested", False):
        raise RuntimeError("Batches of nested tensors are not currently supported by the "
                           "default collate_fn; please provide a custom collate_fn to handle "
                           "them appropriately.")
    from ... import stack
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """NumPy arrays made tensors, then collated (string and object arrays refused).

    >>> import numpy as np
    >>> from chainrule.utils.data._utils.collate import collate_numpy_array_fn
    >>> from chainrule.utils.data._utils.collate import default_collate_fn_map
    >>> collate_numpy_array_fn([np.zeros(2, np.float32), np.ones(2, np.float32)],
    ...                        collate_fn_map=default_collate_fn_map).dtype
    chainrule.float32
    """
    if np_str_obj_array_pattern.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    from ... import as_tensor
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """NumPy scalars as one tensor of their dtype.

    >>> import numpy as np
    >>> from chainrule.utils.data._utils.collate import collate_numpy_scalar_fn
    >>> collate_numpy_scalar_fn([np.int16(1), np.int16(2)])
    tensor([1, 2], dtype=chainrule.int16)
    """
    from ... import as_tensor
    # Through one ndarray: NumPy's promotion keeps the scalars' dtype, as the reference.
    return as_tensor(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats as a float64 tensor (not the default dtype, like the reference).

    >>> from chainrule.utils.data._utils.collate import collate_float_fn
    >>> collate_float_fn([0.5, 1.0])
    tensor([0.5000, 1.0000], dtype=chainrule.float64)
    """
    from ... import float64, tensor
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints as an int64 tensor (bools, an int subtype, as a bool tensor).

    >>> from chainrule.utils.data._utils.collate import collate_int_fn
    >>> collate_int_fn([1, 2]), collate_int_fn([True, False])
    (tensor([1, 2]), tensor([ True, False]))
    """
    from ... import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes kept as they are: the batch itself (a list, or a tuple when
    collated from a sequence's position).

    >>> from chainrule.utils.data._utils.collate import collate_str_fn
    >>> collate_str_fn(["a", "b"])
    ['a', 'b']
    """
    return batch


# The leaf rules of ``default_collate``, looked up by exact type, then in this order
# by isinstance (so bool, an int, collates as an int and a Parameter as a Tensor).
default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """A list of samples as one batch: tensors stacked, NumPy arrays and scalars made
    tensors and stacked, Python floats as float64 and ints as int64 tensors, strings
    and bytes kept in a list; dicts, named tuples and sequences collated field by
    field (a tuple of fields becomes a list). What ``DataLoader`` applies by default.

    >>> import chainrule as cr
    >>> from chainrule.utils.data import default_collate
    >>> default_collate([(cr.tensor([1.0]), 0, "a"), (cr.tensor([2.0]), 1, "b")])
    [tensor([[1.],
            [2.]]), tensor([0, 1]), ('a', 'b')]
    >>> default_collate([{"x": 1.5}, {"x": 2.5}])
    {'x': tensor([1.5000, 2.5000], dtype=chainrule.float64)}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
