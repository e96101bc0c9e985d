/* The generic steps of a runtime node's copy (kubetwin.sim.runtime_copy): dicts, lists and plain
 * objects (a __dict__, no slots, the plain __setattr__) copied in C, every other object handed to
 * the Python copier (runtime_copy._py_copy) with the same memo. The graph is the one the Python
 * copier gives, step by step: an atom (its type in the atoms set) is itself; an object in the memo
 * (keyed by id(), as copy.deepcopy's) is its copy there; a dict is copied whole and its values
 * that are not atoms replaced (a dict with a key that is neither an atom nor a tuple or frozenset
 * remembered as immutable goes to Python); a list gets
 * a copy of each item; a plain object is object.__new__(type) given a copy of its __dict__ whose
 * values that are not atoms are replaced; a tuple or frozenset remembered as immutable is itself;
 * an object whose type has a copier of its own (owns) is that copier's answer; any other tuple gets
 * its items copied, and is itself (handed to remember) when each is its own copy, else a new tuple
 * (in the memo after its items). The copy of a dict, list or object is put in the memo before its
 * items are copied (cycles come back to it).
 *
 * The memo is read into a table of the kernel's own, keyed by address (no int object made per
 * object copied or met, no dict insertion): what the kernel copies goes into that table, and into
 * the Python memo only before a Python copier is called (it reads the memo) and at the end of
 * copy(); copy_detached() does not write it at the end (its caller throws it away), and may take a
 * base: a dict read as part of the memo (the memo's own entries first), given again and again
 * unchanged, whose table is kept from one call to the next while the dict is the same object of the
 * same size and version (at most 8 kept). After a Python copier returns, what it added to the memo
 * is read into the table (copiers only add entries, as copy.deepcopy's do: an entry is never
 * replaced). The slot of an address is taken from 24 bits of its hash: tables beyond 2^24 slots
 * stay right, only slower. copy_detached() may also be given the shapes of its copy (a node never
 * resized shares more: runtime_copy.SHARE_UNRESIZED); the copies a Python copier makes within it
 * inherit them. Plain objects with a managed __dict__ are allocated bare (set_bare: tp_alloc, no
 * inline values, since each is given its own __dict__ at once).
 *
 * Not an upstream module: a kubetwin fast path for the simulation of many copies of a node.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

static PyObject *atoms = NULL;    /* set of types whose instances are shared */
static PyObject *plain = NULL;    /* set of plain object types copied here */
static PyObject *owns = NULL;     /* dict: type -> its own copier, called as copier(x, memo) */
static PyObject *immutable = NULL; /* dict: id -> tuple or frozenset every copy shares */
static PyObject *fallback = NULL; /* the Python copier: fallback(x, memo) */
static PyObject *keep = NULL;     /* set of types whose instances are shared (unless the memo has a copy) */
static PyObject *shapes = NULL;   /* dict: type -> (share: bool, names: frozenset) for objects copied
                                     with every attribute shared as it is, but names (share), or
                                     every attribute copied, but names shared (or their copy met) */
static PyObject *shapes_now = NULL; /* the shapes of the copy under way (borrowed): shapes, or those a
                                       detached copy was given (copies called within it inherit them) */
static PyObject *slotted = NULL;  /* dict: type -> tuple of its slot names */
static PyObject *empty = NULL;    /* () */
static PyObject *remember = NULL; /* remember(t): a tuple each of whose items is its own copy (the
                                     Python copier's _immutable) */

/* one copy's memo: the Python memo, and the kernel's table of it (address -> copy, strong
   references, in insertion order; an open-addressing index over the entries) */
typedef struct {
    void *key;
    PyObject *val;
} Entry;

