/* The generic steps of a runtime node's copy (kubetwin.sim.runtime_copy): dicts, lists and plain
 * objects (a __dict__, no slots, the plain __setattr__) copied in C, every other object handed to
 * the Python copier (runtime_copy._py_copy) with the same memo. The graph is the one the Python
 * copier gives, step by step: an atom (its type in the atoms set) is itself; an object in the memo
 * (keyed by id(), as copy.deepcopy's) is its copy there; a dict is copied whole and its values
 * that are not atoms replaced (a dict with a key that is neither an atom nor a tuple or frozenset
 * remembered as immutable goes to Python); a list gets
 * a copy of each item; a plain object is object.__new__(type) given a copy of its __dict__ whose
 * values that are not atoms are replaced; a tuple or frozenset remembered as immutable is itself;
 * an object whose type has a copier of its own (owns) is that copier's answer. The copy of a dict,
 * list or object is put in the memo before its items are copied (cycles come back to it).
 *
 * Not an upstream module: a kubetwin fast path for the simulation of many copies of a node.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *atoms = NULL;    /* set of types whose instances are shared */
static PyObject *plain = NULL;    /* set of plain object types copied here */
static PyObject *owns = NULL;     /* dict: type -> its own copier, called as copier(x, memo) */
static PyObject *immutable = NULL; /* dict: id -> tuple or frozenset every copy shares */
static PyObject *fallback = NULL; /* the Python copier: fallback(x, memo) */
static PyObject *keep = NULL;     /* set of types whose instances are shared (unless the memo has a copy) */
static PyObject *shapes = NULL;   /* dict: type -> (share: bool, names: frozenset) for objects copied
                                     with every attribute shared, but names (share), or the reverse */
static PyObject *slotted = NULL;  /* dict: type -> tuple of its slot names */
static PyObject *empty = NULL;    /* () */

static PyObject *copy_new(PyObject *x, PyObject *memo, PyObject *key);

/* a new reference to the copy of v */
static PyObject *copy_value(PyObject *v, PyObject *memo) {
    int a = PySet_Contains(atoms, (PyObject *)Py_TYPE(v));
    if (a < 0) return NULL;
    if (a) {
        Py_INCREF(v);
        return v;
    }
    PyObject *key = PyLong_FromVoidPtr(v);
    if (key == NULL) return NULL;
    PyObject *got = PyDict_GetItemWithError(memo, key);
    if (got != NULL) {
        Py_INCREF(got);
        Py_DECREF(key);
        return got;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    if (Py_EnterRecursiveCall(" while copying a runtime node")) {   /* deep graphs: RecursionError */
        Py_DECREF(key);
        return NULL;
    }
    PyObject *out = copy_new(v, memo, key);
    Py_LeaveRecursiveCall();
    Py_DECREF(key);
    return out;
}

/* replace in `d` (a copy of a dict or of an object's __dict__, made here and reachable by nothing
   but the memo) every value that is not an atom by its copy: its values are replaced while it is
   walked, its keys stay as they are */
static int replace_values(PyObject *d, PyObject *memo) {
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &pos, &k, &v)) {
        int a = PySet_Contains(atoms, (PyObject *)Py_TYPE(v));
        if (a < 0) return -1;
        if (a) continue;
        Py_INCREF(k);
        PyObject *c = copy_value(v, memo);
        if (c == NULL) {
            Py_DECREF(k);
            return -1;
        }
        int r = c == v ? 0 : PyDict_SetItem(d, k, c);
        Py_DECREF(c);
        Py_DECREF(k);
        if (r < 0) return -1;
    }
    return 0;
}

/* the memo's copy of v, or v itself (a new reference) */
static PyObject *memo_or_self(PyObject *v, PyObject *memo) {
    int a = PySet_Contains(atoms, (PyObject *)Py_TYPE(v));
    if (a < 0) return NULL;
    if (!a) {
        PyObject *key = PyLong_FromVoidPtr(v);
        if (key == NULL) return NULL;
        PyObject *got = PyDict_GetItemWithError(memo, key);
        Py_DECREF(key);
        if (got != NULL) v = got;
        else if (PyErr_Occurred()) return NULL;
    }
    Py_INCREF(v);
    return v;
}

