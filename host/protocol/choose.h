/*
 * choose.h - which DLL dumps a process, and why (choose.c).
 */
#ifndef MQDH__CHOOSE_H
#define MQDH__CHOOSE_H

#include "protocol/objects.h"

/* Choose, load and set up (mqs_setup_basic_callbacks) p's DLL, in the
 * order mqdh_options documents.  MQDH_OK, or an MQDH_ code with p's error
 * set. */
int mqdh__choose_dll(struct target *p);

/* Forget the DLL paths the session opened (the DLLs stay loaded). */
void mqdh__chosen_free(struct session *s);

#endif
