"""chainrule.save / chainrule.load (Note [save format] in serialization.py)."""
import collections
import io
import pickle
import zipfile

import numpy as np
import pytest

import chainrule as cr


def _round_trip(obj, **load_kwargs):
    buffer = io.BytesIO()
    cr.save(obj, buffer)
    buffer.seek(0)
    return cr.load(buffer, **load_kwargs)


class Opaque:
    """A class the format has no tag for (pickled at save time)."""

    def __init__(self, value):
        self.value = value


def test_tensors_and_nested_containers_round_trip():
    # issue 9, wrong today 7: save / load of tensors and (nested) dicts/lists of tensors
    state = collections.OrderedDict(
        weight=cr.randn(3, 2, dtype=cr.float64), bias=cr.zeros(2, dtype=cr.bfloat16),
        steps=cr.tensor([1, 2], dtype=cr.int32), flags=cr.tensor([True, False]))
    obj = {"model": state, "history": [cr.tensor(0.5), {"lr": 0.1, "betas": (0.9, 0.999)}],
           1: "int key", (2, 3): None, "size": cr.Size([2, 3]), "dtype": cr.float16,
           "device": cr.device("cpu"), "z": 1 + 2j, "raw": b"\x00\x01", "set": {1, 2},
           "empty": cr.zeros(0, 3), "nan": float("nan")}
    out = _round_trip(obj)
    assert type(out["model"]) is collections.OrderedDict and list(out["model"]) == list(state)
    for name, t in state.items():
        assert out["model"][name].dtype == t.dtype
        np.testing.assert_array_equal(out["model"][name].numpy(), t.numpy())
    assert out["history"][0].item() == 0.5 and out["history"][1] == {"lr": 0.1,
                                                                      "betas": (0.9, 0.999)}
    assert out[1] == "int key" and out[(2, 3)] is None and out["set"] == {1, 2}
    assert out["size"] == cr.Size([2, 3]) and type(out["size"]) is cr.Size
    assert out["dtype"] is cr.float16 and out["device"] == cr.device("cpu")
    assert out["z"] == 1 + 2j and out["raw"] == b"\x00\x01" and np.isnan(out["nan"])
    assert out["empty"].shape == (0, 3)


def test_loaded_tensors_keep_requires_grad_as_leaves_and_share_memory_like_saved():
    x = cr.ones(3, requires_grad=True)
    y = cr.arange(12.0).reshape(3, 4)
    a, b, rows, cols, again = _round_trip([x * 2, x, y[1:], y.t(), x])
    assert a.requires_grad and a.is_leaf and b.requires_grad and again is b
    assert cols.stride() == (1, 4) and not cols.is_contiguous()
    rows[0, 1] = 100.0                         # one storage: y's memory
    assert cols[1, 1].item() == 100.0
    a.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0]


def test_state_dicts_and_parameters_round_trip():
    model = cr.nn.Linear(3, 2)
    out = _round_trip({"state": model.state_dict(), "weight": model.weight,
                       "tied": model.weight})
    assert type(out["weight"]) is cr.nn.Parameter and out["weight"].requires_grad
    assert out["tied"] is out["weight"]
    fresh = cr.nn.Linear(3, 2)
    fresh.load_state_dict(out["state"])
    assert cr.equal(fresh.weight, model.weight) and cr.equal(fresh.bias, model.bias)
    whole = io.BytesIO()
    cr.save(model, whole)                        # a Module is pickled
    whole.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        cr.load(whole)
    whole.seek(0)
    assert cr.equal(cr.load(whole, weights_only=False).weight, model.weight)


def test_paths_file_objects_and_mmap(tmp_path):
    path = tmp_path / "checkpoint.pt"
    w = cr.arange(6.0).reshape(2, 3)
    cr.save({"w": w}, path)
    cr.save({"w": w}, str(tmp_path / "as_string.pt"))
    assert cr.load(str(path))["w"].tolist() == w.tolist()
    mapped = cr.load(path, mmap=True)["w"]
    assert isinstance(mapped._data.base, np.memmap) and mapped.tolist() == w.tolist()
    mapped[0, 0] = 7.0                         # copy-on-write: the file keeps its values
    assert cr.load(path)["w"][0, 0].item() == 0.0
    with open(path, "rb") as f:
        assert cr.load(f)["w"].shape == (2, 3)
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        cr.load(io.BytesIO(), mmap=True)
    with pytest.raises(FileNotFoundError):
        cr.load(tmp_path / "missing.pt")


@pytest.mark.parametrize("map_location", [None, "cpu", cr.device("cpu"), {"cpu": "cpu"},
                                          lambda storage, location: storage])
def test_map_location_forms_are_accepted(map_location):
    out = _round_trip({"w": cr.ones(2)}, map_location=map_location)
    assert out["w"].tolist() == [1.0, 1.0] and out["w"].device == cr.device("cpu")


def test_weights_only_refuses_pickled_objects_unless_asked():
    buffer = io.BytesIO()
    cr.save({"w": cr.ones(1), "extra": Opaque(3)}, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*pickled "
                                                     "test_serialization.Opaque"):
        cr.load(buffer)
    buffer.seek(0)
    assert cr.load(buffer, weights_only=False)["extra"].value == 3
    buffer.seek(0)
    assert cr.load(buffer, pickle_module=pickle)["extra"].value == 3   # implies not weights_only
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        cr.load(buffer, pickle_module=pickle, weights_only=True)


def _archive(data):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("chainrule/version", "1")
        zf.writestr("chainrule/data.json", data)
        zf.writestr("chainrule/storages/0", b"\x00" * 8)
    buffer.seek(0)
    return buffer


def test_malformed_files_are_refused_before_anything_runs():
    with pytest.raises(RuntimeError, match="not a zip archive written by chainrule.save"):
        cr.load(io.BytesIO(b"not a checkpoint"))
    tensor = ('{"data": {"T": "tensor", "ref": 0}, "tensors": [{"storage": "storages/0", '
              '"offset": 0, "shape": [%s], "strides": [8], "dtype": "%s", '
              '"requires_grad": false, "device": "cpu"%s}]}')
    assert cr.load(_archive(tensor % ("1", "float64", ""))).tolist() == [0.0]
    with pytest.raises(ValueError):                             # past the storage's end
        cr.load(_archive(tensor % ("4", "float64", "")))
    with pytest.raises(TypeError):                              # not a chainrule dtype
        cr.load(_archive(tensor % ("1", "object", "")))
    with pytest.raises(RuntimeError, match="tensor class os.system is not a chainrule Tensor"):
        cr.load(_archive(tensor % ("1", "float64", ', "class": "os.system"')))


def test_save_needs_a_path_or_a_writable_file():
    with pytest.raises(AttributeError, match="binary file object with write"):
        cr.save(cr.ones(1), object())


def test_torch_parity_of_save_and_load_semantics(torch):
    records = []
    for M in (cr, torch):
        x = M.ones(3, requires_grad=True)
        y = M.arange(12.0).reshape(3, 4)
        buffer = io.BytesIO()
        M.save({"a": x * 2, "b": x, "v": [y[1:], y.t(), x]}, buffer)
        buffer.seek(0)
        out = M.load(buffer, map_location="cpu")
        out["v"][0][0, 1] = 100.0
        records.append([out["a"].requires_grad, out["a"].is_leaf, out["v"][2] is out["b"],
                        out["v"][1].tolist(), out["v"][1].stride()])
        buffer = io.BytesIO()
        M.save({"extra": Opaque(1)}, buffer)
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            M.load(buffer)
    assert records[0] == records[1]