typedef struct Memo_ {
    PyObject *memo;          /* the Python memo (a dict: id -> copy) */
    Entry *ents;             /* the entries, in insertion order */
    Py_ssize_t n, cap;       /* entries used, allocated */
    Py_ssize_t *index;       /* slot -> entry number, -1: free */
    Py_ssize_t mask;         /* slots - 1 (a power of two) */
    Py_ssize_t flushed;      /* entries [0, flushed) are in the Python memo */
    Py_ssize_t memo_size;    /* the Python memo's size when last read or written */
    struct Memo_ *base;      /* a table read as part of the memo (copy_detached's base), or NULL */
    int base_given;          /* the base's entries written to the Python memo already */
} Memo;

/* Fibonacci hashing of an address: the top bits of its product with 2^64 / phi */
static inline Py_ssize_t slot_of(void *p, Py_ssize_t mask) {
    uint64_t h = ((uint64_t)(uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL;
    return (Py_ssize_t)(h >> 40) & mask;   /* 24 bits: tables of at most 2^24 slots */
}

/* the copy of p in this table alone (borrowed), or NULL */
static inline PyObject *table_get(Memo *m, void *p) {
    Py_ssize_t i = slot_of(p, m->mask);
    for (;;) {
        Py_ssize_t e = m->index[i];
        if (e < 0) return NULL;
        if (m->ents[e].key == p) return m->ents[e].val;
        i = (i + 1) & m->mask;
    }
}

/* the copy of p in the memo (borrowed): the table, then its base; or NULL */
static inline PyObject *memo_get(Memo *m, void *p) {
    PyObject *got = table_get(m, p);
    if (got == NULL && m->base != NULL) got = table_get(m->base, p);
    return got;
}

static int memo_grow(Memo *m) {
    Py_ssize_t slots = (m->mask + 1) * 2;
    Py_ssize_t *index = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)slots);
    Entry *ents = PyMem_Realloc(m->ents, sizeof(Entry) * (size_t)(slots / 2));
    if (index == NULL || ents == NULL) {
        PyMem_Free(index);
        if (ents != NULL) m->ents = ents;
        PyErr_NoMemory();
        return -1;
    }
    m->ents = ents;
    m->cap = slots / 2;
    memset(index, 0xff, sizeof(Py_ssize_t) * (size_t)slots);   /* -1: free */
    m->mask = slots - 1;
    for (Py_ssize_t e = 0; e < m->n; e++) {
        Py_ssize_t i = slot_of(m->ents[e].key, m->mask);
        while (index[i] >= 0) i = (i + 1) & m->mask;
        index[i] = e;
    }
    PyMem_Free(m->index);
    m->index = index;
    return 0;
}

/* p -> val (a new strong reference kept); an entry already there is replaced */
static int memo_put(Memo *m, void *p, PyObject *val) {
    Py_ssize_t i = slot_of(p, m->mask);
    for (;;) {
        Py_ssize_t e = m->index[i];
        if (e < 0) break;
        if (m->ents[e].key == p) {
            Py_INCREF(val);
            Py_SETREF(m->ents[e].val, val);
            return 0;
        }
        i = (i + 1) & m->mask;
    }
    if (m->n >= m->cap) {   /* at most half the slots used */
        if (memo_grow(m) < 0) return -1;
        i = slot_of(p, m->mask);
        while (m->index[i] >= 0) i = (i + 1) & m->mask;
    }
    Py_INCREF(val);
    m->ents[m->n].key = p;
    m->ents[m->n].val = val;
    m->index[i] = m->n++;
    return 0;
}

/* read the Python memo's entries (int keys: ids) into the table */
static int memo_read(Memo *m) {
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(m->memo, &pos, &k, &v)) {
        if (!PyLong_CheckExact(k)) continue;
        void *p = PyLong_AsVoidPtr(k);
        if (p == NULL && PyErr_Occurred()) {
            PyErr_Clear();   /* not an address: no object of the graph has it */
            continue;
        }
        if (memo_put(m, p, v) < 0) return -1;
    }
    m->flushed = m->n;
    m->memo_size = PyDict_GET_SIZE(m->memo);
    return 0;
}

