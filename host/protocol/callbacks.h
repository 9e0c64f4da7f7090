/*
 * callbacks.h - the host's side of the interface: the callback tables a
 * DLL calls into, and the session they serve (callbacks.c).
 */
#ifndef MQDH__CALLBACKS_H
#define MQDH__CALLBACKS_H

#include "protocol/objects.h"

/*
 * The host's side of the interface.  The basic table is handed to a DLL
 * once, when it is loaded; the others with mqs_setup_image, _process and
 * _job.  Host error codes a callback returns (never mqs_ok) are
 * mqdh__cb_errors; mqs_errorstring turns them into words.
 */
enum mqdh__cb_error { MQDH__CB_ERR_READ = 1001, MQDH__CB_ERR_NOSYM, MQDH__CB_ERR_BADARG };

extern const mqs_basic_callbacks mqdh__basic_callbacks;
extern const mqs_image_callbacks mqdh__image_callbacks;
extern const mqs_process_callbacks mqdh__process_callbacks;
extern const mqs_job_callbacks mqdh__job_callbacks;

/*
 * The session this thread runs DLL calls for (NULL: none), for the one
 * callback the interface gives no handle, mqs_dprints.  Per thread.
 */
void mqdh__callbacks_bind(const struct session *s);

/*
 * The process this thread's next DLL call is for: an image's callbacks
 * (mqs_find_symbol above all, whose answer moves with the process under
 * ASLR) answer for it when the DLL asks of its image, which its program's
 * processes share (images.h).  Per thread; set before every DLL call.
 */
void mqdh__callbacks_serve(struct target *p);

#endif
