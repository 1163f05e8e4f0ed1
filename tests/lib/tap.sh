# tests/lib/tap.sh: TAP helpers for the shell integration tests.
# Source it; call ok/is/like, then done_testing at the end.
T_N=0
T_FAILED=0
ok() { # ok STATUS DESCRIPTION
	T_N=$((T_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $T_N - $2"
	else
		echo "not ok $T_N - $2"
		T_FAILED=$((T_FAILED + 1))
	fi
	return "$1"
}
is() { # is GOT WANT DESCRIPTION
	if [ "$1" = "$2" ]; then ok 0 "$3"; else
		ok 1 "$3"
		echo "#   got:      '$1'"
		echo "#   expected: '$2'"
	fi
}
like() { # like GOT SUBSTRING DESCRIPTION
	case "$1" in
	*"$2"*) ok 0 "$3" ;;
	*)
		ok 1 "$3"
		echo "#   '$1'"
		echo "#   does not contain '$2'"
		;;
	esac
}
diag() { echo "# $*"; }
done_testing() {
	echo "1..$T_N"
	[ "$T_FAILED" -eq 0 ]
}
# The repository's top (two folders above this file, wherever the test
# stands) and the binary under test.
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STABLEQ="${STABLEQ:-$TOP/stableq}"
export STABLEQ_NO_DEFAULT_CONFIG=1
