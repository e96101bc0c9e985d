/* The fused scheduling cycle's inner loop (kubetwin.scheduler.fastpath.fused): the nodes in
 * sampling order from nextStartNodeIndex, each judged by the Filters' columns until
 * numFeasibleNodesToFind fit, each feasible node scored by NodeResourcesFit (LeastAllocated on
 * cpu and memory) and NodeResourcesBalancedAllocation, and the nodes tied at the top score.
 *
 * The arithmetic is the vectorised plugins' (kubetwin/scheduler/plugins/noderesources/vector.py,
 * _least_cpu_memory and _balanced_cpu_memory) step by step: int64 with wrap-around (-fwrapv,
 * as numpy's int64), float64 divisions of the amounts converted to double, no fused
 * multiply-add (-ffp-contract=off). kubetwin/_kernel/fused_py.py is the pure-Python twin the
 * tests compare it with. Not an upstream module: upstream's loop is
 * pkg/scheduler/schedule_one.go's findNodesThatPassFilters, prioritizeNodes and selectHost.
 *
 * Arrays come through the buffer protocol (numpy arrays, C-contiguous): no numpy headers needed
 * to build.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_COLS 16
#define MAX_OWN 8

typedef struct {
    Py_buffer views[2 * MAX_COLS + MAX_OWN + 16];
    int count;
} Views;

static void release(Views *v) {
    for (int k = 0; k < v->count; k++) PyBuffer_Release(&v->views[k]);
    v->count = 0;
}

/* a writable or read-only contiguous buffer of at least n items of `size` bytes */
static void *view(Views *v, PyObject *obj, Py_ssize_t n, Py_ssize_t size, int writable) {
    if (v->count >= (int)(sizeof(v->views) / sizeof(v->views[0]))) {
        PyErr_SetString(PyExc_ValueError, "too many arrays");
        return NULL;
    }
    Py_buffer *b = &v->views[v->count];
    if (PyObject_GetBuffer(obj, b, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    v->count++;
    if (b->itemsize != size || b->len < n * size) {
        PyErr_SetString(PyExc_ValueError, "array of the wrong item size or length");
        return NULL;
    }
    return b->buf;
}

/* pick(n, start, to_find, static_fail|None, npods, pods_alloc, wants, own, score, feasible_out,
 *      scores_out, top_out) -> (processed, found, ntop)
 *   wants: tuple of (amount, free column int64[n]); own: tuple of bool[n] (failing nodes)
 *   score: None (no scores: found nodes only) or a tuple
 *     (cap0, cap1, nonzero0, nonzero1, requested0, requested1,
 *      fit_req0, fit_req1, w0, w1, fit_weight, bal_on, bal_req0, bal_req1, bal_weight)
 */
static PyObject *pick(PyObject *self, PyObject *args) {
    Py_ssize_t n, start, to_find;
    PyObject *static_obj, *npods_obj, *alloc_obj, *wants, *own, *score, *feas_obj, *scores_obj, *top_obj;
    if (!PyArg_ParseTuple(args, "nnnOOOO!O!OOOO", &n, &start, &to_find, &static_obj, &npods_obj, &alloc_obj,
                          &PyTuple_Type, &wants, &PyTuple_Type, &own, &score, &feas_obj, &scores_obj, &top_obj))
        return NULL;
    Views v;
    v.count = 0;
    const int64_t *cols[MAX_COLS];
    int64_t amounts[MAX_COLS];
    const uint8_t *owns[MAX_OWN];
    Py_ssize_t nw = PyTuple_GET_SIZE(wants), no = PyTuple_GET_SIZE(own);
    if (nw > MAX_COLS || no > MAX_OWN || n <= 0 || start < 0 || start >= n) {
        PyErr_SetString(PyExc_ValueError, "bad arguments");
        return NULL;
    }
    const uint8_t *stat = NULL;
    if (static_obj != Py_None && !(stat = view(&v, static_obj, n, 1, 0))) goto fail;
    const int64_t *npods = view(&v, npods_obj, n, 8, 0);
    if (!npods) goto fail;
    const int64_t *palloc = view(&v, alloc_obj, n, 8, 0);
    if (!palloc) goto fail;
    for (Py_ssize_t k = 0; k < nw; k++) {
        PyObject *pair = PyTuple_GET_ITEM(wants, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_ValueError, "wants: (amount, column) pairs");
            goto fail;
        }
        amounts[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(pair, 0));
        if (amounts[k] == -1 && PyErr_Occurred()) goto fail;
        if (!(cols[k] = view(&v, PyTuple_GET_ITEM(pair, 1), n, 8, 0))) goto fail;
    }
    for (Py_ssize_t k = 0; k < no; k++)
        if (!(owns[k] = view(&v, PyTuple_GET_ITEM(own, k), n, 1, 0))) goto fail;
    int64_t *feas = view(&v, feas_obj, n, 8, 1);
    if (!feas) goto fail;
    int64_t *scores = view(&v, scores_obj, n, 8, 1);
    if (!scores) goto fail;
    int64_t *top = view(&v, top_obj, n, 8, 1);
    if (!top) goto fail;

    int scored = score != Py_None;
    const int64_t *cap0 = NULL, *cap1 = NULL, *nz0 = NULL, *nz1 = NULL, *rq0 = NULL, *rq1 = NULL;
    long long fr0 = 0, fr1 = 0, w0 = 1, w1 = 1, fw = 1, bal_on = 0, br0 = 0, br1 = 0, bw = 1;
    if (scored) {
        PyObject *c0, *c1, *z0, *z1, *q0, *q1;
        if (!PyArg_ParseTuple(score, "OOOOOOLLLLLLLLL", &c0, &c1, &z0, &z1, &q0, &q1, &fr0, &fr1, &w0, &w1, &fw,
                              &bal_on, &br0, &br1, &bw))
            goto fail;
        if (!(cap0 = view(&v, c0, n, 8, 0)) || !(cap1 = view(&v, c1, n, 8, 0)) || !(nz0 = view(&v, z0, n, 8, 0))
            || !(nz1 = view(&v, z1, n, 8, 0)) || !(rq0 = view(&v, q0, n, 8, 0)) || !(rq1 = view(&v, q1, n, 8, 0)))
            goto fail;
        if (w0 + w1 == 0) {
            PyErr_SetString(PyExc_ValueError, "resource weights sum to 0");
            goto fail;
        }
    }

    Py_ssize_t found = 0, processed = n, ntop = 0;
    int64_t best = 0;
    Py_ssize_t i = start;
    for (Py_ssize_t k = 0; k < n; k++, i = (i + 1 == n) ? 0 : i + 1) {
        if (stat && stat[i]) continue;
        if (npods[i] >= palloc[i]) continue;
        Py_ssize_t j;
        for (j = 0; j < nw; j++)
            if (amounts[j] > cols[j][i]) break;
        if (j < nw) continue;
        for (j = 0; j < no; j++)
            if (owns[j][i]) break;
        if (j < no) continue;
        feas[found] = (int64_t)i;
        if (scored) {
            int64_t c0 = cap0[i], c1 = cap1[i];
            int64_t left0 = c0 - nz0[i] - (int64_t)fr0, left1 = c1 - nz1[i] - (int64_t)fr1;
            if (left0 < 0) left0 = 0;
            if (left1 < 0) left1 = 0;
            left0 = left0 * 100 / c0;
            left1 = left1 * 100 / c1;
            int64_t total = left0 * (int64_t)w0 + left1 * (int64_t)w1;
            total /= (int64_t)(w0 + w1);
            total *= (int64_t)fw;
            if (bal_on) {
                double f0 = (double)(rq0[i] + (int64_t)br0) / (double)c0;
                if (f0 > 1.0) f0 = 1.0;
                double f1 = (double)(rq1[i] + (int64_t)br1) / (double)c1;
                if (f1 > 1.0) f1 = 1.0;
                double d = f0 - f1;
                d = d / 2;
                d = fabs(d);
                d = 1 - d;
                d = d * 100;
                total += (int64_t)floor(d) * (int64_t)bw;
            }
            scores[found] = total;
            if (found == 0 || total > best) {
                best = total;
                ntop = 0;
                top[ntop++] = (int64_t)i;
            } else if (total == best) {
                top[ntop++] = (int64_t)i;
            }
        }
        found++;
        if (found >= to_find) {
            processed = k + 1;
            break;
        }
    }
    release(&v);
    return Py_BuildValue("nnn", processed, found, ntop);
fail:
    release(&v);
    return NULL;
}

static PyMethodDef methods[] = {
    {"pick", pick, METH_VARARGS, "The fused cycle's Filter, sampling and scores over the nodes (see fused_py.pick)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fused", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fused(void) { return PyModule_Create(&module); }