static void memo_free(Memo *m) {
    for (Py_ssize_t e = 0; e < m->n; e++) Py_DECREF(m->ents[e].val);
    PyMem_Free(m->ents);
    PyMem_Free(m->index);
    m->ents = NULL;
    m->index = NULL;
    m->n = 0;
}

static int memo_init(Memo *m, PyObject *memo) {
    Py_ssize_t slots = 1024;   /* a runtime node's copy: a few hundred objects */
    while (slots < 4 * PyDict_GET_SIZE(memo)) slots *= 2;
    m->memo = memo;
    m->base = NULL;
    m->base_given = 0;
    m->n = 0;
    m->cap = slots / 2;
    m->flushed = 0;
    m->mask = slots - 1;
    m->ents = PyMem_Malloc(sizeof(Entry) * (size_t)m->cap);
    m->index = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)slots);
    if (m->ents == NULL || m->index == NULL) {
        PyMem_Free(m->ents);
        PyMem_Free(m->index);
        PyErr_NoMemory();
        return -1;
    }
    memset(m->index, 0xff, sizeof(Py_ssize_t) * (size_t)slots);   /* -1: free */
    if (memo_read(m) < 0) {
        memo_free(m);
        return -1;
    }
    return 0;
}

/* the table's entries not yet in the Python memo written there (and the base's, the first time) */
static int memo_flush(Memo *m) {
    if (m->base != NULL && !m->base_given) {
        m->base_given = 1;
        if (PyDict_Merge(m->memo, m->base->memo, 0) < 0) return -1;   /* the memo's own entries kept */
    }
    for (; m->flushed < m->n; m->flushed++) {
        Entry *e = &m->ents[m->flushed];
        PyObject *key = PyLong_FromVoidPtr(e->key);
        if (key == NULL) return -1;
        int r = PyDict_SetItem(m->memo, key, e->val);
        Py_DECREF(key);
        if (r < 0) return -1;
    }
    m->memo_size = PyDict_GET_SIZE(m->memo);
    return 0;
}