/* a plain object with a shape: its dict copied, the attributes named (share false) or not named
   (share true) copied, the others shared (or their copy met already) */
static PyObject *copy_shaped(PyObject *x, PyObject *memo, PyObject *key, PyObject *shape) {
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != 2 || !PyAnySet_Check(PyTuple_GET_ITEM(shape, 1))) {
        PyErr_SetString(PyExc_TypeError, "a shape is (share: bool, names: frozenset)");
        return NULL;
    }
    int share = PyObject_IsTrue(PyTuple_GET_ITEM(shape, 0));
    PyObject *names = PyTuple_GET_ITEM(shape, 1);
    if (share < 0) return NULL;
    PyObject *new = PyBaseObject_Type.tp_new(Py_TYPE(x), empty, NULL);
    if (new == NULL) return NULL;
    if (PyDict_SetItem(memo, key, new) < 0) {
        Py_DECREF(new);
        return NULL;
    }
    PyObject *state = PyObject_GenericGetDict(x, NULL);
    if (state == NULL) {
        Py_DECREF(new);
        return NULL;
    }
    PyObject *nd = PyDict_Copy(state);
    Py_DECREF(state);
    if (nd == NULL || PyObject_GenericSetDict(new, nd, NULL) < 0) goto fail;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(nd, &pos, &k, &v)) {   /* values replaced while walked, keys unchanged */
        int named = PySet_Contains(names, k);
        if (named < 0) goto fail;
        Py_INCREF(k);
        PyObject *c = (share != named) ? memo_or_self(v, memo) : copy_value(v, memo);
        int r = c == NULL ? -1 : (c == v ? 0 : PyDict_SetItem(nd, k, c));
        Py_XDECREF(c);
        Py_DECREF(k);
        if (r < 0) goto fail;
    }
    Py_DECREF(nd);
    return new;
fail:
    Py_XDECREF(nd);
    Py_DECREF(new);
    return NULL;
}

/* an object with slots: each slot set read and written by name, unset ones left unset */
static PyObject *copy_slotted(PyObject *x, PyObject *memo, PyObject *key, PyObject *names) {
    if (!PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "slot names are a tuple");
        return NULL;
    }
    PyObject *new = PyBaseObject_Type.tp_new(Py_TYPE(x), empty, NULL);
    if (new == NULL) return NULL;
    if (PyDict_SetItem(memo, key, new) < 0) {
        Py_DECREF(new);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        PyObject *v = PyObject_GetAttr(x, name);
        if (v == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) goto fail;
            PyErr_Clear();
            continue;
        }
        PyObject *c = copy_value(v, memo);
        Py_DECREF(v);
        if (c == NULL) goto fail;
        int r = PyObject_SetAttr(new, name, c);
        Py_DECREF(c);
        if (r < 0) goto fail;
    }
    return new;
fail:
    Py_DECREF(new);
    return NULL;
}

