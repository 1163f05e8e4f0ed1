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
