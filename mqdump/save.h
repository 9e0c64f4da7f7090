/*
 * save.h - mqdump --save and --load: a dump kept in a file
 * (mqdh_saved_write, mqdh_saved_read) and read back, to be shown by every
 * view as the live dump was.
 */
#ifndef MQDUMP_SAVE_H
#define MQDUMP_SAVE_H

#include "mqdhost.h"

#include <stddef.h>
#include <sys/types.h>

/* Can option (--save, --explain) write its text to path (a picture's name
 * would make dot_file render it)?  0, or -1 (said on stderr). */
int save_path_usable(const char *path, const char *option);

/*
 * Save d (as read: before the views escape it) to path, made new beside
 * it and renamed into place (no symlink followed).  The header names this
 * mqdump, this host, the time, the command line argv[0..argc-1] and, for
 * job (a launcher's pid; 0: none), the launcher's command line.  0, or -1
 * with the reason in err[errlen].
 */
int save_dump(const char *path, const struct mqdh_dump *d, int argc, char *const *argv,
              pid_t job, char *err, size_t errlen);

/*
 * The saved dump at path, read: *d and *about (free them with
 * mqdh_dump_free, mqdh_saved_free).  0, or -1 with the reason in
 * err[errlen] (not a saved dump, cut short, corrupt, cannot be read),
 * *d and *about NULL.
 */
int load_dump(const char *path, struct mqdh_dump **d, struct mqdh_saved **about, char *err,
              size_t errlen);

/* One line on stderr saying what a loaded dump is: "mqdump: PATH: saved
 * 2026-11-25T03:01:15Z on HOST by mqdump 0.2: COMMAND (launcher: ...)",
 * its strings escaped. */
void say_saved(const char *path, const struct mqdh_saved *about);

#endif
