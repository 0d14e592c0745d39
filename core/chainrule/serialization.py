"""``chainrule.save`` / ``chainrule.load``: tensors and containers of tensors on disk,
with the call signatures of ``torch.save`` / ``torch.load``.

Note [save format]
    A zip archive (entries stored uncompressed, so ``mmap=True`` can map them):
    ``chainrule/version``; ``chainrule/data.json``, the saved object as JSON, where a
    JSON list is a Python list and every JSON object is a tagged value (tuple, set,
    dict with its keys, tensor, Size, dtype, device, complex, bytes, or a pickled
    object); and one ``chainrule/storages/<k>`` per block of memory, raw bytes. A
    tensor is a reference to (storage, byte offset, shape, byte strides, dtype name,
    requires_grad, device), so tensors saved together that shared memory (the same
    tensor twice, views of one array) share it again after loading, like the
    reference.

    Loading reads JSON, dtype names from chainrule's own table and raw bytes; NumPy
    checks every (offset, shape, strides) against its storage. Nothing runs that the
    file chose, so a file from anywhere is safe to load. Objects the format has no
    tag for are pickled at save time, and like the reference's ``weights_only=True``
    (the default) ``load`` refuses them unless asked for ``weights_only=False``.
"""
import base64
import collections
import io
import json
import os
import pickle
import struct
import sys
import zipfile

import numpy as np

from . import _dtypes
from ._size import Size
from ._meta import MetaArray
from ._tensor import Tensor, device as _device

DEFAULT_PROTOCOL = 2
_ROOT = "chainrule/"
_VERSION = "1"


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save ``obj`` (tensors, and lists, tuples, dicts, numbers and strings holding
    them) to ``f``, a path or a binary file object (Note [save format]).

    >>> import io, chainrule as cr
    >>> buffer = io.BytesIO()
    >>> cr.save({"w": cr.ones(2), "step": 3}, buffer)
    >>> _ = buffer.seek(0); cr.load(buffer)
    {'w': tensor([1., 1.]), 'step': 3}
    """
    writer = _Writer(pickle_module, pickle_protocol)
    data = writer.encode(obj)
    header = {"data": data, "tensors": writer.tensors, "byteorder": sys.byteorder}
    with _open(f, "wb") as stream, zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(_ROOT + "version", _VERSION)
        zf.writestr(_ROOT + "data.json", json.dumps(header))
        for name, array in writer.storages:
            with zf.open(_ROOT + name, "w", force_zip64=True) as member:
                member.write(memoryview(array.reshape(-1).view(np.uint8)))


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what ``save`` wrote to ``f`` (a path or a binary file object).

    ``map_location`` (a device, a string, a dict from saved to wanted device names, or
    a function of (tensor, saved location)) says where tensors go. With
    ``weights_only`` (the default unless a ``pickle_module`` is given) only what the
    format itself describes is loaded; ``weights_only=False`` also unpickles other
    objects (only for files you trust). ``mmap=True`` maps the storages of a file
    given by path instead of reading them.

    >>> import io, chainrule as cr
    >>> buffer = io.BytesIO(); x = cr.arange(4.0)
    >>> cr.save([x, x[1:]], buffer)
    >>> _ = buffer.seek(0); a, b = cr.load(buffer, map_location="cpu")
    >>> a[1] = 9; b.tolist()                 # still one block of memory
    [9.0, 2.0, 3.0]
    """
    if weights_only is None:
        weights_only = pickle_module is None
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with _open(f, "rb") as stream:
        if not zipfile.is_zipfile(stream):
            raise RuntimeError("Invalid chainrule file: not a zip archive written by "
                               "chainrule.save")
        stream.seek(0)
        with zipfile.ZipFile(stream) as zf:
            reader = _Reader(zf, f if mmap else None, map_location,
                             pickle_module or pickle, weights_only, pickle_load_args)
            return reader.load()


def _open(f, mode):
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode)
    needed = "write" if "w" in mode else "read"
    if not hasattr(f, needed):
        raise AttributeError(f"expected a file path or a binary file object with {needed}(), "
                             f"got {type(f).__name__}")
    return _Borrowed(f)


class _Borrowed:
    """A caller's file object: used, never closed."""

    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self.f

    def __exit__(self, *exc):
        if hasattr(self.f, "flush"):
            self.f.flush()


