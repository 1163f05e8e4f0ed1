#!/usr/bin/env python3
"""66-candidate-dedupe.t: POST /candidates of an unchanged queue is one candidate; pending work is capped per token.

The real daemon on loopback, a small stable tree made here and four queued
patches. The test holds the build directory's lock, so that every candidate
stays pending (the daemon's candidate step waits for the lock). Eight
writers POST the whole queue at once, many times: one candidate, every
answer naming it. Then one token asks for other prefixes of the queue up to
candidates_pending_max (2): the next is refused with 429 naming the limit,
and nothing is stored; another token may still ask; once the daemon has run
them, the first token may ask again.
"""
import fcntl
import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, World  # noqa: E402

t = Tap()
w = World(extra_conf='candidates_pending_max = 2')
lock = None
try:
    spelled = [('line 5\n', 'line five\n'), ('line 9\n', 'line nine\n'),
               ('line 13\n', 'line thirteen\n'), ('line 17\n', 'line seventeen\n')]
    for n, (old, new) in enumerate(spelled, 1):
        m = w.mail(n, 'lib: spell %d' % n, 'Cc: stable@vger.kernel.org', w.diff('lib.c', old, new))
        with open(os.path.join(w.dir, 'queue', '%d.patch' % n), 'w') as f:
            f.write(m)
    with open(os.path.join(w.dir, 'queue', 'series'), 'w') as f:
        f.write(''.join('%d.patch\n' % n for n in range(1, 5)))
    w.sq('import', os.path.join(w.dir, 'queue'))
    ids = [r[0] for r in w.q("SELECT id FROM patches WHERE state = 'queued' ORDER BY id")]
    t.is_(len(ids), 4, 'four patches are queued')
    burst, ci, other = w.token('burst'), w.token('ci'), w.token('other')

    # every candidate stays pending while the build lock is held here
    os.makedirs(os.path.join(w.dir, 'build'), exist_ok=True)
    lock = open(os.path.join(w.dir, 'build', '.stableq-candidate.lock'), 'a')
    fcntl.flock(lock, fcntl.LOCK_EX)
    w.start()

    def count(sql, *args):
        return w.q(sql, *args)[0][0]

    whole = '[%s]' % ','.join(str(i) for i in ids)
    answers, errors = [], []

    def writer():
        try:
            for _ in range(10):
                s, h, raw, j = w.post('/candidates', None, token=burst)
                answers.append((s, (j or {}).get('id'), (j or {}).get('created')))
        except Exception as e:  # noqa: BLE001 - a failed request is reported below
            errors.append(repr(e))
    threads = [threading.Thread(target=writer) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t.ok(not errors, '8 writers, 10 POST /candidates each: every request answered', errors[:3])
    got = {a[1] for a in answers}
    t.ok(len(answers) == 80 and all(a[0] in (200, 202) for a in answers),
         '... each with 200 or 202', sorted({a[0] for a in answers}))
    t.is_(count("SELECT COUNT(*) FROM candidates WHERE purpose = 'queue' AND patch_ids = ?", whole), 1,
          'the unchanged queue is one candidate (the daemon may have asked for it too)')
    t.ok(len(got) == 1 and None not in got, '... and every answer names it', sorted(got, key=str))
    t.ok(sum(1 for a in answers if a[0] == 202) <= 1
         and all(a[2] is False for a in answers if a[0] == 200)
         and all(a[2] is True for a in answers if a[0] == 202),
         '... made at most once (202, created), else answered again (200, created false)')
    C = got.pop() if len(got) == 1 else None
    t.is_(count('SELECT step FROM candidates WHERE id = ?', C), 'pending', '... still pending (the lock is held)')

    # the cap: two pending candidates per token
    s1, _, _, j1 = w.post('/candidates', {'upto': ids[0]}, token=ci)
    s2, _, _, j2 = w.post('/candidates', {'upto': ids[1]}, token=ci)
    t.ok(s1 == 202 and s2 == 202 and j1['id'] != j2['id'], 'token ci: two prefixes of the queue, two candidates',
         s1, s2, j1, j2)
    before = count('SELECT COUNT(*) FROM candidates')
    events = count('SELECT COUNT(*) FROM events')
    s3, h3, raw3, j3 = w.post('/candidates', {'upto': ids[2]}, token=ci)
    t.is_(s3, 429, 'a third pending candidate of token ci -> 429')
    t.ok(j3 and j3.get('error') == 'too-many-requests', '... {error: too-many-requests}', j3)
    t.like((j3 or {}).get('message'), 'token:ci has 2 pending candidates (candidates_pending_max = 2)',
           '... the message names the token and the limit')
    t.ok(count('SELECT COUNT(*) FROM candidates') == before and count('SELECT COUNT(*) FROM events') == events,
         '... and nothing is stored')
    s4, _, _, j4 = w.post('/candidates', {'upto': ids[2]}, token=other)
    t.ok(s4 == 202 and j4['created'] is True, 'another token may ask for it', s4, j4)
    s5, _, _, j5 = w.post('/candidates', {'upto': ids[2]}, token=ci)
    t.ok(s5 == 200 and j5['id'] == j4['id'], '... and then token ci gets that candidate back (not capped: no new work)',
         s5, j5)
    s6, _, _, j6 = w.post('/candidates', {'upto': ids[0]}, token=ci)
    t.ok(s6 == 200 and j6['id'] == j1['id'], 'the same prefix again -> the same candidate', s6, j6)
    t.like(w.get('/metrics')[2].decode(), 'stableq_http_requests_total{code="429"} 1',
           '/metrics counts the 429')

    # the lock released: the daemon runs them (the small tree does not
    # build: verdict build-failed), and the token may ask again
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    lock = None
    ran = w.wait('the pending candidates run',
                 lambda: count("SELECT COUNT(*) FROM candidates WHERE step != 'done'") == 0, 300, 1)
    t.ok(ran, 'the daemon runs the pending candidates', w.daemon_log())
    s7, _, _, j7 = w.post('/candidates', {'upto': ids[2]}, token=ci)
    t.ok(s7 == 202 and j7['created'] is True and j7['id'] != j4['id'],
         'once they ran: token ci may ask again, a new candidate of that queue', s7, j7)
finally:
    if lock:
        lock.close()
    w.cleanup()
sys.exit(t.done())
