#!/bin/bash
# 22-hostile-queue.t: what a hostile patch can do through the queue (issue
# 11, items 3 to 6), with the real binary on a git repository made here:
# control characters in headers (stored, printed, written back in the
# revert patch), stableq's own revert files in queue_dir, file modes kept by
# a plain diff, a path that would be a file and a directory at once.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
ESC=$(printf '\033')

G init -q "$T/linux"
cd "$T/linux"
for i in $(seq 1 12); do echo "a line $i"; done > a.c
mkdir -p scripts dir
printf '#!/bin/sh\necho run\n' > scripts/run.sh && chmod 755 scripts/run.sh
ln -s a.c lnk
echo bar > dir/bar.c
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
cd "$T"

mkdir -p "$T/q"
head() { # N SUBJECT-HEADER FROM-HEADER
	printf 'From: %s\nDate: Mon, 1 Sep 2025 10:00:0%s +0000\nSubject: %s\nMessage-Id: <h%s.%s@example.org>\n\ncommit %s000000000000000000000000000000000000000 upstream.\n\nBody.\n\nCc: <stable@vger.kernel.org> # 6.1.x\nSigned-off-by: Dev <dev@example.org>\n---\n' \
		"$3" "$1" "$2" "$1" "$$" "$1$1$1"
}
# 1: an RFC 2047 subject with CR/LF/ESC and an injected diff header; ESC in the name
{
	head 1 '=?UTF-8?Q?[PATCH_6.1]_a:_fix=0D=0Adiff_--git_a/evil_b/evil=0D=0Anew_file_mode_100644=1B[2J?=' \
		'=?UTF-8?B?RXZlG1szMW0gRXZpbA==?= <eve@example.org>'
	printf -- '--- a/a.c\n+++ b/a.c\n@@ -2,3 +2,3 @@\n a line 2\n-a line 3\n+a line three\n a line 4\n'
} > "$T/q/1-evil.patch"
# 2: a plain diff (no index, no mode lines) of an executable script
{
	head 2 '[PATCH 6.1] scripts: run more' 'Dev <dev@example.org>'
	printf -- '--- a/scripts/run.sh\n+++ b/scripts/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo run\n+echo run more\n'
} > "$T/q/2-script.patch"
# 3: a plain diff of a symlink's target
{
	head 3 '[PATCH 6.1] lnk: point elsewhere' 'Dev <dev@example.org>'
	printf -- '--- a/lnk\n+++ b/lnk\n@@ -1 +1 @@\n-a.c\n\\ No newline at end of file\n+dir/bar.c\n\\ No newline at end of file\n'
} > "$T/q/3-link.patch"
printf '1-evil.patch\n2-script.patch\n3-link.patch\n' > "$T/q/series"

cat > "$T/s.conf" <<CONF
db = $T/s.db
var_dir = $T/var-s
tree_dir = $T/linux-s
queue_dir = $T/q
CONF
git clone -q --mirror "$T/linux" "$T/linux-s/.git" && git -C "$T/linux-s" config core.bare false && git -C "$T/linux-s" checkout -q linux-6.1.y
SQ() { "$STABLEQ" -c "$T/s.conf" "$@"; }
db() { sqlite3 "$T/s.db" "$1"; }

SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the queue imports" "$(cat "$T/import.log")"
is "$(db "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "queued,queued,queued" "three patches queued"

# --- item 3: headers cleaned on intake, nothing raw reaches the terminal ----
is "$(db "SELECT subject FROM patches WHERE id = 1")" "a: fix diff --git a/evil b/evil new file mode 100644[2J" \
	"the encoded subject is stored as one line, CR/LF a space, ESC gone"
is "$(db "SELECT author_name FROM patches WHERE id = 1")" "Eve[31m Evil" "the encoded ESC in the author's name is gone"
is "$(db "SELECT COUNT(*) FROM patches WHERE subject GLOB '*['||char(1)||'-'||char(31)||char(127)||']*' OR author_name GLOB '*['||char(1)||'-'||char(31)||char(127)||']*'")" 0 \
	"no stored subject or name holds a control character"
out=$(SQ queue 2>&1)
like "$out" "a: fix diff --git a/evil" "stableq queue lists the patch"
is "$(printf '%s' "$out" | grep -c "$ESC")" 0 "... with no ESC byte on the terminal"
out=$(SQ show 1 2>&1)
like "$out" "author:     Eve[31m Evil <eve@example.org>" "stableq show names the author"
is "$(printf '%s' "$out" | grep -c "$ESC")" 0 "... with no ESC byte on the terminal"
is "$(printf '%s' "$out" | tr -cd '\r' | wc -c)" 0 "... and no CR"

