#!/usr/bin/env python3
# check: last (it looks for what every other test left running)
"""99-no-leftovers.t: no process a test of this checkout started is still running.

Runs last in `make check`. A process counts as this checkout's when its
environment carries STABLEQ_CHECKOUT of this checkout (tests/lib/as-test
sets it, with STABLEQ_TEST, for every test make check runs), or when it
runs this checkout's stableq binary (./stableq, var/san/stableq). Other
checkouts' processes (other workers run stableq at the same time) are not
this checkout's and are left alone: this test only looks.
"""
import os
import sys

TOP = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
BINS = {os.path.join(TOP, 'stableq'), os.path.join(TOP, 'var', 'san', 'stableq')}


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return None


def ppid(pid):
    stat = read('/proc/%d/stat' % pid)
    if not stat:
        return 0
    return int(stat[stat.rindex(b')') + 2:].split()[1])


def mine(pid):
    """This test and what it started are not leftovers."""
    me = os.getpid()
    while pid > 1:
        if pid == me:
            return True
        pid = ppid(pid)
    return False


def leftovers():
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        pid = int(name)
        if mine(pid):
            continue
        env = read('/proc/%d/environ' % pid)
        if env is None:
            continue  # another user's, or gone
        vars_ = dict(v.split(b'=', 1) for v in env.split(b'\0') if b'=' in v)
        try:
            exe = os.readlink('/proc/%d/exe' % pid)
        except OSError:
            exe = ''
        exe = exe.replace(' (deleted)', '')
        ours = vars_.get(b'STABLEQ_CHECKOUT', b'').decode(errors='replace') == TOP
        if not ours and exe not in BINS:
            continue
        argv = (read('/proc/%d/cmdline' % pid) or b'').replace(b'\0', b' ').decode(errors='replace').strip()
        test = vars_.get(b'STABLEQ_TEST', b'').decode(errors='replace') or 'a test run outside make check'
        found.append((pid, test, argv))
    return found


left = leftovers()
print('1..1')
if not left:
    print('ok 1 - no process started by a test of %s is still running' % TOP)
    sys.exit(0)
print('not ok 1 - processes left running by the tests of %s' % TOP)
for pid, test, argv in left:
    print('#   %s left pid %d running: %s' % (test, pid, argv[:300]))
sys.exit(1)
