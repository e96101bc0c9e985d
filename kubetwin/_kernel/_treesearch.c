/* The balloons policy's tree search (resizeCpusMaxLocalSet) on CPU masks, in C: the answer of
 * kubetwin.runtime.policies.balloons.fast.FlatTree._search_masks (its twin, which the tests hold
 * it equal to) for a flat tree that nests, each node's children consecutive one level down.
 *
 * build(masks, children, ranks, only_child) makes a tree (a capsule) from a FlatTree's tuples;
 * search(tree, balancing, current, free, delta) gives the mask of the branch picked (one of the
 * tree's own ints), -1 when no branch has room. Steps, as the twin's: the deepest level with a
 * node holding the change (delta > 0: of the free CPUs, else of the current ones); of its nodes
 * with room, top down from the root, those whose ancestors and themselves hold the most (growing)
 * or the fewest (shrinking) current CPUs, then the most (growing with balancing) or the fewest
 * free CPUs; then the smallest name's rank (growing; the first of equals) or the largest
 * (shrinking).
 *
 * Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
 * cmd/plugins/balloons/policy/cputree.go (resizeCpusMaxLocalSet, sorterAllocate, sorterRelease).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define CAPSULE "kubetwin._kernel._treesearch.Tree"

typedef struct {
    int depths;        /* levels, the root's first */
    int words;         /* 64-bit words a mask takes */
    int nodes;         /* nodes in all */
    int *start;        /* per depth: its first node (nodes numbered level by level) */
    int *count;        /* per depth: its nodes */
    int *size;         /* per depth: the CPU count of its largest node */
    char *only;        /* per depth: each node its parent's only child with the parent's CPUs */
    int *first;        /* per node: its first child's number (one level down) */
    int *kids;         /* per node: its children */
    int *rank;         /* per node: its name's rank */
    uint64_t *mask;    /* per node: its CPUs, words words */
    PyObject *ints;    /* tuple: per node its mask as the FlatTree's int */
} Tree;

static void tree_free(Tree *t) {
    if (t == NULL) return;
    PyMem_Free(t->start); PyMem_Free(t->count); PyMem_Free(t->size); PyMem_Free(t->only);
    PyMem_Free(t->first); PyMem_Free(t->kids); PyMem_Free(t->rank); PyMem_Free(t->mask);
    Py_XDECREF(t->ints);
    PyMem_Free(t);
}

static void capsule_free(PyObject *cap) {
    tree_free((Tree *)PyCapsule_GetPointer(cap, CAPSULE));
}

static int popcount(const uint64_t *m, const uint64_t *x, int words) {
    int n = 0;
    for (int w = 0; w < words; w++) n += __builtin_popcountll(m[w] & x[w]);
    return n;
}

static int meets(const uint64_t *m, const uint64_t *x, int words) {
    for (int w = 0; w < words; w++)
        if (m[w] & x[w]) return 1;
    return 0;
}

/* a non-negative int's low words*64 bits into out (bits above them dropped: every use of the
 * value is through a node's mask, or its being zero, which the caller tests on the int) */
static int to_words(PyObject *v, uint64_t *out, int words) {
    if (!PyLong_Check(v) || _PyLong_Sign(v) < 0) {
        PyErr_SetString(PyExc_ValueError, "a CPU mask must be a non-negative int");
        return -1;
    }
    size_t bits = _PyLong_NumBits(v);
    if (bits == (size_t)-1 && PyErr_Occurred()) return -1;
    if (bits <= (size_t)words * 64) {
        return _PyLong_AsByteArray((PyLongObject *)v, (unsigned char *)out, (size_t)words * 8, 1, 0);
    }
    size_t nbytes = (bits + 7) / 8;
    unsigned char *buf = PyMem_Malloc(nbytes);
    if (buf == NULL) { PyErr_NoMemory(); return -1; }
    if (_PyLong_AsByteArray((PyLongObject *)v, buf, nbytes, 1, 0) < 0) { PyMem_Free(buf); return -1; }
    memcpy(out, buf, (size_t)words * 8);
    PyMem_Free(buf);
    return 0;
}

