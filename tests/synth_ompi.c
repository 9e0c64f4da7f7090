/* synth_ompi.c - a synthetic Open MPI (pml ob1) target; see synth_ompi.h. */
#define _GNU_SOURCE
#include "synth_ompi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUT(s, base, type, field, v, size)                                                    \
    synth_put((s), (base) + (uint64_t)synth_off((s), (type), (field)), (uint64_t)(v), (size))

enum { MAX_COMMS = 32, MAX_PROCS = 64, FL_FIRST = 4, FL_PER = 8, FL_ELEMENTS = FL_FIRST + FL_PER,
       FL_ALIGN = 64 };

/* What the builder keeps of one target beyond its memory. */
struct ompi_state {
    struct synth *s;
    int rank, sentinels;
    unsigned job, other; /* this process's job, and the other one */
    uint64_t array, table; /* ompi_mpi_communicators, and its addr */
    int nslots;
    struct {
        unsigned cid;
        uint64_t addr, ob1, procs;  /* ob1's record, and its procs array */
        uint64_t peers[MAX_PROCS]; /* ob1's per-peer records, 0 until made */
        int rsize;
    } comms[MAX_COMMS];
    int ncomms;
    struct {
        unsigned job;
        int vpid;
        uint64_t addr;
    } procs[MAX_PROCS];
    int nprocs;
    uint64_t elements[FL_ELEMENTS];
    int nsends;
    struct {
        uint64_t list, tail;
    } tails[256]; /* each list's last item (its sentinel when empty) */
    int ntails;
};

static struct ompi_state states[8];
static int next_state;

static struct ompi_state *state_of(struct synth *s)
{
    for (int i = 0; i < 8; i++)
        if (states[i].s == s)
            return &states[i];
    abort();
}

/* ---------------------------------------------------------------- types */

/* Open MPI's types for a target of p-byte pointers, their fields in
 * another order than Open MPI's, but every object's opal_object_t first
 * (its super), as OBJ_CLASS_INSTANCE requires. */
static void object_types(struct synth *s, int p)
{
    synth_type_begin(s, "opal_object_t");
    synth_type_field(s, "obj_reference_count", 4);
    synth_type_field(s, "obj_class", p);
    synth_type_end(s, 0);
    int obj = synth_sizeof(s, "opal_object_t");
    synth_type_begin(s, "opal_class_t");
    synth_type_field(s, "cls_name", p);
    synth_type_field(s, "cls_parent", p);
    synth_type_field(s, "cls_sizeof", p);
    synth_type_field(s, "cls_construct", p);
    synth_type_field(s, "cls_initialized", 4);
    synth_type_end(s, 0);
    synth_type_begin(s, "opal_list_item_t");
    synth_type_field(s, "super", obj);
    synth_type_field(s, "item_free", 4);
    synth_type_field(s, "opal_list_prev", p);
    synth_type_field(s, "opal_list_next", p);
    synth_type_end(s, 0);
    int item = synth_sizeof(s, "opal_list_item_t");
    synth_type_begin(s, "opal_list_t");
    synth_type_field(s, "opal_list_length", p);
    synth_type_field(s, "super", obj);
    synth_type_field(s, "opal_list_sentinel", item);
    synth_type_end(s, 0);
    synth_type_begin(s, "opal_free_list_item_t");
    synth_type_field(s, "super", item);
    synth_type_field(s, "ptr", p);
    synth_type_field(s, "registration", p);
    synth_type_end(s, 0);
    synth_type_begin(s, "opal_free_list_t");
    synth_type_field(s, "super", 64);
    synth_type_field(s, "fl_frag_class", p);
    synth_type_field(s, "fl_max_to_alloc", p);
    synth_type_field(s, "fl_num_allocated", p);
    synth_type_field(s, "fl_frag_size", p);
    synth_type_field(s, "fl_num_per_alloc", p);
    synth_type_field(s, "fl_frag_alignment", p);
    synth_type_field(s, "fl_allocations", synth_sizeof(s, "opal_list_t"));
    synth_type_end(s, 0);
    synth_type_begin(s, "opal_pointer_array_t");
    synth_type_field(s, "super", obj);
    synth_type_field(s, "lock", 40);
    synth_type_field(s, "size", 4);
    synth_type_field(s, "lowest_free", 4);
    synth_type_field(s, "number_free", 4);
    synth_type_field(s, "addr", p);
    synth_type_end(s, 0);
}