class _Writer:
    """Turns an object into tagged JSON; collects tensors and storages."""

    def __init__(self, pickle_module, protocol):
        self.pickle_module, self.protocol = pickle_module, protocol
        self.tensors, self.storages = [], []
        self._tensor_ids, self._storage_ids = {}, {}
        self._keep = []          # objects whose id() is a key above stay alive

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if type(obj) in (int, float):
            return obj
        if isinstance(obj, Tensor):
            return {"T": "tensor", "ref": self._tensor(obj)}
        if type(obj) is list:
            return [self.encode(v) for v in obj]
        if type(obj) in (dict, collections.OrderedDict):
            return {"T": "dict", "ordered": type(obj) is collections.OrderedDict,
                    "items": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        simple = self._simple(obj)
        if simple is not None:
            return simple
        return self._pickled(obj)

    def _simple(self, obj):
        """Tags for the other types the format knows (None when it knows none)."""
        kind = type(obj)
        if kind is Size:
            return {"T": "size", "items": list(obj)}
        if kind in (tuple, set, frozenset):
            return {"T": kind.__name__, "items": [self.encode(v) for v in obj]}
        if kind is complex:
            return {"T": "complex", "items": [obj.real, obj.imag]}
        if kind is bytes:
            return {"T": "bytes", "base64": base64.b64encode(obj).decode("ascii")}
        if kind is _dtypes.dtype:
            return {"T": "dtype", "name": obj.name}
        if kind is _device:
            return {"T": "device", "name": str(obj)}
        return None

    def _pickled(self, obj):
        buffer = io.BytesIO()
        self.pickle_module.dump(obj, buffer, protocol=self.protocol)
        kind = type(obj)
        return {"T": "pickle", "type": f"{kind.__module__}.{kind.__qualname__}",
                "base64": base64.b64encode(buffer.getvalue()).decode("ascii")}

    def _tensor(self, t):
        index = self._tensor_ids.get(id(t))
        if index is not None:
            return index
        arr = t._data
        if type(arr) is MetaArray:             # no data: no storage (Note [meta arrays])
            storage, offset = None, arr.data_ptr
        else:
            if type(arr) is not np.ndarray:    # Note [device arrays]: stored from a host copy
                arr = arr.get()
            owner = _memory_owner(arr)
            storage = self._storage(owner)
            offset = arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        entry = {"storage": storage, "offset": offset,
                 "shape": list(arr.shape), "strides": list(arr.strides),
                 "dtype": _dtypes.from_numpy_dtype(arr.dtype).name,
                 "requires_grad": t.requires_grad, "device": str(t.device)}
        if type(t) is not Tensor:
            entry["class"] = f"{type(t).__module__}.{type(t).__qualname__}"
        self._keep.append(t)
        self._tensor_ids[id(t)] = index = len(self.tensors)
        self.tensors.append(entry)
        return index

    def _storage(self, owner):
        name = self._storage_ids.get(id(owner))
        if name is None:
            name = self._storage_ids[id(owner)] = f"storages/{len(self.storages)}"
            self.storages.append((name, owner))
            self._keep.append(owner)
        return name


def _memory_owner(arr):
    """The C-contiguous array that owns ``arr``'s memory (so tensors that share memory
    share a storage), or a compact copy of ``arr`` when there is none."""
    owner = arr
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner.flags.c_contiguous and owner.dtype.kind != "O":
        return owner
    return np.ascontiguousarray(arr)


class _Reader:
    """Rebuilds the object from the archive (Note [save format])."""

    def __init__(self, zf, path, map_location, pickle_module, weights_only, load_args):
        self.zf, self.path, self.map_location = zf, path, map_location
        self.pickle_module, self.weights_only, self.load_args = \
            pickle_module, weights_only, load_args
        self.storages, self.tensors = {}, {}

    def load(self):
        names = set(self.zf.namelist())
        if _ROOT + "data.json" not in names:
            raise RuntimeError("Invalid chainrule file: no chainrule/data.json (files written "
                               "by torch.save cannot be read by chainrule.load)")
        header = json.loads(self.zf.read(_ROOT + "data.json"))
        if header.get("byteorder", sys.byteorder) != sys.byteorder:
            raise RuntimeError(f"the file was written on a {header['byteorder']}-endian "
                               "machine; loading it here is not supported")
        self.entries = header["tensors"]
        return self.decode(header["data"])

    def decode(self, value):
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        tag = value["T"]
        if tag == "tensor":
            return self._tensor(value["ref"])
        if tag == "dict":
            kind = collections.OrderedDict if value["ordered"] else dict
            return kind((self.decode(k), self.decode(v)) for k, v in value["items"])
        if tag in _CONTAINERS:
            return _CONTAINERS[tag](self.decode(v) for v in value["items"])
        if tag == "complex":
            return complex(*value["items"])
        if tag == "bytes":
            return base64.b64decode(value["base64"])
        if tag == "dtype":
            return _dtypes.to_dtype(value["name"])
        if tag == "device":
            return _device(value["name"])
        if tag == "pickle":
            return self._unpickle(value)
        raise RuntimeError(f"Invalid chainrule file: unknown tag {tag!r}")

    def _unpickle(self, value):
        if self.weights_only:
            raise pickle.UnpicklingError(
                "Weights only load failed. This file can still be loaded, to do so you have "
                "two options, do those steps only if you trust the source of the checkpoint.\n"
                "\t(1) Re-running `chainrule.load` with `weights_only` set to `False` will "
                "likely succeed, but it can result in arbitrary code execution. Do it only "
                "if you got the file from a trusted source.\n"
                f"\t(2) Save only tensors, numbers, strings and containers of them: the file "
                f"holds a pickled {value['type']}, which weights_only loading does not "
                "unpickle.")
        data = io.BytesIO(base64.b64decode(value["base64"]))
        return self.pickle_module.load(data, **self.load_args)

    def _tensor(self, index):
        t = self.tensors.get(index)
        if t is None:
            t = self.tensors[index] = self._build(self.entries[index])
        return t

    def _build(self, entry):
        dtype = _dtypes.to_dtype(entry["dtype"]).np
        if entry["storage"] is None:           # a meta tensor
            item = dtype.itemsize
            arr = MetaArray.empty(entry["shape"], dtype, [n // item for n in entry["strides"]],
                                  entry["offset"] // item)
        else:
            arr = np.ndarray(tuple(entry["shape"]), dtype,
                             buffer=self._storage(entry["storage"]), offset=entry["offset"],
                             strides=tuple(entry["strides"]))
        t = self._place(_tensor_of_class(entry.get("class"), arr), entry["device"])
        if entry["requires_grad"]:
            t.requires_grad_(True)
        return t

    def _storage(self, name):
        storage = self.storages.get(name)
        if storage is None:
            storage = self.storages[name] = self._read_storage(_ROOT + name)
        return storage

    def _read_storage(self, member):
        if self.path is None:
            return np.frombuffer(bytearray(self.zf.read(member)), np.uint8)
        info = self.zf.getinfo(member)
        return np.memmap(self.path, np.uint8, mode="c", offset=_data_offset(self.zf, info),
                         shape=(info.file_size,)) if info.file_size else np.zeros(0, np.uint8)

    def _place(self, t, location):
        target = self.map_location
        if type(t._data) is MetaArray:         # stays meta wherever it is mapped, as in
            return t                           # the reference: there is nothing to move
        if callable(target):
            moved = target(t, location)
            return moved if isinstance(moved, Tensor) else t
        if isinstance(target, dict):
            target = target.get(location, location)
        if target is None:
            target = location
        from ._backends import move_array
        t._data = move_array(t._data, target)      # still a leaf
        return t


_CONTAINERS = {"tuple": tuple, "set": set, "frozenset": frozenset, "size": Size}


def _data_offset(zf, info):
    """Where a stored member's bytes start in the archive (after its local header)."""
    stream = zf.fp
    stream.seek(info.header_offset)
    header = stream.read(30)
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_length + extra_length


def _tensor_of_class(class_name, arr):
    """A Tensor, or an instance of the chainrule Tensor subclass the file names (e.g. a
    Parameter); any other class is refused."""
    t = Tensor._wrap(arr)
    if class_name is None:
        return t
    module, _, qualname = class_name.rpartition(".")
    cls = None
    if module == "chainrule" or module.startswith("chainrule."):
        cls = getattr(sys.modules.get(module), qualname, None)
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise RuntimeError(f"Invalid chainrule file: tensor class {class_name} is not a "
                           "chainrule Tensor class")
    out = cls.__new__(cls)
    for slot in ("_data", "grad_fn", "_output_nr", "_requires_grad", "_grad", "_vc",
                 "_base", "_extra"):
        setattr(out, slot, getattr(t, slot))
    return out
