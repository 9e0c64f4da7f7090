/*
 * records.c - the records of backend.h: a backend's queue entries grown
 * and reversed, and both kinds freed, by the backend or the entry points.
 */
#include "backend.h"

#include <string.h>

int mqd_ops_push(struct mqd_ops *ops, const struct mqd_raw_op *op)
{
    if (ops->n == ops->cap) {
        int cap = ops->cap ? ops->cap * 2 : 4;
        struct mqd_raw_op *v = mqd_malloc((size_t)cap * sizeof *v);
        if (!v)
            return MQD_ERR_NOMEM;
        if (ops->n)
            memcpy(v, ops->v, (size_t)ops->n * sizeof *v);
        mqd_free(ops->v);
        ops->v = v;
        ops->cap = cap;
    }
    ops->v[ops->n++] = *op;
    return mqs_ok;
}

void mqd_ops_reverse(struct mqd_ops *ops)
{
    for (int i = 0, j = ops->n - 1; i < j; i++, j--) {
        struct mqd_raw_op t = ops->v[i];
        ops->v[i] = ops->v[j];
        ops->v[j] = t;
    }
}

void mqd_ops_free(struct mqd_ops *ops)
{
    mqd_free(ops->v);
    memset(ops, 0, sizeof *ops);
}

void mqd_comms_free(struct mqd_comm *comms, int n)
{
    for (int i = 0; comms && i < n; i++) {
        mqd_free(comms[i].peer_global);
        mqd_free(comms[i].local_global);
    }
    mqd_free(comms);
}
