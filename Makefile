# perfport - see README.md. `make help` lists the targets.

CC       ?= cc
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
INCDIR   ?= $(PREFIX)/include
DESTDIR  ?=
BUILD    ?= build

PKGS     := libtraceevent libzstd json-c libdw libelf libprotobuf-c zlib libcurl libcrypto libarchive libxxhash
DEBS     := build-essential pkg-config libtraceevent-dev libzstd-dev libjson-c-dev \
            libcmocka-dev libdw-dev libelf-dev libiberty-dev libprotobuf-c-dev \
            protobuf-c-compiler golang-github-google-pprof-dev zlib1g-dev \
            libcurl4-openssl-dev libssl-dev liblz4-dev libarchive-dev libxxhash-dev
# what the tests use beyond the build: perf as the oracle, Debian's python3
# with jsonschema, botocore, lz4 and grpcio, protoc, chromium, openssl; the
# backends' conformance checkers (../shared/conformance): python3-protobuf,
# -six, -dateutil and Go for Datakit's own parser; rustc for a Rust workload;
# xz and binutils' aarch64 readelf for the arm64 recordings (test 21)
TEST_DEBS := linux-perf python3 python3-jsonschema python3-botocore protobuf-compiler python3-lz4 \
             python3-grpcio chromium openssl python3-protobuf python3-six python3-dateutil llvm nodejs debuginfod golang-go \
             rustc libc6-dbg postgresql python3-dbg default-jdk-headless openjdk-17-dbg \
             xz-utils binutils-aarch64-linux-gnu strace

OPT      ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral
CFLAGS   ?= $(OPT)
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude -MMD -MP \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl, libcrypto and libarchive are loaded with dlopen() when a request
# is made or signed, or an archive unpacked (src/net/net.c, src/net/crypto.c,
# src/symbols/archive.c): their headers are used, they are not linked;
# libxxhash's XXH3 is compiled in from its header (XXH_INLINE_ALL)
LIBS     := $(shell pkg-config --libs $(filter-out libcurl libcrypto libarchive libxxhash,$(PKGS)) 2>/dev/null) -liberty -pthread -ldl
PLUGINDIR ?= $(LIBDIR)/perfport/plugins

CORE_SRC := $(wildcard src/util/*.c) $(wildcard src/perf/*.c) $(wildcard src/machine/*.c) \
            $(wildcard src/symbols/*.c) $(wildcard src/profile/*.c) $(wildcard src/plugin/*.c) \
            $(wildcard src/net/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/state_rules.o \
            $(BUILD)/obj/gen/stack_roots.o \
            $(BUILD)/obj/gen/profile.pb-c.o
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
CORE_LIB := $(BUILD)/libperfport-core.a

# Exporter plugins: plugins/NAME/*.c -> $(BUILD)/plugins/NAME.so, built
# against include/ only (never src/), with only the exporter symbol visible.
PLUGIN_NAMES := $(patsubst plugins/%/,%,$(dir $(wildcard plugins/*/*.c)))
PLUGIN_SO    := $(sort $(PLUGIN_NAMES:%=$(BUILD)/plugins/%.so))

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all deps check unit e2e demo install uninstall asan tsan fuzz fuzz-dwarf robust bench clean help \
	stress stress-archive

all: $(BUILD)/perfport $(PLUGIN_SO)

help:
	@echo "make            build $(BUILD)/perfport"
	@echo "make deps       install the Debian packages the build and tests need"
	@echo "make check      build and run every test (unit, end-to-end, robustness)"
	@echo "make demo       build and run perfport on the bundled sample recording"
	@echo "make install    install (PREFIX=$(PREFIX), DESTDIR=)"
	@echo "make asan       ASan+UBSan build in build-asan/"
	@echo "make tsan       ThreadSanitizer build in build-tsan/ (make check runs it)"
	@echo "make fuzz       run the libFuzzer targets for the reader and the DWARF readers (FUZZ_SECONDS=60 each)"
	@echo "make bench      compare perfport with perf on a large fresh recording"
	@echo "make stress     run chosen e2e tests again and again: TESTS='36 31' N=10 BUSY=1"
	@echo "                (BUSY=1: every CPU kept busy meanwhile); failures per test"
	@echo "make stress-archive  SIGTERM while a perf archive is unpacked, N=200 times"