/* a Python copier's answer for x: the memo flushed before, what the copier added read after */
static PyObject *call_python(Memo *m, PyObject *copier, PyObject *x) {
    if (memo_flush(m) < 0) return NULL;
    PyObject *out = PyObject_CallFunctionObjArgs(copier, x, m->memo, NULL);
    if (out == NULL) return NULL;
    if (PyDict_GET_SIZE(m->memo) != m->memo_size && memo_read(m) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *copy_new(PyObject *x, Memo *memo);

/* a new reference to the copy of v */
static PyObject *copy_value(PyObject *v, Memo *memo) {
    int a = PySet_Contains(atoms, (PyObject *)Py_TYPE(v));
    if (a < 0) return NULL;
    if (a) {
        Py_INCREF(v);
        return v;
    }
    PyObject *got = memo_get(memo, v);
    if (got != NULL) {
        Py_INCREF(got);
        return got;
    }
    if (Py_EnterRecursiveCall(" while copying a runtime node")) return NULL;   /* deep graphs: RecursionError */
    PyObject *out = copy_new(v, memo);
    Py_LeaveRecursiveCall();
    return out;
}

/* replace in `d` (a copy of a dict or of an object's __dict__, made here and reachable by nothing
   but the memo) every value that is not an atom by its copy: its values are replaced while it is
   walked, its keys stay as they are */
static int replace_values(PyObject *d, Memo *memo) {
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
static PyObject *memo_or_self(PyObject *v, Memo *memo) {
    int a = PySet_Contains(atoms, (PyObject *)Py_TYPE(v));
    if (a < 0) return NULL;
    if (!a) {
        PyObject *got = memo_get(memo, v);
        if (got != NULL) v = got;
    }
    Py_INCREF(v);
    return v;
}

/* allocate instances of types with a managed __dict__ bare (set_bare): object.__new__(t) without the
   inline attribute values it gives them (CPython 3.11: a values array allocated, then turned into a
   dict and freed again when the object is given its own __dict__ — what new_with_dict does at once);
   the object is the one object.__new__ makes but for those values: its dict and values pointers are
   NULL, which is what CPython leaves after a __dict__ is read and cleared, and GenericSetDict fills */
static int bare = 1;

static PyObject *new_bare(PyTypeObject *t) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    if (bare && (t->tp_flags & Py_TPFLAGS_MANAGED_DICT) && !(t->tp_flags & Py_TPFLAGS_IS_ABSTRACT))
        return t->tp_alloc(t, 0);
#endif
    return PyBaseObject_Type.tp_new(t, empty, NULL);   /* object.__new__(t) */
}

/* a new object of x's type, put in the memo, holding a copy of x's __dict__ as its own (*nd: that
   copy, a new reference, for the caller to patch); NULL on error, *nd then NULL */
static PyObject *new_with_dict(PyObject *x, Memo *memo, PyObject **nd) {
    *nd = NULL;
    PyObject *new = new_bare(Py_TYPE(x));
    if (new == NULL) return NULL;
    if (memo_put(memo, x, new) < 0) goto fail;
    PyObject *state = PyObject_GenericGetDict(x, NULL);
    if (state == NULL) goto fail;
    *nd = PyDict_Copy(state);
    Py_DECREF(state);
    if (*nd == NULL || PyObject_GenericSetDict(new, *nd, NULL) < 0) goto fail;
    return new;
fail:
    Py_CLEAR(*nd);
    Py_DECREF(new);
    return NULL;
}

/* a plain object with a shape: its dict copied; share true: the attributes named copied, the others
   shared as they are (what the Python copiers of the records and messages do: no memo read);
   share false: the attributes not named copied, the named ones shared (or their copy met already) */
static PyObject *copy_shaped(PyObject *x, Memo *memo, PyObject *shape) {
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != 2 || !PyAnySet_Check(PyTuple_GET_ITEM(shape, 1))) {
        PyErr_SetString(PyExc_TypeError, "a shape is (share: bool, names: frozenset)");
        return NULL;
    }
    int share = PyObject_IsTrue(PyTuple_GET_ITEM(shape, 0));
    PyObject *names = PyTuple_GET_ITEM(shape, 1);
    if (share < 0) return NULL;
    PyObject *nd;
    PyObject *new = new_with_dict(x, memo, &nd);
    if (new == NULL) return NULL;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    if (share) {   /* only the attributes named copied: the others stay as the dict's copy has them */
        Py_hash_t hash;
        while (_PySet_NextEntry(names, &pos, &k, &hash)) {
            v = PyDict_GetItemWithError(nd, k);
            if (v == NULL) {
                if (PyErr_Occurred()) goto fail;
                continue;
            }
            Py_INCREF(v);
            PyObject *c = copy_value(v, memo);
            int r = c == NULL ? -1 : (c == v ? 0 : PyDict_SetItem(nd, k, c));
            Py_XDECREF(c);
            Py_DECREF(v);
            if (r < 0) goto fail;
        }
        Py_DECREF(nd);
        return new;
    }
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

/* the offsets of a slotted type's slots (a bytes object of Py_ssize_t), or None where a name is not a
   plain object slot of its own (a member descriptor of type T_OBJECT_EX, writable): read and written
   by name then; kept per type (direct, set_direct) */
static PyObject *slot_offsets = NULL;   /* dict: type -> bytes of offsets, or None */
static int direct = 1;

static PyObject *offsets_of(PyTypeObject *t, PyObject *names) {
    PyObject *got = PyDict_GetItemWithError(slot_offsets, (PyObject *)t);
    if (got != NULL || PyErr_Occurred()) return got;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(Py_ssize_t));
    if (out == NULL) return NULL;
    Py_ssize_t *offs = (Py_ssize_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = _PyType_Lookup(t, PyTuple_GET_ITEM(names, i));   /* borrowed */
        PyMemberDef *m = d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type) ? ((PyMemberDescrObject *)d)->d_member : NULL;
        if (m == NULL || m->type != T_OBJECT_EX || (m->flags & READONLY) || m->offset <= 0
                || (size_t)m->offset + sizeof(PyObject *) > (size_t)t->tp_basicsize) {
            Py_SETREF(out, Py_NewRef(Py_None));
            break;
        }
        offs[i] = m->offset;
    }
    int r = PyDict_SetItem(slot_offsets, (PyObject *)t, out);
    Py_DECREF(out);
    return r < 0 ? NULL : out;   /* the dict holds it */
}