static void mpi_types(struct synth *s, int p)
{
    int obj = synth_sizeof(s, "opal_object_t"), item = synth_sizeof(s, "opal_list_item_t");
    synth_type_begin(s, "opal_process_name_t");
    synth_type_field(s, "vpid", 4);
    synth_type_field(s, "jobid", 4);
    synth_type_end(s, 8);
    synth_type_begin(s, "opal_proc_t");
    synth_type_field(s, "super", item);
    synth_type_field(s, "proc_arch", 4);
    synth_type_field(s, "proc_name", 8);
    synth_type_field(s, "proc_hostname", p);
    synth_type_end(s, 0);
    synth_type_begin(s, "ompi_proc_t");
    synth_type_field(s, "super", synth_sizeof(s, "opal_proc_t"));
    synth_type_field(s, "proc_endpoints", 5 * p);
    synth_type_end(s, 0);
    synth_type_begin(s, "ompi_group_t");
    synth_type_field(s, "super", obj);
    synth_type_field(s, "grp_flags", 4);
    synth_type_field(s, "grp_proc_pointers", p);
    synth_type_field(s, "grp_my_rank", 4);
    synth_type_field(s, "grp_proc_count", 4);
    synth_type_end(s, 0);
    synth_type_begin(s, "ompi_communicator_t");
    synth_type_field(s, "super", 64);
    synth_type_field(s, "c_flags", 4);
    synth_type_field(s, "c_my_rank", 4);
    synth_type_field(s, "c_name", 64);
    synth_type_field(s, "c_contextid", 4);
    synth_type_field(s, "c_local_group", p);
    synth_type_field(s, "c_remote_group", p);
    synth_type_field(s, "c_local_comm", p);
    synth_type_field(s, "c_pml_comm", p);
    synth_type_field(s, "c_nbc_tag", 4);
    synth_type_end(s, 0);
    synth_type_begin(s, "opal_datatype_t");
    synth_type_field(s, "super", obj);
    synth_type_field(s, "flags", 2);
    synth_type_field(s, "id", 2);
    synth_type_field(s, "size", p);
    synth_type_end(s, 0);
    synth_type_begin(s, "ompi_datatype_t");
    synth_type_field(s, "super", synth_sizeof(s, "opal_datatype_t"));
    synth_type_field(s, "id", 4);
    synth_type_field(s, "name", 64);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_base_component_t");
    synth_type_field(s, "mca_major_version", 12);
    synth_type_field(s, "mca_project_name", 16);
    synth_type_field(s, "mca_type_name", 32);
    synth_type_field(s, "mca_component_name", 64);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_base_component_t");
    synth_type_field(s, "pmlm_version", synth_sizeof(s, "mca_base_component_t"));
    synth_type_field(s, "pmlm_data", 8);
    synth_type_end(s, 0);
}

static void request_types(struct synth *s, int p)
{
    synth_type_begin(s, "ompi_request_t");
    synth_type_field(s, "super", synth_sizeof(s, "opal_free_list_item_t"));
    synth_type_field(s, "req_state", 4);
    synth_type_field(s, "req_type", 4);
    synth_type_field(s, "req_status", 24);
    synth_type_field(s, "req_complete", p);
    synth_type_field(s, "req_persistent", 1);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_base_request_t");
    synth_type_field(s, "req_ompi", synth_sizeof(s, "ompi_request_t"));
    synth_type_field(s, "req_tag", 4);
    synth_type_field(s, "req_peer", 4);
    synth_type_field(s, "req_type", 4);
    synth_type_field(s, "req_pml_complete", 4);
    synth_type_field(s, "req_free_called", 4);
    synth_type_field(s, "req_comm", p);
    synth_type_field(s, "req_datatype", p);
    synth_type_field(s, "req_convertor", 64);
    synth_type_field(s, "req_addr", p);
    synth_type_field(s, "req_count", p);
    synth_type_field(s, "req_sequence", 8);
    synth_type_end(s, 0);
    int base = synth_sizeof(s, "mca_pml_base_request_t");
    synth_type_begin(s, "mca_pml_base_send_request_t");
    synth_type_field(s, "req_base", base);
    synth_type_field(s, "req_send_mode", 4);
    synth_type_field(s, "req_bytes_packed", p);
    synth_type_field(s, "req_addr", p);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_base_recv_request_t");
    synth_type_field(s, "req_base", base);
    synth_type_field(s, "req_bytes_packed", p);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_ob1_send_request_t");
    synth_type_field(s, "req_send", synth_sizeof(s, "mca_pml_base_send_request_t"));
    synth_type_field(s, "req_recv", p);
    synth_type_field(s, "req_state", 64);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_ob1_recv_request_t");
    synth_type_field(s, "req_recv", synth_sizeof(s, "mca_pml_base_recv_request_t"));
    synth_type_field(s, "remote_req_send", p);
    synth_type_field(s, "req_lock", 64);
    synth_type_end(s, 0);
}

