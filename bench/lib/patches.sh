# bench/lib/patches.sh: generated stable patches for the benchmarks (sourced).
# bench_patch I PREFIX MSGID: one mail-format backport, number I, subject
# prefix PREFIX ("PATCH 6.1" or "PATCH 6.1 3/1000"), Message-Id <MSGID-I@...>.
# A fourth argument, "unannotated", leaves out the Cc: stable # 6.1.x line:
# its Fixes: target is unknown, so the patch waits for a human (no builds).
bench_patch() {
	_i=$1
	_cc="Cc: <stable@vger.kernel.org> # 6.1.x"
	[ "${4:-}" = unannotated ] && _cc="Cc: <stable@vger.kernel.org>"
	_s=$((_i % 37))
	_up=$(printf '%08x%032x' $((_i * 7919 + 1048576)) "$_i")
	cat <<MAIL
From $_up Mon Sep 17 00:00:00 2001
From: Developer $_i <dev$_i@example.org>
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [$2] subsys$_s: fix the thing number $_i
Message-Id: <$3-$_i@example.org>

commit $_up upstream.

The thing number $_i went wrong when the other thing happened first; this
makes it wait for the other thing. A few more words so that the message
looks like a real one, which has a paragraph or two of explanation.

Fixes: $(printf '%012x' $((_i * 104729 + 17))) ("subsys$_s: add the thing")
$_cc
Reported-by: Reporter <rep@example.org>
Link: https://lore.kernel.org/r/$3-$_i@example.org
Signed-off-by: Developer $_i <dev$_i@example.org>
Signed-off-by: Maintainer <maint@example.org>
---
 drivers/subsys$_s/file$_i.c | 4 +++-
 1 file changed, 3 insertions(+), 1 deletion(-)

diff --git a/drivers/subsys$_s/file$_i.c b/drivers/subsys$_s/file$_i.c
index 1234567..89abcde 100644
--- a/drivers/subsys$_s/file$_i.c
+++ b/drivers/subsys$_s/file$_i.c
@@ -10,7 +10,9 @@ static int thing_$_i(struct device *dev)
 {
 	int ret;
 
-	ret = do_thing(dev);
+	ret = wait_other_thing(dev);
+	if (!ret)
+		ret = do_thing(dev);
 	if (ret)
 		return ret;
 	return 0;

MAIL
}

# bench_queue_and_tree DIR N: DIR/q, a quilt directory of N bench_patch
# backports, and DIR/linux, a one-commit v6.1.192 tree (branch linux-6.1.y)
# holding the lines each one changes.
bench_queue_and_tree() {
	T=$1
	N=$2
	mkdir -p "$T/q" "$T/linux"
	i=1
	while [ $i -le $N ]; do
		f=$(printf '%04d-fix-%d.patch' $i $i)
		bench_patch $i "PATCH 6.1 $i/$N" bench > "$T/q/$f"
		echo "$f" >> "$T/q/series"
		d="$T/linux/drivers/subsys$((i % 37))"
		mkdir -p "$d"
		{
			printf '// SPDX-License-Identifier: GPL-2.0\n/* file%d.c */\n' $i
			printf '#include <linux/device.h>\n\n/* one */\n/* two */\n/* three */\n\n'
			printf 'static int thing_%d(struct device *dev)\n{\n\tint ret;\n\n' $i
			printf '\tret = do_thing(dev);\n\tif (ret)\n\t\treturn ret;\n\treturn 0;\n}\n'
		} > "$d/file$i.c"
		i=$((i + 1))
	done
	printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n' > "$T/linux/Makefile"
	(cd "$T/linux" && git init -q && git add -A &&
		git -c user.name=b -c user.email=b@example.org commit -qm "Linux 6.1.192" &&
		git tag v6.1.192 && git branch linux-6.1.y)
}

# bench_big_queue_and_tree DIR N [SRC]: DIR/bq, N real-shaped backports
# (bench_big_patch), and DIR/blinux, a one-commit v6.1.192 tree holding the
# big files they change: real ones of the 6.1 tree at SRC (var/linux, read
# from its v6.1.192 when it has it) when it is there, else generated C files of 6,000 lines. Each patch changes
# one or two files in one to three places (a line changed, a line added,
# both), places far apart so that each applies on top of those before it.
BENCH_BIG_FILES="kernel/sched/core.c mm/memory.c net/core/dev.c fs/ext4/inode.c
net/ipv4/tcp.c io_uring/io_uring.c fs/btrfs/inode.c net/mac80211/mlme.c
kernel/bpf/verifier.c drivers/net/ethernet/intel/ice/ice_main.c fs/namei.c
kernel/fork.c mm/page_alloc.c net/ipv4/tcp_input.c fs/f2fs/segment.c
drivers/usb/core/hub.c drivers/scsi/scsi_lib.c block/blk-mq.c
kernel/trace/trace.c sound/core/pcm_native.c drivers/base/core.c
net/netfilter/nf_tables_api.c fs/nfs/nfs4proc.c kernel/cgroup/cgroup.c
drivers/gpu/drm/drm_atomic_helper.c net/wireless/nl80211.c mm/vmscan.c
fs/xfs/xfs_inode.c kernel/workqueue.c drivers/md/dm.c"

# bench_big_hunks FILE FROM TO N PLACES: PLACES hunks of FILE between lines
# FROM and TO, for patch N: each a statement changed, a line added after
# it, or both, each well after the one before
bench_big_hunks() {
	awk -v from="$2" -v to="$3" -v n="$4" -v places="$5" '
	{ l[NR] = $0 }
	END {
		if (to > NR - 4) to = NR - 4
		s = from
		for (k = 0; k < places; k++) {
			for (; s < to; s++)
				if (l[s] ~ /^\t+[a-z_][a-z0-9_>.-]*( = |\().*\);$/ && length(l[s]) < 90) break
			if (s >= to) break
			match(l[s], /^\t+/); ind = substr(l[s], 1, RLENGTH)
			kind = (n + k) % 3
			b = s - 3; e = s + 3
			old = e - b + 1
			new = old + (kind != 0)
			printf "@@ -%d,%d +%d,%d @@\n", b, old, b + delta, new
			delta += new - old
			for (i = b; i < s; i++) print " " l[i]
			if (kind == 1) print " " l[s]
			else { print "-" l[s]; t = l[s]; sub(/\);$/, ", BENCH_FIX_" n "_" k ");", t); print "+" t }
			if (kind != 0) printf "+%sbench_fix_%d_%d(%d);\n", ind, n, k, k
			for (i = s + 1; i <= e; i++) print " " l[i]
			s += 40
		}
	}' "$1"
}

