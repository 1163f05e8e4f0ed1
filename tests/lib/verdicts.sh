# tests/lib/verdicts.sh: for the verdict tests (sourced after tap.sh):
# verdicts_conf writes a config checking the tree $T/linux with Debian's
# changelog $T/changelog; the others ask its store, by patch file name
# (NAME.patch).
verdicts_conf() {
	cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
tree_dir = $T/linux
debian_changelog = $T/changelog
CONF
}
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
id() { q "SELECT id FROM patches WHERE filename = '$1.patch'"; }
v() { q "SELECT result FROM verdicts WHERE patch_id = $(id "$1") AND check_name = '$2' ORDER BY id DESC LIMIT 1"; }
vd() { q "SELECT detail FROM verdicts WHERE patch_id = $(id "$1") AND check_name = '$2' ORDER BY id DESC LIMIT 1"; }
st() { q "SELECT state FROM patches WHERE filename = '$1.patch'"; }
why() { q "SELECT state_reason FROM patches WHERE filename = '$1.patch'"; }