static void ob1_types(struct synth *s, int p)
{
    int obj = synth_sizeof(s, "opal_object_t"), list = synth_sizeof(s, "opal_list_t");
    synth_type_begin(s, "mca_pml_ob1_comm_t");
    synth_type_field(s, "super", obj);
    synth_type_field(s, "recv_sequence", 4);
    synth_type_field(s, "num_procs", p);
    synth_type_field(s, "matching_lock", 40);
    synth_type_field(s, "procs", p);
    synth_type_field(s, "wild_receives", list);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_ob1_comm_proc_t");
    synth_type_field(s, "super", obj);
    synth_type_field(s, "unexpected_frags", list);
    synth_type_field(s, "expected_sequence", 2);
    synth_type_field(s, "frags_cant_match", p);
    synth_type_field(s, "specific_receives", list);
    synth_type_field(s, "ompi_proc", p);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_ob1_common_hdr_t");
    synth_type_field(s, "hdr_type", 1);
    synth_type_field(s, "hdr_flags", 1);
    synth_type_end(s, 2);
    synth_type_begin(s, "mca_pml_ob1_match_hdr_t"); /* 14 bytes on the wire */
    synth_type_field(s, "hdr_common", 2);
    synth_type_field(s, "hdr_ctx", 2);
    synth_type_field(s, "hdr_src", 4);
    synth_type_field(s, "hdr_tag", 4);
    synth_type_field(s, "hdr_seq", 2);
    synth_type_end(s, 16);
    synth_type_begin(s, "mca_pml_ob1_rendezvous_hdr_t");
    synth_type_field(s, "hdr_match", 16);
    synth_type_field(s, "hdr_msg_length", 8);
    synth_type_field(s, "hdr_src_req", 8);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_ob1_hdr_t"); /* a union */
    synth_type_field(s, "hdr_rndv", 32);
    synth_type_alias(s, "hdr_common", "hdr_rndv", 0);
    synth_type_alias(s, "hdr_match", "hdr_rndv", 0);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_btl_base_segment_t");
    synth_type_field(s, "seg_len", 8);
    synth_type_field(s, "seg_addr", 8);
    synth_type_end(s, 0);
    synth_type_begin(s, "mca_pml_ob1_recv_frag_t");
    synth_type_field(s, "super", synth_sizeof(s, "opal_free_list_item_t"));
    synth_type_field(s, "range", p);
    synth_type_field(s, "num_segments", p);
    synth_type_field(s, "hdr", 32);
    synth_type_field(s, "btl", p);
    synth_type_field(s, "segments", 16 * 16);
    synth_type_end(s, 0);
}

/* ---------------------------------------------------------------- lists */

static void list_init(struct synth *s, uint64_t list)
{
    struct ompi_state *st = state_of(s);
    int p = synth_ptr_size(s);
    uint64_t sent = list + (uint64_t)synth_off(s, "opal_list_t", "opal_list_sentinel");
    PUT(s, sent, "opal_list_item_t", "opal_list_next", sent, p);
    PUT(s, sent, "opal_list_item_t", "opal_list_prev", sent, p);
    if (st->ntails >= 256)
        abort();
    st->tails[st->ntails].list = list;
    st->tails[st->ntails++].tail = sent;
}

/* Append item (its list item at its start) to the list at list. */
static void list_append(struct synth *s, uint64_t list, uint64_t item)
{
    struct ompi_state *st = state_of(s);
    int p = synth_ptr_size(s), k = 0;
    uint64_t sent = list + (uint64_t)synth_off(s, "opal_list_t", "opal_list_sentinel");
    while (k < st->ntails && st->tails[k].list != list)
        k++;
    if (k == st->ntails)
        abort();
    uint64_t last = st->tails[k].tail;
    PUT(s, item, "opal_list_item_t", "opal_list_next", sent, p);
    PUT(s, item, "opal_list_item_t", "opal_list_prev", last, p);
    PUT(s, last, "opal_list_item_t", "opal_list_next", item, p);
    PUT(s, sent, "opal_list_item_t", "opal_list_prev", item, p);
    st->tails[k].tail = item;
}

/* ---------------------------------------------------------------- objects */

/* A static opal_class_t for objects of type (cls_sizeof its size), under
 * its symbol TYPE_class, as OBJ_CLASS_INSTANCE makes one. */
