/*
 * named_dll.c - linked into a sample (build/samples/SAMPLE-named) to name
 * mqd's debug DLL the way an MPI library names its own: through
 * MPIR_dll_name.  MPICH's libmpi.so defines the symbol too (naming
 * libtvmpich.so); the executable's definition wins, for mqdump as for the
 * dynamic linker.  MQD_DLL_PATH is given by the Makefile.
 */
#ifndef MQD_DLL_PATH
#error "compile with -DMQD_DLL_PATH='\"/path/to/libmqd_mpich.so\"'"
#endif

char MPIR_dll_name[4096] = MQD_DLL_PATH;
