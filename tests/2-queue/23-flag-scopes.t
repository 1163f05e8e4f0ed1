#!/usr/bin/env python3
"""23-flag-scopes.t: a flag's trust follows the token's scope, with the real daemon.

auto_revert = yes, released patches on a small stable tree made here (no
queued patch: no kernel build). A write-scope token may flag, but its flag
does not revert by itself: the plan is stored, visible in GET /reverts, its
reason naming the token and that an admin runs it; nothing is reverted and
no author but the flagged one is mailed. An admin token's flag is trusted:
the daemon reverts at once. The admin then runs the stored plan with
POST /patches/{id}/revert, as the plan says.
"""
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, World  # noqa: E402

t = Tap()
w = World(extra_conf='auto_revert = yes')
UP1 = 'a1' * 20
CC = 'Cc: <stable@vger.kernel.org> # 6.1.x'
try:
    # patch 1, patch 2 brought in for it, patch 3 alone: imported, released
    qdir = os.path.join(w.dir, 'queue')
    mails = [
        w.mail(1, 'lib: spell five', CC, w.diff('lib.c', 'line 5\n', 'line five\n'),
               body='commit %s upstream.\n\nSpell five.' % UP1, author='Dev One <one@example.org>'),
        w.mail(2, 'lib: spell twenty', CC + '\nStable-dep-of: %s ("lib: spell five")' % UP1[:12],
               w.diff('lib.c', 'line 20\n', 'line twenty\n'),
               body='commit %s upstream.\n\nSpell twenty.' % ('b2' * 20), author='Dev Two <two@example.org>'),
        w.mail(3, 'lib: spell thirty', CC, w.diff('lib.c', 'line 30\n', 'line thirty\n'),
               body='commit %s upstream.\n\nSpell thirty.' % ('c3' * 20), author='Dev Three <three@example.org>'),
    ]
    with open(os.path.join(qdir, 'series'), 'w') as s:
        for i, m in enumerate(mails, 1):
            with open(os.path.join(qdir, '%d.patch' % i), 'w') as f:
                f.write(m)
            s.write('%d.patch\n' % i)
    w.sq('import', qdir)
    w.sq('release', '--force')
    t.is_(w.q('SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)')[0][0],
          'released,released,released', 'three patches released onto the tree')
    t.is_(w.q("SELECT count(*) FROM dependencies WHERE patch_id = 2 AND depends_on = 1")[0][0], 1,
          '... patch 2 goes with patch 1 (Stable-dep-of)')
    writer = w.sq('token', 'add', 'writer', '--scope', 'write').stdout.decode().strip()
    admin = w.sq('token', 'add', 'boss', '--scope', 'admin').stdout.decode().strip()
    w.start()

    # --- a write token's flag: the plan waits for an admin ---------------------
    s, _, _, j = w.post('/patches/1/flag', {'reason': 'user-copy fails on my box'}, token=writer)
    t.is_(s, 200, 'POST /patches/1/flag with a write token: 200')
    t.is_((j or {}).get('patch', {}).get('state'), 'broken', '... patch 1 is broken')
    w.idle()
    time.sleep(3)  # poll_interval 1: the daemon had its chances to act
    t.ok(w.idle(), 'the daemon is idle after the write token\'s flag', w.daemon_log())
    t.is_(w.q('SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)')[0][0],
          'broken,released,released', 'nothing reverted automatically: patch 1 broken, patch 2 released')
    t.is_(w.q("SELECT trust FROM flags WHERE patch_id = 1")[0][0], 'untrusted', '... the flag is stored untrusted')
    rows = w.q("SELECT state, reason, actor, automatic FROM reverts WHERE patch_id = 1")
    t.is_([r[0] for r in rows], ['planned'], '... one revert, planned')
    t.like(rows[0][1] if rows else '', 'flagged by token:writer', '... its reason names who flagged')
    t.like(rows[0][1] if rows else '', 'an admin runs it', '... and that an admin runs it')
    t.is_(w.q("SELECT group_concat(patch_id) FROM (SELECT patch_id FROM revert_items WHERE revert_id ="
              " (SELECT id FROM reverts WHERE patch_id = 1) ORDER BY ord)")[0][0], '2,1',
          '... the plan: patch 2 and patch 1, newest first')
    s, _, _, j = w.get('/reverts')
    listed = [r for r in (j or {}).get('reverts', []) if r.get('patch_id') == 1]
    t.ok(s == 200 and listed and listed[0].get('state') == 'planned', 'GET /reverts shows the planned revert', j)
    t.is_(w.q("SELECT count(*) FROM mail WHERE kind IN ('reverted', 'dropped')")[0][0], 0,
          '... no author is told of a revert')
    t.is_(w.q("SELECT count(*) FROM mail WHERE patch_id = 2")[0][0], 0, '... patch 2\'s author is not mailed')
    s, _, _, j = w.post('/patches/1/revert', {'reason': 'the writer says so'}, token=writer)
    t.is_(s, 403, 'the write token cannot run the revert itself: 403')

    # --- an admin token's flag is trusted: the daemon reverts ------------------
    s, _, _, j = w.post('/patches/3/flag', {'reason': 'net-loopback fails with it'}, token=admin)
    t.is_(s, 200, 'POST /patches/3/flag with an admin token: 200')
    state = w.wait('patch 3 reverted', lambda: w.q('SELECT state FROM patches WHERE id = 3')[0][0] == 'reverted', 60)
    t.ok(state, 'the daemon reverts patch 3 by itself', w.daemon_log())
    t.is_(w.q("SELECT trust FROM flags WHERE patch_id = 3")[0][0], 'trusted', '... the admin\'s flag is trusted')
    t.is_(w.q("SELECT actor || ':' || automatic FROM reverts WHERE patch_id = 3 AND state != 'planned'")[0][0],
          'daemon:1', '... an automatic revert by the daemon (counted by the daily limit)')

    # --- the admin runs the stored plan ---------------------------------------
    s, _, _, j = w.post('/patches/1/revert', {'reason': 'confirmed on the admin\'s box too'}, token=admin)
    t.is_(s, 201, 'POST /patches/1/revert with the admin token: 201')
    t.is_(w.q('SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)')[0][0],
          'reverted,reverted,reverted', '... patches 1 and 2 reverted')
    t.is_(w.q("SELECT count(*) FROM reverts WHERE patch_id = 1 AND state = 'planned'")[0][0], 0,
          '... the stored plan became the revert')
except Exception as e:  # noqa: BLE001
    t.ok(False, 'the test ran to its end', repr(e), w.daemon_log())
finally:
    w.cleanup()
sys.exit(t.done())