static uint64_t make_class(struct synth *s, const char *type)
{
    char sym[96];
    uint64_t c = synth_alloc(s, synth_sizeof(s, "opal_class_t"));
    PUT(s, c, "opal_class_t", "cls_sizeof", synth_sizeof(s, type), synth_ptr_size(s));
    snprintf(sym, sizeof sym, "%s_class", type);
    synth_symbol(s, sym, c);
    return c;
}

/* The class made for type (its symbol, through the debugger's lookup). */
static uint64_t class_of(struct synth *s, const char *type)
{
    char sym[96];
    mqs_taddr_t a;
    snprintf(sym, sizeof sym, "%s_class", type);
    if (synth_callbacks()->image.mqs_find_symbol_fp(synth_image(s), sym, &a) != mqs_ok)
        abort();
    return a;
}

static void set_class(struct synth *s, uint64_t object, const char *type)
{
    PUT(s, object, "opal_object_t", "obj_class", class_of(s, type), synth_ptr_size(s));
}

/* The ompi_proc_t of vpid of job (made on first use). */
static uint64_t proc_of(struct synth *s, unsigned job, int vpid)
{
    struct ompi_state *st = state_of(s);
    for (int i = 0; i < st->nprocs; i++)
        if (st->procs[i].job == job && st->procs[i].vpid == vpid)
            return st->procs[i].addr;
    if (st->nprocs >= MAX_PROCS)
        abort();
    uint64_t pr = synth_alloc(s, synth_sizeof(s, "ompi_proc_t"));
    uint64_t name = pr + (uint64_t)synth_off(s, "ompi_proc_t", "super") +
                    (uint64_t)synth_off(s, "opal_proc_t", "proc_name");
    PUT(s, name, "opal_process_name_t", "jobid", job, 4);
    PUT(s, name, "opal_process_name_t", "vpid", vpid, 4);
    set_class(s, pr, "ompi_proc_t");
    st->procs[st->nprocs].job = job;
    st->procs[st->nprocs].vpid = vpid;
    st->procs[st->nprocs++].addr = pr;
    return pr;
}

/* A group of n members (world ranks, -(v + 1) the other job's v). */
static uint64_t group(struct synth *s, int n, const int *members, int my_rank)
{
    struct ompi_state *st = state_of(s);
    int p = synth_ptr_size(s);
    uint64_t g = synth_alloc(s, synth_sizeof(s, "ompi_group_t"));
    uint64_t v = synth_alloc(s, n * p);
    for (int i = 0; i < n; i++) {
        unsigned job = members[i] >= 0 ? st->job : st->other;
        int vpid = members[i] >= 0 ? members[i] : -members[i] - 1;
        uint64_t e;
        if (st->sentinels && p == 8 && !(job == st->job && vpid == st->rank))
            e = (uint64_t)vpid << 32 | (uint64_t)(job >> 16) << 16 | (job & 0x7fffu) << 1 | 1u;
        else
            e = proc_of(s, job, vpid);
        synth_put(s, v + (uint64_t)(i * p), e, p);
    }
    PUT(s, g, "ompi_group_t", "grp_proc_count", n, 4);
    PUT(s, g, "ompi_group_t", "grp_my_rank", (uint64_t)(int64_t)my_rank, 4);
    PUT(s, g, "ompi_group_t", "grp_proc_pointers", v, p);
    set_class(s, g, "ompi_group_t");
    return g;
}

/* ob1's record of a communicator with rsize peers (procs made lazily). */
static uint64_t ob1_comm(struct synth *s, int rsize, uint64_t *procs_out)
{
    int p = synth_ptr_size(s);
    uint64_t c = synth_alloc(s, synth_sizeof(s, "mca_pml_ob1_comm_t"));
    uint64_t procs = synth_alloc(s, rsize * p);
    *procs_out = procs;
    PUT(s, c, "mca_pml_ob1_comm_t", "num_procs", rsize, p);
    PUT(s, c, "mca_pml_ob1_comm_t", "procs", procs, p);
    list_init(s, c + (uint64_t)synth_off(s, "mca_pml_ob1_comm_t", "wild_receives"));
    set_class(s, c, "mca_pml_ob1_comm_t");
    return c;
}

/* The communicator at addr (cid, this process's rank), its groups, its
 * ob1 record, in the next slot of the table. */
