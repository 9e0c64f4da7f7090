/*
 * images.h - one mqs_image per program, as the interface means it.
 *
 * The interface's image is an executable, shared by its processes: a DLL
 * learns a program's types once, in mqs_setup_image and
 * mqs_image_has_queues, and each process's own state in
 * mqs_setup_process.  The host keys an image by the DLL and the files a
 * process maps, in search order (image.h; what a process loaded itself
 * comes last, by path, so ranks that dlopen'd the same components at
 * other addresses, as Open MPI's do, have one order): processes that map
 * the same files get the same answer to every type question, and to every
 * symbol question but for the address, which differs under ASLR and which
 * the callbacks give for the process the DLL is serving (callbacks.c).
 *
 * A DLL may learn more of its image in mqs_setup_process (mqd's chooses a
 * layout from the first process's version string), and the interface does
 * not say it may be called for two processes of one image at once.  So an
 * image is shared only once a process has been set up on it alone; until
 * then its processes come to it one at a time, and one that finds it busy
 * takes an image of its own.  Nothing waits on another: a DLL that crashes
 * or runs out of time on the process it is setting up an image for leaves
 * that image busy for good, and the others do without it.  With several
 * workers only mqd's own DLL, written to be called so, shares images.
 */
#ifndef MQDH__IMAGES_H
#define MQDH__IMAGES_H

#include "protocol/objects.h"

/*
 * The image p is to be set up on, made p->image: 1 if p has it alone (to
 * set it up if it is not yet, then mqdh__images_release), 0 if p shares
 * one already learned (its answers are in it).  Takes the session's
 * images_lock.
 */
int mqdh__images_claim(struct target *p);

/* p is done with the image it had alone; learned: what the DLL learned
 * of the image setting p up holds for every process of it. */
void mqdh__images_release(struct target *p, int learned);

/*
 * The address of symbol name in p (mqdh__image_symbol's answer): looked up
 * in p's files once for the image p shares, then only moved by p's bias
 * of the object that defines it, a name none defines known absent.  A
 * DLL looks up a dozen names for each process, some that the program
 * does not define (another MPI version's), which are looked for in every
 * object it maps, twice.  The caller holds the session's files_lock.
 * Returns 0 or -ENOENT.
 */
int mqdh__images_symbol(struct target *p, const char *name, int functions, uint64_t *addr);

/* Destroy the DLL's information of every image (after every process's,
 * as the specification orders), and free the images. */
void mqdh__images_end(struct session *s);

#endif
