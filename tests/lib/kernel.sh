# tests/lib/kernel.sh: the real 6.1 tree that the kernel tests share
# ($TOP/var/linux, imported from linux-source-6.1 once), and the test set's
# known failure of the tip. Source tap.sh first; T is the test's temp dir.
#   stable_tree          `stableq tree init` (imports the tree, or finds it
#                        imported), then sets TREE and tag (the newest
#                        6.1 tag); one ok line saying so
#   tip_known TESTS.CONF appends the guest test tip-known, which fails on
#                        every kernel: a known failure of the tip
#   coverage_conf DIR BRANCH QUEUE
#                        prints a config of a store in DIR on BRANCH of
#                        that tree, its queue in QUEUE, the quick guest, and
#                        the build, its cache and build coverage in the
#                        kernel tests' shared directories
#   db SQL               the answer of the store $T/stableq.db
#   wait_for SECONDS SQL until SQL answers non-empty and non-zero (1 when
#                        the time is up or the daemon $DPID has ended)
stable_tree() {
	TREE=$TOP/var/linux
	mkdir -p "$TOP/var"
	tag=
	printf 'tree_dir = %s\n' "$TREE" > "$T/init.conf"
	(cd "$TOP" && "$STABLEQ" -c "$T/init.conf" --db "$T/init.db" tree init > "$T/init.log" 2>&1) &&
		tag=$(git -C "$TREE" describe --tags --abbrev=0 linux-6.1.y)
	[ -n "$tag" ]
	ok $? "the stable tree is there ($tag)" || diag "$(tail -n 20 "$T/init.log")"
}

tip_known() {
	cat >> "$1" <<'CONF'

[test tip-known]
kind = guest
command = false
timeout = 10
description = fails on every kernel: a known failure of the tip
CONF
}

coverage_conf() {
	cat <<CONF
db = $1/stableq.db
var_dir = $1/var
build_cache_dir = $TOP/var/build-cache
tree_dir = $TREE
branch = $2
build_dir = $TOP/var/build
coverage_build_dir = $TOP/var/build-cover
coverage_config = $TOP/config/coverage.config
queue_dir = $3
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
CONF
}

db() { sqlite3 "$T/stableq.db" "$1"; }

wait_for() {
	local i
	for i in $(seq "$1"); do
		v=$(db "$2" 2> /dev/null)
		[ -n "$v" ] && [ "$v" != 0 ] && return 0
		kill -0 "$DPID" 2> /dev/null || return 1
		sleep 1
	done
	return 1
}