static void fill_comm(struct synth *s, uint64_t addr, unsigned cid, const char *name, int rank,
                      uint64_t lgroup, uint64_t rgroup, int rsize, unsigned flags)
{
    struct ompi_state *st = state_of(s);
    int p = synth_ptr_size(s);
    const char *T = "ompi_communicator_t";
    char own[64];
    snprintf(own, sizeof own, "MPI COMMUNICATOR %u DUP FROM 0", cid);
    synth_put_bytes(s, addr + (uint64_t)synth_off(s, T, "c_name"), name ? name : own,
                    (int)strlen(name ? name : own) + 1);
    PUT(s, addr, T, "c_flags", flags | (name ? 0x2u : 0u), 4);
    PUT(s, addr, T, "c_contextid", cid, 4);
    PUT(s, addr, T, "c_my_rank", (uint64_t)(int64_t)rank, 4);
    PUT(s, addr, T, "c_local_group", lgroup, p);
    PUT(s, addr, T, "c_remote_group", rgroup, p);
    uint64_t procs = 0, ob1 = rsize > 0 ? ob1_comm(s, rsize, &procs) : 0;
    PUT(s, addr, T, "c_pml_comm", ob1, p);
    st->comms[st->ncomms].procs = procs;
    set_class(s, addr, T);
    if (st->ncomms >= MAX_COMMS || st->nslots >= MAX_COMMS)
        abort();
    st->comms[st->ncomms].cid = cid;
    st->comms[st->ncomms].addr = addr;
    st->comms[st->ncomms].ob1 = ob1;
    st->comms[st->ncomms++].rsize = rsize;
    synth_put(s, st->table + (uint64_t)(st->nslots++ * p), addr, p);
    PUT(s, st->array, "opal_pointer_array_t", "size", st->nslots, 4);
}

/* ---------------------------------------------------------------- the target */

static const char *const classes[] = {
    "ompi_communicator_t", "ompi_group_t", "ompi_proc_t", "ompi_request_t", "ompi_datatype_t",
    "mca_pml_base_request_t", "mca_pml_base_send_request_t", "mca_pml_base_recv_request_t",
    "opal_list_t", "opal_list_item_t", "opal_free_list_t", "opal_free_list_item_t",
    "opal_pointer_array_t", "mca_pml_ob1_comm_t", "mca_pml_ob1_comm_proc_t",
    "mca_pml_ob1_recv_frag_t", "mca_pml_ob1_recv_request_t", "mca_pml_ob1_send_request_t"};

/* A symbol's object of size bytes, or of a string. */
static uint64_t global(struct synth *s, const char *sym, int size, const char *text)
{
    uint64_t a = synth_alloc(s, text ? (int)strlen(text) + 1 : size);
    if (text)
        synth_put_bytes(s, a, text, (int)strlen(text) + 1);
    synth_symbol(s, sym, a);
    return a;
}

/* The PML's send request free list: chunks of FL_FIRST, then FL_PER
 * elements, each chunk's own item first, elements aligned to FL_ALIGN
 * (opal_free_list_grow_st), every element constructed (its class) and
 * inactive (OMPI_REQUEST_INVALID, 0). */
static void free_list(struct synth *s, struct ompi_state *st)
{
    int p = synth_ptr_size(s), size = synth_sizeof(s, "mca_pml_ob1_send_request_t") + 40;
    int stride = (size + FL_ALIGN - 1) / FL_ALIGN * FL_ALIGN, head = synth_sizeof(s, "opal_free_list_item_t");
    uint64_t fl = global(s, "mca_pml_base_send_requests", synth_sizeof(s, "opal_free_list_t"), NULL);
    uint64_t allocs = fl + (uint64_t)synth_off(s, "opal_free_list_t", "fl_allocations");
    list_init(s, allocs);
    PUT(s, fl, "opal_free_list_t", "fl_num_allocated", FL_ELEMENTS, p);
    PUT(s, fl, "opal_free_list_t", "fl_num_per_alloc", FL_PER, p);
    PUT(s, fl, "opal_free_list_t", "fl_frag_size", size, p);
    PUT(s, fl, "opal_free_list_t", "fl_frag_alignment", FL_ALIGN, p);
    PUT(s, fl, "opal_free_list_t", "fl_frag_class", class_of(s, "mca_pml_ob1_send_request_t"), p);
    PUT(s, allocs, "opal_list_t", "opal_list_length", 2, p);
    int k = 0;
    for (int c = 0; c < 2; c++) {
        int n = c ? FL_PER : FL_FIRST;
        uint64_t chunk = synth_alloc(s, head + FL_ALIGN + n * stride);
        list_append(s, allocs, chunk);
        uint64_t first = (chunk + (uint64_t)head + FL_ALIGN - 1) / FL_ALIGN * FL_ALIGN;
        for (int i = 0; i < n; i++, k++) {
            st->elements[k] = first + (uint64_t)(i * stride);
            set_class(s, st->elements[k], "mca_pml_ob1_send_request_t");
        }
    }
}

