/*
 * fuzz_image.c - the image and type modules (host/target/image.c, files.c,
 * types.c, over elfutils) on a crafted libmpi.so: the input is the ELF
 * file.  Every symbol and type look-up a DLL makes of MPICH is asked of
 * it: no crash, no leak, no sanitizer report in mqd's code or in what it
 * asks of libelf and libdw.
 */
#define _GNU_SOURCE
#include "host/target/image.h"
#include "host/target/types.h"
#include "tests/fuzz/fuzz_file.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the DLLs look up in a libmpi.so (and the fixture's own names, so
 * its seed reaches the type walks). */
static const char *const symbols[] = {"MPIR_All_communicators", "MPIR_Sendq_head",
                                      "MPID_Recvq_posted_head_ptr", "MPIR_Process",
                                      "MPIR_Breakpoint", "MPII_Version_device",
                                      "fx_global_request", "fx_global_list",
                                      "fx_local_counter", "fx_function"};
static const struct {
    const char *type, *field;
} fields[] = {
    {"MPIR_Comm", "comm_next"},        {"MPIR_Comm", "dev.ch4.netmod"},
    {"struct MPIR_Comm", "name"},      {"MPIR_Request", "dev.match.parts.tag"},
    {"MPIR_Request", "status.MPI_SOURCE"}, {"MPIDI_Message_match", "parts"},
    {"MPIR_Debugq", "next"},           {"MPIR_Comm_list", "head"},
    {"fx_request_t", "match.context_id"}, {"fx_request_t", "kind"},
    {"fx_match", "context_id"},        {"fx_opaque_t", "x"},
    {"fx_request_alias", "next"},      {"fx_request", "cc"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct mqdh__image im;
    if (mqdh__image_open_file(&im, path, err, sizeof err) == 0) {
        for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
            uint64_t addr;
            int module;
            mqdh__image_symbol(&im, symbols[i], 0, &addr, &module);
            mqdh__image_symbol(&im, symbols[i], 1, &addr, &module);
        }
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            struct mqdh__type *t = mqdh__type_find(&im, fields[i].type);
            if (t) {
                mqdh__type_size(t);
                mqdh__type_field_offset(t, fields[i].field);
            }
        }
        mqdh__image_close(&im);
    } else if (!err[0]) {
        fprintf(stderr, "fuzz_image: a refusal without its reason\n");
        abort();
    }
    close(fd);
    return 0;
}