# V=1 shows the full commands.
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n'
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(msg) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# $(call c_string,FILE): the lines of a text file as a C string literal
c_string = sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(1)

# The built-in off-CPU state rules as C strings: src/profile/state-rules (the
# kernel's set) and src/profile/waits/*.rules (the programs', one text per
# file, in the order of their names, each after a NUL-free name line).
WAIT_RULES := $(sort $(wildcard src/profile/waits/*.rules))
$(BUILD)/gen/state_rules.c: src/profile/state-rules $(WAIT_RULES) Makefile
	@mkdir -p $(dir $@)
	$(msg) GEN $@
	$(Q){ echo '/* generated from src/profile/state-rules and src/profile/waits/ by the Makefile */'; \
	  echo '#include "profile/rules.h"'; \
	  echo 'const char profile_default_rules[] ='; \
	  $(call c_string,src/profile/state-rules); \
	  echo ';'; \
	  echo 'const struct rules_text profile_program_rules[] = {'; \
	  for f in $(WAIT_RULES); do \
	    echo "{ \"$$(basename $$f)\","; $(call c_string,$$f); echo '},'; \
	  done; \
	  echo '{ 0, 0 } };'; } > $@

# The runtimes' stack roots as C strings: src/symbols/roots/*.roots, one
# text per file, in the order of their names.
STACK_ROOTS := $(sort $(wildcard src/symbols/roots/*.roots))
$(BUILD)/gen/stack_roots.c: $(STACK_ROOTS) Makefile
	@mkdir -p $(dir $@)
	$(msg) GEN $@
	$(Q){ echo '/* generated from src/symbols/roots/ by the Makefile */'; \
	  echo '#include "symbols/roots.h"'; \
	  echo 'const struct roots_text sym_roots_texts[] = {'; \
	  for f in $(STACK_ROOTS); do \
	    echo "{ \"$$(basename $$f)\","; $(call c_string,$$f); echo '},'; \
	  done; \
	  echo '{ 0, 0 } };'; } > $@

$(BUILD)/obj/gen/stack_roots.o: $(BUILD)/gen/stack_roots.c
	@mkdir -p $(dir $@)
	$(msg) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc -c -o $@ $<

$(BUILD)/obj/gen/state_rules.o: $(BUILD)/gen/state_rules.c
	@mkdir -p $(dir $@)
	$(msg) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(msg) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/src/plugin/host.o: ALL_CFLAGS += -DPERFPORT_PLUGINDIR='"$(PLUGINDIR)"'

# pprof's profile.proto as Debian ships it (golang-github-google-pprof-dev),
# compiled with protoc-c; the generated code is built without our warnings.
PPROF_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h: $(PPROF_PROTO)
	@mkdir -p $(BUILD)/gen
	$(msg) PROTOC $<
	$(Q)protoc-c --proto_path=$(dir $<) --c_out=$(BUILD)/gen $<

$(BUILD)/obj/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c
	@mkdir -p $(dir $@)
	$(msg) CC $<
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(shell pkg-config --cflags libprotobuf-c) -c -o $@ $<

$(BUILD)/obj/src/plugin/pprof.o: $(BUILD)/gen/profile.pb-c.h
$(BUILD)/obj/src/plugin/pprof.o: ALL_CFLAGS += -I$(BUILD)/gen

# The flame graph's page, compiled into its plugin.
$(BUILD)/gen/flamegraph-viewer.h: plugins/flamegraph/viewer.html
	@mkdir -p $(dir $@)
	$(msg) GEN $@
	$(Q)$(call c_string,$<) > $@
$(BUILD)/plugins/flamegraph.so: $(BUILD)/gen/flamegraph-viewer.h

# The explorer's page, compiled into its plugin.
$(BUILD)/gen/explorer-viewer.h: plugins/explorer/viewer.html
	@mkdir -p $(dir $@)
	$(msg) GEN $@
	$(Q)$(call c_string,$<) > $@
$(BUILD)/plugins/explorer.so: $(BUILD)/gen/explorer-viewer.h

.SECONDEXPANSION:
# plugins/NAME/LIBS: the libraries a plugin links (e.g. -llz4), if any
$(BUILD)/plugins/%.so: $$(wildcard plugins/%/*.c) $$(wildcard plugins/%/*.h) $(wildcard include/perfport/*.h)
	@mkdir -p $(dir $@)
	$(msg) PLUGIN $@
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(LDFLAGS) -Iinclude -I$(BUILD)/gen -fPIC -shared \
		-fvisibility=hidden -o $@ $(filter %.c,$^) $(shell cat plugins/$*/LIBS 2>/dev/null)

$(BUILD)/perfport: $(CLI_OBJ) $(CORE_LIB)
	$(msg) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(CORE_LIB) $(LIBS)

# the folded exporter's test compiles the plugin in
$(BUILD)/tests/test_folded: plugins/folded/folded.c
# and the explorer's, with its page
$(BUILD)/tests/test_explorer: plugins/explorer/explorer.c $(BUILD)/gen/explorer-viewer.h
$(BUILD)/tests/test_explorer: ALL_CFLAGS += -I$(BUILD)/gen

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(wildcard src/*/*.h) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(msg) TEST $@
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(CORE_LIB) $(LIBS) -lcmocka

deps:
	@missing=""; for p in $(DEBS) $(TEST_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "all build packages are installed"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	else echo "run as root:  apt-get update && apt-get install -y$$missing"; exit 1; fi

unit: $(UNIT_BIN)

check: all unit
	@$(MAKE) --no-print-directory asan-robust
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="$(SAN_FLAGS)" \
		LDFLAGS="-fsanitize=address,undefined" unit
	@$(MAKE) --no-print-directory tsan
	BUILD=$(BUILD) tests/run.sh

# The repeat runner (tests/run.sh -n N [--busy] TEST...): TESTS names e2e
# tests (36-watch, 36, or globs), each run N times.
N ?= 10
stress: all
	@[ -n "$(TESTS)" ] || { echo "make stress: say which tests, e.g. TESTS='36 31' N=10 BUSY=2 (busy loops per CPU)"; exit 2; }
	BUILD=$(BUILD) tests/run.sh -n $(N) $(if $(filter-out 0 no,$(BUSY)),--busy=$(if $(filter yes,$(BUSY)),1,$(BUSY))) $(TESTS)

stress-archive: all
	PERFPORT=$(CURDIR)/$(BUILD)/perfport TOP=$(CURDIR) tests/stress/archive-sigterm.sh $(if $(filter command line,$(origin N)),$(N),200)

demo: all
	./$(BUILD)/perfport info -i samples/oncpu.perf.data
	@echo
	./$(BUILD)/perfport info -i samples/offcpu.perf.data
	@echo
	./$(BUILD)/perfport report -i samples/offcpu.perf.data --top 5 --min-percent 5
	@echo
	./$(BUILD)/perfport export -i samples/offcpu.perf.data -f folded,pprof,flamegraph -o $(BUILD)/demo
	@echo "wrote $(BUILD)/demo/profile.folded, profile.pb.gz and flamegraph.html (open it in a browser):"
	@head -3 $(BUILD)/demo/profile.folded

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(INCDIR)/perfport \
		$(DESTDIR)$(PREFIX)/share/perfport $(DESTDIR)$(PLUGINDIR)
	install -m 755 $(PLUGIN_SO) $(DESTDIR)$(PLUGINDIR)/
	install -m 755 $(BUILD)/perfport $(DESTDIR)$(BINDIR)/perfport
	install -m 644 src/profile/state-rules $(DESTDIR)$(PREFIX)/share/perfport/state-rules
	install -d $(DESTDIR)$(PREFIX)/share/perfport/waits
	install -m 644 $(WAIT_RULES) $(DESTDIR)$(PREFIX)/share/perfport/waits/
	install -d $(DESTDIR)$(PREFIX)/share/perfport/roots
	install -m 644 $(STACK_ROOTS) $(DESTDIR)$(PREFIX)/share/perfport/roots/
	install -m 644 docs/perfport.1 $(DESTDIR)$(MANDIR)/man1/perfport.1
	install -m 644 include/perfport/*.h $(DESTDIR)$(INCDIR)/perfport/
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig
	sed -e 's|@INCDIR@|$(INCDIR)|' -e 's|@PLUGINDIR@|$(PLUGINDIR)|' \
	    -e 's|@VERSION@|$(shell sed -n 's/^#define PERFPORT_VERSION "\(.*\)"/\1/p' include/perfport/version.h)|' \
	    plugins/perfport-plugin.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/perfport-plugin.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/perfport $(DESTDIR)$(MANDIR)/man1/perfport.1 \
		$(DESTDIR)$(LIBDIR)/pkgconfig/perfport-plugin.pc
	rm -rf $(DESTDIR)$(INCDIR)/perfport $(DESTDIR)$(PREFIX)/share/perfport \
		$(DESTDIR)$(PLUGINDIR)

# --- sanitizers and fuzzing ---

SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

asan:
	$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="$(SAN_FLAGS)" \
		LDFLAGS="-fsanitize=address,undefined" all

# The threads (namer, unwinding pool and its delivering thread, prefetch)
# under ThreadSanitizer: tests/run.sh runs the namer's and the profile's
# unit tests and -j 3 exports with this build.
TSAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
tsan:
	$(MAKE) --no-print-directory BUILD=build-tsan CFLAGS="$(TSAN_FLAGS)" \
		LDFLAGS="-fsanitize=thread" all build-tsan/tests/test_namer build-tsan/tests/test_profile \
		build-tsan/tests/test_reader

# The robustness driver: every corpus file truncated and bit-flipped, in process.
build-asan/robust: tests/fuzz/fuzz_reader.c tests/fuzz/robust_main.c asan
	$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) $(SAN_FLAGS) -Iinclude -Isrc -o $@ tests/fuzz/fuzz_reader.c \
		tests/fuzz/robust_main.c build-asan/libperfport-core.a $(LIBS)

asan-robust: build-asan/robust

FUZZ_SECONDS ?= 60
fuzz:
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" build-fuzz/libperfport-core.a
	clang -std=gnu11 -D_GNU_SOURCE $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -Isrc \
		-o build-fuzz/fuzz_reader tests/fuzz/fuzz_reader.c build-fuzz/libperfport-core.a $(LIBS)
	tests/fuzz/seed.sh build-fuzz/seeds
	LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp build-fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=262144 \
		build-fuzz/corpus build-fuzz/seeds
	@$(MAKE) --no-print-directory fuzz-dwarf

# The DWARF readers' target (dwwalk.c, dwline.c): its input made into the
# debug sections of an ELF in memory; seeds from a small program's gcc
# DWARF 5, 5 in 64-bit form, 4 and 2, and clang's DWARF 5
# (tests/fuzz/dwarf_seeds.py). Crashes found go to tests/fuzz/dwarf-regress/,
# which test_dwfuzz replays in make check.
FUZZ_DWARF_SECONDS ?= $(FUZZ_SECONDS)
fuzz-dwarf:
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" build-fuzz/libperfport-core.a
	clang -std=gnu11 -D_GNU_SOURCE $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -Isrc \
		-o build-fuzz/fuzz_dwarf tests/fuzz/fuzz_dwarf.c build-fuzz/libperfport-core.a $(LIBS)
	@mkdir -p build-fuzz/dwarf-seeds build-fuzz/dwarf-corpus
	gcc -O2 -g -gdwarf-5 -o build-fuzz/dwseed-gcc5 tests/fuzz/dwarf_seed.c
	gcc -O2 -g -gdwarf-4 -o build-fuzz/dwseed-gcc4 tests/fuzz/dwarf_seed.c
	gcc -O2 -gdwarf-2 -o build-fuzz/dwseed-gcc2 tests/fuzz/dwarf_seed.c
	gcc -O2 -g -gdwarf-5 -gdwarf64 -o build-fuzz/dwseed-gcc5-64 tests/fuzz/dwarf_seed.c
	clang -O2 -g -gdwarf-5 -o build-fuzz/dwseed-clang5 tests/fuzz/dwarf_seed.c
	tests/fuzz/dwarf_seeds.py build-fuzz/dwarf-seeds build-fuzz/dwseed-gcc5 build-fuzz/dwseed-gcc4 \
		build-fuzz/dwseed-gcc2 build-fuzz/dwseed-gcc5-64 build-fuzz/dwseed-clang5
	build-fuzz/fuzz_dwarf -max_total_time=$(FUZZ_DWARF_SECONDS) -max_len=65536 \
		build-fuzz/dwarf-corpus build-fuzz/dwarf-seeds tests/fuzz/dwarf-regress

bench: all
	tests/bench/bench.sh

clean:
	rm -rf build build-asan build-tsan build-fuzz build-clang

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
