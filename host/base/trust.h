/*
 * trust.h - the trust rule: whether a file another user may have chosen
 * (a DLL a target names, a program or agent named in the environment, a
 * debug file a target's debug link names) may be loaded, run or read by
 * this process, which may be root.
 *
 * The rule: the file a regular one, it and every directory on its path
 * owned by root or the invoking user (the effective uid) and writable by
 * neither group nor others, except that a directory above the file's own
 * may be root's and sticky (/tmp).  Whatever the rule, the path is
 * resolved once and opened one component at a time from "/" without
 * following a symbolic link (O_PATH: nothing is opened for reading, so no
 * device or FIFO is ever acted on), and a directory that became a link
 * after it was resolved is refused: the descriptor returned is the very
 * file checked.
 */
#ifndef MQDH__TRUST_H
#define MQDH__TRUST_H

#include <stddef.h>
#include <sys/stat.h>

/* How far a path is trusted. */
enum mqdh__dll_trust {
    /* Named by a target (MPIR_dll_name, a debug link, ...): the rule. */
    MQDH__DLL_TRUST_RULE,
    /* The user's choice (--dll, $MQD_DLL, $MQD_AGENT, a program on $PATH):
     * taken as given, but under the rule when running as root
     * (geteuid() == 0), where another user's file would run that user's
     * code as root. */
    MQDH__DLL_TRUST_GIVEN,
    /* No rule: --trust-target-dll, or mqd's own DLL, which sits beside the
     * library that is already running. */
    MQDH__DLL_TRUST_ANY,
};

/*
 * What a refusal says root will not do with the file: use is the action
 * ("run it", "read debug information from it"), override the way to do it
 * anyway (NULL: none).  NULL for a DLL: "loading it as root runs that
 * user's code as root; pass --trust-target-dll to load it anyway".
 */
struct mqdh__trust_use {
    const char *use;
    const char *override;
};

/*
 * Open path (relative to the current directory if not absolute; no
 * search) with O_PATH, checked under trust, into *fd and *st.  Returns
 * MQDH_OK; MQDH_E_DLL_UNTRUSTED if the rule refuses it or its path changed
 * while it was being opened; MQDH_E_DLL_LOAD if it is not there or not a
 * regular file; the reason in err, naming the path (and the owner's uid or
 * the mode that failed).  how words a refusal as root (NULL: a DLL's).
 */
int mqdh__trust_open(const char *path, enum mqdh__dll_trust trust,
                     const struct mqdh__trust_use *how, int *fd, struct stat *st, char *err,
                     size_t errlen);

/*
 * Reopen fd (an O_PATH descriptor of a regular file, mqdh__trust_open's)
 * for reading, as the same file: a descriptor, or -1 with errno.
 */
int mqdh__trust_reopen(int fd);

#endif
