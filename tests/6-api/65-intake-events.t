#!/usr/bin/env python3
"""65-intake-events.t: every door leaves the same events, by who came through it.

One intake call (intake_submit()) imports and checks, whichever door a
patch comes through: `stableq import` (user:NAME), POST /patches
(token:NAME) and the daemon's import of queue_dir (daemon). Each patch
gets the same three events, in order, by that actor: imported, checked
(a check that moved the patch too) and state. Then the daemon's own work,
a candidate of the queue and the bisection of its failure (the small tree
here has no kernel to build), acts as the daemon, not as the user it runs
as and not as the bare names of its parts ('candidate', 'bisection').
"""
import os
import pwd
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, World  # noqa: E402

t = Tap()
w = World()


q = w.q


def events(subject):
    return q("SELECT kind, actor FROM events WHERE subject_kind = 'patch' AND subject_id = ?"
             " ORDER BY id", subject)


def fix(line):
    return w.mail(line, 'lib: fix line %d' % line, 'Fixes: %s ("lib: spell two")' % w.s1[:12],
                  w.diff('lib.c', 'line %d\n' % line, 'line %d fixed\n' % line))


def id_of(line):
    r = q("SELECT id FROM patches WHERE subject = ?", 'lib: fix line %d' % line)
    return r[0][0] if r else 0


try:
    user = 'user:' + pwd.getpwuid(os.getuid()).pw_name
    # the CLI, before the daemon runs
    cli = os.path.join(w.dir, 'cli.patch')
    with open(cli, 'w') as f:
        f.write(fix(10))
    p = w.sq('import', cli, check=False)
    t.ok(p.returncode == 0, 'stableq import: one patch', p.stderr.decode(errors='replace'))
    # the daemon's door: a series in queue_dir, imported once it starts
    with open(os.path.join(w.dir, 'queue', 'fix-20.patch'), 'w') as f:
        f.write(fix(20))
    with open(os.path.join(w.dir, 'queue', 'series'), 'w') as f:
        f.write('fix-20.patch\n')
    tok = w.token('carol')
    # made now: the daemon works in the tree once patches come
    api = fix(30)
    w.start()
    t.ok(w.wait('daemon import', lambda: id_of(20), 60), "the daemon imports queue_dir's series", w.daemon_log())
    s, h, raw, j = w.post('/patches', api, headers={'Content-Type': 'text/plain'}, token=tok)
    t.ok(s == 201 and j['added'] == 1, 'POST /patches: one patch', (s, j))
    t.ok(w.idle(120), 'the daemon is idle: checks, a candidate and its bisection done', w.daemon_log())

    for line, actor, door in ((10, user, 'stableq import'), (20, 'daemon', "the daemon's import"),
                              (30, 'token:carol', 'POST /patches')):
        t.is_(events(id_of(line)), [('imported', actor), ('checked', actor), ('state', actor)],
              '%s: imported, checked and state, by %s' % (door, actor))
        t.is_(q("SELECT state FROM patches WHERE id = ?", id_of(line)), [('queued',)],
              '... and the patch is queued')

    t.ok(q("SELECT COUNT(*) FROM candidates")[0][0] >= 2 and q("SELECT COUNT(*) FROM bisections")[0][0] >= 1,
         'the daemon ran a candidate of the queue and bisected its failure', w.daemon_log())
    kinds = q("SELECT DISTINCT subject_kind, kind FROM events WHERE subject_kind IN ('candidate', 'bisection')"
              " ORDER BY 1, 2")
    t.ok({('candidate', 'created'), ('candidate', 'verdict'), ('bisection', 'started')} <= set(kinds),
         '... with their events: created, verdict, started', kinds)
    t.is_(q("SELECT DISTINCT actor FROM events WHERE subject_kind IN ('candidate', 'bisection')"),
          [('daemon',)], '... every one of them by the daemon')
finally:
    w.cleanup()
sys.exit(t.done())