# --- item 5: a plain diff keeps the file's mode -----------------------------
SQ release --force > "$T/release.log" 2>&1
ok $? "release --force" "$(cat "$T/release.log")"
is "$(git -C "$T/linux-s" ls-tree linux-6.1.y scripts/run.sh | cut -d' ' -f1)" 100755 "the released script stays executable (100755)"
is "$(git -C "$T/linux-s" ls-tree linux-6.1.y lnk | cut -d' ' -f1)" 120000 "the released symlink stays a symlink (120000)"
is "$(git -C "$T/linux-s" show linux-6.1.y:lnk)" "dir/bar.c" "... pointing where the patch says"

# --- item 3: the revert patch written into queue_dir is safe by construction
reason=$(printf 'breaks boot\n---\ndiff --git a/evil2 b/evil2\nnew file mode 100644\n--- /dev/null\n+++ b/evil2\n@@ -0,0 +1 @@\n+x')
SQ revert 1 --reason "$reason" --no-confirm > "$T/revert.log" 2>&1
ok $? "revert of the patch with the hostile subject" "$(cat "$T/revert.log")"
rf=$(ls "$T/q"/revert-*.patch 2>/dev/null | tail -n 1)
ok $([ -n "$rf" ] && echo 0 || echo 1) "a revert patch is written into the queue directory"
is "$(git -C "$T/linux-s" apply --numstat "$rf" 2>&1 | cut -f3 | tr '\n' ' ')" "a.c " \
	"git apply reads one file from it: a.c (no injected evil, evil2)"
is "$(grep -c '^diff --git' "$rf")" 1 "... one diff --git line"
is "$(grep -c "$ESC" "$rf")" 0 "... no ESC byte"
like "$(git -C "$T/linux-s" log -1 --format=%B linux-6.1.y)" " diff --git a/evil2 b/evil2" "the revert commit keeps the reason, its diff-like lines indented"

# --- item 4: stableq's own revert file is not imported again ----------------
n=$(db "SELECT COUNT(*) FROM patches")
SQ import "$T/q" > "$T/reimport.log" 2>&1
ok $? "the queue directory imports again" "$(cat "$T/reimport.log")"
like "$(cat "$T/reimport.log")" "1 revert of stableq's own left alone" "... the revert is recognized as stableq's own"
is "$(db "SELECT COUNT(*) FROM patches")" "$n" "... and not stored as a new patch"
is "$(db "SELECT COUNT(*) FROM patches WHERE author_email = 'stableq@localhost'")" 0 "... no patch by stableq in the queue"
is "$(db "SELECT COUNT(*) FROM mail WHERE rcpt_to LIKE '%stableq@localhost%'")" 0 "... and no mail to stableq itself"

# --- item 6: a file over a directory, a file under a file ------------------
fd() { # NAME SUBJECT DIFF
	{ head "$1" "[PATCH 6.1] $2" 'Dev <dev@example.org>'; printf -- "$3"; } > "$T/$1.patch"
	SQ import "$T/$1.patch" > "$T/$1.log" 2>&1
	db "SELECT result || ': ' || detail FROM verdicts WHERE check_name = 'applies' AND patch_id = (SELECT MAX(id) FROM patches) ORDER BY id DESC LIMIT 1"
}
v=$(fd 4 "dir: a file over the directory" 'diff --git a/dir b/dir\nnew file mode 100644\n--- /dev/null\n+++ b/dir\n@@ -0,0 +1 @@\n+x\n')
like "$v" "conflict: dir: appears as both a file and a directory" "adding a file over a directory: applies says conflict"
v=$(fd 5 "a.c: a file under the file" 'diff --git a/a.c/x b/a.c/x\nnew file mode 100644\n--- /dev/null\n+++ b/a.c/x\n@@ -0,0 +1 @@\n+x\n')
like "$v" "conflict: a.c/x: is under a.c, a file" "adding dir/x where dir is a file: applies says conflict"
v=$(fd 6 "dir: a symlink over the directory" 'diff --git a/dir b/dir\nnew file mode 120000\n--- /dev/null\n+++ b/dir\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n')
like "$v" "conflict: dir: appears as both a file and a directory" "a symlink over a directory: applies says conflict"
tip=$(git -C "$T/linux-s" rev-parse linux-6.1.y)
SQ release --force > "$T/release2.log" 2>&1
is "$(git -C "$T/linux-s" rev-parse linux-6.1.y)" "$tip" "release leaves the branch alone: none of them is released"
is "$(git -C "$T/linux-s" show linux-6.1.y:dir/bar.c)" bar "... dir/bar.c is still there"
is "$(db "SELECT COUNT(*) FROM patches WHERE id > 3 AND state = 'released'")" 0 "... and no such patch is recorded as released"
done_testing
