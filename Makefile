# stableq: one binary, ./stableq, plus its tests, fuzzers and benchmarks.
#
#   make            build ./stableq
#   make deps       install the Debian packages stableq needs (idempotent)
#   make check      every test under prove (unit tests built with ASan+UBSan)
#   make run        the daemon with its defaults on the shipped queue
#   make bench      the benchmarks in bench/, printing their figures
#   make fuzz       libFuzzer builds of the parsers (clang)
#   make SANITIZE=address,undefined check    the whole binary sanitized too

CC ?= cc
PKGS := libgit2 sqlite3 libmicrohttpd jansson libcurl libcrypto zlib
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wshadow -Wvla
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O2 $(WARN) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

# The folders are layers, lowest first; each sees only its own headers and
# those of the layers below it, so an include that reaches up fails to build
# (tests/05-layers.t checks the same rule on the sources). A layer may be
# split into rooms (subfolders): kernel-queue/ by job, daemon/ by door.
LAYERS := lib mail patch git qemu-runner kbuild kernel-queue daemon
DIRS_lib := lib
DIRS_mail := mail
DIRS_patch := patch
DIRS_git := git
DIRS_qemu-runner := qemu-runner
DIRS_kbuild := kbuild
DIRS_kernel-queue := $(addprefix kernel-queue/,intake queue checks runs revert review export)
DIRS_daemon := daemon daemon/http daemon/cli
incs = $(foreach l,$(1),$(addprefix -I,$(DIRS_$(l))))
INC_lib := $(call incs,lib)
INC_mail := $(call incs,lib mail)
INC_patch := $(call incs,lib mail patch)
INC_git := $(call incs,lib mail patch git)
INC_qemu-runner := $(call incs,lib qemu-runner)
INC_kbuild := $(call incs,lib kbuild)
INC_kernel-queue := $(call incs,lib mail patch git qemu-runner kbuild kernel-queue)
INC_daemon := $(call incs,$(LAYERS))
INC_var := $(INC_lib)
# tests, fuzzers and benchmarks see everything
INC_ALL := $(INC_daemon)
inc = $(INC_$(firstword $(subst /, ,$(1))))
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

UNIT_SRCS := $(wildcard tests/t-*.c)
UNIT_BINS := $(patsubst tests/%.c,tests/bin/%.t,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard fuzz/fuzz-*.c)
REPLAY_BINS := $(patsubst fuzz/%.c,fuzz/bin/replay-%,$(FUZZ_SRCS))
LIBFUZZ_BINS := $(patsubst fuzz/%.c,fuzz/bin/%,$(FUZZ_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,bench/bin/%,$(BENCH_SRCS))

.PHONY: all deps check unit-check run bench fuzz clean format guest
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

tests/bin/%.t: tests/%.c $(TLIB_OBJS) tests/tap.h
	@mkdir -p tests/bin
	$(CC) $(BASE_CFLAGS) $(INC_ALL) -Itests $(TEST_SAN) -o $@ $< $(TLIB_OBJS) $(LIBS)

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

# The whole binary again with ASan+UBSan, from the unit tests' objects,
# beside ./stableq (which stays as built): tests/63-api-sanitized.t runs
# the API's tests, their bad-input battery included, against it, and
# tests/16-bad-input-san.t the CLI's bad-input battery.
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
TESTS := $(UNIT_BINS) $(REPLAY_BINS) $(sort $(wildcard tests/[0-9]*.t))
marked = $(filter $(TESTS),$(patsubst tests/t-%.c,tests/bin/t-%.t,$(shell grep -l -E '^(#|/\*) check: $(1)' tests/*.t tests/t-*.c)))
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

format:
	clang-format -i $(wildcard $(addsuffix /*.[ch],$(SRC_DIRS)) tests/*.[ch] fuzz/*.c bench/*.c)

clean:
	rm -rf var/obj var/gen tests/bin fuzz/bin bench/bin stableq

-include $(shell find var/obj -name '*.d' 2>/dev/null)
