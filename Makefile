# stableq: one binary, ./stableq, plus its tests, fuzzers and benchmarks.
#
#   make            build ./stableq
#   make deps       install the Debian packages stableq needs (idempotent)
#   make check      every test under prove (unit tests built with ASan+UBSan)
#   make run        the daemon with its defaults on the shipped queue
#   make bench      the benchmarks in bench/, printing their figures
#   make install    ./stableq, its man pages, config/ and the systemd unit
#                   under PREFIX (default /usr/local; DESTDIR for staging)
#   make fuzz       libFuzzer builds of the parsers (clang)
#   make SANITIZE=address,undefined check    the whole binary sanitized too

CC ?= cc
PKGS := libgit2 sqlite3 libmicrohttpd jansson libcurl libcrypto zlib
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wshadow -Wvla
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O2 $(WARN) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

# The folders are layers, lowest first; each sees only its own headers and
# those of the layers below it, so an include that reaches up fails to build
# (tests/0-shape/05-layers.t checks the same rule on the sources). A layer may be
# split into rooms (subfolders): kernel-queue/ by job, daemon/ by door.
LAYERS := lib mail patch git qemu-runner kbuild kernel-queue daemon
DIRS_lib := lib
DIRS_mail := mail
DIRS_patch := patch
DIRS_git := git
DIRS_qemu-runner := qemu-runner
DIRS_kbuild := kbuild
# kernel-queue/'s rooms stand on floors, lowest first, in the order a patch
# goes through them: the store of patches and their states, the checks, the
# candidates (build, boot, test, bisect), the reverts, then review (replies,
# rc, release), export (KCIDB, LAVA) and branches (what each branch does and
# waits for, the fix x branch matrix), and on top intake (series, mail, API),
# which hands replies to review. A room sees its own headers and those
# of the floors below it (KQ_BELOW_room), never a room beside or above it
# (tests/0-shape/05-layers.t holds the same floors).
KQ_ROOMS := store checks candidates revert review export branches intake
KQ_BELOW_store :=
KQ_BELOW_checks := store
KQ_BELOW_candidates := store checks
KQ_BELOW_revert := store checks candidates
KQ_BELOW_review := store checks candidates revert
KQ_BELOW_export := store checks candidates revert
KQ_BELOW_branches := store checks candidates revert
KQ_BELOW_intake := store checks candidates revert review export branches
DIRS_kernel-queue := $(addprefix kernel-queue/,$(KQ_ROOMS))
DIRS_daemon := daemon daemon/http daemon/cli
incs = $(foreach l,$(1),$(addprefix -I,$(DIRS_$(l))))
INC_lib := $(call incs,lib)
INC_mail := $(call incs,lib mail)
INC_patch := $(call incs,lib mail patch)
INC_git := $(call incs,lib mail patch git)
INC_qemu-runner := $(call incs,lib qemu-runner)
INC_kbuild := $(call incs,lib kbuild)
$(foreach r,$(KQ_ROOMS),$(eval INC_kernel-queue/$(r) := \
	$(call incs,lib mail patch git qemu-runner kbuild) \
	$(addprefix -Ikernel-queue/,$(KQ_BELOW_$(r)) $(r))))
INC_daemon := $(call incs,$(LAYERS))
INC_var := $(INC_lib)
# tests, fuzzers and benchmarks see everything
INC_ALL := $(INC_daemon)
# a source's include paths: its room's (kernel-queue/ROOM/), else its layer's
inc = $(or $(INC_$(word 1,$(subst /, ,$(1)))/$(word 2,$(subst /, ,$(1)))),$(INC_$(firstword $(subst /, ,$(1)))))
LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm

SANITIZE ?=
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
VARIANT := san
else
SAN_FLAGS :=
VARIANT := plain
endif
# Unit tests are always built with ASan+UBSan.
TEST_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

