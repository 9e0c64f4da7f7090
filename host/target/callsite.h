/*
 * callsite.h - an MPI call's arguments as its caller passed them
 * (callsite.c): the DWARF of the program describes, at each call an
 * optimising GCC compiled, the values it passed in registers; that gives
 * the arguments of an MPI library without debug information (the ones
 * distributions ship).  And the predefined communicator a comm argument
 * is by value.  For where.c.
 */
#ifndef MQDH__CALLSITE_H
#define MQDH__CALLSITE_H

#include "target/args.h"
#include "target/image.h"
#include "target/memory.h"
#include "target/where.h"

#include <stdint.h>

/*
 * The arguments of w->call that lib, what the MPI library's DWARF said,
 * did not give, read from the call site in caller (the frame of the
 * program's function that made the call, NULL if the unwinding reached
 * none; outer: the frame that called that one, NULL if not known), with
 * mem for the stack (NULL: none) and im to tell the MPI's communicator
 * handles apart where the call site's DWARF does not type them.
 * lib_outer_is_caller: lib's values from its outer frame (lib->via_outer)
 * came from this call site.  Then w->args_from says where the arguments
 * came from and, where the call site was needed, w->args_why why one the
 * call has is still unknown ("" if none is).
 */
void mqdh__callsite_args(struct mqdh__where *w, struct mqdh__image *im, struct mqdh__mem *mem,
                         const struct mqdh__frame *caller, const struct mqdh__frame *outer,
                         const struct mqdh__lib_args *lib, int lib_outer_is_caller);

/*
 * The predefined communicator comm (a handle of the MPI process im runs)
 * is: "MPI_COMM_WORLD" or "MPI_COMM_SELF", or NULL if neither, or not
 * known for this MPI.
 */
const char *mqdh__comm_name(struct mqdh__image *im, uint64_t comm);

/* The bytes of one MPI_Request of the MPI that im runs, as a DLL decodes
 * them (mqd_get_request_info): 4 for MPICH's handles (ints), a pointer's
 * for Open MPI's (the request object's address); 0 if not known. */
int mqdh__request_size(struct mqdh__image *im);

/*
 * MPI_PROC_NULL of the MPI that im runs (MPICH -1, Open MPI -2; their
 * MPI_ANY_SOURCE is the other), or 0 if which MPI it is is not known.
 */
long mqdh__proc_null(struct mqdh__image *im);

#endif
