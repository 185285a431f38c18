# myriad build. `make` builds build/myriad and the test tools; `make check` runs every test.
CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -pthread -Isrc
LDLIBS  += -pthread -lxxhash -lm
VERSION := $(shell cat VERSION)
CFLAGS  += -DMYRIAD_VERSION='"$(VERSION)"'

B       := build
SRC     := $(wildcard src/*.c src/*/*.c)
OBJ     := $(SRC:%.c=$(B)/%.o)
LIBOBJ  := $(filter-out $(B)/src/main.o,$(OBJ))
UNIT    := $(patsubst tests/unit/%.c,$(B)/unit/%,$(wildcard tests/unit/test_*.c))

all: $(B)/myriad $(B)/faultfs $(B)/mktree $(UNIT)

$(B)/myriad: $(OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/%.o: %.c $(wildcard src/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/unit/%: tests/unit/%.c $(LIBOBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

$(B)/faultfs: $(wildcard tests/faultfs/*.c)
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags fuse3) -o $@ $^ $(shell pkg-config --libs fuse3) -pthread

$(B)/mktree: tests/tools/mktree.c
	@mkdir -p $(B)
	$(CC) $(CFLAGS) -o $@ $<

check: all
	scripts/test

clean:
	rm -rf $(B)

.PHONY: all check clean
