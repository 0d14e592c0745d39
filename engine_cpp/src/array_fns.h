// ARRAY_NS helpers in C (core's Note [array function slot], _ops/_namespaces.py).
//
// `conj` is called by nearly every VJP formula on the fast backward; for a real
// array it returns its argument. In Python that is a frame and two attribute reads
// (~0.1 µs); here it is a type check. It mirrors `_namespaces._conj`
// (`np.conj(x) if x.dtype.kind == "c" else x`) for ndarrays and NumPy scalars and
// calls the Python function for anything else, so errors are the same. Installed
// while `_conj` has the fingerprint it was written against (chainrule_engine/_mirror.py).
#pragma once

#include "python_api.h"

namespace chainrule_engine {

// Hand over `_namespaces._conj` (the fallback) and `np.conj`.
void configure_array_fns(PyObject* python_conj, PyObject* np_conj);

// conj(x): a METH_O function.
PyObject* array_conj(PyObject* self, PyObject* x);

}  // namespace chainrule_engine