struct synth *synth_ompi_new(int big_endian, int ptr_size, const char *pml, int rank,
                             int world_size)
{
    return synth_ompi_new_in(big_endian, ptr_size, pml, SYNTH_OMPI_JOB, rank, world_size);
}

struct synth *synth_ompi_new_in(int big_endian, int ptr_size, const char *pml, unsigned job,
                                int rank, int world_size)
{
    struct synth *s = synth_new_blank(big_endian, ptr_size);
    for (int i = 0; i < 8; i++) /* a freed target's memory may hold this one */
        if (states[i].s == s)
            states[i].s = NULL;
    struct ompi_state *st = &states[next_state++ % 8];
    memset(st, 0, sizeof *st);
    st->s = s;
    st->rank = rank;
    st->job = job;
    st->other = job == SYNTH_OMPI_JOB ? SYNTH_OMPI_OTHER_JOB : SYNTH_OMPI_JOB;
    object_types(s, ptr_size);
    mpi_types(s, ptr_size);
    request_types(s, ptr_size);
    ob1_types(s, ptr_size);
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        make_class(s, classes[i]);
    int comm = synth_sizeof(s, "ompi_communicator_t");
    st->array = global(s, "ompi_mpi_communicators", synth_sizeof(s, "opal_pointer_array_t"), NULL);
    st->table = synth_alloc(s, MAX_COMMS * ptr_size);
    PUT(s, st->array, "opal_pointer_array_t", "addr", st->table, ptr_size);
    uint64_t world = global(s, "ompi_mpi_comm_world", comm, NULL);
    uint64_t self = global(s, "ompi_mpi_comm_self", comm, NULL);
    uint64_t null = global(s, "ompi_mpi_comm_null", comm, NULL);
    uint64_t pc = global(s, "mca_pml_base_selected_component",
                         synth_sizeof(s, "mca_pml_base_component_t"), NULL);
    synth_put_bytes(s, pc + (uint64_t)synth_off(s, "mca_base_component_t", "mca_component_name"),
                    pml, (int)strlen(pml) + 1);
    if (pml[0]) { /* the selected PML's plugin, the others closed */
        char sym[64];
        snprintf(sym, sizeof sym, "mca_pml_%s_component", pml);
        global(s, sym, 8, NULL);
    }
    synth_put(s, global(s, "ompi_mpi_state", 4, NULL), 2, 4);
    global(s, "ompi_version_string", 0, "4.1.4");
    free_list(s, st);
    int *all = calloc((size_t)world_size, sizeof *all), me[] = {rank};
    for (int i = 0; i < world_size; i++)
        all[i] = i;
    uint64_t wg = group(s, world_size, all, rank), sg = group(s, 1, me, 0);
    free(all);
    synth_put(s, global(s, "ompi_proc_local_proc", ptr_size, NULL), proc_of(s, job, rank),
              ptr_size);
    fill_comm(s, world, 0, "MPI_COMM_WORLD", rank, wg, wg, world_size, 0x4u);
    fill_comm(s, self, 1, "MPI_COMM_SELF", 0, sg, sg, 1, 0x4u);
    uint64_t ng = group(s, 0, NULL, -1);
    fill_comm(s, null, 2, "MPI_COMM_NULL", -2, ng, ng, 0, 0x4u);
    return s;
}

void synth_ompi_pmls_built_in(struct synth *s)
{
    static const char *const pmls[] = {"ob1", "ucx", "cm"};
    for (int i = 0; i < 3; i++) {
        char sym[64];
        mqs_taddr_t a;
        snprintf(sym, sizeof sym, "mca_pml_%s_component", pmls[i]);
        if (synth_callbacks()->image.mqs_find_symbol_fp(synth_image(s), sym, &a) != mqs_ok)
            global(s, sym, 8, NULL);
    }
}

void synth_ompi_sentinels(struct synth *s, int on)
{
    state_of(s)->sentinels = on;
}

void synth_ompi_state(struct synth *s, int state)
{
    mqs_taddr_t a;
    if (synth_callbacks()->image.mqs_find_symbol_fp(synth_image(s), "ompi_mpi_state", &a) != 0)
        abort();
    synth_put(s, a, (uint64_t)(int64_t)state, 4);
}

uint64_t synth_ompi_comm(struct synth *s, unsigned cid, const char *name, int rank, int size,
                         const int *members)
{
    uint64_t c = synth_alloc(s, synth_sizeof(s, "ompi_communicator_t"));
    uint64_t g = group(s, size, members, rank);
    fill_comm(s, c, cid, name, rank, g, g, size, 0);
    return c;
}

