#!/usr/bin/env python3
"""70-dashboard.t: the dashboard in Debian's headless chromium against the real daemon.

Real data (a small stable tree, patches imported through the API, checked,
a candidate built and bisected by the daemon), then tests/lib/dashboard.mjs
drives /usr/bin/chromium through Debian's chromedriver (tests/lib/webdriver.mjs,
WebDriver over node's own fetch; nothing installed from npm): the queue renders from the
data, a patch page shows its verdicts, flagging through the page with a
token changes the state (checked here through the API), the page refreshes
by itself, and it is usable at 1280 and 375 px. The store has two branches
(6.1 and 6.12): one fix is queued for both, one with a subject full of
markup for 6.12 alone; the branch selector keeps the views to one branch,
the branches panel says what each waits for, and the Fixes page is the fix
x branch matrix. Screenshots go to var/.
"""
import json
import os
import re
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import TOP, Tap, World  # noqa: E402

t = Tap()
w = World(two_branches=True)


def q(sql, *args):
    import sqlite3
    con = sqlite3.connect('file:%s?mode=ro' % w.db, uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


try:
    t.ok(os.access('/usr/bin/chromium', os.X_OK), 'Debian chromium is installed')
    t.ok(os.access('/usr/bin/chromedriver', os.X_OK), "Debian's chromium-driver is installed (make deps)")

    # ---- data: released, queued, held, waiting, a candidate and its bisection ----
    tok = w.token('maint')
    os.makedirs(os.path.join(w.dir, 'cli'))
    with open(os.path.join(w.dir, 'cli', 'r.patch'), 'w') as f:
        f.write(w.mail(40, 'lib: spell line 40', 'Fixes: %s ("lib: spell two")' % w.s1[:12],
                       w.diff('lib.c', 'line 40\n', 'line forty\n')))
    w.sq('import', os.path.join(w.dir, 'cli', 'r.patch'))
    w.sq('release', '--force')
    w.start()

    up = 'b2' * 20
    mails = [
        w.mail(3, 'lib: fix line 3 in the error path', 'Fixes: %s ("lib: spell two")\nCc: stable@vger.kernel.org # 6.1.x' % w.s1[:12],
               w.diff('lib.c', 'line 3\n', 'line three\n'), author='Ada Lovelace <ada@example.org>'),
        w.mail(5, 'lib: do not leak line 5 on failure', 'Fixes: %s ("lib: spell two")' % w.s1[:12],
               w.diff('lib.c', 'line 5\n', 'line five\n'), author='Grace Hopper <grace@example.org>'),
        w.mail(7, 'lib: fix line 7 for the odd case', 'Fixes: 0123456789ab ("something nobody knows")',
               w.diff('lib.c', 'line 7\n', 'line 7\nline seven\n'), body='commit %s upstream.\n\nLine 7 was wrong.' % up),
        w.mail(20, 'lib: tidy line 20', '', w.diff('lib.c', 'line 20\n', 'line twenty\n'),
               author='Linus Torvalds <torvalds@example.org>'),
        w.mail(33, 'lib: make line 33 a fix for an old bug', 'Fixes: %s ("lib: spell two")' % w.s1[:12],
               w.diff('lib.c', 'line 33\n', 'line thirty-three\n'), author='Ken Thompson <ken@example.org>'),
    ]
    # made now, like the rest: the daemon works in the tree once patches come
    fixup = w.mail(9, 'lib: follow-up for the line 7 fix', 'Fixes: %s ("lib: fix line 7 for the odd case")' % up[:12],
                   w.diff('lib.c', 'line 9\n', 'line nine\n'), author='Dennis Ritchie <dmr@example.org>')
    extra = w.mail(25, 'lib: fix line 25 while the page is open', '', w.diff('lib.c', 'line 25\n', 'line twenty-five\n'))
    # for 6.12:
    # the line 33 fix again (one fix on both branches), and one of its own
    hostile_subject = 'lib: <img src=x onerror=alert(1)> fix line 36'
    mails612 = w.mail(33, 'lib: make line 33 a fix for an old bug', 'Fixes: %s ("lib: spell two")' % w.s1[:12],
                      w.diff('lib.c', 'line 33\n', 'line thirty-three\n'), author='Ken Thompson <ken@example.org>',
                      prefix='PATCH 6.12') + w.mail(
        36, hostile_subject, 'Fixes: %s ("lib: spell four")' % w.s4[:12],
        w.diff('lib.c', 'line 36\n', 'line thirty-six\n'), prefix='PATCH 6.12')
    s, h, raw, j = w.post('/patches', ''.join(mails), headers={'Content-Type': 'application/mbox'}, token=tok)
    t.ok(s == 201 and j['added'] == 5, 'five patches imported through the API', (s, j))
    ids = j['ids'] if j else [0] * 5
    A, target = ids[2], ids[3]
    t.ok(w.wait('checked', lambda: not q("SELECT 1 FROM patches WHERE state = 'imported'"), 60),
         'the daemon checks them')
    s, h, raw, j = w.post('/patches/%d/flag' % A, {'reason': 'the odd case regressed on arm64'}, token=tok)
    t.is_(s, 200, 'one patch flagged broken through the API')
    s, h, raw, j = w.post('/patches', fixup, headers={'Content-Type': 'text/plain'}, token=tok)
    t.ok(s == 201, 'a fix-up of the broken patch imported', (s, j))
    # 6.12: the line 33 fix again (one fix on both branches), and one of its own
    s, h, raw, j = w.post('/patches?branch=6.12', mails612, headers={'Content-Type': 'text/plain'}, token=tok)
    t.ok(s == 201 and j['added'] == 2, 'two patches imported into the 6.12 queue, one of them a fix queued for 6.1 too', (s, j))
    both_subject = 'lib: make line 33 a fix for an old bug'
    t.ok(w.idle(240), 'the daemon is idle: checks, a candidate and its bisection done', w.daemon_log())
    held = q("SELECT COUNT(*) FROM patches WHERE state = 'held'")[0][0]
    t.ok(held >= 1, 'the fix-up is held (%d held)' % held)
    t.ok(q("SELECT COUNT(*) FROM candidates")[0][0] >= 1, 'the daemon ran a candidate of the queue')
    t.ok(q("SELECT COUNT(*) FROM bisections")[0][0] >= 1, '... and bisected it')
    t.is_(q("SELECT state FROM patches WHERE id = ?", target), [('checked',)],
          'the patch to flag on the page waits for a human (checked)')
    with open(w.log, errors='replace') as f:
        log = f.read()
    t.ok(re.search(r'candidate \d+: (pass|fail|build-failed|apply-failed|hang|could not run)', log),
         "the daemon's log says what a candidate found, in one line", log[-2000:])
    t.ok(re.search(r'bisection \d+: (patch \d+, confirmed|failed|flaky)', log),
         "... and what a bisection found", log[-2000:])
    # an API import is checked in its POST (one intake call for every
    # door), as the token that sent it
    actors = q("SELECT DISTINCT actor FROM events WHERE kind = 'checked' AND subject_kind = 'patch'"
               " AND subject_id IN (%s)" % ','.join(str(i) for i in ids))
    t.is_(actors, [('token:maint',)], "the patches imported through the API are checked as the token that sent them")
    # the daemon's own steps act as the daemon, not as the user it runs as:
    # every event of its candidates and bisections, but the culprit a
    # bisection found, which is flagged by that bisection (bisection:ID)
    t.is_(q("SELECT DISTINCT actor FROM events WHERE subject_kind IN ('candidate', 'bisection')"
            " AND NOT (kind = 'found' AND actor = 'bisection:' || subject_id)"), [('daemon',)],
          "the daemon's steps act as the daemon, not as the user it runs as")

    # A candidate with the target patch that failed two tests among 92
    # passing ones (87 of them KUnit cases in three suites), and a build in
    # progress: what a maintainer must see first, and how far work is.
    import sqlite3
    con = sqlite3.connect(w.db, timeout=30)
    with con:
        cur = con.execute("INSERT INTO candidates (branch_id, purpose, patch_ids, step, verdict, detail, boots)"
                          " VALUES ((SELECT id FROM branches WHERE key = '6.1'), 'bisect', ?, 'done', 'fail',"
                          " 'user-copy failed; kunit failed', 1)",
                          ('[%d]' % target,))
        fail_cid = cur.lastrowid
        rows = [('boot', 'pass', None, None), ('dmesg-clean', 'pass', None, None),
                ('kunit', 'fail', 'not ok: kunit.cmdline.cmdline_test_tail_int', None)]
        rows += [('kunit.list.list_test_%d' % i, 'pass', None, None) for i in range(40)]
        rows += [('kunit.cmdline.cmdline_test_%d' % i, 'pass', None, None) for i in range(7)]
        rows += [('kunit.cmdline.cmdline_test_tail_int', 'fail', 'expected 1, got 0',
                  '    # cmdline_test_tail_int: EXPECTATION FAILED at lib/cmdline_kunit.c:74')]
        rows += [('kunit.hash.hash_test_%d' % i, 'pass', None, None) for i in range(40)]
        rows += [('user-copy', 'fail', 'stale value 0x5a5a after a faulting get_user',
                  'test_user_copy: legitimate get_user (u64) failed: stale value 0x5a5a'),
                 ('module-reload', 'pass', None, None), ('badptr', 'pass', None, None),
                 ('proc-sanity', 'pass', None, None)]
        con.executemany("INSERT INTO test_results (candidate_id, run, name, result, detail, log_excerpt)"
                        " VALUES (?, 1, ?, ?, ?, ?)", [(fail_cid,) + r for r in rows])
        con.execute("INSERT INTO progress (kind, subject_id, label, done, total, unit, pid)"
                    " VALUES ('build', ?, ?, 120, 654, 'objects', ?)",
                    (fail_cid, 'candidate %d: building' % fail_cid, os.getpid()))
        # its phases, each with its time (sql/022)
        con.executemany("INSERT INTO candidate_phases (candidate_id, branch_id, purpose, phase, seconds, detail)"
                        " VALUES (?, (SELECT id FROM branches WHERE key = '6.1'), 'bisect', ?, ?, ?)",
                        [(fail_cid, 'apply', 0.4, None), (fail_cid, 'build', 243.0, 'built'),
                         (fail_cid, 'boot', 12.0, '1 boot'), (fail_cid, 'tests', 61.0, None),
                         (fail_cid, 'retry', 35.0, '1 boot, 1 test')])
    con.close()
    s, h, raw, j = w.get('/health')
    t.ok(s == 200 and any(p['kind'] == 'build' and p['done'] == 120 and p['total'] == 654 for p in j['progress']),
         '/health lists the build in progress', j and j.get('progress'))

    # The 6.12 copy of the line 33 fix: its own test passed without it (as
    # verify_fix stores it): the matrix says the bug is not in 6.12.
    con = sqlite3.connect(w.db, timeout=30)
    with con:
        con.execute("INSERT INTO verdicts (patch_id, check_name, result, detail) SELECT p.id, 'test', 'not-present',"
                    " '6.12: kunit.lib.line33 passes without the fix (candidate 0): the bug is not in this tree'"
                    " FROM patches p JOIN branches b ON b.id = p.branch_id WHERE b.key = '6.12' AND p.subject = ?",
                    (both_subject,))
    con.close()

    shots = os.path.join(TOP, 'var')
    os.makedirs(shots, exist_ok=True)
    env = dict(os.environ, EXTRA_PATCH=extra,
               FAIL_CANDIDATE=str(fail_cid), BOTH_SUBJECT=both_subject, HOSTILE_SUBJECT=hostile_subject)
    # its own process group: a run past its time goes with chromedriver and the browser
    p = subprocess.Popen(['node', os.path.join(TOP, 'tests', 'lib', 'dashboard.mjs'), w.base, tok, str(target), shots],
                         cwd=TOP, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += b'\n(killed after 240 s)'
    results = []
    for line in out.decode(errors='replace').splitlines():
        try:
            results.append(json.loads(line))
        except ValueError:
            t.diag(line)
    t.ok(p.returncode == 0 and len(results) >= 20, 'the browser run reports its checks (%d)' % len(results),
         err.decode(errors='replace')[-3000:])
    for r in results:
        t.ok(r['ok'], 'chromium: ' + r['name'], *([r['diag']] if r.get('diag') else []))
    t.ok(w.alive(), 'the daemon is still running after the browser run', w.daemon_log())

    # The page's flag, seen through the API.
    s, h, raw, j = w.get('/patches/%d' % target)
    t.ok(s == 200 and j['state'] == 'broken', 'the API sees patch %d broken after the page flagged it' % target, j and j['state'])
    t.ok(j and any(f['reason'].startswith('Flagged from the dashboard') and f['actor'] == 'token:maint'
                   for f in j['flags']), '... with the reason typed in the page, by token:maint')
    t.ok(j and any(e['actor'] == 'token:maint' and 'broken' in (e['detail'] or '') for e in j['events']),
         '... and the event log names the token')
    for name in ('queue-1280', 'patch-1280', 'patch-flagged-1280', 'bisection-1280', 'queue-375', 'patch-375',
                 'patch-failed-1280', 'candidate-failed-1280', 'queue-6.12-1280', 'fixes-1280', 'fixes-375'):
        path = os.path.join(shots, 'dashboard-%s.png' % name)
        t.ok(os.path.exists(path) and os.path.getsize(path) > 10000, 'screenshot var/dashboard-%s.png' % name)
except Exception:
    import traceback
    t.ok(False, 'the test ran to its end', traceback.format_exc(), w.daemon_log())
finally:
    w.cleanup()
sys.exit(t.done())
