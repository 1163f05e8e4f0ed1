#!/bin/bash
# 17-cli-options.t: the CLI's options are read with getopt_long from each
# command's table beside the global ones: an unknown option, or one without
# its value, is refused with exit 2 before anything is opened, naming the
# option and followed by the command's usage; options stand before or after
# the operands, globals before or after the command, and a unique prefix
# of a long option is that option.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
F=$TOP/tests/fixtures/intake
# from $T: the default tree (var/linux) is not there, so imports are not checked
SQ() { (cd "$T" && "$STABLEQ" --db "$T/db" "$@"); }

# refused: exit 2, the option named, the usage, no store made
refused() { # refused WHAT-IS-SAID USAGE-LINE ARGS...
	local said=$1 usage=$2 out rc
	shift 2
	out=$("$STABLEQ" --db "$T/none.db" "$@" 2>&1)
	rc=$?
	is "$rc" 2 "stableq $*: exit 2"
	like "$out" "$said" "... saying: $said"
	like "$out" "usage: stableq $usage" "... with the usage"
	[ ! -e "$T/none.db" ]
	ok $? "... and no store opened"
}
refused "stableq queue: unknown option '--bogus'" "queue" queue --bogus
refused "stableq queue: unknown option '-x'" "queue" queue -x
refused "stableq queue: no value given to option '--state'" "queue" queue --state
refused "stableq revert: no value given to option '--reason'" "revert ID" revert 3 --reason
refused "stableq revert: unknown option '--force'" "revert ID" revert 3 --force
refused "stableq flag: unknown option '--dry-run'" "flag ID" flag 3 --dry-run --reason x
refused "stableq serve: unknown option '-q'" "serve" serve -q
refused "stableq mail: unknown option '--bogus'" "mail list" mail list --bogus
refused "stableq token: no value given to option '--scope'" "token add" token add bot --scope
refused "stableq lava-job: no value given to option '--out'" "lava-job CANDIDATE" lava-job 3 --out
refused "stableq: unknown option '--bogus'" "[-c FILE]" --bogus queue

# a command's own checks still speak after the parse
out=$(SQ queue --state limbo 2>&1)
is "$?" 2 "queue --state limbo: exit 2"
like "$out" "stableq queue: unknown state 'limbo'" "... the state named"

# accepted: options after operands, globals after the command, a prefix
SQ import "$F/series-3.mbox" > "$T/imp.log" 2>&1
ok $? "import"
out=$(SQ queue --state imported)
like "$out" "(not checked)" "queue --state imported (no tree: the checks did not run)"
is "$(cd "$T" && "$STABLEQ" queue --db "$T/db" --json --state imported | grep -c '"id"')" 3 "globals after the command: --db and --json, and --state"
is "$(cd "$T" && "$STABLEQ" queue --db "$T/db" --json --sta imported | grep -c '"id"')" 3 "--sta is --state"
out=$(SQ flag --reason "breaks it" 1 2>&1)
like "$out" "patch 1 flagged broken: breaks it" "flag --reason TEXT ID: the option before the operand"
out=$(SQ revert 2 --dry 2>&1)
like "$out" "plan for patch 2" "revert ID --dry: a prefix of --dry-run"
out=$(SQ import --help)
is "$?" 0 "import --help: exit 0"
like "$out" "usage: stableq [-c FILE]" "... the usage on stdout"
out=$(SQ revert --confirm 7 2>&1)
is "$?" 1 "revert --confirm 7: exit 1 (no such revert)"
like "$out" "revert 7: no such revert" "... --confirm is revert's option, not the global -c FILE"
done_testing
