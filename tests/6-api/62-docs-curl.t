#!/usr/bin/env python3
"""62-docs-curl.t: every curl command of README.md and docs/*.md, verbatim, against the real daemon.

The examples (docs/api.md holds most of them) talk to 127.0.0.1:8080 and use $TOKEN, @fix.patch and
patch 12. So that they run as written while other daemons may hold port 8080
on this machine, the test runs in a network namespace of its own
(`unshare -rn`: a private loopback), where the daemon listens on
127.0.0.1:8080. The store holds twelve imported patches, $TOKEN is a write
token and fix.patch (and fix-6.12.patch, its [PATCH 6.12] backport) a new
patch in the working directory; each command
then runs with `sh -c`, in the files' order (README.md first, then docs/ by
name), and must exit 0 and print JSON that is not an error. A curl line
added to any of them later is run the same way. The store has two branches
(6.1 and 6.12), as the ?branch= lines expect.
"""
import fcntl
import json
import os
import re
import socket
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import TOP, Tap, World  # noqa: E402

if os.environ.get('STABLEQ_NETNS') != '1':
    os.environ['STABLEQ_NETNS'] = '1'
    try:
        os.execvp('unshare', ['unshare', '-rn', sys.executable] + sys.argv)
    except OSError as e:
        print('not ok 1 - unshare -rn (a private loopback for port 8080): %s\n1..1' % e)
        sys.exit(1)

t = Tap()


def loopback_up():
    """ip link set lo up, without iproute2: SIOCSIFFLAGS on lo."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40
        fcntl.ioctl(s, 0x8914, struct.pack('16sH14x', b'lo', IFF_UP | IFF_LOOPBACK | IFF_RUNNING))
    finally:
        s.close()


def doc_files():
    """README.md, then every docs/*.md by name."""
    docs = os.path.join(TOP, 'docs')
    return [os.path.join(TOP, 'README.md')] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith('.md'))


def doc_curls():
    """The curl command lines of the documents' code (indented or fenced)."""
    lines = []
    for path in doc_files():
        fenced = False
        with open(path) as f:
            for line in f:
                if line.lstrip().startswith('```'):
                    fenced = not fenced
                    continue
                if (fenced or line.startswith('    ')) and re.match(r'\s*curl\s', line):
                    lines.append(line.strip())
    return lines


curls = doc_curls()
t.ok(len(curls) >= 12, 'README.md and docs/ show %d curl commands' % len(curls), curls)
loopback_up()
w = World(port=8080, two_branches=True)  # docs/api.md shows ?branch=6.12
try:
    # twelve patches, so that the documents' patch 12 exists
    mbox = ''.join(w.mail(n, 'lib: fix line %d' % n, '',
                          w.diff('lib.c', 'line %d\n' % n, 'line %d fixed\n' % n))
                   for n in range(3, 15))
    with open(os.path.join(w.dir, 'twelve.mbox'), 'w') as f:
        f.write(mbox)
    w.sq('import', os.path.join(w.dir, 'twelve.mbox'))
    work = os.path.join(w.dir, 'work')
    os.makedirs(work)
    with open(os.path.join(work, 'fix.patch'), 'w') as f:
        # a patch with a message of some length, as a real one has
        f.write(w.mail(21, 'lib: fix line 21', '', w.diff('lib.c', 'line 21\n', 'line 21 fixed\n'),
                       body='Line 21 was wrong.\n\n' + 'It said the wrong thing. ' * 60))
    with open(os.path.join(work, 'fix-6.12.patch'), 'w') as f:
        f.write(w.mail(21, 'lib: fix line 21', '', w.diff('lib.c', 'line 21\n', 'line 21 fixed\n'),
                       body='Line 21 was wrong.', prefix='PATCH 6.12'))
    env = dict(os.environ, TOKEN=w.token('readme'))

    w.start()
    t.ok(w.alive(), 'the daemon listens on 127.0.0.1:8080 (a private loopback)')
    t.ok(w.idle(), 'the daemon has checked the twelve patches', w.daemon_log())
    for cmd in curls:
        p = subprocess.run(['sh', '-c', cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        out = p.stdout.decode(errors='replace')
        try:
            j = json.loads(out)
        except ValueError:
            j = None
        t.ok(p.returncode == 0 and j is not None and not (isinstance(j, dict) and 'error' in j),
             'as written: %s' % cmd, 'exit %d' % p.returncode, out[:600],
             p.stderr.decode(errors='replace')[:600])
    t.ok(w.alive(), 'the daemon is still running')
except Exception:  # a crash of the test is a failure, with its story
    import traceback
    t.ok(False, 'the test ran to its end', traceback.format_exc(), w.daemon_log())
finally:
    w.cleanup()
sys.exit(t.done())