SRC_DIRS := $(foreach l,$(LAYERS),$(DIRS_$(l)))
LIB_SRCS := $(filter-out daemon/main.c,$(wildcard $(addsuffix /*.c,$(SRC_DIRS))))
GEN_SRCS := var/gen/embed.c
EMBED_FILES := $(sort $(wildcard sql/*.sql)) $(sort $(wildcard web/*.html web/*.js web/*.css web/*.svg)) \
	$(wildcard web/openapi.json)

OBJ := var/obj/$(VARIANT)
TOBJ := var/obj/test
LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRCS) $(GEN_SRCS))
TLIB_OBJS := $(patsubst %.c,$(TOBJ)/%.o,$(LIB_SRCS) $(GEN_SRCS))

# C unit tests: tests/unit/t-NAME.c (a stray tests/t-NAME.c too) becomes
# tests/bin/t-NAME.t; their headers (tap.h, tqueue.h, ...) are in tests/unit/.
UNIT_SRCS := $(wildcard tests/unit/t-*.c tests/t-*.c)
UNIT_BINS := $(addprefix tests/bin/,$(patsubst %.c,%.t,$(notdir $(UNIT_SRCS))))
FUZZ_SRCS := $(wildcard fuzz/fuzz-*.c)
REPLAY_BINS := $(patsubst fuzz/%.c,fuzz/bin/replay-%,$(FUZZ_SRCS))
LIBFUZZ_BINS := $(patsubst fuzz/%.c,fuzz/bin/%,$(FUZZ_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,bench/bin/%,$(BENCH_SRCS))

.PHONY: all deps check unit-check run bench fuzz clean format guest install
all: stableq

# Switching between plain and sanitized builds relinks ./stableq.
VARIANT_STAMP := var/obj/variant-$(VARIANT)
$(VARIANT_STAMP):
	@mkdir -p var/obj && rm -f var/obj/variant-* && touch $@

stableq: $(LIB_OBJS) $(OBJ)/daemon/main.o $(VARIANT_STAMP)
	$(CC) $(SAN_FLAGS) -o $@ $(filter %.o,$^) $(LIBS)

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(call inc,$<) $(SAN_FLAGS) -MMD -MP -c -o $@ $<

$(TOBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(call inc,$<) $(TEST_SAN) -MMD -MP -c -o $@ $<

# sql/ and web/ are compiled into the binary: one file to deploy.
var/gen/embed.c: lib/embed.sh $(EMBED_FILES)
	@mkdir -p var/gen
	sh lib/embed.sh $(EMBED_FILES) > $@.tmp && mv $@.tmp $@

tests/bin/%.t: tests/unit/%.c $(TLIB_OBJS) tests/unit/tap.h
	@mkdir -p tests/bin
	$(CC) $(BASE_CFLAGS) $(INC_ALL) -Itests/unit $(TEST_SAN) -o $@ $< $(TLIB_OBJS) $(LIBS)

tests/bin/%.t: tests/%.c $(TLIB_OBJS) tests/unit/tap.h
	@mkdir -p tests/bin
	$(CC) $(BASE_CFLAGS) $(INC_ALL) -Itests/unit $(TEST_SAN) -o $@ $< $(TLIB_OBJS) $(LIBS)

# The fuzz targets, replayed over their corpus without libFuzzer.
# fuzz/fuzz-NAME.c replays fuzz/corpus/NAME/*, printing TAP.
fuzz/bin/replay-fuzz-%: fuzz/fuzz-%.c fuzz/replay.c $(TLIB_OBJS)
	@mkdir -p fuzz/bin
	$(CC) $(BASE_CFLAGS) $(INC_ALL) $(TEST_SAN) -DCORPUS_DIR='"fuzz/corpus/$*"' -o $@ $< fuzz/replay.c $(TLIB_OBJS) $(LIBS)

fuzz/bin/fuzz-%: fuzz/fuzz-%.c $(LIB_SRCS) $(GEN_SRCS)
	@mkdir -p fuzz/bin
	clang $(filter-out -Werror,$(BASE_CFLAGS)) $(INC_ALL) -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(LIB_SRCS) $(GEN_SRCS) $(LIBS)

fuzz: $(LIBFUZZ_BINS)

bench/bin/%: bench/%.c $(LIB_OBJS)
	@mkdir -p bench/bin
	$(CC) $(BASE_CFLAGS) $(INC_ALL) -o $@ $< $(LIB_OBJS) $(LIBS)

# Idempotent: apt-get runs only when a package is missing.
deps:
	@pkgs=$$(grep -v '^#' config/debian-packages | grep .); \
	missing=$$(for p in $$pkgs; do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q && apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@# run as root, stableq builds as this user (docs/sandbox.md)
	@if [ "$$(id -u)" = 0 ] && ! getent passwd stableq-build >/dev/null; then \
		echo "make deps: adding the system user stableq-build"; \
		useradd --system --user-group --no-create-home \
			--home-dir /nonexistent --shell /usr/sbin/nologin stableq-build; \
	fi
	@$(MAKE) --no-print-directory arm64-busybox

# The arm64 guest's userland: Debian's busybox-static:arm64 (and bash:arm64,
# libcap, libcap-ng, libpopt and libnuma for the kselftests) through multiarch,
# unpacked (not installed: it conflicts with the amd64 package the x86_64
# guest runs) where lib/karch.c looks for it.
ARM64_ROOT := /usr/local/lib/stableq/arm64
ARM64_DEV_PKGS := libcap2:arm64 libcap-dev:arm64 libcap-ng0:arm64 \
	libcap-ng-dev:arm64 libpopt0:arm64 libpopt-dev:arm64 \
	libnuma1:arm64 libnuma-dev:arm64
ARM64_DEV_FILES := usr/include/sys/capability.h usr/include/cap-ng.h \
	usr/include/popt.h usr/include/numa.h \
	usr/lib/aarch64-linux-gnu/libcap.so \
	usr/lib/aarch64-linux-gnu/libcap-ng.so \
	usr/lib/aarch64-linux-gnu/libpopt.so usr/lib/aarch64-linux-gnu/libnuma.so
.PHONY: arm64-busybox
arm64-busybox:
	@if [ ! -x $(ARM64_ROOT)/bin/busybox ]; then \
		set -e; export DEBIAN_FRONTEND=noninteractive; \
		dpkg --print-foreign-architectures | grep -qx arm64 || \
			{ dpkg --add-architecture arm64 && apt-get update -q; }; \
		tmp=$$(mktemp -d); chmod 755 $$tmp; \
		(cd $$tmp && apt-get download busybox-static:arm64); \
		mkdir -p $(ARM64_ROOT) && dpkg-deb -x $$tmp/busybox-static_*_arm64.deb $(ARM64_ROOT); \
		rm -rf $$tmp; echo "make deps: busybox-static:arm64 in $(ARM64_ROOT)"; \
	fi
	@# and bash for the kselftests' scripts (its libc is the cross one)
	@if [ ! -x $(ARM64_ROOT)/bin/bash ]; then \
		set -e; export DEBIAN_FRONTEND=noninteractive; \
		tmp=$$(mktemp -d); chmod 755 $$tmp; \
		(cd $$tmp && apt-get download bash:arm64 libtinfo6:arm64); \
		for d in $$tmp/*_arm64.deb; do dpkg-deb -x $$d $(ARM64_ROOT); done; \
		rm -rf $$tmp; echo "make deps: bash:arm64 in $(ARM64_ROOT)"; \
	fi
	@# and the libraries kselftests link against, with their headers (the
	@# cross build's -isystem and -L: lib/karch.c); the -dev packages' .so
	@# links are absolute (/lib/...): they are made to point into the root
	@if ! (for f in $(ARM64_DEV_FILES); do [ -e $(ARM64_ROOT)/$$f ] || exit 1; done); then \
		set -e; export DEBIAN_FRONTEND=noninteractive; \
		tmp=$$(mktemp -d); chmod 755 $$tmp; \
		(cd $$tmp && apt-get download $(ARM64_DEV_PKGS)); \
		for d in $$tmp/*_arm64.deb; do dpkg-deb -x $$d $(ARM64_ROOT); done; \
		for l in $(ARM64_ROOT)/usr/lib/aarch64-linux-gnu/*.so; do \
			t=$$(readlink $$l) || continue; \
			case $$t in /*) ln -sfn $(ARM64_ROOT)$$t $$l ;; esac; \
		done; \
		rm -rf $$tmp; echo "make deps: $(ARM64_DEV_PKGS) in $(ARM64_ROOT)"; \
	fi

# The whole binary again with ASan+UBSan, from the unit tests' objects,
# beside ./stableq (which stays as built): tests/6-api/63-api-sanitized.t runs
# the API's tests, their bad-input battery included, against it, and
# tests/1-intake/16-bad-input-san.t the CLI's bad-input battery.
SAN_BIN := var/san/stableq
$(SAN_BIN): $(TLIB_OBJS) $(TOBJ)/daemon/main.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_SAN) -o $@ $^ $(LIBS)

# Kept between builds: the unit tests, replays and $(SAN_BIN) share them.
.SECONDARY: $(TLIB_OBJS) $(TOBJ)/daemon/main.o

unit-check: $(UNIT_BINS) $(REPLAY_BINS) $(SAN_BIN)

# Every test, under prove: unit tests (ASan+UBSan), fuzz corpus replays, then
# the integration tests that drive the real binary, git, QEMU, SMTP, Chromium.
# Two lanes: the tests marked "check: serial" (they share this checkout's
# kernel trees, build directories and build cache, and boot QEMU guests) run
# one after another from the start, the kernel tests first; all the others
# run one after another beside them. The tests marked "check: last"
# (99-no-leftovers.t) run alone once all have ended. (A lane is prove's seq
# rule: with a par rule beside a seq one, prove runs every par test before
# the seq group's first.)
# The integration tests: tests/FAMILY/NN-name.t (tests/README), and a stray
# tests/NN-name.t too; they run in the order of their numbers.
IT_TESTS := $(wildcard tests/[0-9]*/[0-9]*.t tests/[0-9]*.t)
by_number = $(foreach n,$(sort $(notdir $(1))),$(filter %/$(n),$(1)))
TESTS := $(UNIT_BINS) $(REPLAY_BINS) $(call by_number,$(IT_TESTS))
marked = $(filter $(TESTS),$(foreach f,$(shell grep -l -E '^(#|/\*) check: $(1)' $(IT_TESTS) $(UNIT_SRCS)),$(if $(filter %.c,$(f)),tests/bin/$(notdir $(f:.c=.t)),$(f))))
SERIAL_TESTS := $(call marked,serial)
LAST_TESTS := $(call marked,last)
comma := ,
empty :=
space := $(empty) $(empty)
CHECK_JOBS ?= 2
check: deps
	$(MAKE) -j$$(nproc) stableq unit-check
	prove --timer -j$(CHECK_JOBS) --rules='seq={$(subst $(space),$(comma),$(SERIAL_TESTS))}' --rules='seq=**' -e tests/lib/as-test $(filter-out $(SERIAL_TESTS) $(LAST_TESTS),$(TESTS)) $(SERIAL_TESTS)
	prove --timer -e tests/lib/as-test $(LAST_TESTS)

# deps first, then a make that sees what deps installed (pkg-config flags)
run: deps
	$(MAKE) stableq
	./stableq serve -d

bench: stableq $(BENCH_BINS)
	@for b in $(sort $(wildcard bench/*.sh)); do echo "== $$b"; ./$$b || exit 1; done

# The binary, its man pages, the systemd unit and what it reads from
# config/ (settings, kernel fragments, test sets, the shipped queues).
# DATADIR is the daemon's working directory: its relative paths (config/...,
# var/...) resolve there, and var/ is a link to STATEDIR, which the unit
# has systemd make.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/stableq
UNITDIR ?= $(PREFIX)/lib/systemd/system
STATEDIR ?= /var/lib/stableq
install: stableq
	install -D -m 755 stableq $(DESTDIR)$(BINDIR)/stableq
	install -D -m 644 man/stableq.1 $(DESTDIR)$(MANDIR)/man1/stableq.1
	install -D -m 644 man/stableq.conf.5 $(DESTDIR)$(MANDIR)/man5/stableq.conf.5
	install -d $(DESTDIR)$(DATADIR)
	cp -R config $(DESTDIR)$(DATADIR)/
	ln -sfn $(STATEDIR) $(DESTDIR)$(DATADIR)/var
	install -d $(DESTDIR)$(UNITDIR)
	sed -e 's|^WorkingDirectory=.*|WorkingDirectory=$(DATADIR)|' \
	    -e 's|/srv/stableq/stableq |$(BINDIR)/stableq |' \
	    config/stableq.service > $(DESTDIR)$(UNITDIR)/stableq.service

format:
	clang-format -i $(wildcard $(addsuffix /*.[ch],$(SRC_DIRS)) tests/unit/*.[ch] fuzz/*.c bench/*.c)

clean:
	rm -rf var/obj var/gen tests/bin fuzz/bin bench/bin stableq

-include $(shell find var/obj -name '*.d' 2>/dev/null)
