/*
 * debugfile.h - the separate debug information of the files a session's
 * processes map: found locally by build id and by debug link, or fetched
 * through debuginfod, without ever letting what a target names block,
 * act on a device, or reach outside trusted directories.
 *
 * What a target names is hostile: its .gnu_debuglink may name a FIFO, a
 * terminal or "../../../../dev/tty".  So libdwfl's own search (which opens
 * what it builds from the link, blocking) is never given the link: the
 * build id is looked up in the debug directories (mqdh__debug_dirs), the
 * link here, and each candidate is opened as the trust rule opens a DLL
 * (trust.h: component by component, O_PATH, never a device or FIFO, a
 * regular file only, its directories trusted), then checked against the
 * module's build id (else the link's CRC) before libdwfl reads it.
 *
 * debuginfod (DEBUGINFOD_URLS) is asked last, through the client libdw
 * loads.  Its fetches are bounded: each by DEBUGINFOD_MAXTIME and
 * DEBUGINFOD_MAXSIZE (mqdump sets both), and all of them while the ranks
 * are stopped by MQDH__FETCH_BUDGET seconds in all; the files of the
 * processes to be stopped are fetched before they are stopped
 * (mqdh__debug_prefetch), so that a fetch costs the job nothing.
 */
#ifndef MQDH__DEBUGFILE_H
#define MQDH__DEBUGFILE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <sys/types.h>

struct mqdh__files;

/* Seconds of debuginfod fetches a dump may spend in all while its ranks
 * are stopped; and before they are stopped (mqdh__debug_prefetch). */
#define MQDH__FETCH_BUDGET 30.0
#define MQDH__PREFETCH_BUDGET 60.0

/*
 * The debug directories: those of env ($MQD_DEBUGINFO_PATH, in elfutils'
 * format: ':'-separated, absolute ones searched by build id and by link,
 * relative ones by link beside the file), else ":.debug:/usr/lib/debug".
 * As root, an absolute one that fails the trust rule is left out, said on
 * stderr.  A new string (libdwfl's debuginfo_path), or NULL without memory.
 */
char *mqdh__debug_dirs(const char *env);

/* fs's debuginfo_path, made from $MQD_DEBUGINFO_PATH (mqdh__debug_dirs) on
 * first need; NULL without memory (then no debug file may be looked for:
 * libdwfl would take its own, unchecked, default). */
const char *mqdh__debug_path(struct mqdh__files *fs);

/* libdwfl's find_debuginfo for every module mqd reports (files.c sets it
 * in the session's callbacks); the module's userdata is its mqdh__file. */
int mqdh__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                         Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                         GElf_Word debuglink_crc, char **debuginfo_file_name);

/*
 * Before the ranks are stopped: the debug file of m (the module of the
 * file at path, which has no DWARF of its own), when it is not found
 * locally, fetched through debuginfod into its cache (DEBUGINFOD_URLS set)
 * within MQDH__PREFETCH_BUDGET seconds of such fetches; the look-ups made
 * while the ranks are stopped then find it there (mqdh__files_prefetch).
 */
void mqdh__debug_prefetch_one(struct mqdh__files *fs, Dwfl_Module *m, const char *path);

/* Forget which of the debug link's candidate directories are there
 * (fs->real_dirs); and with keep_names 0 the resolved directories too,
 * freed. */
void mqdh__debug_dirs_forget(struct mqdh__files *fs, int keep_names);

/* End fs's debuginfod client, if it made one. */
void mqdh__debug_client_end(struct mqdh__files *fs);

/* From now on, fetches count against MQDH__FETCH_BUDGET (the ranks are
 * being stopped). */
void mqdh__debug_ranks_stopped(struct mqdh__files *fs);

#endif
