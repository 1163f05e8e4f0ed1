#!/usr/bin/env python3
"""64-branches-api.t: two stable branches (6.1 and 6.12) through the real daemon's API.

Two small stable trees made here (6.12 is the 6.1 tree's history plus its
own release and one commit only it has, "lib: spell four"), the config's
[branch 6.1] and [branch 6.12] sections, the real daemon. Patches go to a
branch's queue with POST /patches?branch=KEY; the same fix to both. Then:
GET /branches (each branch, its counts, what it waits for; `stableq
branches --json` prints the same), ?branch=KEY on
every list (and 400 naming the unknown key and the known ones, changing
nothing), the branch key on every patch and candidate, GET /fixes (the fix x
branch matrix, paged), the mail naming the patch's own branch
("6.12-stable"). A second store whose daemon sleeps between passes holds
made-up work (a candidate at its build on 6.1, a pending one on 6.12, a
bisection) so that what each branch waits for is checked exactly.
"""
import json
import os
import sqlite3
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, World, git  # noqa: E402

t = Tap()
w = World(two_branches=True)
UP_X = 'c3' * 20   # queued for both branches; its Fixes: target is only in 6.12
UP_Y = 'd4' * 20   # only for 6.12


def q(world, sql, *args):
    con = sqlite3.connect('file:%s?mode=ro' % world.db, uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def snapshot(world):
    con = sqlite3.connect('file:%s?mode=ro' % world.db, uri=True, timeout=10)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {tb: con.execute('SELECT COUNT(*) FROM "%s"' % tb).fetchone()[0] for tb in tables}
    finally:
        con.close()


def bad_branch(world, name, fn):
    """An unknown ?branch=: 400 naming it and the known keys; nothing changes."""
    before = snapshot(world)
    s, h, raw, j = fn()
    msg = (j or {}).get('message', '')
    t.ok(s == 400 and j and set(j) == {'error', 'message'} and "'9.9'" in msg and '6.1, 6.12' in msg,
         '%s -> 400 naming the key and the known ones' % name, (s, j))
    t.ok(snapshot(world) == before, '... and nothing changed')


try:
    tok = w.token('alice')
    w.start()
    t.ok(w.idle(), 'the daemon with two branches settles', w.daemon_log())

    # ---- two queues -----------------------------------------------------------
    def x(prefix):
        return w.mail(20, 'lib: fix line 20', 'Fixes: %s ("lib: spell four")' % w.s4[:12],
                      w.diff('lib.c', 'line 20\n', 'line twenty\n'), body='commit %s upstream.\n\nLine 20.' % UP_X,
                      prefix=prefix)
    y = w.mail(30, 'lib: fix line 30 on 6.12', '', w.diff('lib.c', 'line 30\n', 'line thirty\n'),
               body='commit %s upstream.\n\nLine 30.' % UP_Y, prefix='PATCH 6.12')
    z = w.mail(35, 'lib: fix line 35 on 6.1', '', w.diff('lib.c', 'line 35\n', 'line thirty-five\n'),
               prefix='PATCH')
    ct = {'Content-Type': 'text/plain'}
    s, h, raw, j = w.post('/patches', x('PATCH 6.1') + z, headers=ct, token=tok)
    t.ok(s == 201 and j['added'] == 2, 'POST /patches (no branch): [PATCH 6.1] and [PATCH] into 6.1\'s queue', (s, j))
    X1, Z1 = j['ids'] if j else (0, 0)
    s, h, raw, j = w.post('/patches?branch=6.12', x('PATCH 6.12'), headers=ct, token=tok)
    t.ok(s == 201 and j['added'] == 1 and X1 not in j['ids'],
         'POST /patches?branch=6.12: the same fix is a row of its own on 6.12', (s, j))
    X2 = j['ids'][0] if j else 0
    s, h, raw, j = w.post('/patches', y, headers=ct, token=tok)
    t.ok(s == 201 and j['added'] == 1, 'POST /patches (no branch): [PATCH 6.12] goes to 6.12\'s queue', (s, j))
    Y2 = j['ids'][0] if j else 0
    t.is_(q(w, "SELECT p.id, b.key FROM patches p JOIN branches b ON b.id = p.branch_id ORDER BY p.id"),
          [(X1, '6.1'), (Z1, '6.1'), (X2, '6.12'), (Y2, '6.12')], '... each patch in its branch\'s queue')
    s, h, raw, j = w.post('/patches?branch=6.12', y, headers=ct, token=tok)
    t.ok(s == 200 and j['duplicates'] == 1 and j['ids'] == [Y2], '... a duplicate on the same branch is one', (s, j))
    # the POSTs checked what they imported; the candidates they woke the
    # daemon for must not write while bad_branch compares the store
    t.ok(w.idle(180), 'the daemon is idle (candidates of both branches run)', w.daemon_log())
    bad_branch(w, 'POST /patches?branch=9.9',
               lambda: w.post('/patches?branch=9.9', y, headers=ct, token=tok))
    t.ok(w.wait('checks', lambda: not q(w, "SELECT 1 FROM patches WHERE state = 'imported'"), 60),
         'both queues are checked', w.daemon_log())
    t.ok(w.idle(180), 'the daemon is idle again (candidates of both branches run)', w.daemon_log())
    for name, body, path, like in (
            ('a [PATCH 5.15] patch (no branch 5.15)', w.mail(36, 'lib: for 5.15', '', w.diff(
                'lib.c', 'line 36\n', 'line 36 fixed\n'), prefix='PATCH 5.15'), '/patches', '5.15'),
            ('a [PATCH 6.1] patch sent to ?branch=6.12', w.mail(37, 'lib: for 6.1', '', w.diff(
                'lib.c', 'line 37\n', 'line 37 fixed\n')), '/patches?branch=6.12', '6.1')):
        before = snapshot(w)
        s, h, raw, j = w.post(path, body, headers=ct, token=tok)
        t.ok(s == 422 and like in (j or {}).get('message', '') and snapshot(w) == before,
             'POST %s: %s -> 422 naming it, nothing stored' % (path, name), (s, j))

    # ---- GET /branches ------------------------------------------------------------
    s, h, raw, j = w.get('/branches')
    br = {b['key']: b for b in (j or {}).get('branches', [])}
    t.ok(s == 200 and [b['key'] for b in j['branches']] == ['6.1', '6.12'], 'GET /branches -> 6.1 and 6.12, in config order', j)
    t.ok(br.get('6.1', {}).get('git_branch') == 'linux-6.1.y' and br.get('6.12', {}).get('git_branch') == 'linux-6.12.y',
         '... each with its git branch', br)
    t.ok(br.get('6.1', {}).get('tree') == w.tree and br.get('6.12', {}).get('tree') == w.tree612,
         '... and its tree', br)
    t.ok(all(sum(br[k]['patches'].values()) == 2 and 'queued' in br[k]['patches'] for k in ('6.1', '6.12')),
         '... its patches by state (2 each, every state present)', br)
    t.ok(all(br[k]['waits_for'] == 'nothing' and br[k]['doing'] is None for k in ('6.1', '6.12')),
         '... both idle: waiting for nothing', br)
    p = w.sq('branches', '--json', check=False)
    cli = json.loads(p.stdout.decode() or 'null') if p.returncode == 0 else None
    s, h, raw, j = w.get('/branches')
    t.ok(cli is not None and cli == j, 'stableq branches --json prints what GET /branches answers', cli, j)
    for k in ('6.1', '6.12'):
        lc = br[k]['latest_candidate']
        ours = q(w, "SELECT MAX(c.id) FROM candidates c JOIN branches b ON b.id = c.branch_id WHERE b.key = ?", k)[0][0]
        t.ok((lc is None and ours is None) or (lc and lc['id'] == ours),
             '... %s: its latest candidate (%s)' % (k, ours), lc)

    # ---- ?branch= on the lists, the branch key on every object -------------------------
    s, h, raw, j = w.get('/patches?branch=6.12')
    t.ok(s == 200 and j['total'] == 2 and [p['id'] for p in j['patches']] == [X2, Y2]
         and all(p['branch'] == '6.12' for p in j['patches']),
         'GET /patches?branch=6.12 -> its two patches, each with branch 6.12', j)
    s, h, raw, j = w.get('/patches?branch=6.1&limit=1&offset=1')
    t.ok(s == 200 and j['total'] == 2 and [p['id'] for p in j['patches']] == [Z1],
         'GET /patches?branch=6.1&limit=1&offset=1 pages within the branch', j)
    s, h, raw, j = w.get('/patches')
    t.ok(s == 200 and j['total'] == 4 and {p['id']: p['branch'] for p in j['patches']} ==
         {X1: '6.1', Z1: '6.1', X2: '6.12', Y2: '6.12'}, 'GET /patches -> both branches, each patch with its key', j)
    s, h, raw, j = w.get('/patches/%d' % X2)
    t.ok(s == 200 and j['branch'] == '6.12' and all(c['branch'] == '6.12' for c in j['candidates']),
         'GET /patches/{id} -> its branch, and its candidates\'', j and (j['branch'], [c['branch'] for c in j['candidates']]))
    s, h, raw, j = w.get('/candidates?limit=500')
    cands = (j or {}).get('candidates', [])
    t.ok(s == 200 and cands and {c['branch'] for c in cands} == {'6.1', '6.12'},
         'GET /candidates: each with its branch, both branches ran', cands)
    s, h, raw, j = w.get('/candidates?branch=6.12&limit=500')
    t.ok(s == 200 and j['candidates'] and all(c['branch'] == '6.12' for c in j['candidates'])
         and len(j['candidates']) == len([c for c in cands if c['branch'] == '6.12']),
         'GET /candidates?branch=6.12 -> only 6.12\'s', j)
    if j and j['candidates']:
        s, h, raw, cj = w.get('/candidates/%d' % j['candidates'][0]['id'])
        t.ok(s == 200 and cj['branch'] == '6.12', 'GET /candidates/{id} -> its branch', cj and cj.get('branch'))
    for path in ('/bisections', '/reverts', '/releases', '/mail'):
        s, h, raw, j = w.get(path + '?branch=6.12')
        key = path.strip('/')
        t.ok(s == 200 and isinstance(j.get(key), list) and all(r.get('branch') == '6.12' for r in j[key]),
             'GET %s?branch=6.12 -> 200, only 6.12\'s rows' % path, j)
    for path in ('/patches', '/candidates', '/bisections', '/reverts', '/releases', '/mail', '/fixes'):
        bad_branch(w, 'GET %s?branch=9.9' % path, lambda: w.get(path + '?branch=9.9'))

    # ---- GET /fixes: the matrix -----------------------------------------------------
    s, h, raw, j = w.get('/fixes')
    t.ok(s == 200 and j['total'] == 3 and j['branches'] == ['6.1', '6.12'] and len(j['fixes']) == 3,
         'GET /fixes -> 3 fixes over the branches 6.1 and 6.12', j)
    fx = {f['fix']: f for f in (j or {}).get('fixes', [])}
    fX, fY = fx.get(UP_X[:12], {}), fx.get(UP_Y[:12], {})
    fZ = [f for f in fx.values() if f['upstream'] is None]
    t.ok(fX and fX['upstream'] == UP_X and fX['branches']['6.1']['id'] == X1 and fX['branches']['6.12']['id'] == X2,
         '... the fix queued twice: one row, a cell per branch with its patch', fX)
    c1, c2 = (fX.get('branches') or {}).get('6.1') or {}, (fX.get('branches') or {}).get('6.12') or {}
    d1 = c1.get('verdicts', {}).get('fixes', {}).get('detail') or ''
    d2 = c2.get('verdicts', {}).get('fixes', {}).get('detail') or ''
    t.ok(c1.get('state') and c2.get('state') and c1.get('checks', {}).get('fixes') and c2.get('checks', {}).get('fixes'),
         '... each cell with its state and the latest verdict of each check (6.1 %s, 6.12 %s)'
         % (c1.get('checks', {}).get('fixes'), c2.get('checks', {}).get('fixes')), c1, c2)
    t.ok('linux-6.1.y' in d1 and 'linux-6.12.y' not in d1 and 'linux-6.12.y' in d2,
         '... each Fixes: verdict checked on its own branch, its reason naming it', d1, d2)
    t.ok(fY and fY['branches']['6.1'] is None and fY['branches']['6.12']['id'] == Y2,
         '... a fix only for 6.12: no cell on 6.1', fY)
    t.ok(len(fZ) == 1 and fZ[0]['fix'] == fZ[0]['patch_id'] and fZ[0]['branches']['6.1']['id'] == Z1
         and fZ[0]['branches']['6.12'] is None, '... a fix without an upstream SHA: keyed by its patch-id', fZ)
    s, h, raw, j = w.get('/fixes?limit=1&offset=1')
    t.ok(s == 200 and j['total'] == 3 and j['limit'] == 1 and j['offset'] == 1 and len(j['fixes']) == 1
         and j['fixes'][0]['fix'] == (list(fx)[1] if len(fx) > 1 else None), 'GET /fixes?limit=1&offset=1 pages', j)
    s, h, raw, j = w.get('/fixes?branch=6.12')
    t.ok(s == 200 and j['total'] == 2 and {f['fix'] for f in j['fixes']} == {UP_X[:12], UP_Y[:12]},
         'GET /fixes?branch=6.12 -> the 2 fixes queued for 6.12', j)
    bad = snapshot(w)
    s, h, raw, j = w.get('/fixes?limit=0')
    t.ok(s == 400 and snapshot(w) == bad, 'GET /fixes?limit=0 -> 400', (s, j))

    # ---- mail names the patch's own branch ------------------------------------------
    s, h, raw, j = w.post('/patches/%d/flag' % Y2, {'reason': 'breaks 6.12 boot'}, token=tok)
    t.ok(s == 200 and j['patch']['branch'] == '6.12', 'flag the 6.12 patch -> 200, the answer names its branch', (s, j))
    mail = w.wait('mail', lambda: [m for m in w.get('/mail?branch=6.12')[3]['mail'] if m['patch_id'] == Y2], 30)
    t.ok(mail and mail[0]['subject'] == 'Patch "lib: fix line 30 on 6.12" has been flagged as broken in the 6.12-stable queue'
         and mail[0]['branch'] == '6.12', 'its mail: "... flagged as broken in the 6.12-stable queue"', mail)
    body = q(w, "SELECT headers_and_body FROM mail WHERE patch_id = ?", Y2)
    t.ok(body and 'branch linux-6.12.y' in body[0][0] and 'for linux-6.12.y' in body[0][0],
         '... its body names linux-6.12.y', body and body[0][0][-600:])
    s, h, raw, j = w.get('/mail?branch=6.1')
    t.ok(s == 200 and all(m['patch_id'] != Y2 for m in j['mail']), 'GET /mail?branch=6.1 leaves it out', j)

    # ---- a candidate of one branch through the API ------------------------------------
    t.ok(w.idle(), 'the daemon settles after the flag', w.daemon_log())
    s, h, raw, j = w.post('/candidates?branch=6.12', {}, token=tok)
    t.ok(s == 202 and j['id'], 'POST /candidates?branch=6.12 -> 202', (s, j))
    C612 = (j or {}).get('id', 0)
    t.is_(q(w, "SELECT b.key FROM candidates c JOIN branches b ON b.id = c.branch_id WHERE c.id = ?", C612),
          [('6.12',)], '... a candidate of the 6.12 queue')
    s, h, raw, j = w.post('/candidates', {'upto': X1}, token=tok)
    t.ok(s in (202, 409), 'POST /candidates {upto: a 6.1 patch} -> the 6.1 queue', (s, j))
    if s == 202:
        t.is_(q(w, "SELECT b.key FROM candidates c JOIN branches b ON b.id = c.branch_id WHERE c.id = ?", j['id']),
              [('6.1',)], '... a candidate of the 6.1 queue')
    # the daemon runs those two meanwhile: "nothing made" is told once it settled
    w.idle()
    before = snapshot(w)
    s, h, raw, j = w.post('/candidates?branch=6.12', {'upto': X1}, token=tok)
    t.ok(s == 400 and snapshot(w) == before, 'POST /candidates?branch=6.12 {upto: a 6.1 patch} -> 400, nothing made', (s, j))
    bad_branch(w, 'POST /candidates?branch=9.9', lambda: w.post('/candidates?branch=9.9', {}, token=tok))
    # ---- a release and a revert on 6.12, through the CLI and the API ------------------
    t.ok(w.idle(), 'the daemon settles after the candidates', w.daemon_log())
    t.is_(q(w, "SELECT state FROM patches WHERE id = ?", X2), [('queued',)], 'the 6.12 copy of the fix is queued')
    tip61 = git(w.tree, 'rev-parse', 'linux-6.1.y')
    p = w.sq('--branch', '6.12', 'release', '--force', check=False)
    t.ok(p.returncode == 0, 'stableq --branch 6.12 release --force', p.stderr)
    s, h, raw, j = w.get('/releases?branch=6.12')
    rel = (j or {}).get('releases', [])
    t.ok(s == 200 and len(rel) == 1 and rel[0]['branch'] == '6.12' and rel[0]['git_branch'] == 'linux-6.12.y'
         and 'linux-6.12.y' in rel[0]['detail'], 'GET /releases?branch=6.12 -> the release onto linux-6.12.y', j)
    s, h, raw, j = w.get('/releases?branch=6.1')
    t.ok(s == 200 and j['releases'] == [], 'GET /releases?branch=6.1 -> none', j)
    s, h, raw, j = w.post('/patches/%d/revert' % X2, {'reason': 'regresses 6.12'}, token=tok)
    t.ok(s == 201 and j['revert']['branch'] == '6.12', 'POST /patches/{id}/revert of the released 6.12 patch -> 201', (s, j))
    t.ok('Revert "lib: fix line 20"' in git(w.tree612, 'log', '-1', '--format=%B', 'linux-6.12.y')
         and git(w.tree, 'rev-parse', 'linux-6.1.y') == tip61,
         '... the revert commit is on linux-6.12.y in the 6.12 tree; linux-6.1.y did not move')
    s, h, raw, j = w.get('/reverts?branch=6.12')
    t.ok(s == 200 and [r['patch_id'] for r in j['reverts']] == [X2, Y2] and all(r['branch'] == '6.12' for r in j['reverts']),
         'GET /reverts?branch=6.12 -> it, and the plan for the flagged patch', j)
    s, h, raw, j = w.get('/reverts?branch=6.1')
    t.ok(s == 200 and j['reverts'] == [], 'GET /reverts?branch=6.1 -> none', j)
    mail = w.wait('mail', lambda: [m for m in w.get('/mail?branch=6.12')[3]['mail'] if m['patch_id'] == X2], 30)
    t.ok(mail and mail[0]['subject'] == 'Patch "lib: fix line 20" has been reverted from the 6.12-stable tree',
         'its mail: "... reverted from the 6.12-stable tree"', mail)

    rc = w.stop()
    t.ok(rc == 0, 'the daemon exits cleanly (%s)' % rc, w.daemon_log())
    log = open(w.log, errors='replace').read()
    t.ok('AddressSanitizer' not in log and 'runtime error' not in log, 'no sanitizer report in the log')

    # ---- what each branch waits for (a store whose daemon sleeps between passes) ----------
    w2 = World(two_branches=True, poll_interval=600)
    try:
        w2.start()
        t.ok(w2.idle(), 'a second two-branch store, its daemon idle', w2.daemon_log())
        con = sqlite3.connect(w2.db, timeout=30)
        ids = dict(con.execute("SELECT key, id FROM branches"))
        with con:
            c12 = con.execute("INSERT INTO candidates (branch_id, purpose, step) VALUES (?, 'queue', 'build')",
                              (ids['6.1'],)).lastrowid
            p13 = con.execute("INSERT INTO candidates (branch_id, purpose, step) VALUES (?, 'queue', 'pending')",
                              (ids['6.12'],)).lastrowid
        s, h, raw, j = w2.get('/branches')
        br = {b['key']: b for b in (j or {}).get('branches', [])}
        t.is_(br.get('6.1', {}).get('doing'), 'candidate %d (queue) at step build' % c12,
              'a candidate building on 6.1: 6.1 does it')
        t.is_(br.get('6.1', {}).get('waits_for'), 'nothing: it holds the build lock', '... and waits for nothing')
        t.is_(br.get('6.12', {}).get('waits_for'), 'build lock held by 6.1 candidate %d' % c12,
              '6.12, with a pending candidate, waits for the build lock held by 6.1\'s candidate')
        p = w2.sq('branches', '--json', check=False)
        t.ok(p.returncode == 0 and json.loads(p.stdout.decode()) == j,
             '... stableq branches --json says the same', p.stdout.decode(), j)
        p = w2.sq('branches', check=False)
        t.like(p.stdout.decode(), '       waits for: build lock held by 6.1 candidate %d' % c12,
               '... and stableq branches says what 6.12 waits for')
        with con:
            con.execute("UPDATE candidates SET step = 'done', verdict = 'fail' WHERE id = ?", (c12,))
            bis = con.execute("INSERT INTO bisections (candidate_id, steps_done, steps_total) VALUES (?, 1, 3)",
                              (c12,)).lastrowid
        s, h, raw, j = w2.get('/branches')
        br = {b['key']: b for b in (j or {}).get('branches', [])}
        t.is_(br.get('6.1', {}).get('doing'), 'bisection %d, step 1 of about 3' % bis, 'a bisection on 6.1: 6.1 does it')
        t.is_(br.get('6.12', {}).get('waits_for'), 'bisection %d running on 6.1 (one step at a time, in turn)' % bis,
              '6.12 waits for bisection %d running on 6.1' % bis)
        t.ok(br.get('6.1', {}).get('latest_candidate', {}).get('id') == c12
             and br['6.1']['last_verdict']['verdict'] == 'fail', '6.1\'s latest candidate and its verdict', br.get('6.1'))
        with con:
            con.execute("UPDATE bisections SET state = 'failed' WHERE id = ?", (bis,))
        s, h, raw, j = w2.get('/branches')
        br = {b['key']: b for b in (j or {}).get('branches', [])}
        t.is_(br.get('6.12', {}).get('waits_for'), 'its turn: candidate %d is pending' % p13,
              'alone with work, 6.12 waits for its turn')
        t.is_(br.get('6.1', {}).get('waits_for'), 'nothing', '6.1 waits for nothing')
        with con:  # nothing made up is left for the daemon
            con.execute("DELETE FROM bisections WHERE id = ?", (bis,))
            con.execute("DELETE FROM candidates WHERE id IN (?, ?)", (c12, p13))
        con.close()
    finally:
        w2.cleanup()
except Exception:  # a crash of the test is a failure, with its story
    import traceback
    t.ok(False, 'the test ran to its end', traceback.format_exc(), w.daemon_log())
finally:
    w.cleanup()
sys.exit(t.done())