/* an object with slots: each slot set read and written by name (or at its offset, the member
   descriptor's own reading and writing), unset ones left unset */
static PyObject *copy_slotted(PyObject *x, Memo *memo, PyObject *names) {
    if (!PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "slot names are a tuple");
        return NULL;
    }
    PyObject *new = PyBaseObject_Type.tp_new(Py_TYPE(x), empty, NULL);
    if (new == NULL) return NULL;
    if (memo_put(memo, x, new) < 0) {
        Py_DECREF(new);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *offsets = direct ? offsets_of(Py_TYPE(x), names) : Py_None;
    if (offsets == NULL) goto fail;
    if (offsets != Py_None) {   /* each slot at its offset: NULL is unset (T_OBJECT_EX) */
        const Py_ssize_t *offs = (const Py_ssize_t *)PyBytes_AS_STRING(offsets);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = *(PyObject **)((char *)x + offs[i]);
            if (v == NULL) continue;
            Py_INCREF(v);
            PyObject *c = copy_value(v, memo);
            Py_DECREF(v);
            if (c == NULL) goto fail;
            PyObject **slot = (PyObject **)((char *)new + offs[i]);
            Py_XSETREF(*slot, c);   /* the new object's slot: NULL until now (unless a cycle set it) */
        }
        return new;
    }
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

/* whether x (a tuple or frozenset) is remembered as immutable (1), not (0), or an error (-1) */
static int is_immutable(PyObject *x) {
    PyObject *key = PyLong_FromVoidPtr(x);
    if (key == NULL) return -1;
    int i = PyDict_Contains(immutable, key);
    Py_DECREF(key);
    return i;
}

/* a tuple not remembered as immutable: its items copied; itself when each item is its own copy
   (then handed to remember), else a new tuple; in the memo after its items (a cycle through it
   copied meanwhile: that copy) */
