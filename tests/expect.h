/*
 * expect.h - read a sample's SAMPLE.expect: the queue state it promises.
 *
 * Format (samples/README.md): '#' starts a comment; lines are
 *   np N
 *   comm RANK|* NAME|- SIZE LOCAL_RANK
 *   op RANK COMM|- QUEUE STATUS PEER GPEER TAG BYTES
 * with QUEUE one of send, recv, unexpected; STATUS pending, matched,
 * complete; PEER, GPEER and TAG a number or ANY.
 */
#ifndef MQD_TESTS_EXPECT_H
#define MQD_TESTS_EXPECT_H

#define EXPECT_ANY (-1L)
#define EXPECT_ALL_RANKS (-1)

enum expect_queue { EXPECT_SEND, EXPECT_RECV, EXPECT_UNEXPECTED };

struct expect_comm {
    int rank; /* EXPECT_ALL_RANKS for '*' */
    char name[64]; /* "" for an unnamed user communicator ('-') */
    long size, local_rank;
};

struct expect_op {
    int rank;
    char comm[64];
    enum expect_queue queue;
    int status; /* enum mqs_status */
    long peer, gpeer, tag, bytes; /* EXPECT_ANY for ANY */
};

struct expect {
    int np;
    int ncomms, nops;
    struct expect_comm *comms;
    struct expect_op *ops;
};

/*
 * Parse path into *out.  Returns 0, or -1 with a message naming the file and
 * line in err[errlen].  *out belongs to the caller: expect_free() it.
 */
int expect_load(const char *path, struct expect *out, char *err, int errlen);
void expect_free(struct expect *e);

#endif