static PyObject *build(PyObject *self, PyObject *args) {
    PyObject *masks, *children, *ranks, *only;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyTuple_Type, &masks, &PyTuple_Type, &children, &PyTuple_Type, &ranks,
                          &PyTuple_Type, &only))
        return NULL;
    Py_ssize_t depths = PyTuple_GET_SIZE(masks);
    if (depths < 1 || PyTuple_GET_SIZE(children) != depths || PyTuple_GET_SIZE(ranks) != depths
            || PyTuple_GET_SIZE(only) != depths || depths > 1024) {
        PyErr_SetString(PyExc_ValueError, "a flat tree's tuples must have one entry per depth");
        return NULL;
    }
    Tree *t = PyMem_Calloc(1, sizeof(Tree));
    if (t == NULL) return PyErr_NoMemory();
    t->depths = (int)depths;
    Py_ssize_t nodes = 0;
    size_t bits = 1;
    for (Py_ssize_t d = 0; d < depths; d++) {
        PyObject *level = PyTuple_GET_ITEM(masks, d);
        if (!PyTuple_Check(level) || PyTuple_GET_SIZE(level) < 1) {
            PyErr_SetString(PyExc_ValueError, "a level must be a non-empty tuple of masks");
            goto fail;
        }
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(level); k++) {
            PyObject *m = PyTuple_GET_ITEM(level, k);
            if (!PyLong_Check(m) || _PyLong_Sign(m) < 0) {
                PyErr_SetString(PyExc_ValueError, "a CPU mask must be a non-negative int");
                goto fail;
            }
            size_t b = _PyLong_NumBits(m);
            if (b == (size_t)-1 && PyErr_Occurred()) goto fail;
            if (b > bits) bits = b;
        }
        nodes += PyTuple_GET_SIZE(level);
    }
    if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(masks, 0)) != 1) {
        PyErr_SetString(PyExc_ValueError, "a tree has one root");
        goto fail;
    }
    t->nodes = (int)nodes;
    t->words = (int)((bits + 63) / 64);
    t->start = PyMem_Calloc(depths, sizeof(int));
    t->count = PyMem_Calloc(depths, sizeof(int));
    t->size = PyMem_Calloc(depths, sizeof(int));
    t->only = PyMem_Calloc(depths, 1);
    t->first = PyMem_Calloc(nodes, sizeof(int));
    t->kids = PyMem_Calloc(nodes, sizeof(int));
    t->rank = PyMem_Calloc(nodes, sizeof(int));
    t->mask = PyMem_Calloc((size_t)nodes * t->words, sizeof(uint64_t));
    t->ints = PyTuple_New(nodes);
    if (!t->start || !t->count || !t->size || !t->only || !t->first || !t->kids || !t->rank || !t->mask || !t->ints) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto fail;
    }
    int n = 0;
    for (int d = 0; d < t->depths; d++) {
        PyObject *level = PyTuple_GET_ITEM(masks, d), *kids = PyTuple_GET_ITEM(children, d);
        PyObject *rk = PyTuple_GET_ITEM(ranks, d);
        Py_ssize_t c = PyTuple_GET_SIZE(level);
        if (!PyTuple_Check(kids) || PyTuple_GET_SIZE(kids) != c || !PyTuple_Check(rk) || PyTuple_GET_SIZE(rk) != c) {
            PyErr_SetString(PyExc_ValueError, "children and ranks must have one entry per node");
            goto fail;
        }
        int o = PyObject_IsTrue(PyTuple_GET_ITEM(only, d));
        if (o < 0) goto fail;
        t->only[d] = (char)o;
        t->start[d] = n;
        t->count[d] = (int)c;
        int next = d + 1 < t->depths ? (int)PyTuple_GET_SIZE(PyTuple_GET_ITEM(masks, d + 1)) : 0;
        for (Py_ssize_t k = 0; k < c; k++, n++) {
            PyObject *m = PyTuple_GET_ITEM(level, k);
            if (to_words(m, t->mask + (size_t)n * t->words, t->words) < 0) goto fail;
            Py_INCREF(m);
            PyTuple_SET_ITEM(t->ints, n, m);
            int size = popcount(t->mask + (size_t)n * t->words, t->mask + (size_t)n * t->words, t->words);
            if (size > t->size[d]) t->size[d] = size;
            long r = PyLong_AsLong(PyTuple_GET_ITEM(rk, k));
            if (r == -1 && PyErr_Occurred()) goto fail;
            t->rank[n] = (int)r;
            PyObject *ks = PyTuple_GET_ITEM(kids, k);
            if (!PyTuple_Check(ks)) {
                PyErr_SetString(PyExc_ValueError, "a node's children must be a tuple");
                goto fail;
            }
            Py_ssize_t nk = PyTuple_GET_SIZE(ks);
            t->kids[n] = (int)nk;
            t->first[n] = 0;
            for (Py_ssize_t j = 0; j < nk; j++) {   /* consecutive positions one level down */
                long pos = PyLong_AsLong(PyTuple_GET_ITEM(ks, j));
                if (pos == -1 && PyErr_Occurred()) goto fail;
                if (j == 0) t->first[n] = (int)pos;
                if (pos != t->first[n] + j || pos < 0 || pos >= next) {
                    PyErr_SetString(PyExc_ValueError, "a node's children must be consecutive positions one level down");
                    goto fail;
                }
            }
        }
    }
    for (int d = 0; d + 1 < t->depths; d++)   /* positions to node numbers */
        for (int k = 0; k < t->count[d]; k++) t->first[t->start[d] + k] += t->start[d + 1];
    PyObject *cap = PyCapsule_New(t, CAPSULE, capsule_free);
    if (cap == NULL) goto fail;
    return cap;
fail:
    tree_free(t);
    return NULL;
}

/* the twin's _best_nodes: of the nodes at depth meeting cand, those whose counts of cpus in their
 * ancestors and themselves (root first) are the largest (most) or the smallest; into keep (node
 * numbers, in pre-order), their number returned. cpus_any: cpus is not zero. */
