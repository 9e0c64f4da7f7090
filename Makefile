# mqd - GNU Make build.  Everything is built under $(BUILD).
#
#   make            the libraries, tools and unit tests (no MPICH needed)
#   make mpich      build MPICH with debugger support into the cache (once)
#   make samples    the MPI sample programs (builds MPICH if needed)
#   make check      set up, build everything, run unit and integration tests
#   make demo       run a sample and show its queues
#   make bench      time mqdump on whole jobs of growing size
#   make fuzz       run every fuzz target for FUZZ_SECONDS (default 60) each
#   make layouts    regenerate mpich_defs/layouts.h from the cached MPICH's DWARF
#   make ompi-layouts  regenerate ompi_defs/layouts.h (builds Open MPI as Debian
#                   does, with -g, once: long)
#   make install    mqdump, libmqdhost (+ header, pkg-config), libmqd_mpich.so,
#                   libmqd_ompi.so and mqdump(1) under $(DESTDIR)$(PREFIX)
#   make SANITIZER=address,undefined check    the same, sanitized

BUILD     ?= build
PREFIX    ?= /usr/local
DESTDIR   ?=
VERSION   := 0.3
# libmqdhost's ABI: MQDH_VERSION, its soname's number (host/include/mqdhost.h).
ABI       := 4
CC        ?= cc
CXX       ?= c++
SANITIZER ?=
CFLAGS    ?= -O2 -g

# The MPICH the samples and the integration tests run under: by default
# MPICH 4.0.2 with debugger support built by scripts/build-mpich.sh into the
# cache, with ch3:nemesis; make check also builds and tests the same
# source's ch4:ofi beside it.  Any other MPICH installed with
# --enable-debuginfo is tested as it is, never built:
# make check-mpi MQD_MPICH_PREFIX=PREFIX (its own BUILD tree, see there).
MQD_MPICH_VERSION := 4.0.2
MQD_MPICH_CH3     := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mqd/mpich-$(MQD_MPICH_VERSION)
MQD_MPICH_CH4     := $(MQD_MPICH_CH3)-ch4
MQD_MPICH_PREFIX  ?= $(MQD_MPICH_CH3)
export MQD_MPICH_PREFIX
MPICH_CACHED := $(filter $(MQD_MPICH_CH3) $(MQD_MPICH_CH4),$(MQD_MPICH_PREFIX))
MPICH_STAMP  := $(if $(MPICH_CACHED),$(MQD_MPICH_PREFIX)/.mqd-built,$(MQD_MPICH_PREFIX)/lib/libmpi.so)
# Open MPI 4.1.4 with libmpi's DWARF (scripts/build-openmpi.sh), for the
# tests of Open MPI's own DLL on real Open MPI jobs (test_openmpi).
MQD_OPENMPI_PREFIX ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mqd/openmpi-4.1.4
export MQD_OPENMPI_PREFIX
OPENMPI_STAMP := $(MQD_OPENMPI_PREFIX)/.mqd-built
MPICC       := $(MQD_MPICH_PREFIX)/bin/mpicc
MPIEXEC     := $(MQD_MPICH_PREFIX)/bin/mpiexec

# What a user runs: everything mqdump needs at run time, mqd's DLL included.
TOOLS := $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so $(BUILD)/lib/libmqd_ompi.so \
         $(BUILD)/bin/mqd-launch

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Werror
SAN  := $(if $(SANITIZER),-fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all)
MQD_CFLAGS  = -std=c11 $(WARN) $(CFLAGS) $(SAN) -MMD -MP -I.
MQD_LDFLAGS = $(SAN) $(LDFLAGS)

.PHONY: all deps mpich openmpi samples unit-tests check check-unit check-integration check-mpi \
        FORCE demo bench clean \
        layouts check-layouts ompi-layouts mpis check-includes check-limits check-namespace \
        check-abi install uninstall fuzz stock-tools check-stock-syms
.DEFAULT_GOAL := all

# ---------------------------------------------------------------- set-up
deps:
	@scripts/install-deps.sh

mpich: $(MPICH_STAMP)
$(MQD_MPICH_CH3)/.mqd-built:
	MQD_MPICH_DEVICE=ch3 MQD_MPICH_PREFIX=$(MQD_MPICH_CH3) scripts/build-mpich.sh >/dev/null
$(MQD_MPICH_CH4)/.mqd-built:
	MQD_MPICH_DEVICE=ch4 MQD_MPICH_PREFIX=$(MQD_MPICH_CH4) scripts/build-mpich.sh >/dev/null
ifeq ($(MPICH_CACHED),)
$(MQD_MPICH_PREFIX)/lib/libmpi.so:
	@echo "no MPICH in $(MQD_MPICH_PREFIX) (no lib/libmpi.so): MQD_MPICH_PREFIX must be" \
	    "the prefix of an MPICH installed with --enable-debuginfo" >&2; exit 1
endif
# The MPICH this tree's samples and tests are built against: whatever is
# built against another one is rebuilt when MQD_MPICH_PREFIX changes.
MPICH_TREE := $(BUILD)/mpich-prefix
$(MPICH_TREE): FORCE
	@mkdir -p $(@D) && { echo '$(MQD_MPICH_PREFIX)' | cmp -s - $@ || echo '$(MQD_MPICH_PREFIX)' > $@; }
FORCE:

openmpi: $(OPENMPI_STAMP)
$(OPENMPI_STAMP):
	scripts/build-openmpi.sh >/dev/null

# Every MPI make check uses, built at once, each only the first time: one
# build's configure runs on one core while another's compilers use the
# rest (on 2 cores, about 30 minutes instead of 45 one after another).
mpis: deps
	@$(MAKE) --no-print-directory -j3 $(MQD_MPICH_CH3)/.mqd-built \
	    $(MQD_MPICH_CH4)/.mqd-built $(OPENMPI_STAMP)
# The samples, built with Open MPI's mpicc (-O1 -g, as with MPICH's): every one.
OMPI_SAMPLES = $(SAMPLES)
$(BUILD)/ompi/%: samples/%.c samples/sample.c samples/sample.h $(OPENMPI_STAMP)
	@mkdir -p $(@D)
	$(MQD_OPENMPI_PREFIX)/bin/mpicc -std=c11 $(WARN) -O1 -g -Isamples -o $@ $< samples/sample.c

# ---------------------------------------------------------------- launcher
$(BUILD)/bin/mqd-launch: samples/launch.c | $(BUILD)/bin
	$(CC) $(MQD_CFLAGS) -o $@ $< $(MQD_LDFLAGS)

# ---------------------------------------------------------------- samples
SAMPLES := ring unexpected wildcards comms intercomm crossed anysource mismatch inflight spawn \
           nbcwait finalize ssend waitany splitcoll persist probe roots mixed hidden nbcmix \
           nbcorder nbcbusy latehang slowprogress
SAMPLE_BINS := $(SAMPLES:%=$(BUILD)/samples/%)

# Compiled by the cached MPICH's mpicc, which links its libmpi.so by rpath.
$(BUILD)/samples/%.o: samples/%.c samples/sample.h $(MPICH_STAMP) $(MPICH_TREE) | $(BUILD)/samples
	$(MPICC) -std=c11 $(WARN) -O1 -g -c -o $@ $<
$(BUILD)/samples/%: $(BUILD)/samples/%.o $(BUILD)/samples/sample.o
	$(MPICC) -g -o $@ $^

