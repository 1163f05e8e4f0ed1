#!/usr/bin/env python3
"""67-metrics-phases.t: how long each phase of a candidate took, said by the CLI, the API and /metrics.

A small stable tree made here, two queued patches, `stableq candidate` run
twice through the CLI (the small tree does not build: apply and build are
its phases). The CLI says each phase with its time, and from the second run
on the branch's usual time of it; GET /candidates/{id} lists the phases
with their times and estimates; /metrics exports them in Prometheus' text
format, by phase and purpose. A history of finished phases stored here
gives the estimate of a running candidate on /health (what is left).
"""
import os
import re
import sqlite3
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, World  # noqa: E402

t = Tap()
w = World()
try:
    for n, (old, new) in enumerate([('line 5\n', 'line five\n'), ('line 9\n', 'line nine\n')], 1):
        m = w.mail(n, 'lib: spell %d' % n, 'Cc: stable@vger.kernel.org', w.diff('lib.c', old, new))
        with open(os.path.join(w.dir, 'queue', '%d.patch' % n), 'w') as f:
            f.write(m)
    with open(os.path.join(w.dir, 'queue', 'series'), 'w') as f:
        f.write('1.patch\n2.patch\n')
    w.sq('import', os.path.join(w.dir, 'queue'))

    r1 = w.sq('candidate', check=False)
    out1 = r1.stdout.decode()
    t.is_(r1.returncode, 3, 'stableq candidate: build-failed (exit 3) on the small tree')
    t.ok(re.search(r'^candidate 1: phase apply: [0-9.]+ s$', out1, re.M), 'the CLI says the apply phase and its time', out1)
    t.ok(re.search(r'^candidate 1: phase build: [0-9.]+ s \(failed\)$', out1, re.M),
         '... and the build phase, failed', out1)
    t.ok('usually' not in out1, '... with no estimate: the branch has no history yet', out1)
    t.ok(re.search(r'^  phases: apply [0-9.]+ s, build [0-9.]+ s \(failed\)$', out1, re.M),
         'the candidate shown ends with its phases', out1)
    r2 = w.sq('candidate', check=False)
    out2 = r2.stdout.decode()
    t.ok(re.search(r'^candidate 2: phase build \(usually [0-9.]+ s on this branch\)$', out2, re.M),
         'the second candidate: the branch\'s usual time of each phase, from the first', out2)

    w.start()
    s, h, raw, c = w.get('/candidates/2')
    names = [p['phase'] for p in (c or {}).get('phases', [])]
    t.is_(names, ['apply', 'build'], 'GET /candidates/{id}: the phases it went through')
    b = [p for p in c['phases'] if p['phase'] == 'build'][0]
    t.ok(isinstance(b['seconds'], float) and b['running'] is False and b['detail'] == 'failed'
         and isinstance(b['estimate'], float), '... each with its time, detail and the estimate', b)
    t.ok(c.get('estimate_left', 0) is None, '... nothing left: it is done', c.get('estimate_left'))

    s, h, raw, j = w.get('/metrics')
    text = raw.decode()
    t.is_(s, 200, 'GET /metrics -> 200')
    t.like(text, '# TYPE stableq_candidate_phase_seconds summary\n', 'the phases are a summary')
    m = re.search(r'^stableq_candidate_phase_seconds_count\{phase="build",purpose="queue"\} (\d+)$', text, re.M)
    t.ok(m and m.group(1) == '2', 'two build phases counted', text)
    m = re.search(r'^stableq_candidate_phase_seconds_sum\{phase="apply",purpose="queue"\} ([0-9.]+)$', text, re.M)
    t.ok(m, 'the apply phases\' seconds summed')
    sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*",?)*\})? -?[0-9.e+]+$')
    bad = [ln for ln in text.splitlines() if ln and not ln.startswith('#') and not sample.match(ln)]
    t.ok(not bad, 'every sample line is Prometheus text format', bad[:5])

    # a running candidate with a history: /health says what is left
    con = sqlite3.connect(w.db, timeout=10)
    with con:
        for cid, sec in ((1, 30.0), (2, 50.0)):
            for ph in ('boot', 'tests'):
                con.execute("INSERT INTO candidate_phases (candidate_id, branch_id, purpose, phase, seconds)"
                            " VALUES (?, 1, 'queue', ?, ?)", (cid, ph, sec))
        con.execute("INSERT INTO candidates (branch_id, purpose, patch_ids, step) VALUES (1, 'queue', '[1]', 'build')")
        run = con.execute('SELECT MAX(id) FROM candidates').fetchone()[0]
        con.execute("INSERT INTO candidate_phases (candidate_id, branch_id, purpose, phase, seconds)"
                    " VALUES (?, 1, 'queue', 'apply', 0.1)", (run,))
        con.execute("INSERT INTO candidate_phases (candidate_id, branch_id, purpose, phase)"
                    " VALUES (?, 1, 'queue', 'build')", (run,))
    con.close()
    s, h, raw, health = w.get('/health')
    at = (health or {}).get('candidate') or {}
    t.is_(at.get('id'), run, '/health: the candidate at work')
    ph = {p['phase']: p for p in at.get('phases', [])}
    t.ok(ph.get('build', {}).get('running') is True and ph['build'].get('seconds') is None,
         '... its build phase runs', at)
    t.ok(ph.get('boot', {}).get('estimate') == 40.0 and ph.get('tests', {}).get('estimate') == 40.0,
         '... the phases to come with the branch\'s median', ph)
    t.ok(isinstance(at.get('estimate_left'), float) and at['estimate_left'] >= 80,
         '... and what is left in all: %r s' % at.get('estimate_left'))
    with sqlite3.connect(w.db, timeout=10) as con:
        con.execute("UPDATE candidates SET step = 'done', verdict = 'pass', finished_at = '2026-01-01T00:00:00Z'"
                    " WHERE id = ?", (run,))
finally:
    w.cleanup()
sys.exit(t.done())
