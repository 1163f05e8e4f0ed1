#!/usr/bin/env python3
"""91-reload.t: after a SIGHUP with a broken or deleted config file, the daemon and its steps keep the config held.

Issue 23, item 2: the daemon kept its old config on a broken file, but
every child step read the file again and failed into backoff. Now the
steps run with the daemon's own config (a snapshot under var/run), the
log and /health say the file on disk is broken, and a fixed file is taken
at the next SIGHUP.
"""
import os
import signal
import stat
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, World  # noqa: E402

t = Tap()
w = World()


def state(pid):
    s, _, _, j = w.get('/patches/%d' % pid)
    return j and j.get('state')


def post(n, tok):
    body = w.mail(n, 'lib: fix line %d' % n, 'Cc: stable@vger.kernel.org # 6.1.x',
                  w.diff('lib.c', 'line %d\n' % n, 'line number %d\n' % n))
    s, _, _, j = w.post('/patches', body, headers={'Content-Type': 'text/plain'}, token=tok)
    return s, (j or {}).get('ids', [None])[0]


try:
    good = open(w.conf).read()
    tok = w.token('maint')
    w.start()
    t.ok(w.idle(), 'the daemon starts and goes idle', w.daemon_log())
    snap = os.path.join(w.dir, 'var', 'run', 'config.conf')
    t.ok(os.path.exists(snap) and open(snap).read() == good, 'it keeps the config it holds as var/run/config.conf')
    t.is_(os.path.isdir(os.path.dirname(snap)) and stat.S_IMODE(os.stat(os.path.dirname(snap)).st_mode), 0o700,
          '... in a directory only its user reads')
    s, _, _, h = w.get('/health')
    t.ok(s == 200 and h.get('config') == {'file_ok': True, 'file_error': None}, '/health: the file on disk is the config held', h)

    # a broken file, then SIGHUP
    with open(w.conf, 'a') as f:
        f.write('no_such_key = 1\n')
    w.proc.send_signal(signal.SIGHUP)
    t.ok(w.wait('reload', lambda: 'the config file is broken' in w.daemon_log(), 10, 0.1),
         'SIGHUP with a broken file: the log says the file is broken', w.daemon_log())
    t.like(w.daemon_log(), 'no_such_key', '... naming what is wrong')
    s, _, _, h = w.get('/health')
    c = h.get('config') or {'file_ok': True, 'file_error': ''}
    t.ok(not c['file_ok'] and 'no_such_key' in c['file_error'] and w.conf in c['file_error'],
         '/health says the file on disk is broken, naming it', h.get('config'))
    t.is_(os.path.exists(snap) and open(snap).read(), good, '... the config held is unchanged')
    s, pid = post(3, tok)
    t.is_(s, 201, 'a patch is posted')
    t.ok(w.idle(), 'the daemon checks it', w.daemon_log())
    t.ok(state(pid) not in (None, 'imported'), '... its check step ran with the config held, not the broken file',
         state(pid))
    t.ok('unknown key' not in w.daemon_log().split('the config file is broken')[-1].split('\n', 1)[-1],
         '... and no step failed on the broken file', w.daemon_log())

    # the file deleted, then SIGHUP
    os.unlink(w.conf)
    w.proc.send_signal(signal.SIGHUP)
    t.ok(w.wait('reload', lambda: w.daemon_log().count('the config file is broken') >= 2, 10, 0.1),
         'SIGHUP with the file deleted: the log says so', w.daemon_log())
    s, _, _, h = w.get('/health')
    c = h.get('config') or {'file_ok': True, 'file_error': ''}
    t.ok(not c['file_ok'] and 'cannot open' in c['file_error'], '/health says it cannot be read', h.get('config'))
    s, pid = post(5, tok)
    t.ok(s == 201 and w.idle() and state(pid) not in (None, 'imported'),
         'a patch posted now is checked too: the steps do not read the missing file', (s, state(pid)))

    # fixed and reloaded: taken
    with open(w.conf, 'w') as f:
        f.write(good.replace('poll_interval = 1', 'poll_interval = 2'))
    w.proc.send_signal(signal.SIGHUP)
    t.ok(w.wait('reload', lambda: 'SIGHUP: configuration reloaded' in w.daemon_log(), 10, 0.1),
         'a fixed file and SIGHUP: reloaded', w.daemon_log())
    s, _, _, h = w.get('/health')
    t.ok(h.get('config') == {'file_ok': True, 'file_error': None}, '/health: the file is the config held again', h.get('config'))
    t.like(os.path.exists(snap) and open(snap).read() or '', 'poll_interval = 2', '... and the steps get the new one')
finally:
    w.cleanup()
t.done()