uint64_t synth_ompi_intercomm(struct synth *s, unsigned cid, unsigned local_cid,
                              const char *name, int rank, int lsize, const int *local,
                              int rsize, const int *remote)
{
    uint64_t lc = synth_ompi_comm(s, local_cid, NULL, rank, lsize, local);
    uint64_t c = synth_alloc(s, synth_sizeof(s, "ompi_communicator_t"));
    uint64_t lg = group(s, lsize, local, rank), rg = group(s, rsize, remote, -1);
    fill_comm(s, c, cid, name, rank, lg, rg, rsize, 0x1u);
    PUT(s, c, "ompi_communicator_t", "c_local_comm", lc, synth_ptr_size(s));
    return c;
}

uint64_t synth_ompi_comm_of(struct synth *s, unsigned cid)
{
    struct ompi_state *st = state_of(s);
    for (int i = 0; i < st->ncomms; i++)
        if (st->comms[i].cid == cid)
            return st->comms[i].addr;
    abort();
}

void synth_ompi_free_slot(struct synth *s, int i)
{
    struct ompi_state *st = state_of(s);
    synth_put(s, st->table + (uint64_t)(i * synth_ptr_size(s)), 0, synth_ptr_size(s));
}

uint64_t synth_ompi_datatype(struct synth *s, const char *name, long size)
{
    uint64_t d = synth_alloc(s, synth_sizeof(s, "ompi_datatype_t"));
    synth_put_bytes(s, d + (uint64_t)synth_off(s, "ompi_datatype_t", "name"), name,
                    (int)strlen(name) + 1);
    PUT(s, d + (uint64_t)synth_off(s, "ompi_datatype_t", "super"), "opal_datatype_t", "size",
        size, synth_ptr_size(s));
    set_class(s, d, "ompi_datatype_t");
    return d;
}

/* The ob1 record of comm, and in *proc its peer's (made on first use, as
 * mca_pml_ob1_peer_lookup does); peer -1: none. */
static uint64_t ob1_of(struct synth *s, uint64_t comm, int peer, uint64_t *proc)
{
    struct ompi_state *st = state_of(s);
    const char *T = "mca_pml_ob1_comm_proc_t";
    int p = synth_ptr_size(s), k = 0;
    while (k < st->ncomms && st->comms[k].addr != comm)
        k++;
    if (k == st->ncomms || peer >= st->comms[k].rsize || peer >= MAX_PROCS)
        abort();
    uint64_t ob1 = st->comms[k].ob1;
    *proc = 0;
    if (peer < 0)
        return ob1;
    if (!st->comms[k].peers[peer]) {
        uint64_t pr = synth_alloc(s, synth_sizeof(s, T));
        list_init(s, pr + (uint64_t)synth_off(s, T, "specific_receives"));
        list_init(s, pr + (uint64_t)synth_off(s, T, "unexpected_frags"));
        set_class(s, pr, T);
        st->comms[k].peers[peer] = pr;
        /* procs[peer] = pr: the array's address is the record's procs */
        synth_put(s, st->comms[k].procs + (uint64_t)(peer * p), pr, p);
    }
    *proc = st->comms[k].peers[peer];
    return ob1;
}

uint64_t synth_ompi_recv(struct synth *s, uint64_t comm, int peer, int tag, long count,
                         uint64_t datatype, uint64_t seq, int probe)
{
    const char *B = "mca_pml_base_request_t";
    int p = synth_ptr_size(s);
    uint64_t proc, ob1 = ob1_of(s, comm, peer, &proc);
    uint64_t r = synth_alloc(s, synth_sizeof(s, "mca_pml_ob1_recv_request_t"));
    uint64_t base = r + (uint64_t)synth_off(s, "mca_pml_ob1_recv_request_t", "req_recv") +
                    (uint64_t)synth_off(s, "mca_pml_base_recv_request_t", "req_base");
    uint64_t ompi = base + (uint64_t)synth_off(s, B, "req_ompi");
    set_class(s, r, "mca_pml_ob1_recv_request_t");
    PUT(s, ompi, "ompi_request_t", "req_state", 2, 4);
    PUT(s, base, B, "req_type", probe ? 4 : 2, 4);
    PUT(s, base, B, "req_peer", (uint64_t)(int64_t)peer, 4);
    PUT(s, base, B, "req_tag", (uint64_t)(int64_t)tag, 4);
    PUT(s, base, B, "req_count", count, p);
    PUT(s, base, B, "req_datatype", datatype, p);
    PUT(s, base, B, "req_comm", comm, p);
    PUT(s, base, B, "req_addr", 0x7000, p);
    PUT(s, base, B, "req_sequence", seq, 8);
    list_append(s, peer < 0 ? ob1 + (uint64_t)synth_off(s, "mca_pml_ob1_comm_t", "wild_receives")
                            : proc + (uint64_t)synth_off(s, "mca_pml_ob1_comm_proc_t",
                                                         "specific_receives"),
                r);
    return r;
}