static int best_nodes(const Tree *t, const uint64_t *cand, int depth, const uint64_t *cpus, int cpus_any, int most,
                      int *keep, int *kids) {
    int words = t->words, n = 1;
    keep[0] = 0;
    for (int d = 1; d <= depth; d++) {
        if (t->only[d]) {   /* each kept node's one child, equal to it */
            for (int i = 0; i < n; i++) keep[i] = t->first[keep[i]];
            continue;
        }
        int m = 0;
        for (int i = 0; i < n; i++) {
            int p = keep[i];
            for (int k = t->first[p]; k < t->first[p] + t->kids[p]; k++)
                if (meets(t->mask + (size_t)k * words, cand, words)) kids[m++] = k;
        }
        if (m > 1 && cpus_any) {
            int best = -1;
            for (int i = 0; i < m; i++) {
                int c = popcount(t->mask + (size_t)kids[i] * words, cpus, words);
                if (best < 0 || (most ? c > best : c < best)) best = c;
            }
            n = 0;
            for (int i = 0; i < m; i++)
                if (popcount(t->mask + (size_t)kids[i] * words, cpus, words) == best) keep[n++] = kids[i];
        } else {
            memcpy(keep, kids, sizeof(int) * (size_t)m);
            n = m;
        }
    }
    return n;
}

static PyObject *search(PyObject *self, PyObject *args) {
    PyObject *cap, *cur_obj, *free_obj;
    int balancing;
    long delta;
    if (!PyArg_ParseTuple(args, "OpOOl", &cap, &balancing, &cur_obj, &free_obj, &delta)) return NULL;
    Tree *t = (Tree *)PyCapsule_GetPointer(cap, CAPSULE);
    if (t == NULL) return NULL;
    int words = t->words;
    uint64_t stack[4 * 8];
    int keep_stack[2 * 512];
    uint64_t *buf = words <= 8 ? stack : PyMem_Malloc(sizeof(uint64_t) * 4 * (size_t)words);
    int *keep = t->nodes <= 512 ? keep_stack : PyMem_Malloc(sizeof(int) * 2 * (size_t)t->nodes);
    PyObject *out = NULL;
    if (buf == NULL || keep == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t *current = buf, *free_ = buf + words, *cand = buf + 2 * words, *cand2 = buf + 3 * words;
    if (to_words(cur_obj, current, words) < 0 || to_words(free_obj, free_, words) < 0) goto done;
    int cur_any = PyObject_IsTrue(cur_obj), free_any = PyObject_IsTrue(free_obj);
    if (cur_any < 0 || free_any < 0) goto done;
    int grow = delta > 0;
    long need = grow ? delta : -delta;
    const uint64_t *within = grow ? free_ : current;
    int depth = t->depths - 1, found = 0;
    for (; depth >= 0; depth--) {
        if (t->size[depth] < need) continue;
        memset(cand, 0, sizeof(uint64_t) * (size_t)words);
        for (int k = t->start[depth]; k < t->start[depth] + t->count[depth]; k++) {
            const uint64_t *m = t->mask + (size_t)k * words;
            if (popcount(m, within, words) >= need) {
                for (int w = 0; w < words; w++) cand[w] |= m[w];
                found = 1;
            }
        }
        if (found) break;
    }
    if (!found) {
        out = PyLong_FromLong(-1);
        goto done;
    }
    int *kept = keep, *kids = keep + t->nodes;
    /* the twin's _best_masks: the CPUs of the nodes with the best counts of the current CPUs */
    if (cur_any) {
        int n = best_nodes(t, cand, depth, current, 1, grow, kept, kids);
        memset(cand2, 0, sizeof(uint64_t) * (size_t)words);
        for (int i = 0; i < n; i++)
            for (int w = 0; w < words; w++) cand2[w] |= t->mask[(size_t)kept[i] * words + w];
    } else {
        memcpy(cand2, cand, sizeof(uint64_t) * (size_t)words);
    }
    int n = best_nodes(t, cand2, depth, free_, free_any, grow && balancing, kept, kids);
    int pick = -1;
    for (int i = 0; i < n; i++) {
        int k = kept[i];
        if (pick < 0 || (grow ? t->rank[k] < t->rank[pick] : t->rank[k] > t->rank[pick])) pick = k;
    }
    if (pick < 0) {   /* not reached: a level with room keeps a node */
        PyErr_SetString(PyExc_RuntimeError, "tree search kept no node");
        goto done;
    }
    out = PyTuple_GET_ITEM(t->ints, pick);
    Py_INCREF(out);
done:
    if (buf != stack) PyMem_Free(buf);
    if (keep != keep_stack) PyMem_Free(keep);
    return out;
}

static PyMethodDef methods[] = {
    {"build", build, METH_VARARGS, "build(masks, children, ranks, only_child): a flat tree for search()"},
    {"search", search, METH_VARARGS,
     "search(tree, balancing, current, free, delta): the mask of the branch picked, -1 when none has room"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_treesearch", NULL, -1, methods};

/* the interface this build speaks (treekernel checks it: a build older than the Python code is
   not used, the Python search runs) */
#define INTERFACE 1

PyMODINIT_FUNC PyInit__treesearch(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "INTERFACE", INTERFACE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