# The same sample naming mqd's DLL in its own MPIR_dll_name.
$(BUILD)/samples/named_dll.o: samples/named_dll.c $(MPICH_STAMP) $(MPICH_TREE) | $(BUILD)/samples
	$(MPICC) -std=c11 $(WARN) -O1 -g -DMQD_DLL_PATH='"$(abspath $(BUILD))/lib/libmqd_mpich.so"' \
	    -c -o $@ $<
$(BUILD)/samples/unexpected-named: $(BUILD)/samples/unexpected.o $(BUILD)/samples/sample.o \
                                   $(BUILD)/samples/named_dll.o
	$(MPICC) -g -o $@ $^

# The MPICH's libmpi.so without its DWARF (objcopy --strip-debug), for the
# known-layout tests, under its soname (libmpi.so.12 for 4.0, libmpi.so.0
# from 4.1 on), which $(STRIPPED)/soname names; its DWARF is kept where
# only MQD_DEBUGINFO_PATH finds it (by build id).
STRIPPED := $(BUILD)/stripped
$(STRIPPED)/soname: $(MPICH_STAMP) $(MPICH_TREE)
	rm -rf $(STRIPPED) && mkdir -p $(STRIPPED)/debug/.build-id
	so=$$(readelf -d $(MQD_MPICH_PREFIX)/lib/libmpi.so | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p') && \
	    [ -n "$$so" ] && lib=$(MQD_MPICH_PREFIX)/lib/$$so && \
	    objcopy --strip-debug $$lib $(STRIPPED)/$$so && \
	    ! readelf -S $(STRIPPED)/$$so | grep -q '\.debug_info' && \
	    id=$$(readelf -n $(STRIPPED)/$$so | sed -n 's/.*Build ID: *//p') && [ -n "$$id" ] && \
	    d=$(STRIPPED)/debug/.build-id/$$(echo $$id | cut -c1-2) && mkdir -p $$d && \
	    cp $$lib $$d/$$(echo $$id | cut -c3-).debug && echo $$so > $@

samples: $(SAMPLE_BINS) $(BUILD)/samples/unexpected-named $(STRIPPED)/soname \
         $(BUILD)/bin/mqd-launch

# ---------------------------------------------------------------- host
# host/ in layers, each using only those before it (scripts/include-graph.sh
# checks it): base <- target <- protocol <- job; analysis uses base only.
HOST_BASE     := dump escape progress beside trust mpicalls clock radix
HOST_TARGET   := attach memory pages proc procmaps proccpu gnuhash files filesyms dynmem debugfile image typeguide types pc args callsite unwind where
HOST_PROTOCOL := loader guard callbacks choose images protocol identity
HOST_JOB      := session workers launcher procjob owner hosts remote agent_command agent_result \
                 result_write result_fields \
                 result_read result_requests saved cache
HOST_ANALYSIS := analyze match waits waits_p2p waits_coll waitreq calls cycles explain \
                 calltree watch sentinel
HOST_SRCS := $(HOST_BASE:%=host/base/%.c) $(HOST_TARGET:%=host/target/%.c) \
             $(HOST_PROTOCOL:%=host/protocol/%.c) $(HOST_JOB:%=host/job/%.c) \
             $(HOST_ANALYSIS:%=host/analysis/%.c)
HOST_OBJS := $(HOST_SRCS:%.c=$(BUILD)/%.o)
HOST_LIBS := -ldw -lelf -ldl

$(BUILD)/host/%.o: host/%.c
	@mkdir -p $(@D)
	$(CC) $(MQD_CFLAGS) -Ihost -Ihost/include -fPIC -fvisibility=hidden -c -o $@ $<

# The unit tests link the host's objects directly, internals included.
$(BUILD)/host/libmqdhost-internal.a: $(HOST_OBJS)
	rm -f $@ && ar rcs $@ $^

# The shared library exports only the public mqdh_ API: everything is built
# -fvisibility=hidden, mqdhost.h marks the public functions MQDH_API, and the
# version script gives them a version.
$(BUILD)/lib/libmqdhost.so.$(ABI): $(HOST_OBJS) host/libmqdhost.map | $(BUILD)/lib
	$(CC) -shared -o $@ $(HOST_OBJS) -Wl,-soname,libmqdhost.so.$(ABI) \
	    -Wl,--version-script=host/libmqdhost.map $(MQD_LDFLAGS) $(HOST_LIBS)
$(BUILD)/lib/libmqdhost.so: $(BUILD)/lib/libmqdhost.so.$(ABI)
	ln -sf libmqdhost.so.$(ABI) $@

# mqdump: the command and its views, one file each, and the helpers the
# views share (common.c, dot.c), over the public header alone
# (host/include), linked to the shared library as any client is.
MQDUMP_VIEWS := mqdump/text.c mqdump/verdict.c mqdump/json.c mqdump/graph.c mqdump/stacks.c \
                mqdump/common.c mqdump/dot.c
MQDUMP_SRCS := mqdump/main.c mqdump/options.c mqdump/agent.c mqdump/save.c mqdump/meter.c \
               mqdump/watcher.c \
               mqdump/moved.c $(MQDUMP_VIEWS)
MQDUMP_HDRS := mqdump/mqdump.h mqdump/text.h mqdump/json.h mqdump/graph.h mqdump/stacks.h \
               mqdump/common.h mqdump/dot.h mqdump/agent.h mqdump/save.h \
               mqdump/meter.h mqdump/moved.h mqdump/watcher.h
$(BUILD)/bin/mqdump: $(MQDUMP_SRCS) $(MQDUMP_HDRS) $(BUILD)/lib/libmqdhost.so | $(BUILD)/bin
	$(CC) $(MQD_CFLAGS) -Ihost/include -DMQD_VERSION='"$(VERSION)"' -o $@ $(MQDUMP_SRCS) \
	    -L$(BUILD)/lib -lmqdhost \
	    -Wl,-rpath,'$$ORIGIN/../lib' $(MQD_LDFLAGS)

# How the analysis and the folded views scale (make bench): mqdump's own
# functions (its source included) on synthetic dumps.
$(BUILD)/tests/bench_analysis: tests/bench_analysis.c tests/handdump.c tests/handdump.h \
                               $(MQDUMP_VIEWS) $(MQDUMP_HDRS) $(BUILD)/lib/libmqdhost.so \
                               | $(BUILD)/tests
	$(CC) $(MQD_CFLAGS) -I. -Ihost/include -o $@ tests/bench_analysis.c tests/handdump.c \
	    $(MQDUMP_VIEWS) -L$(BUILD)/lib -lmqdhost -Wl,-rpath,'$$ORIGIN/../lib' $(MQD_LDFLAGS)
# --graph folded and full on dumps built by hand: mqdump's views linked in.
$(BUILD)/tests/test_graph: tests/test_graph.c tests/handdump.c tests/handdump.h \
                           $(MQDUMP_VIEWS) $(MQDUMP_HDRS) $(BUILD)/lib/libmqdhost.so \
                           | $(BUILD)/tests
	$(CC) $(MQD_CFLAGS) -Ihost/include -o $@ tests/test_graph.c tests/handdump.c \
	    $(MQDUMP_VIEWS) -L$(BUILD)/lib -lmqdhost -Wl,-rpath,'$$ORIGIN/../lib' $(MQD_LDFLAGS) \
	    -lcmocka

# ---------------------------------------------------------------- tests
# The interface header alone, as C11 and C++11, MPI-1 and MPI-2.
ABI_CHECKS := $(BUILD)/tests/abi_c11.o $(BUILD)/tests/abi_c11_mpi2.o \
              $(BUILD)/tests/abi_cxx.o $(BUILD)/tests/abi_cxx_mpi2.o
$(BUILD)/tests/abi_c11.o: tests/abi_check.c mpi_interface.h | $(BUILD)/tests
	$(CC) -std=c11 -pedantic $(WARN) -I. -c -o $@ $<
$(BUILD)/tests/abi_c11_mpi2.o: tests/abi_check.c mpi_interface.h | $(BUILD)/tests
	$(CC) -std=c11 -pedantic $(WARN) -DFOR_MPI2 -I. -c -o $@ $<
$(BUILD)/tests/abi_cxx.o: tests/abi_check.c mpi_interface.h | $(BUILD)/tests
	$(CXX) -std=c++11 -x c++ -pedantic -Wall -Wextra -Werror -I. -c -o $@ $<
$(BUILD)/tests/abi_cxx_mpi2.o: tests/abi_check.c mpi_interface.h | $(BUILD)/tests
	$(CXX) -std=c++11 -x c++ -pedantic -Wall -Wextra -Werror -DFOR_MPI2 -I. -c -o $@ $<

# Tests may reach the host's internals (host/LAYER/x.h, which include each
# other from host/).
$(BUILD)/tests/%.o: tests/%.c | $(BUILD)/tests
	$(CC) $(MQD_CFLAGS) -Ihost -c -o $@ $<

UNIT_TESTS := $(BUILD)/tests/test_interface $(BUILD)/tests/test_expect \
              $(BUILD)/tests/test_memory $(BUILD)/tests/test_attach \
              $(BUILD)/tests/test_image $(BUILD)/tests/test_loader $(BUILD)/tests/test_dump \
              $(BUILD)/tests/test_dll $(BUILD)/tests/test_dll_synth $(BUILD)/tests/test_dll_ompi \
              $(BUILD)/tests/test_analyze $(BUILD)/tests/test_result $(BUILD)/tests/test_corpus $(BUILD)/tests/test_stacks \
              $(BUILD)/tests/test_escape $(BUILD)/tests/test_dump_model \
              $(BUILD)/tests/test_graph $(BUILD)/tests/test_procjob
HOST_UNIT_TESTS := $(BUILD)/tests/test_memory $(BUILD)/tests/test_attach \
                   $(BUILD)/tests/test_image $(BUILD)/tests/test_loader $(BUILD)/tests/test_dump \
                   $(BUILD)/tests/test_dll $(BUILD)/tests/test_dll_synth $(BUILD)/tests/test_dll_ompi \
                   $(BUILD)/tests/test_analyze \
                   $(BUILD)/tests/test_result $(BUILD)/tests/test_stacks $(BUILD)/tests/test_escape \
                   $(BUILD)/tests/test_dump_model $(BUILD)/tests/test_procjob
INTEGRATION_TESTS := $(BUILD)/tests/test_samples $(BUILD)/tests/test_mqdump \
                     $(BUILD)/tests/test_dbgstub $(BUILD)/tests/test_install \
                     $(BUILD)/tsan/tests/test_threads $(BUILD)/tests/test_multinode \
                     $(BUILD)/tests/test_faults $(BUILD)/tests/test_security \
                     $(BUILD)/tests/test_json_format $(BUILD)/tests/test_stock \
                     $(BUILD)/tests/test_openmpi \
                     $(BUILD)/tests/test_callsite $(BUILD)/tests/test_watch $(BUILD)/tests/test_nbc $(BUILD)/tests/test_save \
                     $(BUILD)/tests/test_sentinel

# ---------------------------------------------------------------- the DLL
# libmqd_mpich.so: every mqs_* entry point and mqd_get_comm_handle, nothing
# else exported.
# One vendor-neutral core (dll/backend.h), one backend per MPI: the two
# DLLs share the core's files and nothing else.
DLL_CORE := dll/entry.c dll/target.c dll/job.c dll/records.c dll/request.c
DLL_SRCS := $(DLL_CORE) dll/mpich_layout.c dll/mpich_keys.c dll/mpich_ranks.c dll/mpich_comms.c \
            dll/mpich_requests.c dll/mpich_stock.c dll/mpich_queues.c dll/mpich_handles.c
DLL_OBJS := $(DLL_SRCS:%.c=$(BUILD)/%.o)
$(BUILD)/dll/%.o: dll/%.c | $(BUILD)/dll
	$(CC) $(MQD_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<
$(BUILD)/lib/libmqd_mpich.so: $(DLL_OBJS) | $(BUILD)/lib
	$(CC) -shared -o $@ $^ $(MQD_LDFLAGS)
# libmqd_ompi.so: the same core, Open MPI's backend (ompi_defs/).
OMPI_DLL_SRCS := $(DLL_CORE) dll/ompi_layout.c dll/ompi_ranks.c dll/ompi_comms.c \
                 dll/ompi_queues.c
OMPI_DLL_OBJS := $(OMPI_DLL_SRCS:%.c=$(BUILD)/%.o)
$(BUILD)/lib/libmqd_ompi.so: $(OMPI_DLL_OBJS) | $(BUILD)/lib
	$(CC) -shared -o $@ $^ $(MQD_LDFLAGS)

# Known layouts (mpich_defs/layouts.h) are generated from the cached MPICH's
# DWARF: `make layouts` after changing mpich_defs.h or the MPICH build.
$(BUILD)/mpich_defs/gen_layout.o: mpich_defs/gen_layout.c | $(BUILD)/mpich_defs
	$(CC) $(MQD_CFLAGS) -Ihost -c -o $@ $<
$(BUILD)/bin/gen_layout: $(BUILD)/mpich_defs/gen_layout.o $(BUILD)/host/libmqdhost-internal.a \
                         | $(BUILD)/bin
	$(CC) -o $@ $^ $(MQD_LDFLAGS) $(HOST_LIBS)
layouts: $(BUILD)/bin/gen_layout $(MPICH_STAMP)
	MQD_BUILD=$(BUILD) mpich_defs/gen-layouts.sh
# The tools of mpich_defs/gen-stock.sh (the known stock builds,
# stock_builds.h): gen_layout, and gen_stock_syms (libelf only).
$(BUILD)/bin/gen_stock_syms: mpich_defs/gen_stock_syms.c | $(BUILD)/bin
	$(CC) $(MQD_CFLAGS) -o $@ $< $(MQD_LDFLAGS) -lelf
stock-tools: $(BUILD)/bin/gen_layout $(BUILD)/bin/gen_stock_syms
# gen_stock_syms on a library of its own, stripped: it must find the
# hidden globals where the unstripped one's symbol table has them.
check-stock-syms: $(BUILD)/bin/gen_stock_syms
	@MQD_BUILD=$(BUILD) tests/stock_syms.sh
# The committed table must be what the cached build's DWARF says.
check-layouts: $(BUILD)/bin/gen_layout $(MPICH_STAMP)
	@MQD_BUILD=$(BUILD) mpich_defs/gen-layouts.sh $(BUILD)/layouts.h >/dev/null
	@diff -u mpich_defs/layouts.h $(BUILD)/layouts.h || \
	    { echo "mpich_defs/layouts.h does not match the DWARF of $(MQD_MPICH_PREFIX): make layouts" >&2; exit 1; }
	@echo "mpich_defs/layouts.h matches the DWARF of the cached MPICH"

# Known Open MPI layouts (ompi_defs/layouts.h) come from a build made as
# Debian makes it, with -g (scripts/build-openmpi-debian.sh, long: not part
# of make check), checked against Debian's own binaries: `make ompi-layouts`.
$(BUILD)/ompi_defs/gen_layout.o: ompi_defs/gen_layout.c | $(BUILD)/ompi_defs
	$(CC) $(MQD_CFLAGS) -Ihost -c -o $@ $<
$(BUILD)/bin/gen_ompi_layout: $(BUILD)/ompi_defs/gen_layout.o $(BUILD)/dll/target.o \
                              $(BUILD)/host/libmqdhost-internal.a | $(BUILD)/bin
	$(CC) -o $@ $^ $(MQD_LDFLAGS) $(HOST_LIBS)
ompi-layouts: $(BUILD)/bin/gen_ompi_layout
	MQD_BUILD=$(BUILD) ompi_defs/gen-layouts.sh

$(BUILD)/tests/test_interface: $(BUILD)/tests/test_interface.o
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka
$(BUILD)/tests/test_expect: $(BUILD)/tests/test_expect.o $(BUILD)/tests/expect.o
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka
# Purpose-built MQD DLLs, one defect or behaviour each (tests/fixtures/fake_dll.c).
FAKE_VARIANTS := ok: mpi1:-DFAKE_MPI1 no_setup_image:-DFAKE_NO_SETUP_IMAGE \
                 version99:-DFAKE_VERSION=99 width4:-DFAKE_WIDTH=4 slow:-DFAKE_SLOW \
                 no_queues:-DFAKE_NO_QUEUES crash:-DFAKE_CRASH loop:-DFAKE_LOOP \
                 loop_calls:-DFAKE_LOOP_CALLS
FAKE_DLLS := $(foreach v,$(FAKE_VARIANTS),$(BUILD)/tests/fake/fake_$(firstword $(subst :, ,$(v))).so) \
             $(BUILD)/tests/fake/not_a_dll.so
fake_flags = $(patsubst $(1):%,%,$(filter $(1):%,$(FAKE_VARIANTS)))
$(BUILD)/tests/fake/fake_%.so: tests/fixtures/fake_dll.c mpi_interface.h | $(BUILD)/tests/fake
	$(CC) -std=c11 $(WARN) -O1 -g -fPIC -shared -fvisibility=hidden -I. \
	    $(call fake_flags,$*) -o $@ $<
$(BUILD)/tests/fake/not_a_dll.so: | $(BUILD)/tests/fake
	echo "this is a text file, not a shared object" > $@
# No MQD DLL, but a constructor that marks the process it runs in.
$(BUILD)/tests/fake/not_mqd.so: tests/fixtures/ctor_lib.c | $(BUILD)/tests/fake
	$(CC) -std=c11 $(WARN) -O1 -g -fPIC -shared -o $@ $<
# The good fake DLL plus a constructor that marks the process it runs in.
$(BUILD)/tests/fake/evil.so: tests/fixtures/evil_dll.c tests/fixtures/fake_dll.c mpi_interface.h \
                             | $(BUILD)/tests/fake
	$(CC) -std=c11 $(WARN) -O1 -g -fPIC -shared -fvisibility=hidden -I. -o $@ $<

$(HOST_UNIT_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/host/libmqdhost-internal.a
	$(CC) -o $@ $(filter-out %.a,$^) $(BUILD)/host/libmqdhost-internal.a $(MQD_LDFLAGS) \
	    $(HOST_LIBS) -lpthread -lcmocka
$(BUILD)/tests/test_attach $(BUILD)/tests/test_dump: $(BUILD)/tests/procstate.o
$(BUILD)/tests/test_loader.o $(BUILD)/tests/test_dump.o $(BUILD)/tests/test_dll.o \
$(BUILD)/tests/test_analyze.o $(BUILD)/tests/test_result.o $(BUILD)/tests/test_stacks.o \
$(BUILD)/tests/test_escape.o $(BUILD)/tests/test_dump_model.o \
$(BUILD)/tests/test_procjob.o $(BUILD)/tests/test_attach.o: MQD_CFLAGS += -Ihost/include
$(BUILD)/tests/test_dll $(BUILD)/tests/test_dll_synth: | $(BUILD)/lib/libmqd_mpich.so
$(BUILD)/tests/test_dll $(BUILD)/tests/test_dll_ompi: | $(BUILD)/lib/libmqd_ompi.so
$(BUILD)/tests/test_dll_synth: $(BUILD)/tests/synth.o $(BUILD)/tests/expect.o \
                               $(BUILD)/tests/dlldump.o
# libmqd_ompi.so against synthetic Open MPI (pml ob1) targets.
$(BUILD)/tests/test_dll_ompi: $(BUILD)/tests/synth.o $(BUILD)/tests/synth_ompi.o \
                              $(BUILD)/tests/dlldump.o
$(BUILD)/tests/dlldump.o $(BUILD)/tests/test_dll_ompi.o: MQD_CFLAGS += -Ihost/include
# test_dump's target is a fork of itself: its DWARF must describe mqd_fixture_op.
$(BUILD)/tests/test_dump.o: MQD_CFLAGS += -g
$(BUILD)/tests/test_loader: | $(FAKE_DLLS) $(BUILD)/tests/libtypes_fixture.so \
                              $(BUILD)/tests/fake/evil.so $(BUILD)/tests/fake/not_mqd.so
$(BUILD)/tests/test_dump: | $(FAKE_DLLS) $(BUILD)/bin/mqdump

# A launcher whose MPIR_proctable names whatever its command line says.
$(BUILD)/tests/fake_launcher: tests/fixtures/fake_launcher.c | $(BUILD)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -o $@ $<
# Debian's own MPICH, unpacked (no queues for debuggers, libmpich stripped),
# and samples built against it at -O2 -g and -O0 -g: what the plain command
# says on the MPI a distribution installs (test_stock).
STOCK_SAMPLES := ring mismatch finalize probe ssend roots inflight hidden unexpected wildcards \
                 nbcwait nbcmix nbcorder waitany
$(BUILD)/stock/mpiexec: scripts/stock-samples.sh scripts/fetch-stock-mpich.sh \
                        scripts/debian-unpack.sh samples/sample.c \
                        samples/sample.h $(STOCK_SAMPLES:%=samples/%.c)
	MQD_BUILD=$(BUILD) scripts/stock-samples.sh $(STOCK_SAMPLES) >/dev/null
# Under Debian's Open MPI mqd's DLL reads the queues (its known layout of
# that build): the samples whose queues test_stock compares too.
OMPI_STOCK_SAMPLES := $(STOCK_SAMPLES) unexpected wildcards
$(BUILD)/stock/ompi/mpirun: scripts/stock-samples.sh scripts/fetch-stock-ompi.sh \
                            scripts/debian-unpack.sh samples/sample.c samples/sample.h \
                            $(OMPI_STOCK_SAMPLES:%=samples/%.c)
	MQD_BUILD=$(BUILD) scripts/stock-samples.sh --mpi openmpi $(OMPI_STOCK_SAMPLES) >/dev/null
$(BUILD)/tests/test_stock: $(BUILD)/tests/test_stock.o $(BUILD)/tests/joblaunch.o \
                           $(BUILD)/tests/json.o $(BUILD)/tests/expect.o \
                           $(BUILD)/tests/compare.o \
                           | $(BUILD)/stock/mpiexec $(BUILD)/stock/ompi/mpirun $(BUILD)/bin/mqdump \
                             $(BUILD)/lib/libmqd_ompi.so $(BUILD)/bin/mqd-launch
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka
# An MPI call whose source is an entry value, and one on MPI_COMM_SELF
# (tests/fixtures/callsite.c), built at -O2 -g against the stock MPICH as
# the stock samples are, with their sample.o.
$(BUILD)/stock/O2/callsite: tests/fixtures/callsite.c samples/sample.h $(BUILD)/stock/mpiexec
	prefix=$$(scripts/fetch-stock-mpich.sh | tail -n 1) && \
	    ma=$$($(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu) && \
	    $(CC) -std=c11 $(WARN) -O2 -g -Isamples -I$$prefix/usr/include/$$ma/mpich -o $@ $< \
	        $(BUILD)/stock/O2/sample.o -L$$prefix/usr/lib/$$ma -lmpich \
	        -Wl,--disable-new-dtags -Wl,-rpath,$$prefix/usr/lib/$$ma
# The calls' arguments from their call sites: the stock samples and the
# fixture above, and the cached MPICH's roots (its DWARF first).
$(BUILD)/tests/test_callsite: $(BUILD)/tests/test_callsite.o $(BUILD)/tests/joblaunch.o \
                              $(BUILD)/tests/json.o \
                              | $(BUILD)/stock/mpiexec $(BUILD)/stock/O2/callsite \
                                $(BUILD)/samples/roots $(BUILD)/bin/mqdump \
                                $(BUILD)/lib/libmqd_mpich.so $(BUILD)/bin/mqd-launch
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka
$(BUILD)/tests/test_openmpi: $(BUILD)/tests/test_openmpi.o $(BUILD)/tests/joblaunch.o \
                             $(BUILD)/tests/json.o $(BUILD)/tests/expect.o \
                             $(BUILD)/tests/compare.o $(BUILD)/tests/procstate.o \
                             | $(OMPI_SAMPLES:%=$(BUILD)/ompi/%) \
                             $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_ompi.so \
                             $(BUILD)/bin/mqd-launch
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka
$(BUILD)/tests/test_security: $(BUILD)/tests/test_security.o $(BUILD)/tests/joblaunch.o \
                              | $(BUILD)/tests/fake_launcher $(BUILD)/bin/mqdump
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka
# A stand-in rank that the fake DLL dumps, for tests that run it as
# another user (a launcher's table naming its own user's processes).
$(BUILD)/tests/fake_rank: tests/fixtures/fake_rank.c tests/fixtures/fixture_op.h \
                          | $(BUILD)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -o $@ $<
$(BUILD)/tests/test_attach: | $(BUILD)/tests/fake_rank $(BUILD)/tests/fake/fake_ok.so
$(BUILD)/tests/test_mqdump: | $(BUILD)/tests/fake_launcher $(BUILD)/tests/fake_rank $(FAKE_DLLS)

$(BUILD)/tests/test_image: | $(BUILD)/tests/libtypes_fixture.so $(BUILD)/tests/libguide_fixture.so \
                             $(BUILD)/tests/debuglink/libtypes_fixture.so \
                             $(BUILD)/tests/evillink/libtypes_fixture.so \
                             $(BUILD)/tests/evilslash/libtypes_fixture.so
# The same fixture with its DWARF in a separate file found by .gnu_debuglink.
$(BUILD)/tests/debuglink/libtypes_fixture.so: $(BUILD)/tests/libtypes_fixture.so
	mkdir -p $(@D)
	objcopy --only-keep-debug $< $@.debug
	objcopy --strip-debug --add-gnu-debuglink=$@.debug $< $@
# The same stripped fixture with a .gnu_debuglink a hostile target could
# have: a plain name (the test makes it a FIFO) and a path that climbs out.
$(BUILD)/tests/evillink/libtypes_fixture.so: $(BUILD)/tests/libtypes_fixture.so
	mkdir -p $(@D)
	printf 'evil.debug\0\0\0\0\0\0' > $@.link
	objcopy --strip-debug --add-section .gnu_debuglink=$@.link $< $@
$(BUILD)/tests/evilslash/libtypes_fixture.so: $(BUILD)/tests/libtypes_fixture.so
	mkdir -p $(@D)
	printf '../evillink/evil.debug\0\0\0\0\0\0' > $@.link
	objcopy --strip-debug --add-section .gnu_debuglink=$@.link $< $@
# One source built as 8 units and linked (-g -O0, no sanitizer): the type
# guide's fixture (tests/fixtures/guide_fixture.c).
GUIDE_UNITS := $(foreach u,1 2 3 4 5 6 7 8,$(BUILD)/tests/guide/unit$(u).o)
$(BUILD)/tests/guide/unit%.o: tests/fixtures/guide_fixture.c
	mkdir -p $(@D)
	$(CC) -std=c11 $(WARN) -g -O0 -fPIC -DUNIT=$* -c -o $@ $<
$(BUILD)/tests/libguide_fixture.so: $(GUIDE_UNITS)
	$(CC) -shared -o $@ $^
# Plain -g -O0 (no sanitizer): a fixture whose DWARF the test knows exactly.
$(BUILD)/tests/libtypes_fixture.so: tests/fixtures/types_fixture.c | $(BUILD)/tests
	$(CC) -std=c11 $(WARN) -g -O0 -fPIC -shared -o $@ $<
# A library whose MPI entry point tail-calls a static internal_NAME (MPICH
# 4.1+'s bindings), with and without its symbols, and programs calling it
# through a PLT, a .plt.sec and a GOT slot (-fno-plt).
TAIL := $(BUILD)/tests/tail
TAIL_PROGS := $(TAIL)/prog_plt $(TAIL)/prog_noplt $(TAIL)/prog_cet
$(TAIL)/sym/libmpi.so.12: tests/fixtures/tailcall_mpi.c
	mkdir -p $(@D)
	$(CC) -std=c11 $(WARN) -O2 -g -fPIC -shared -Wl,-soname,libmpi.so.12 -o $@ $<
$(TAIL)/stripped/libmpi.so.12: $(TAIL)/sym/libmpi.so.12
	mkdir -p $(@D)
	strip --strip-all -o $@ $<
$(TAIL)/prog_plt: MQD_TAIL_FLAGS :=
$(TAIL)/prog_noplt: MQD_TAIL_FLAGS := -fno-plt
$(TAIL)/prog_cet: MQD_TAIL_FLAGS := -fcf-protection=full -Wl,-z,ibtplt
$(TAIL_PROGS): tests/fixtures/tailcall_prog.c $(TAIL)/sym/libmpi.so.12 \
               $(TAIL)/stripped/libmpi.so.12
	$(CC) -std=c11 $(WARN) -O2 -g $(MQD_TAIL_FLAGS) -o $@ $< $(TAIL)/sym/libmpi.so.12
$(BUILD)/tests/test_samples: $(BUILD)/tests/test_samples.o $(BUILD)/tests/expect.o \
                             $(BUILD)/tests/joblaunch.o
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

# Jobs across simulated nodes (tests/multinode.sh): root, namespaces, sshd.
$(BUILD)/tests/test_multinode: $(BUILD)/tests/test_multinode.o $(BUILD)/tests/expect.o \
                               $(BUILD)/tests/joblaunch.o $(BUILD)/tests/json.o \
                               $(BUILD)/tests/compare.o $(BUILD)/tests/procstate.o \
                               | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so \
                                 $(BUILD)/lib/libmqd_ompi.so $(BUILD)/ompi/ring \
                                 $(BUILD)/tests/fake_launcher
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

# Faults injected into live jobs (mqdump killed, ranks killed, stopped or
# traced, threads churning, DLLs crashing or looping).
$(BUILD)/tests/churn: tests/fixtures/churn.c | $(BUILD)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -pthread -o $@ $<
$(BUILD)/tests/test_faults: $(BUILD)/tests/test_faults.o $(BUILD)/tests/joblaunch.o \
                            $(BUILD)/tests/procstate.o \
                            | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so $(FAKE_DLLS) \
                              $(BUILD)/tests/churn
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

$(BUILD)/tests/test_mqdump: $(BUILD)/tests/test_mqdump.o $(BUILD)/tests/expect.o \
                            $(BUILD)/tests/joblaunch.o $(BUILD)/tests/json.o \
                            $(BUILD)/tests/compare.o $(BUILD)/tests/procstate.o \
                            | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so $(TAIL_PROGS)
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

# --save then --load against the live dump, view by view, on real jobs;
# files that are not saved dumps refused.
# And the library's progress callback, in the test's own dump of a job.
$(BUILD)/tests/test_save: $(BUILD)/tests/test_save.o $(BUILD)/tests/joblaunch.o \
                          $(BUILD)/tests/json.o $(BUILD)/tests/procstate.o \
                          $(BUILD)/host/libmqdhost-internal.a \
                          | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so $(BUILD)/bin/mqd-launch \
                            $(BUILD)/tests/fake/fake_loop.so
	$(CC) -o $@ $(filter-out %.a,$^) $(BUILD)/host/libmqdhost-internal.a $(MQD_LDFLAGS) \
	    $(HOST_LIBS) -lpthread -lcmocka -lutil
$(BUILD)/tests/test_save.o: MQD_CFLAGS += -Ihost/include

# Nonblocking collectives on real jobs: mismatched instances are deadlocks,
# concurrent correct ones never are.
$(BUILD)/tests/test_nbc: $(BUILD)/tests/test_nbc.o $(BUILD)/tests/expect.o \
                         $(BUILD)/tests/joblaunch.o $(BUILD)/tests/json.o \
                         $(BUILD)/tests/compare.o \
                         | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

# mqdump --sentinel on real jobs (latehang caught, slowprogress never), the
# library's sentinel on looks built by hand, and the cache its looks share;
# over the public API alone, as mqdump is.
$(BUILD)/tests/test_sentinel: $(BUILD)/tests/test_sentinel.o $(BUILD)/tests/handdump.o \
                              $(BUILD)/tests/joblaunch.o $(BUILD)/tests/procstate.o \
                              $(BUILD)/lib/libmqdhost.so \
                              | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so $(BUILD)/bin/mqd-launch
	$(CC) -o $@ $(filter %.o,$^) -L$(BUILD)/lib -lmqdhost -Wl,-rpath,'$$ORIGIN/../lib' \
	    $(MQD_LDFLAGS) -lcmocka
$(BUILD)/tests/test_sentinel.o $(BUILD)/tests/handdump.o: MQD_CFLAGS += -Ihost/include

# mqdump --watch S on hung and moving samples, its JSON against the
# schema, and the CPU time an agent's result carries, read back by the
# library.
# The views (mqdump/moved.c, with their common.c) are linked in for the
# cases built by hand (tests/handdump.c); the comparison is the library's.
$(BUILD)/tests/test_watch: tests/test_watch.c mqdump/moved.c mqdump/moved.h mqdump/common.c \
                           tests/handdump.c $(BUILD)/tests/joblaunch.o $(BUILD)/tests/json.o \
                           $(BUILD)/tests/schema.o $(BUILD)/tests/procstate.o \
                           $(BUILD)/lib/libmqdhost.so \
                           | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so
	$(CC) $(MQD_CFLAGS) -Ihost/include -o $@ tests/test_watch.c mqdump/moved.c \
	    mqdump/common.c tests/handdump.c $(filter %.o,$^) -L$(BUILD)/lib -lmqdhost \
	    -Wl,-rpath,'$$ORIGIN/../lib' $(MQD_LDFLAGS) -lcmocka

# mqdump's JSON against its schema (docs/json-schema.json, docs/JSON.md):
# every sample's, through tests/schema.c's validator.
$(BUILD)/tests/test_json_format: $(BUILD)/tests/test_json_format.o $(BUILD)/tests/schema.o \
                                 $(BUILD)/tests/json.o $(BUILD)/tests/joblaunch.o \
                                 $(BUILD)/tests/expect.o $(BUILD)/tests/compare.o \
                                 | $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

# MPICH's own stub debugger (dbgstub.c + tvtest.c, kept in the cache by
# build-mpich.sh) linked against libmqd_mpich.so instead of libtvmpich.so:
# a third-party MQD host.  tvtest.c is compiled as shipped (-w: its own
# warnings are not ours); the shim supplies two symbols libmpi.so hides.
DBGSTUB := $(MQD_MPICH_PREFIX)/share/mqd/dbgstub
$(BUILD)/tests/tvtest.o: $(MPICH_STAMP) $(MPICH_TREE) | $(BUILD)/tests
	$(MPICC) -g -w -I$(DBGSTUB) -c -o $@ $(DBGSTUB)/tvtest.c
$(BUILD)/tests/dbgstub_shim.o: tests/fixtures/dbgstub_shim.c | $(BUILD)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -c -o $@ $<
$(BUILD)/tests/tvtest: $(BUILD)/tests/tvtest.o $(BUILD)/tests/dbgstub_shim.o \
                      $(BUILD)/lib/libmqd_mpich.so
	$(MPICC) -g -o $@ $(BUILD)/tests/tvtest.o $(DBGSTUB)/dbgstub.o $(BUILD)/tests/dbgstub_shim.o \
	    -L$(BUILD)/lib -lmqd_mpich -lelf -Wl,-rpath,$(abspath $(BUILD))/lib
$(BUILD)/tests/test_dbgstub: $(BUILD)/tests/test_dbgstub.o $(BUILD)/tests/joblaunch.o \
                             $(BUILD)/tests/compare.o $(BUILD)/tests/json.o \
                             $(BUILD)/tests/expect.o | $(BUILD)/tests/tvtest
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

# The install test runs `make install` itself, into a temporary DESTDIR.
$(BUILD)/tests/test_install: $(BUILD)/tests/test_install.o $(BUILD)/tests/joblaunch.o \
                             $(BUILD)/tests/json.o | $(TOOLS) $(BUILD)/lib/libmqdhost.so
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

# Two dumps at once in two threads, under ThreadSanitizer: the host
# library and mqd's DLL built again with -fsanitize=thread in their own
# tree, the DLL in tsan/lib where the library looks for it (../lib from the
# program).  Whatever SANITIZER the rest is built with.
TSAN := $(BUILD)/tsan
TSAN_CFLAGS = -std=c11 $(WARN) -O1 -g -fsanitize=thread -MMD -MP -I. -Ihost -Ihost/include
$(TSAN)/host/%.o: host/%.c
	@mkdir -p $(@D)
	$(CC) $(TSAN_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<
$(TSAN)/dll/%.o: dll/%.c
	@mkdir -p $(@D)
	$(CC) $(TSAN_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<
$(TSAN)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(TSAN_CFLAGS) -c -o $@ $<
$(TSAN)/lib/libmqd_mpich.so: $(DLL_SRCS:%.c=$(TSAN)/%.o)
	@mkdir -p $(@D)
	$(CC) -shared -fsanitize=thread -o $@ $^
$(TSAN)/tests/test_threads: $(TSAN)/tests/test_threads.o $(TSAN)/tests/joblaunch.o \
                            $(TSAN)/tests/procstate.o $(HOST_SRCS:%.c=$(TSAN)/%.o) \
                            | $(TSAN)/lib/libmqd_mpich.so $(BUILD)/bin/mqd-launch
	$(CC) -fsanitize=thread -o $@ $^ $(HOST_LIBS) -lpthread -lcmocka

# ---------------------------------------------------------------- fuzzing
# Fuzz targets (tests/fuzz/fuzz_*.c), each over what mqd reads from outside:
# the DLL over target memory, the agent result reader (and the saved-dump
# reader, mqdump --load, on the same inputs), the .expect reader,
# /proc's text, a libmpi.so's ELF and DWARF.  `make fuzz` builds them with
# clang's libFuzzer, ASan and UBSan (the host and the DLL instrumented too,
# in their own tree) and runs each for FUZZ_SECONDS, growing its corpus in
# $(FUZZ)/corpus/NAME from the committed seeds (tests/fuzz/corpus/NAME);
# the leak check is libFuzzer's own, at every input.  make check replays
# the committed seeds through the same targets, built by $(CC) with
# tests/fuzz/replay.c standing in for libFuzzer.
FUZZ_TARGETS := dll result expect proc image text
FUZZ         := $(BUILD)/fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   = -std=c11 $(WARN) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -I. \
                -Ihost -Ihost/include -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
$(FUZZ)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fPIC -c -o $@ $<
$(FUZZ)/lib/libmqd_mpich.so: $(DLL_SRCS:%.c=$(FUZZ)/obj/%.o)
	@mkdir -p $(@D)
	$(FUZZ_CC) -shared $(FUZZ_SAN) -o $@ $^
$(FUZZ)/lib/libmqd_ompi.so: $(OMPI_DLL_SRCS:%.c=$(FUZZ)/obj/%.o)
	@mkdir -p $(@D)
	$(FUZZ_CC) -shared $(FUZZ_SAN) -o $@ $^
FUZZ_HOST := $(HOST_SRCS:%.c=$(FUZZ)/obj/%.o)
fuzz_deps = $(if $(filter dll,$(1)),$(2)/tests/synth.o $(2)/tests/synth_ompi.o,)$(if $(filter expect,$(1)),$(2)/tests/expect.o,)
$(FUZZ)/bin/fuzz_%: $(FUZZ)/obj/tests/fuzz/fuzz_%.o $(FUZZ_HOST) $(FUZZ)/obj/tests/synth.o \
                    $(FUZZ)/obj/tests/synth_ompi.o $(FUZZ)/obj/tests/expect.o \
                    | $(FUZZ)/lib/libmqd_mpich.so $(FUZZ)/lib/libmqd_ompi.so
	@mkdir -p $(@D)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(call fuzz_deps,$*,$(FUZZ)/obj) \
	    $(FUZZ_HOST) $(HOST_LIBS) -lpthread
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ)/bin/fuzz_%)
.PRECIOUS: $(FUZZ)/obj/%.o $(BUILD)/tests/fuzz_%.o
# Each target's seeds copied into a corpus of its own (the committed ones
# are never written), then FUZZ_SECONDS of fuzzing; the last line of each
# run (executions, coverage) is kept in $(FUZZ)/NAME.log.
fuzz: deps
	@scripts/install-deps.sh --fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ)/corpus/$$t && { cp -n tests/fuzz/corpus/$$t/* $(FUZZ)/corpus/$$t/ || true; } && \
	    echo "fuzz_$$t: $(FUZZ_SECONDS) s" && \
	    $(FUZZ)/bin/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
	        -print_final_stats=1 -artifact_prefix=$(FUZZ)/crash-$$t- $(FUZZ)/corpus/$$t \
	        > $(FUZZ)/$$t.log 2>&1; rc=$$?; \
	    grep -E '^stat::number_of_executed_units|^Done|ERROR|SUMMARY' $(FUZZ)/$$t.log; \
	    if [ $$rc -ne 0 ]; then echo "fuzz_$$t FAILED (exit $$rc): $(FUZZ)/$$t.log" >&2; exit 1; fi; \
	done

# The seeds replayed (make check), by the ordinary compiler.
$(BUILD)/tests/replay.o: tests/fuzz/replay.c | $(BUILD)/tests
	$(CC) $(MQD_CFLAGS) -c -o $@ $<
$(BUILD)/tests/fuzz_%.o: tests/fuzz/fuzz_%.c | $(BUILD)/tests
	$(CC) $(MQD_CFLAGS) -Ihost -Ihost/include -c -o $@ $<
REPLAYS := $(FUZZ_TARGETS:%=$(BUILD)/tests/replay_%)
$(BUILD)/tests/replay_%: $(BUILD)/tests/fuzz_%.o $(BUILD)/tests/replay.o $(BUILD)/tests/synth.o \
                         $(BUILD)/tests/synth_ompi.o $(BUILD)/tests/expect.o \
                         $(BUILD)/host/libmqdhost-internal.a \
                         | $(BUILD)/lib/libmqd_mpich.so $(BUILD)/lib/libmqd_ompi.so
	$(CC) -o $@ $< $(BUILD)/tests/replay.o $(call fuzz_deps,$*,$(BUILD)) \
	    $(BUILD)/host/libmqdhost-internal.a $(MQD_LDFLAGS) $(HOST_LIBS) -lpthread
$(BUILD)/tests/test_corpus: $(BUILD)/tests/test_corpus.o | $(REPLAYS)
	$(CC) -o $@ $^ $(MQD_LDFLAGS) -lcmocka

unit-tests: $(ABI_CHECKS) $(UNIT_TESTS)

all: $(BUILD)/bin/mqd-launch $(BUILD)/bin/mqdump $(BUILD)/lib/libmqd_mpich.so \
     $(BUILD)/lib/libmqd_ompi.so unit-tests

TEST_ENV = MQD_BUILD=$(BUILD) MQD_SAMPLES_SRC=samples MQD_TESTS_SRC=tests MQD_MPIEXEC=$(MPIEXEC)

check-unit: unit-tests
	@$(TEST_ENV) scripts/run-tests.sh $(UNIT_TESTS)

# Integration tests also use Open MPI's DLL (fetched once, not installed).
OMPI_ENV = MQD_OMPI_DLL=$$(scripts/fetch-ompi-dll.sh)

# The integration tests that run jobs of the MPICH under test (the others
# do not depend on which); test_dbgstub only where the prefix keeps MPICH's
# stub debugger (build-mpich.sh's builds: another install has no
# dbgstub.o).
MPICH_TESTS = $(filter-out $(BUILD)/tests/test_security $(BUILD)/tests/test_stock \
                           $(BUILD)/tests/test_openmpi $(NO_DBGSTUB),$(INTEGRATION_TESTS))
NO_DBGSTUB  = $(if $(wildcard $(DBGSTUB)/dbgstub.o),,$(BUILD)/tests/test_dbgstub)
INTEGRATION_RUN = $(filter-out $(NO_DBGSTUB),$(INTEGRATION_TESTS))

check-integration: unit-tests samples $(INTEGRATION_RUN)
	@$(TEST_ENV) $(OMPI_ENV) scripts/run-tests.sh $(INTEGRATION_RUN)

# The MPICH-specific suite against any MPICH with debugger support; each
# generation and device is judged by the same tests, with the allowances
# tests/compare.c writes for it (read from the build: mpichversion).
#   make check-mpi MQD_MPICH_PREFIX=PREFIX BUILD=build/NAME
# A prefix of its own tree is best (the tree follows the prefix, see
# MPICH_TREE, and rebuilds for each).  The cached prefixes are built first.
check-mpi: deps
	@$(MAKE) --no-print-directory mpich
	@$(MAKE) --no-print-directory samples $(MPICH_TESTS)
	@$(if $(NO_DBGSTUB),echo "check-mpi: $(MQD_MPICH_PREFIX) keeps no stub debugger" \
	    "($(DBGSTUB)): no test_dbgstub";)
	@$(TEST_ENV) $(OMPI_ENV) scripts/run-tests.sh $(MPICH_TESTS)

# The limits a reader can hold: no product .c over 700 lines, no function
# over 80 (scripts/limits.sh).
check-limits:
	@scripts/limits.sh

# libmqdhost's names (scripts/namespace.sh): internals mqdh__/MQDH__, the
# version script naming exactly mqdhost.h's functions, nothing else
# exported.
check-namespace: $(BUILD)/lib/libmqdhost.so
	@scripts/namespace.sh $(BUILD)

# The public structures' layouts, fixed for x86-64 and i686 (tests/abi_host.c,
# compiled for both: gcc-multilib, scripts/install-deps.sh).
check-abi:
	@for m in -m64 -m32; do \
	    $(CC) $$m -std=c11 $(WARN) -fsyntax-only -Ihost/include -I. tests/abi_host.c || exit 1; \
	done; echo "abi: every public structure's size and offsets as MQDH_VERSION $(ABI) fixes them (x86-64, i686)"

# Set up first (packages, then MPICH), then build and test in a fresh make so
# that nothing is compiled before the headers it needs are installed.
# No cycle among the files of host/, dll/ or mqdump/: neither in what they
# include nor in what they call of each other.
check-includes:
	@CC="$(CC)" scripts/include-graph.sh host dll mqdump

# Every test under the ch3 MPICH, then the samples, the dumps of every
# sample, the nonblocking collectives, ranks killed mid-dump (ch4's ranks
# run threads of libfabric's) and MPICH's stub debugger (CH4_TESTS) again
# under the ch4 one, built in $(CH4_BUILD); one total.  (All of MPICH_TESTS under ch4:
# make check-mpi MQD_MPICH_PREFIX=$(MQD_MPICH_CH4) BUILD=build/ch4.)
CH4_BUILD := $(BUILD)/ch4
# The samples' launch checked 5 times each under ch4 (20 under ch3): a ch4
# job takes 0.8 s to start here against 0.3, and 20 runs of each sample
# were 4.5 minutes of every make check.
CH4_ENV    = MQD_BUILD=$(CH4_BUILD) MQD_MPICH_PREFIX=$(MQD_MPICH_CH4) \
             MQD_MPIEXEC=$(MQD_MPICH_CH4)/bin/mpiexec MQD_SAMPLE_RUNS=5
CH4_TESTS  = $(addprefix $(CH4_BUILD)/tests/,test_samples test_mqdump test_nbc test_faults \
                                              test_dbgstub)
check: deps
	@$(MAKE) --no-print-directory mpis
	@$(MAKE) --no-print-directory mpich
	@$(MAKE) --no-print-directory unit-tests samples $(INTEGRATION_TESTS) check-layouts \
	    check-includes check-limits check-namespace check-abi check-stock-syms
	@$(MAKE) --no-print-directory BUILD=$(CH4_BUILD) MQD_MPICH_PREFIX=$(MQD_MPICH_CH4) \
	    samples $(CH4_TESTS)
	@$(TEST_ENV) $(OMPI_ENV) scripts/run-tests.sh $(UNIT_TESTS) $(INTEGRATION_TESTS) \
	    $(CH4_ENV) $(CH4_TESTS)

demo: deps
	@$(MAKE) --no-print-directory mpich
	@$(MAKE) --no-print-directory samples $(TOOLS)
	@$(TEST_ENV) scripts/demo.sh

bench: deps
	@scripts/install-deps.sh --bench
	@$(MAKE) --no-print-directory mpich
	@$(MAKE) --no-print-directory samples $(TOOLS) $(BUILD)/tests/bench_analysis
	@$(TEST_ENV) scripts/bench.sh

$(BUILD)/bin $(BUILD)/samples $(BUILD)/tests $(BUILD)/tests/fake $(BUILD)/host $(BUILD)/lib \
$(BUILD)/dll $(BUILD)/mpich_defs $(BUILD)/ompi_defs:
	mkdir -p $@

# ---------------------------------------------------------------- install
# mqdump finds libmqdhost by its rpath ($ORIGIN/../lib) and libmqdhost finds
# libmqd_mpich.so beside itself: the installed tree works from anywhere,
# DESTDIR included, with no environment variable.
INSTALL_FILES := bin/mqdump lib/libmqdhost.so.$(ABI) lib/libmqdhost.so lib/libmqd_mpich.so \
                 lib/libmqd_ompi.so \
                 include/mqd/mqdhost.h include/mqd/mpi_interface.h lib/pkgconfig/mqdhost.pc \
                 share/man/man1/mqdump.1
install: $(TOOLS) $(BUILD)/lib/libmqdhost.so
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/mqd $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/bin/mqdump $(DESTDIR)$(PREFIX)/bin/mqdump
	install -m 755 $(BUILD)/lib/libmqdhost.so.$(ABI) $(DESTDIR)$(PREFIX)/lib/libmqdhost.so.$(ABI)
	ln -sf libmqdhost.so.$(ABI) $(DESTDIR)$(PREFIX)/lib/libmqdhost.so
	install -m 755 $(BUILD)/lib/libmqd_mpich.so $(DESTDIR)$(PREFIX)/lib/libmqd_mpich.so
	install -m 755 $(BUILD)/lib/libmqd_ompi.so $(DESTDIR)$(PREFIX)/lib/libmqd_ompi.so
	install -m 644 host/include/mqdhost.h mpi_interface.h $(DESTDIR)$(PREFIX)/include/mqd/
	install -m 644 docs/mqdump.1 $(DESTDIR)$(PREFIX)/share/man/man1/mqdump.1
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' host/mqdhost.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/mqdhost.pc

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALL_FILES))

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
