#!/usr/bin/env python3
"""69-test-cases-api.t: GET /candidates/{id}/tests through the real daemon.

A store whose candidate ran (rows as candidate_run and testcase_classify
write them: test_results per boot, test_cases per case, the tip's run
linked): the list leads with regressions, then flaky, known, skip, pass;
?status= filters it; a bad status is a 400 naming the five, an unknown
candidate a 404, a candidate never classified answers classified false; the
summary of GET /candidates/{id} says the counts. Text from the console (a
hostile test name and detail) comes back as JSON data, unchanged. Then
tests/lib/test-cases-dashboard.mjs drives Debian's headless chromium: the
candidate's page leads with the regressions, then flaky, then known
failures, passes as a count, the hostile name as text.
"""
import json
import os
import signal
import sqlite3
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import TOP, Tap, World  # noqa: E402

t = Tap()
w = World()
EVIL = 'kunit.s.<img src=x onerror=alert(1)>'
try:
    w.start()
    w.wait('the store', lambda: os.path.exists(w.db))
    w.wait('the branch row', lambda: sqlite3.connect(w.db).execute(
        'SELECT COUNT(*) FROM branches').fetchone()[0] > 0)
    con = sqlite3.connect(w.db, timeout=10)
    br = con.execute('SELECT id FROM branches ORDER BY id LIMIT 1').fetchone()[0]
    con.execute("INSERT INTO candidates (id, branch_id, purpose, patch_ids, step, verdict)"
                " VALUES (1, ?, 'baseline', '[]', 'done', 'fail')", (br,))
    con.execute("INSERT INTO candidates (id, branch_id, purpose, patch_ids, step, verdict,"
                " tip_candidate_id) VALUES (2, ?, 'queue', '[1]', 'done', 'fail', 1)", (br,))
    con.execute("INSERT INTO candidates (id, branch_id, purpose, patch_ids, step, verdict)"
                " VALUES (3, ?, 'bisect', '[1]', 'done', 'fail')", (br,))
    rows = [  # candidate, run, name, result, detail
        (2, 1, 'boot', 'pass', ''), (2, 1, 'kunit.s.a', 'fail', 'EXPECTATION FAILED a'),
        (2, 2, 'kunit.s.a', 'fail', 'EXPECTATION FAILED a again'),
        (2, 1, 'always-false', 'fail', 'exit status 1'), (2, 1, 'flip', 'flaky', 'x'),
        (2, 2, 'flip', 'flaky', ''), (2, 1, 'sk', 'skip', 'no hw'),
        (2, 1, EVIL, 'fail', '</pre><script>alert(2)</script>')]
    for r in rows:
        con.execute('INSERT INTO test_results (candidate_id, run, name, result, detail)'
                    ' VALUES (?, ?, ?, ?, ?)', r)
    cases = [('boot', 'pass', 'pass', 1, 0), ('kunit.s.a', 'regression', 'pass', 2, 2),
             ('always-false', 'known', 'fail', 1, 1), ('flip', 'flaky', 'pass', 2, 1),
             ('sk', 'skip', 'skip', 1, 0), (EVIL, 'regression', None, 1, 1)]
    for c in cases:
        con.execute('INSERT INTO test_cases (candidate_id, name, status, tip, runs, fails)'
                    ' VALUES (2, ?, ?, ?, ?, ?)', c)
    con.commit()
    con.close()

    s, h, raw, j = w.get('/candidates/2/tests')
    t.is_(s, 200, 'GET /api/v1/candidates/2/tests -> 200')
    t.ok(j['classified'] is True and j['tip_candidate'] == 1, 'classified, against the tip run 1', j)
    t.is_(j['counts'], {'total': 6, 'regression': 2, 'known': 1, 'flaky': 1, 'pass': 1, 'skip': 1},
          'the counts')
    t.is_([x['status'] for x in j['tests']],
          ['regression', 'regression', 'flaky', 'known', 'skip', 'pass'],
          'regressions first, then flaky, known, skip, pass')
    a = [x for x in j['tests'] if x['name'] == 'kunit.s.a'][0]
    t.is_((a['tip'], a['runs'], a['fails'], a['detail']), ('pass', 2, 2, 'EXPECTATION FAILED a again'),
          "a regression: the tip's result, its boots, the last failure's detail")
    e = [x for x in j['tests'] if x['name'] == EVIL]
    t.ok(e and e[0]['detail'] == '</pre><script>alert(2)</script>' and e[0]['tip'] is None,
         'hostile text is JSON data, unchanged; not run on the tip: null', e)
    t.like(h.get('content-type'), 'application/json', '... answered as application/json')

    for st, names in [('regression', ['kunit.s.a', EVIL]), ('known', ['always-false']),
                      ('flaky', ['flip']), ('pass', ['boot']), ('skip', ['sk'])]:
        s, h, raw, j = w.get('/candidates/2/tests?status=' + st)
        t.ok(s == 200 and sorted(x['name'] for x in j['tests']) == sorted(names),
             '?status=%s: %s' % (st, ', '.join(names)), j)

    s, h, raw, j = w.get('/candidates/2/tests?status=fail')
    t.ok(s == 400 and j['error'] == 'bad-request' and
         'regression, known, flaky, pass or skip' in j['message'],
         '?status=fail -> 400 naming the five', j)
    s, h, raw, j = w.get('/candidates/99/tests')
    t.ok(s == 404 and 'candidate 99' in j['message'], 'an unknown candidate -> 404', j)
    s, h, raw, j = w.get('/candidates/3/tests')
    t.ok(s == 200 and j['classified'] is False and j['tests'] == [] and j['tip_candidate'] is None,
         'a bisection step, never classified: classified false, no tests', j)

    s, h, raw, j = w.get('/candidates/2')
    t.is_(j.get('summary'), 'fail: 6 tests, 2 regressions, 1 known failure, 1 flaky',
          'GET /candidates/2: the summary counts regressions, known failures, flaky tests')

    p = subprocess.Popen(['node', os.path.join(TOP, 'tests', 'lib', 'test-cases-dashboard.mjs'), w.base, '2', EVIL],
                         cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += b'\n(killed after 120 s)'
    results = [json.loads(x) for x in out.decode(errors='replace').splitlines() if x.startswith('{')]
    t.ok(p.returncode == 0 and len(results) == 6, 'the browser run reports its checks (%d)' % len(results),
         err.decode(errors='replace')[-3000:])
    for r in results:
        t.ok(r['ok'], 'chromium: ' + r['name'], *([r['diag']] if r.get('diag') else []))
finally:
    w.stop()
    w.cleanup()
t.done()
