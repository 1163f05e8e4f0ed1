#!/bin/bash
# 43-series-incomplete.t: an incomplete series is held until its missing
# part arrives, then goes on in n/m order; a posting for several trees
# goes to each configured branch it names. Real tools: the series made by
# `git format-patch --cover-letter`, delivered into a maildir by procmail
# (1/3 and 3/3 first, 2/3 a pass later), `b4 am` on the same messages
# saying what it is missing, two stable branches (6.1 and 6.6) on small
# git trees made here, as tests/25-branches.t does. Last, a revert of a
# released patch posted to the list (Revert "...", "This reverts commit
# <sha>" or Fixes: <upstream>) flags that patch broken.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-43.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export HOME=$T/home
mkdir -p "$HOME"
git config --global user.name "Sam Stable"
git config --global user.email sam@example.org
git config --global init.defaultBranch master
G() { git -c user.name="Jane Dev" -c user.email=jane@example.org "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
msgid() { sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$1" | head -1; }
for tool in procmail b4; do
	command -v $tool >/dev/null || { echo "Bail out! no $tool: make deps"; exit 1; }
done

# --- two trees: 6.1.10 and 6.6.5 ------------------------------------------------------
tree() { # DIR VERSION PATCHLEVEL SUBLEVEL
	G init -q "$1" && cd "$1" || exit 1
	for i in $(seq 1 60); do echo "line $i"; done > lib.c
	printf 'VERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = %s\n' "$2" "$3" "$4" > Makefile
	G add -A && G commit -qm "Linux $2.$3.$4" && G tag "v$2.$3.$4"
	G branch -q "linux-$2.$3.y"
}
tree "$T/linux-6.1" 6 1 10
tree "$T/linux-6.6" 6 6 5
git clone -q "$T/linux-6.1" "$T/dev" && cd "$T/dev" || exit 1
fix() { # LINE: a backport of upstream commit <LINE repeated>
	sed -i "s/^line $1\$/line $1 fixed/" lib.c
	G commit -qam "lib: fix line $1

commit $(printf '%040d' "$1" | tr 0 d) upstream.

Fix line $1.

Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>"
}
fix 8 && fix 16 && fix 24
G format-patch -q --cover-letter --thread=shallow --subject-prefix="PATCH 6.1" \
	--to=stable@vger.kernel.org -3 -o "$T/s"
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/lib fixes/' "$T/s/0000-cover-letter.patch"

# --- procmail delivers into a maildir ---------------------------------------------------
mkdir -p "$T/Maildir"
printf 'LOGFILE=%s/procmail.log\n:0\n%s/Maildir/\n' "$T" "$T" > "$T/procmailrc"
deliver() { # FILE...: each mail (format-patch's "From <sha>" line off), by procmail
	for f in "$@"; do
		sed '1{/^From [0-9a-f]\{40\} /d}' "$f" | procmail -m "$T/procmailrc" || return 1
	done
}
# the maildir as an mbox, for b4
maildir_mbox() {
	for f in "$T"/Maildir/new/* "$T"/Maildir/cur/*; do
		[ -f "$f" ] || continue
		echo "From mboxrd@z Thu Jan  1 00:00:00 1970"
		sed 's/^\(>*From \)/>\1/' "$f"
		echo
	done > "$T/maildir.mbox"
}
b4am() { # OUT-DIR: b4 am of the series, from the maildir's messages
	maildir_mbox
	mkdir -p "$1"
	(cd "$T/dev" && b4 --offline-mode am -m "$T/maildir.mbox" -o "$1" "$(msgid "$T/s/0000-cover-letter.patch")") 2>&1
}

cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
debian_changelog =
kernel_config_dir = $TOP/config/kernel/6.1/quick
intake_maildir = $T/Maildir
rc_list = Stable list <stable@vger.kernel.org>
intake_build = trusted
intake_trusted = @example.org
listen = 127.0.0.1:0
[branch 6.1]
tree_dir = $T/linux-6.1
build_dir = $T/build-6.1
queue_dir = $T/q-6.1
queue_seed =
coverage_build_dir = $T/cover-6.1
[branch 6.6]
branch = linux-6.6.y
linux_source = $T/no-linux-source-6.6.tar.xz
tree_dir = $T/linux-6.6
build_dir = $T/build-6.6
queue_dir = $T/q-6.6
queue_seed =
coverage_build_dir = $T/cover-6.6
CONF
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
order() { q "SELECT group_concat(subject, ', ') FROM (SELECT subject FROM patches p JOIN branches b ON b.id = p.branch_id WHERE b.key = '6.1' AND subject LIKE 'lib: fix line %' ORDER BY queue_pos)"; }

# --- 1/3 and 3/3 arrive, 2/3 does not ---------------------------------------------------
deliver "$T/s/0000-cover-letter.patch" "$T"/s/0001-*.patch "$T"/s/0003-*.patch
ok $? "procmail: the cover, 1/3 and 3/3 in the maildir"
out=$(b4am "$T/b4a")
like "$out" "ERROR: missing [2/3]!" "b4 am: missing [2/3]" || diag "$out"
out=$(SQ intake 2>&1)
ok $? "stableq intake" || diag "$out"
like "$out" "2 patches in 1 series" "... 1/3 and 3/3 stored" || diag "$out"
like "$out" "1 series incomplete" "... the series incomplete"
is "$(q "SELECT group_concat(state) FROM patches")" "held,held" "... both held"
reason=$(q "SELECT state_reason FROM patches ORDER BY id LIMIT 1")
like "$reason" "series incomplete: missing 2/3 of \"lib fixes\" from jane@example.org (b4 am: missing [2/3])" "... saying what is missing, as b4 does"
is "$(q "SELECT count(*) FROM verdicts")" 0 "... and not checked yet"

# meanwhile another patch is queued behind them
cat > "$T/lone.eml" <<MAIL
From: Ann Other <ann@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [PATCH 6.1] lib: fix line 44
Message-Id: <lone@example.org>

commit $(printf '%040d' 44 | tr 0 e) upstream.

Fix line 44.

Cc: <stable@vger.kernel.org>
Signed-off-by: Ann Other <ann@example.org>
---
diff --git a/lib.c b/lib.c
--- a/lib.c
+++ b/lib.c
@@ -41,7 +41,7 @@
 line 41
 line 42
 line 43
-line 44
+line 44 fixed
 line 45
 line 46
 line 47
MAIL
deliver "$T/lone.eml"
SQ intake >/dev/null 2>&1
is "$(order)" "lib: fix line 8, lib: fix line 24, lib: fix line 44" "another patch queued after them"

# --- 2/3 arrives late -----------------------------------------------------------------
deliver "$T"/s/0002-*.patch
out=$(b4am "$T/b4b")
like "$out" "Total patches: 3" "b4 am: the series whole" || diag "$out"
out=$(SQ intake 2>&1)
ok $? "stableq intake of the late 2/3" || diag "$out"
like "$out" "1 completed" "... the series completed" || diag "$out"
is "$(order)" "lib: fix line 8, lib: fix line 16, lib: fix line 24, lib: fix line 44" \
	"... 2/3 put between 1/3 and 3/3: the series in 1, 2, 3 order, the other patch after it"
is "$(q "SELECT group_concat(state) FROM (SELECT state FROM patches WHERE subject IN ('lib: fix line 8', 'lib: fix line 16', 'lib: fix line 24') ORDER BY queue_pos)")" \
	"queued,queued,queued" "... released from hold, checked and queued"
like "$(q "SELECT group_concat(detail) FROM events WHERE kind = 'state' AND subject_id = (SELECT id FROM patches WHERE subject = 'lib: fix line 8')")" \
	"series complete" "... the event says why"
# the rc's series file order: the rc numbers them in queue order
out=$(SQ rc 2>&1)
like "$out" "6.1.11-rc1 (open), 4 patches" "stableq rc: the four queued patches" || diag "$out"
is "$(SQ rc --show --json | /usr/bin/python3 -c 'import json,sys; print(", ".join(p["subject"] for p in json.load(sys.stdin)["patches"]))')" \
	"lib: fix line 8, lib: fix line 16, lib: fix line 24, lib: fix line 44" "... numbered 1/3, 2/3, 3/3 in the rc's series"
# what b4 am applies is what the queue holds
is "$(git patch-id --stable < "$(ls "$T"/b4b/*.mbx)" | cut -d' ' -f1 | tr '\n' ' ')" \
	"$(for id in $(q "SELECT id FROM patches WHERE subject IN ('lib: fix line 8', 'lib: fix line 16', 'lib: fix line 24') ORDER BY queue_pos"); do
		SQ show --json "$id" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["diff"], end="")' | git patch-id --stable | cut -d' ' -f1
	done | tr '\n' ' ')" "... the same three patches b4 am makes, in its order (git patch-id)"

# --- one posting for several trees ------------------------------------------------------
multi() { # PREFIX MSGID LINE
	cat <<MAIL
From: Ann Other <ann@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 11:00:00 +0000
Subject: [$1] lib: fix line $3
Message-Id: <$2>

commit $(printf '%s%040d' "$(echo "$3" | tr 0-9 a-j)" 0 | cut -c1-40) upstream.

Fix line $3.

Cc: <stable@vger.kernel.org>
Signed-off-by: Ann Other <ann@example.org>
---
diff --git a/lib.c b/lib.c
--- a/lib.c
+++ b/lib.c
@@ -$(($3 - 3)),7 +$(($3 - 3)),7 @@
 line $(($3 - 3))
 line $(($3 - 2))
 line $(($3 - 1))
-line $3
+line $3 fixed
 line $(($3 + 1))
 line $(($3 + 2))
 line $(($3 + 3))
MAIL
}
branches_of() { q "SELECT group_concat(b.key, ' ') FROM (SELECT b.key FROM patches p JOIN branches b ON b.id = p.branch_id WHERE p.message_id = '$1' ORDER BY b.key) b"; }
multi "PATCH 6.1/6.6" m1@example.org 50 | procmail -m "$T/procmailrc"
multi "PATCH 6.1.y,6.6.y" m2@example.org 57 | procmail -m "$T/procmailrc"
multi "PATCH 5.15 6.1" m3@example.org 36 | procmail -m "$T/procmailrc"
out=$(SQ intake 2>&1)
ok $? "stableq intake of three postings for several trees" || diag "$out"
is "$(branches_of m1@example.org)" "6.1 6.6" "[PATCH 6.1/6.6]: on both configured branches"
is "$(branches_of m2@example.org)" "6.1 6.6" "[PATCH 6.1.y,6.6.y]: on both"
is "$(branches_of m3@example.org)" "6.1" "[PATCH 5.15 6.1]: on 6.1, the one of the two configured"
is "$(q "SELECT group_concat(state) FROM patches WHERE message_id IN ('m1@example.org', 'm2@example.org', 'm3@example.org')")" \
	"queued,queued,queued,queued,queued" "... each checked on its own branch: queued"
# a NAK to the posting holds it on every branch it went to
cat > "$T/nak.eml" <<MAIL
From: Nina Nak <nina@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 12:00:00 +0000
Subject: Re: [PATCH 6.1/6.6] lib: fix line 50
Message-Id: <nak-m1@example.org>
In-Reply-To: <m1@example.org>

NAK: this breaks the frobnicator on both.
MAIL
procmail -m "$T/procmailrc" < "$T/nak.eml"
SQ intake >/dev/null 2>&1
is "$(q "SELECT group_concat(state) FROM patches WHERE message_id = 'm1@example.org'")" "held,held" "a NAK to it holds it on both branches"

# a NAK on a part of an incomplete series keeps it held once the series is whole
multi "PATCH 6.1 1/2" two1@example.org 4 | sed 's/^Message-Id: <two1@example.org>$/&\nIn-Reply-To: <two0@example.org>/' > "$T/two1.eml"
multi "PATCH 6.1 2/2" two2@example.org 40 | sed 's/^Message-Id: <two2@example.org>$/&\nIn-Reply-To: <two0@example.org>/' > "$T/two2.eml"
procmail -m "$T/procmailrc" < "$T/two1.eml"
sed 's/nak-m1@example.org/nak-two1@example.org/; s/m1@example.org/two1@example.org/' "$T/nak.eml" | procmail -m "$T/procmailrc"
out=$(SQ intake 2>&1)
like "$out" "1 series incomplete" "1/2 of another series, and a NAK to it: incomplete" || diag "$out"
procmail -m "$T/procmailrc" < "$T/two2.eml"
out=$(SQ intake 2>&1)
like "$out" "1 completed" "... 2/2 arrives: complete" || diag "$out"
is "$(q "SELECT state FROM patches WHERE message_id = 'two2@example.org'")" queued "... 2/2 checked and queued"
is "$(q "SELECT state FROM patches WHERE message_id = 'two1@example.org'")" held "... 1/2 stays held: the NAK took the hold over"
like "$(q "SELECT state_reason FROM patches WHERE message_id = 'two1@example.org'")" "NAK in a reply from Nina Nak" "... its reason is the NAK"

# --- docs/list-intake.md's commands, as written ----------------------------------------
mkdir -p "$T/bin" && ln -s "$STABLEQ" "$T/bin/stableq"
n=0
while IFS= read -r line; do
	n=$((n + 1))
	out=$(cd "$T" && PATH="$T/bin:$PATH" sh -c "$line" 2>&1)
	ok $? "docs/list-intake.md: $line" || diag "$out"
done <<EOF2
$(sed -n 's/^\$ \(stableq .*\)$/\1/p' "$TOP/docs/list-intake.md")
EOF2
ok "$([ "$n" -ge 3 ]; echo $?)" "... its $n commands run"
like "$(cd "$T" && PATH="$T/bin:$PATH" stableq -c stableq.conf queue --state held 2>&1)" "lib: fix line 50" "... the held patches listed"

# --- a revert of a released patch, posted to the list ---------------------------------
# (no rc_list: a branch without a review cycle releases its queue as it stands)
sed "s#^db = .*#db = $T/rel.db#; s#^intake_maildir = .*#intake_maildir = $T/Maildir2#" "$T/stableq.conf" | sed "/^rc_list = /d" > "$T/rel.conf"
printf 'LOGFILE=%s/procmail.log\n:0\n%s/Maildir2/\n' "$T" "$T" > "$T/procmailrc2"
R() { "$STABLEQ" -c "$T/rel.conf" "$@"; }
qr() { sqlite3 "$T/rel.db" "$1"; }
multi "PATCH 6.1" rel12@example.org 12 | procmail -m "$T/procmailrc2"
multi "PATCH 6.1" rel20@example.org 20 | procmail -m "$T/procmailrc2"
R intake >/dev/null 2>&1
out=$(R --branch 6.1 release --force 2>&1)
ok $? "a store of its own: two patches from the list, released" || diag "$out"
a=$(qr "SELECT id FROM patches WHERE message_id = 'rel12@example.org'")
b=$(qr "SELECT id FROM patches WHERE message_id = 'rel20@example.org'")
rela=$(qr "SELECT released_commit FROM patches WHERE id = $a")
upb=$(qr "SELECT upstream FROM patches WHERE id = $b")
is "$(qr "SELECT group_concat(state) FROM patches WHERE id IN ($a, $b)")" "released,released" "... both released ($rela)"
revert() { # MSGID LINE TRAILER-OR-LINE
	cat <<MAIL
From: Rex Reverter <rex@example.org>
To: stable@vger.kernel.org
Date: Tue, 2 Sep 2025 09:00:00 +0000
Subject: [PATCH 6.1] Revert "lib: fix line $2"
Message-Id: <$1>

$3

It breaks the frobnicator on my box.

Signed-off-by: Rex Reverter <rex@example.org>
---
diff --git a/lib.c b/lib.c
--- a/lib.c
+++ b/lib.c
@@ -$(($2 - 3)),7 +$(($2 - 3)),7 @@
 line $(($2 - 3))
 line $(($2 - 2))
 line $(($2 - 1))
-line $2 fixed
+line $2
 line $(($2 + 1))
 line $(($2 + 2))
 line $(($2 + 3))
MAIL
}
revert rv12@example.org 12 "This reverts commit $rela." | procmail -m "$T/procmailrc2"
revert rv20@example.org 20 "Fixes: ${upb:0:12} (\"lib: fix line 20\")" | procmail -m "$T/procmailrc2"
out=$(R intake 2>&1)
ok $? "stableq intake: two reverts posted to the list" || diag "$out"
like "$out" "2 released patches flagged" "... both released patches flagged" || diag "$out"
is "$(qr "SELECT group_concat(state) FROM patches WHERE id IN ($a, $b)")" "broken,broken" "... broken: the revert path starts"
like "$(qr "SELECT reason FROM flags WHERE patch_id = $a")" \
	"a revert of it was posted to the list by Rex Reverter <rex@example.org> (Message-Id <rv12@example.org>): \"Revert \"lib: fix line 12\"\"" \
	"\"This reverts commit <its stable commit>\": the flag names the mail"
like "$(qr "SELECT reason FROM flags WHERE patch_id = $b")" "(Message-Id <rv20@example.org>)" "Fixes: <its upstream commit>: flagged too"
is "$(qr "SELECT count(*) FROM mail WHERE kind = 'flagged' AND patch_id IN ($a, $b)")" 2 "... each author told (outbox)"
like "$(qr "SELECT action FROM mail_messages WHERE message_id = 'rv12@example.org'")" "flagged patch $a (released)" "... the revert's mail row says so"

done_testing