uint64_t synth_ompi_frag(struct synth *s, uint64_t comm, int src, int tag, int hdr_type,
                         long here, long msg_length, unsigned seq)
{
    const char *F = "mca_pml_ob1_recv_frag_t";
    int p = synth_ptr_size(s);
    uint64_t proc;
    ob1_of(s, comm, src, &proc);
    uint64_t f = synth_alloc(s, synth_sizeof(s, F));
    uint64_t hdr = f + (uint64_t)synth_off(s, F, "hdr");
    uint64_t match = hdr + (uint64_t)synth_off(s, "mca_pml_ob1_hdr_t", "hdr_match");
    uint64_t rndv = hdr + (uint64_t)synth_off(s, "mca_pml_ob1_hdr_t", "hdr_rndv");
    uint64_t common = match + (uint64_t)synth_off(s, "mca_pml_ob1_match_hdr_t", "hdr_common");
    int hdr_len = hdr_type == 0x41 ? 14 : synth_sizeof(s, "mca_pml_ob1_rendezvous_hdr_t");
    set_class(s, f, F);
    PUT(s, common, "mca_pml_ob1_common_hdr_t", "hdr_type", hdr_type, 1);
    PUT(s, match, "mca_pml_ob1_match_hdr_t", "hdr_src", (uint64_t)(int64_t)src, 4);
    PUT(s, match, "mca_pml_ob1_match_hdr_t", "hdr_tag", (uint64_t)(int64_t)tag, 4);
    PUT(s, match, "mca_pml_ob1_match_hdr_t", "hdr_seq", seq, 2);
    if (hdr_type != 0x41)
        PUT(s, rndv, "mca_pml_ob1_rendezvous_hdr_t", "hdr_msg_length", msg_length, 8);
    PUT(s, f, F, "num_segments", 1, p);
    uint64_t seg = f + (uint64_t)synth_off(s, F, "segments");
    PUT(s, seg, "mca_btl_base_segment_t", "seg_len", hdr_type == 0x43 ? hdr_len : hdr_len + here,
        8);
    PUT(s, seg, "mca_btl_base_segment_t", "seg_addr", 0x9000, 8);
    list_append(s, proc + (uint64_t)synth_off(s, "mca_pml_ob1_comm_proc_t", "unexpected_frags"),
                f);
    return f;
}

uint64_t synth_ompi_free_element(struct synth *s, int index)
{
    if (index < 0 || index >= FL_ELEMENTS)
        abort();
    return state_of(s)->elements[index];
}

uint64_t synth_ompi_send(struct synth *s, const struct synth_ompi_send *a)
{
    struct ompi_state *st = state_of(s);
    const char *B = "mca_pml_base_request_t", *S = "mca_pml_base_send_request_t";
    int p = synth_ptr_size(s);
    if (st->nsends >= FL_ELEMENTS)
        abort();
    uint64_t r = st->elements[a->element ? a->element : st->nsends];
    st->nsends++;
    uint64_t send = r + (uint64_t)synth_off(s, "mca_pml_ob1_send_request_t", "req_send");
    uint64_t base = send + (uint64_t)synth_off(s, S, "req_base");
    uint64_t ompi = base + (uint64_t)synth_off(s, B, "req_ompi");
    PUT(s, ompi, "ompi_request_t", "req_state", a->state, 4);
    PUT(s, ompi, "ompi_request_t", "req_complete", a->complete, p);
    PUT(s, ompi, "ompi_request_t", "req_persistent", a->persistent, 1);
    PUT(s, base, B, "req_type", 1, 4);
    PUT(s, base, B, "req_peer", (uint64_t)(int64_t)a->peer, 4);
    PUT(s, base, B, "req_tag", (uint64_t)(int64_t)a->tag, 4);
    PUT(s, base, B, "req_count", a->count, p);
    PUT(s, base, B, "req_datatype", a->datatype, p);
    PUT(s, base, B, "req_comm", a->comm, p);
    PUT(s, base, B, "req_addr", 0x8000, p);
    PUT(s, base, B, "req_sequence", a->seq, 8);
    PUT(s, send, S, "req_send_mode", a->mode, 4);
    PUT(s, send, S, "req_bytes_packed", a->bytes, p);
    return r;
}
