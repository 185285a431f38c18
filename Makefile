# myriad build. `make` builds build/myriad and the test tools; `make check` runs every test;
# `make fuzz` builds the libFuzzer targets (needs clang and libclang-rt; not part of `all`);
# `make mpi` builds build/myriad-mpi, the binary that runs under mpirun (needs mpicc: Debian's
# libopenmpi-dev; not part of `all`, and the plain build needs no MPI: see docs/mpi.md).
# `make install` puts myriad (and myriad-mpi when built), the man pages and the bash completion
# under $(DESTDIR)$(PREFIX); `make uninstall` takes them away again.
CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -pthread -Isrc
LDLIBS  += -pthread -lxxhash -luring -lm
VERSION := $(shell cat VERSION)
CFLAGS  += -DMYRIAD_VERSION='"$(VERSION)"'

B       := build
MPI_SRC := src/engine/spread.c src/job/jobspread.c src/cmd/fill/fill_mpi.c src/cmd/verify_mpi.c src/cmd/walk_mpi.c src/cmd/rm_mpi.c
SRC     := $(filter-out $(MPI_SRC),$(wildcard src/*.c src/*/*.c src/*/*/*.c))
HDR     := $(wildcard src/*.h src/*/*.h src/*/*/*.h)
OBJ     := $(SRC:%.c=$(B)/%.o)
LIBOBJ  := $(filter-out $(B)/src/main.o,$(OBJ))
UNIT    := $(patsubst tests/unit/%.c,$(B)/unit/%,$(wildcard tests/unit/test_*.c))

all: $(B)/myriad $(B)/faultfs $(B)/mktree $(B)/noopenat2 $(UNIT)

$(B)/myriad: $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# What prints the version is rebuilt when VERSION changes.
VERSIONED := src/main.o src/lifecycle/page.o src/report/json.o src/state/manifest.o
$(addprefix $(B)/,$(VERSIONED)) $(addprefix $(B)/mpi/,$(VERSIONED)): VERSION

$(B)/%.o: %.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/unit/%: tests/unit/%.c $(LIBOBJ) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter-out %.h,$^) $(LDLIBS) -lcmocka

$(B)/faultfs: $(wildcard tests/faultfs/*.c)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags fuse3) -o $@ $^ $(shell pkg-config --libs fuse3) -pthread

$(B)/mktree: tests/tools/mktree.c
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -o $@ $<

$(B)/noopenat2: tests/tools/noopenat2.c
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -o $@ $<

# The MPI binary: every source again with -DMYRIAD_MPI, plus the MPI-only ones, in build/mpi/.
MPICC   ?= mpicc
MPI_OBJ := $(patsubst %.c,$(B)/mpi/%.o,$(SRC) $(MPI_SRC))

mpi: $(B)/myriad-mpi

$(B)/myriad-mpi: $(MPI_OBJ)
	$(MPICC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/mpi/%.o: %.c $(HDR)
	@command -v $(MPICC) >/dev/null || { echo "make mpi: $(MPICC) not found (apt-get install openmpi-bin libopenmpi-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -DMYRIAD_MPI -c -o $@ $<

# Fuzz targets: tests/fuzz/NAME.c -> build/fuzz/NAME, linked with the product's sources built
# with coverage, AddressSanitizer and UndefinedBehaviorSanitizer (every UB report aborts).
FUZZ_CC     ?= $(shell command -v clang-14 || command -v clang)
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -O1 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -pthread -Isrc \
	       -DMYRIAD_VERSION='"$(VERSION)"' $(FUZZ_SAN)
FUZZ_OBJ    := $(LIBOBJ:$(B)/%.o=$(B)/fuzz/obj/%.o)
FUZZ        := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(wildcard tests/fuzz/*.c))

fuzz: $(FUZZ)

$(B)/fuzz/obj/%.o: %.c $(HDR)
	@test -n "$(FUZZ_CC)" || { echo "make fuzz: clang not found (apt-get install clang-14 libclang-rt-14-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

check: all
	scripts/test

# Installing, as any tool of its kind: PREFIX (default /usr/local) and DESTDIR (a staging root,
# as packagers use) are honoured; myriad-mpi goes too when `make mpi` built it.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
COMPDIR ?= $(PREFIX)/share/bash-completion/completions
MANPAGES := $(wildcard docs/*.1)

install: $(B)/myriad
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPDIR)
	install -m 755 $(B)/myriad $(DESTDIR)$(BINDIR)/myriad
	if [ -x $(B)/myriad-mpi ]; then install -m 755 $(B)/myriad-mpi $(DESTDIR)$(BINDIR)/myriad-mpi; fi
	install -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 scripts/completion.bash $(DESTDIR)$(COMPDIR)/myriad
	ln -sf myriad $(DESTDIR)$(COMPDIR)/myriad-mpi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/myriad $(DESTDIR)$(BINDIR)/myriad-mpi $(DESTDIR)$(COMPDIR)/myriad \
		$(DESTDIR)$(COMPDIR)/myriad-mpi $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MANPAGES)))

clean:
	rm -rf $(B)

.PHONY: all check clean fuzz install mpi uninstall