static PyObject *copy_tuple(PyObject *x, Memo *memo) {
    Py_ssize_t n = PyTuple_GET_SIZE(x);
    PyObject *items = PyTuple_New(n);
    if (items == NULL) return NULL;
    int same = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(x, i);
        PyObject *c = copy_value(v, memo);
        if (c == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        same &= c == v;
        PyTuple_SET_ITEM(items, i, c);
    }
    PyObject *got = memo_get(memo, x);
    if (got != NULL) {
        Py_DECREF(items);
        Py_INCREF(got);
        return got;
    }
    PyObject *out;
    if (same) {
        Py_DECREF(items);
        PyObject *r = PyObject_CallOneArg(remember, x);
        if (r == NULL) return NULL;
        Py_DECREF(r);
        Py_INCREF(x);
        out = x;
    } else {
        out = items;
    }
    if (memo_put(memo, x, out) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* x: not an atom, not in the memo */
static PyObject *copy_new(PyObject *x, Memo *memo) {
    PyTypeObject *t = Py_TYPE(x);
    if (t == &PyDict_Type) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(x, &pos, &k, &v)) {   /* keys: atoms, or tuples remembered as immutable */
            int a = PySet_Contains(atoms, (PyObject *)Py_TYPE(k));
            if (a < 0) return NULL;
            if (!a && (Py_IS_TYPE(k, &PyTuple_Type) || Py_IS_TYPE(k, &PyFrozenSet_Type))) {
                a = is_immutable(k);
                if (a < 0) return NULL;
            }
            if (!a) return call_python(memo, fallback, x);
        }
        PyObject *d = PyDict_Copy(x);
        if (d == NULL) return NULL;
        if (memo_put(memo, x, d) < 0 || replace_values(d, memo) < 0) {
            Py_DECREF(d);
            return NULL;
        }
        return d;
    }
    if (t == &PyList_Type) {
        PyObject *l = PyList_New(0);
        if (l == NULL) return NULL;
        if (memo_put(memo, x, l) < 0) {
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
            int i = is_immutable(x);
            if (i < 0) return NULL;
            if (i) {
                Py_INCREF(x);
                return x;
            }
            if (t == &PyTuple_Type && remember != NULL) return copy_tuple(x, memo);
        } else {
            int k = PySet_Contains(keep, (PyObject *)t);
            if (k < 0) return NULL;
            if (k) {
                Py_INCREF(x);
                return x;
            }
            PyObject *shape = PyDict_GetItemWithError(shapes_now, (PyObject *)t);
            if (shape != NULL) return copy_shaped(x, memo, shape);
            if (PyErr_Occurred()) return NULL;
            PyObject *names = PyDict_GetItemWithError(slotted, (PyObject *)t);
            if (names != NULL) return copy_slotted(x, memo, names);
            if (PyErr_Occurred()) return NULL;
            PyObject *own = PyDict_GetItemWithError(owns, (PyObject *)t);
            if (own != NULL) return call_python(memo, own, x);
            if (PyErr_Occurred()) return NULL;
        }
        return call_python(memo, fallback, x);
    }
    PyObject *nd;
    PyObject *new = new_with_dict(x, memo, &nd);   /* t is type(x) */
    if (new == NULL) return NULL;
    int r = replace_values(nd, memo);
    Py_DECREF(nd);
    if (r < 0) {
        Py_DECREF(new);
        return NULL;
    }
    return new;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *a, *p, *o, *im, *f, *kp, *sh, *sl, *rm = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OO!O!O!|O", &PySet_Type, &a, &PySet_Type, &p, &PyDict_Type, &o, &PyDict_Type,
                          &im, &f, &PySet_Type, &kp, &PyDict_Type, &sh, &PyDict_Type, &sl, &rm))
        return NULL;
    Py_XINCREF(rm);
    Py_XSETREF(remember, rm);
    Py_INCREF(kp);
    Py_INCREF(sh);
    Py_INCREF(sl);
    Py_XSETREF(keep, kp);
    Py_XSETREF(shapes, sh);
    shapes_now = shapes;
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

/* the copy of args[0] with the memo args[1]; the memo filled with what was copied (flush) or left
   as given */
static PyObject *copy_with(PyObject *const *args, Py_ssize_t nargs, int flush, Memo *base, PyObject *given) {
    if (nargs != 2 || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "copy(x, memo: dict)");
        return NULL;
    }
    if (atoms == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    Memo memo;
    if (memo_init(&memo, args[1]) < 0) return NULL;
    memo.base = base;
    PyObject *before = shapes_now;
    if (given != NULL) shapes_now = given;   /* the caller keeps it alive for the call */
    PyObject *out = copy_value(args[0], &memo);
    shapes_now = before;
    if (out != NULL && flush && memo_flush(&memo) < 0) Py_CLEAR(out);
    memo_free(&memo);
    return out;
}

static PyObject *copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return copy_with(args, nargs, 1, NULL, NULL);
}

/* the tables of the bases met last (a base: a dict of the memo given again and again, unchanged;
   its table is kept while the dict is the same object, of the same size and version) */
#define BASES 8
static Memo bases[BASES];
static PyObject *base_dicts[BASES];   /* strong references: an address never names another dict */
static Py_ssize_t base_sizes[BASES];
static uint64_t base_versions[BASES];
static int next_base = 0;

static uint64_t dict_version(PyObject *d) {
#if PY_VERSION_HEX < 0x030C0000
    return ((PyDictObject *)d)->ma_version_tag;
#else
    (void)d;
    return 0;   /* no version: the size alone (the base is never changed in place) */
#endif
}