bench_big_queue_and_tree() {
	T=$1
	N=$2
	SRC=${3:-}
	mkdir -p "$T/bq" "$T/blinux"
	nf=0
	for f in $BENCH_BIG_FILES; do
		mkdir -p "$T/blinux/$(dirname "$f")"
		# from git's objects at v6.1.192 when SRC is a git tree that
		# has it (its working tree may be in use), else the file
		if [ -n "$SRC" ] && git -C "$SRC" cat-file -e "v6.1.192:$f" 2>/dev/null; then
			git -C "$SRC" show "v6.1.192:$f" > "$T/blinux/$f"
		elif [ -n "$SRC" ] && [ -r "$SRC/$f" ]; then
			cp "$SRC/$f" "$T/blinux/$f"
		else
			awk -v f="$f" 'BEGIN {
				print "// SPDX-License-Identifier: GPL-2.0"
				for (i = 1; i <= 500; i++) {
					printf "\nstatic int %s_fn_%d(struct device *dev, int arg)\n{\n", "bench", i
					printf "\tint ret;\n\n\tret = bench_prepare(dev, arg, %d);\n", i
					printf "\tif (ret)\n\t\treturn ret;\n\tbench_write(dev, BENCH_REG_%d, arg);\n", i
					printf "\treturn bench_finish(dev, %d);\n}\n", i
				}
			}' > "$T/blinux/$f"
		fi
		nf=$((nf + 1))
	done
	set -- $BENCH_BIG_FILES
	slots=$((2 * N / nf + 4)) # more than the uses of one file
	i=1
	while [ $i -le $nf ]; do eval "slot_$i=0"; i=$((i + 1)); done
	i=1
	while [ $i -le "$N" ]; do
		_up=$(printf '%08x%032x' $((i * 6007 + 4096)) "$i")
		p=$(printf '%03d-big-%d.patch' $i $i)
		{
			cat <<MAIL
From $_up Mon Sep 17 00:00:00 2001
From: Developer $i <dev$i@example.org>
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [PATCH 6.1 $i/$N] subsys$((i % 23)): fix the big thing number $i
Message-Id: <big-$i@example.org>

commit $_up upstream.

The big thing number $i went wrong when the other thing happened first;
this makes it wait. A few more words, as a real message has a paragraph
or two of explanation.

Fixes: $(printf '%012x' $((i * 7727 + 5))) ("subsys$((i % 23)): add the big thing")
Cc: <stable@vger.kernel.org> # 6.1.x
Signed-off-by: Developer $i <dev$i@example.org>
Signed-off-by: Maintainer <maint@example.org>
---
MAIL
			# one file, or two; each in one to three places, far
			# apart, at a place of this patch's own in the file
			files=1
			[ $((i % 3)) = 0 ] && files=2
			j=0
			while [ $j -lt $files ]; do
				idx=$(((i + j * 7) % nf + 1))
				eval "f=\${$idx}; slot=\${slot_$idx:-0}"
				eval "slot_$idx=$((slot + 1))"
				lines=$(wc -l < "$T/blinux/$f")
				places=$((i % 3 + 1))
				echo "--- a/$f"
				echo "+++ b/$f"
				bench_big_hunks "$T/blinux/$f" \
					$((slot * lines / slots + 20)) \
					$(((slot + 1) * lines / slots - 20)) $i $places
				j=$((j + 1))
			done
			echo
		} > "$T/bq/$p"
		echo "$p" >> "$T/bq/series"
		i=$((i + 1))
	done
	printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n' > "$T/blinux/Makefile"
	(cd "$T/blinux" && git init -q && git add -A &&
		git -c user.name=b -c user.email=b@example.org commit -qm "Linux 6.1.192" &&
		git tag v6.1.192 && git branch linux-6.1.y)
}
