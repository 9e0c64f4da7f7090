/*
 * protocol.h - the MQD protocol over one process, from its image to its
 * queues (protocol.c).
 */
#ifndef MQDH__PROTOCOL_H
#define MQDH__PROTOCOL_H

#include "protocol/objects.h"

/* On the thread that attached, one process after another: the image,
 * where the process is (unwinding needs ptrace), the DLL, the MPI-2 job.
 * Sets p->prepared.  MQDH_OK or an MQDH_ code (p's error set). */
int mqdh__proto_prepare(struct target *p);

/* On any thread, once prepared: mqs_setup_image ... the identity.  Sets
 * p->ready.  MQDH_OK or an MQDH_ code (p's error set). */
int mqdh__proto_setup(struct target *p);

/* The communicators, their queues and groups, once every process of the
 * session is set up and named; on any thread.  MQDH_OK or an MQDH_ code. */
int mqdh__proto_read(struct target *p);

#endif