static int base_busy[BASES];   /* copies under way reading each table (not replaced meanwhile) */

/* the table of d (its slot number), kept or made now; -1 with no error: every slot busy */
static int base_table(PyObject *d) {
    for (int i = 0; i < BASES; i++)
        if (base_dicts[i] == d && base_sizes[i] == PyDict_GET_SIZE(d) && base_versions[i] == dict_version(d))
            return i;
    int i = next_base, tried = 0;
    while (base_busy[i]) {
        if (++tried == BASES) return -1;
        i = (i + 1) % BASES;
    }
    next_base = (i + 1) % BASES;
    if (base_dicts[i] != NULL) {
        memo_free(&bases[i]);
        Py_CLEAR(base_dicts[i]);
    }
    if (memo_init(&bases[i], d) < 0) return -2;
    Py_INCREF(d);
    base_dicts[i] = d;
    base_sizes[i] = PyDict_GET_SIZE(d);
    base_versions[i] = dict_version(d);
    return i;
}

static PyObject *copy_detached(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *given = NULL;   /* shapes for this copy (a 4th argument), else the configured ones */
    if (nargs == 4) {
        if (!PyDict_CheckExact(args[3])) {
            PyErr_SetString(PyExc_TypeError, "copy_detached(x, memo: dict, base: dict, shapes: dict)");
            return NULL;
        }
        given = args[3];
        nargs = 3;
    }
    if (nargs == 3 && args[2] == Py_None) nargs = 2;   /* no base */
    if (nargs == 3) {
        if (!PyDict_CheckExact(args[2])) {
            PyErr_SetString(PyExc_TypeError, "copy_detached(x, memo: dict, base: dict)");
            return NULL;
        }
        int i = base_table(args[2]);
        if (i == -2) return NULL;
        if (i == -1) {   /* every table busy (copies within copies): the base merged into the memo */
            if (PyDict_Merge(args[1], args[2], 0) < 0) return NULL;
            return copy_with(args, 2, 0, NULL, given);
        }
        base_busy[i]++;
        PyObject *out = copy_with(args, 2, 0, &bases[i], given);
        base_busy[i]--;
        return out;
    }
    return copy_with(args, nargs, 0, NULL, given);
}

/* set_bare(on): new objects with a managed __dict__ allocated bare (on, the default) or through
   object.__new__ (A/B runs); returns whether bare allocation is possible in this build */
static PyObject *set_bare(PyObject *self, PyObject *on) {
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
    bare = v;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

/* set_direct(on): slotted objects' slots read and written at their offsets (on, the default) or by
   name (A/B runs) */
static PyObject *set_direct(PyObject *self, PyObject *on) {
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
    direct = v;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"set_direct", set_direct, METH_O, "set_direct(on): slots copied at their offsets"},
    {"set_bare", set_bare, METH_O, "set_bare(on): new objects with a managed __dict__ allocated without inline values"},
    {"configure", configure, METH_VARARGS, "configure(atoms, plain, owns, immutable, fallback, keep, shapes, slotted[, remember])"},
    {"copy", (PyCFunction)(void (*)(void))copy, METH_FASTCALL, "copy(x, memo): the copy of x (the memo filled)"},
    {"copy_detached", (PyCFunction)(void (*)(void))copy_detached, METH_FASTCALL,
     "copy_detached(x, memo[, base[, shapes]]): the copy of x, the memo left as given (base: a dict read as part "
     "of it; shapes: the shapes of this copy)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_graphcopy", NULL, -1, methods};

/* the interface this build speaks (runtime_copy checks it: a build older than the Python code is
   not used, the Python twin runs) */
#define INTERFACE 5

PyMODINIT_FUNC PyInit__graphcopy(void) {
    empty = PyTuple_New(0);
    if (empty == NULL) return NULL;
    slot_offsets = PyDict_New();
    if (slot_offsets == NULL) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "INTERFACE", INTERFACE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
