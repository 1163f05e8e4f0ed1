# tests/lib/replies.sh: a 6.1.10 tree, patch mails and replies for the reply tests (44, 45).
# Source after tap.sh with T set; gives G, q, SQ, up, patch, reply, replies_tree, replies_conf.
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
# up N: patch N's upstream commit
up() { echo "upstream $1" | sha1sum | cut -c1-40; }

# replies_tree: $T/linux, branch linux-6.1.y at v6.1.10, lib.c of 100 lines; a maildir
replies_tree() {
	G init -q "$T/linux" || return 1
	(cd "$T/linux" && for i in $(seq 1 100); do echo "line $i"; done > lib.c &&
		printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile &&
		G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y)
	mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
}

# replies_conf [LINE...]: $T/stableq.conf reading $T/Maildir, plus LINEs
replies_conf() {
	cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
debian_changelog =
tree_dir = $T/linux
build_dir = $T/build
queue_dir = $T/queue
queue_seed =
coverage_build_dir = $T/cover
kernel_config_dir = $TOP/config/kernel
poll_interval = 1
listen = 127.0.0.1:$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
intake_maildir = $T/Maildir
intake_build = trusted
intake_trusted = @example.org
CONF
	for l in "$@"; do echo "$l" >> "$T/stableq.conf"; done
}

# patch N MSGID [TRAILER]: a mail changing lib.c line 5*N, upstream `up N`
patch() {
	local d
	d=$(cd "$T/linux" && sed -i "s/^line $(($1 * 5))\$/line $(($1 * 5)) fixed/" lib.c && git diff && git checkout -q lib.c)
	cat <<MAIL
From: Jane Dev <jane@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [PATCH 6.1] lib: fix line $1
Message-Id: <$2>

commit $(up "$1") upstream.

Fix line $1.
${3:+
$3}
Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>
---
$d
MAIL
}

# reply FROM MSGID IRT BODY [SUBJECT]: IRT empty starts a new thread
reply() {
	cat <<MAIL
From: $1
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 11:00:00 +0000
Subject: ${5:-Re: [PATCH 6.1] lib}
Message-Id: <$2>
${3:+In-Reply-To: <$3>}

$4
MAIL
}