/* x: not an atom, not in the memo (key: id(x)) */
static PyObject *copy_new(PyObject *x, PyObject *memo, PyObject *key) {
    PyTypeObject *t = Py_TYPE(x);
    if (t == &PyDict_Type) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(x, &pos, &k, &v)) {   /* keys: atoms, or tuples remembered as immutable */
            int a = PySet_Contains(atoms, (PyObject *)Py_TYPE(k));
            if (a < 0) return NULL;
            if (!a && (Py_IS_TYPE(k, &PyTuple_Type) || Py_IS_TYPE(k, &PyFrozenSet_Type))) {
                PyObject *kid = PyLong_FromVoidPtr(k);
                if (kid == NULL) return NULL;
                a = PyDict_Contains(immutable, kid);
                Py_DECREF(kid);
                if (a < 0) return NULL;
            }
            if (!a) return PyObject_CallFunctionObjArgs(fallback, x, memo, NULL);
        }
        PyObject *d = PyDict_Copy(x);
        if (d == NULL) return NULL;
        if (PyDict_SetItem(memo, key, d) < 0 || replace_values(d, memo) < 0) {
            Py_DECREF(d);
            return NULL;
        }
        return d;
    }
    if (t == &PyList_Type) {
        PyObject *l = PyList_New(0);
        if (l == NULL) return NULL;
        if (PyDict_SetItem(memo, key, l) < 0) {
            Py_DECREF(l);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(x); i++) {
            PyObject *item = PyList_GET_ITEM(x, i);
            Py_INCREF(item);
            PyObject *c = copy_value(item, memo);
            Py_DECREF(item);
            if (c == NULL || PyList_Append(l, c) < 0) {
                Py_XDECREF(c);
                Py_DECREF(l);
                return NULL;
            }
            Py_DECREF(c);
        }
        return l;
    }
    int p = PySet_Contains(plain, (PyObject *)t);
    if (p < 0) return NULL;
    if (!p) {
        if (t == &PyTuple_Type || t == &PyFrozenSet_Type) {
            int i = PyDict_Contains(immutable, key);
            if (i < 0) return NULL;
            if (i) {
                Py_INCREF(x);
                return x;
            }
        } else {
            int k = PySet_Contains(keep, (PyObject *)t);
            if (k < 0) return NULL;
            if (k) {
                Py_INCREF(x);
                return x;
            }
            PyObject *shape = PyDict_GetItemWithError(shapes, (PyObject *)t);
            if (shape != NULL) return copy_shaped(x, memo, key, shape);
            if (PyErr_Occurred()) return NULL;
            PyObject *names = PyDict_GetItemWithError(slotted, (PyObject *)t);
            if (names != NULL) return copy_slotted(x, memo, key, names);
            if (PyErr_Occurred()) return NULL;
            PyObject *own = PyDict_GetItemWithError(owns, (PyObject *)t);
            if (own != NULL) return PyObject_CallFunctionObjArgs(own, x, memo, NULL);
            if (PyErr_Occurred()) return NULL;
        }
        return PyObject_CallFunctionObjArgs(fallback, x, memo, NULL);
    }
    PyObject *new = PyBaseObject_Type.tp_new(t, empty, NULL);   /* object.__new__(t) */
    if (new == NULL) return NULL;
    if (PyDict_SetItem(memo, key, new) < 0) {
        Py_DECREF(new);
        return NULL;
    }
    PyObject *state = PyObject_GenericGetDict(x, NULL);
    if (state == NULL) {
        Py_DECREF(new);
        return NULL;
    }
    PyObject *nd = PyDict_Copy(state);
    if (nd == NULL || PyObject_GenericSetDict(new, nd, NULL) < 0 || replace_values(nd, memo) < 0) {
        Py_XDECREF(nd);
        Py_DECREF(state);
        Py_DECREF(new);
        return NULL;
    }
    Py_DECREF(nd);
    Py_DECREF(state);
    return new;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *a, *p, *o, *im, *f, *kp, *sh, *sl;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OO!O!O!", &PySet_Type, &a, &PySet_Type, &p, &PyDict_Type, &o, &PyDict_Type,
                          &im, &f, &PySet_Type, &kp, &PyDict_Type, &sh, &PyDict_Type, &sl))
        return NULL;
    Py_INCREF(kp);
    Py_INCREF(sh);
    Py_INCREF(sl);
    Py_XSETREF(keep, kp);
    Py_XSETREF(shapes, sh);
    Py_XSETREF(slotted, sl);
    Py_INCREF(a);
    Py_INCREF(p);
    Py_INCREF(o);
    Py_INCREF(im);
    Py_INCREF(f);
    Py_XSETREF(atoms, a);
    Py_XSETREF(plain, p);
    Py_XSETREF(owns, o);
    Py_XSETREF(immutable, im);
    Py_XSETREF(fallback, f);
    Py_RETURN_NONE;
}

static PyObject *copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "copy(x, memo: dict)");
        return NULL;
    }
    if (atoms == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    return copy_value(args[0], args[1]);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(atoms, plain, owns, immutable, fallback, keep, shapes, slotted)"},
    {"copy", (PyCFunction)(void (*)(void))copy, METH_FASTCALL, "copy(x, memo): the copy of x"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_graphcopy", NULL, -1, methods};

PyMODINIT_FUNC PyInit__graphcopy(void) {
    empty = PyTuple_New(0);
    if (empty == NULL) return NULL;
    return PyModule_Create(&module);
}
