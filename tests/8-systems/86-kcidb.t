#!/usr/bin/python3
"""86-kcidb.t: `stableq kcidb` and GET /api/v1/kcidb against the KCIDB v4 schema.

Real parts: a git tree made here, patches imported by the CLI, candidate
commits made in the tree as stableq makes them; the runs' results (builds,
test results) are written into the real SQLite store as candidate.c writes
them, one candidate per verdict. The output is validated with Debian's
python3-jsonschema against config/kcidb-v4.schema.json (written from
the published KCIDB I/O schema v4.5), and the daemon's answer must be the
CLI's.
"""
import copy
import datetime
import hashlib
import json
import os
import sqlite3
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import TOP, Tap, World, git  # noqa: E402

import jsonschema  # noqa: E402  (Debian: python3-jsonschema)

t = Tap()
w = World()
try:
    with open(os.path.join(TOP, 'config', 'kcidb-v4.schema.json')) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    t.ok(True, 'config/kcidb-v4.schema.json is a valid JSON Schema (2020-12)')
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())

    # three patches: none carries Fixes:, so they wait and the daemon stays idle
    diffs = [w.diff('lib.c', 'line %d\n' % n, 'line %d changed\n' % n) for n in (10, 20, 30)]
    for i, d in enumerate(diffs):
        path = os.path.join(w.dir, 'p%d.patch' % i)
        with open(path, 'w') as f:
            f.write(w.mail(i + 1, 'lib: change %d' % i, '', d,
                           author='Dev %d <dev%d@example.org>' % (i, i)))
        w.sq('import', path)
    db = sqlite3.connect(w.db)
    stored = [r[0] for r in db.execute('SELECT diff FROM patches ORDER BY id')]
    t.is_(len(stored), 3, 'three patches imported')

    # the candidate commit: the branch tip plus patches 1 and 2
    base = git(w.tree, 'rev-parse', 'linux-6.1.y')
    git(w.tree, 'checkout', '-q', '--detach', base)
    for d in stored[:2]:
        p = os.path.join(w.dir, 'apply.diff')
        with open(p, 'w') as f:
            f.write(d)
        git(w.tree, 'apply', '--index', p)
    git(w.tree, 'commit', '-qm', 'stableq candidate 1')
    cand = git(w.tree, 'rev-parse', 'HEAD')
    git(w.tree, 'checkout', '-q', 'linux-6.1.y')

    huge = 'x' * 20000
    hostile = 'kunit.bad suite/"case";rm'
    rows = [
        # id, verdict, step, commit, patch ids, build (result, excerpt), finished
        (1, 'pass', 'done', cand, '[1,2]', ('ok', None), '2026-01-10T10:00:00Z'),
        (2, 'apply-failed', 'done', None, '[1,2,3]', None, '2026-02-01T10:00:00Z'),
        (3, 'build-failed', 'done', cand, '[1,2]', ('failed', 'lib.c:10: error: boom'), '2026-02-02T10:00:00Z'),
        (4, 'hang', 'done', cand, '[1,2]', ('ok', None), '2026-02-03T10:00:00Z'),
        (5, None, 'done', cand, '[1,2]', ('ok', None), '2026-02-04T10:00:00Z'),
        (6, None, 'build', cand, '[1,2]', None, None),
    ]
    for cid, verdict, step, commit, ids, build, fin in rows:
        bid = None
        if build:
            db.execute("INSERT INTO builds (commit_sha, tree_sha, config_hash, result, seconds,"
                       " log_path, error_excerpt) VALUES (?, 'tree', 'abc', ?, 42.5, '/nonexistent', ?)",
                       (commit, build[0], build[1]))
            bid = db.execute('SELECT last_insert_rowid()').fetchone()[0]
        db.execute("INSERT INTO candidates (id, purpose, patch_ids, commit_sha, build_id, step,"
                   " verdict, detail, finished_at) VALUES (?, 'queue', ?, ?, ?, ?, ?, ?, ?)",
                   (cid, ids, commit, bid, step, verdict,
                    'patch 3 "lib: change 2" does not apply' if verdict == 'apply-failed' else
                    'killed at the deadline' if verdict == 'hang' else None, fin))
    # other cells of the matrix (cell.h): their arch and make command
    db.execute("UPDATE candidates SET arch = 'x86_64', compiler = 'clang' WHERE id = 3")
    db.execute("UPDATE candidates SET arch = 'arm64', compiler = 'gcc' WHERE id = 4")
    db.execute("UPDATE candidates SET arch = 'arm64', compiler = 'clang' WHERE id = 5")
    results = [('boot', 'pass', None), ('dmesg-clean', 'pass', None),
               ('kunit.list.list_test_init', 'pass', None), ('user-copy', 'fail', huge),
               ('badptr', 'flaky', None), ('proc-sanity', 'skip', None), (hostile, 'pass', None),
               ('kselftest:timers:posix_timers', 'pass', None),
               # names as the runner stores them today: KUnit cases (a
               # parameterised one too) and kselftests with dots
               ('kunit.list.list_test_splice', 'fail', None),
               ('kunit.overflow.shift_sane_test.u8', 'pass', None),
               ('kselftest.size.get_size', 'fail', None),
               ('kselftest.futex.futex_requeue.requeue_single', 'pass', None)]
    for run in (1, 2):
        for name, res, ex in results:
            db.execute('INSERT INTO test_results (candidate_id, run, name, result, detail,'
                       ' log_excerpt) VALUES (1, ?, ?, ?, ?, ?)', (run, name, res, 'detail of ' + name, ex))
    # their standing against the tip, as testcase.c classifies them
    standing = {'kunit.list.list_test_splice': ('regression', 'pass'),
                'kselftest.size.get_size': ('known', 'fail'), 'badptr': ('flaky', 'pass')}
    for name, res, ex in results:
        status, tip = standing.get(name, (res if res in ('pass', 'skip') else 'regression', res))
        db.execute('INSERT INTO test_cases (candidate_id, name, status, tip, runs, fails)'
                   ' VALUES (1, ?, ?, ?, 2, ?)', (name, status, tip, 2 if res == 'fail' else 0))
    db.commit()
    db.close()

    p = w.sq('kcidb')
    out = json.loads(p.stdout)
    errors = sorted(validator.iter_errors(out), key=str)
    t.ok(not errors, '`stableq kcidb` validates against the KCIDB v4 schema', *[e.message for e in errors[:5]])
    t.is_(out['version'], {'major': 4, 'minor': 5}, 'version 4.5')
    t.is_([c['id'] for c in out['checkouts']],
          ['stableq:candidate-%d' % i for i in (1, 2, 3, 4, 5)],
          'a checkout per finished candidate (the one still building is left out)')
    allids = [o['id'] for k in ('checkouts', 'builds', 'tests') for o in out[k]]
    t.ok(all(i.startswith('stableq:') for i in allids) and
         all(o['origin'] == 'stableq' for k in ('checkouts', 'builds', 'tests') for o in out[k]),
         'every id is in the stableq origin')
    t.is_(len(set(allids)), len(allids), 'ids are unique')

    c1 = out['checkouts'][0]
    t.is_(c1['tree_name'], 'stableq-6.1', 'tree_name stableq-6.1 (from linux-6.1.y)')
    t.is_(c1['git_repository_branch'], 'linux-6.1.y', 'the branch')
    t.is_(c1['git_commit_hash'], base, 'git_commit_hash: the commit the patches went onto')
    t.is_(c1['misc']['candidate_commit'], cand, "misc.candidate_commit: the candidate's own commit")
    want = hashlib.sha256(''.join(hashlib.sha256(d.encode()).hexdigest() + '\n'
                                  for d in stored[:2]).encode()).hexdigest()
    t.is_(c1['patchset_hash'], want, 'patchset_hash: sha256 over the sha256 of each diff, as KCIDB defines it')
    t.is_([f['url'] for f in c1['patchset_files']],
          ['%s/api/v1/patches/%d/diff' % (w.base, i) for i in (1, 2)], 'patchset_files link the diffs')
    t.is_(c1['contacts'], ['dev0@example.org', 'dev1@example.org'], 'contacts: the authors')
    t.ok(c1['valid'] is True and out['checkouts'][1]['valid'] is False,
         'apply-failed: the checkout is not valid')
    t.like(out['checkouts'][1].get('log_excerpt', ''), 'does not apply', '... and says why')

    builds = {b['checkout_id']: b for b in out['builds']}
    t.ok('stableq:candidate-2' not in builds, 'an apply-failed candidate has no build')
    b1 = builds['stableq:candidate-1']
    t.ok(b1['valid'] is True and b1['duration'] == 42.5 and b1['architecture'] == 'x86_64',
         'the build: valid, its duration, x86_64')
    cmds = {i: (builds['stableq:candidate-%d' % i]['architecture'], builds['stableq:candidate-%d' % i]['command'])
            for i in (1, 3, 4, 5)}
    t.is_(cmds, {1: ('x86_64', 'make O=BUILD_DIR CC="ccache gcc" bzImage modules'),
                 3: ('x86_64', 'make O=BUILD_DIR LLVM=1 CC="ccache clang" bzImage modules'),
                 4: ('arm64', 'make O=BUILD_DIR ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-'
                              ' CC="ccache aarch64-linux-gnu-gcc" Image modules'),
                 5: ('arm64', 'make O=BUILD_DIR ARCH=arm64 LLVM=1 CC="ccache clang" Image modules')},
          "each cell's build: its KCIDB architecture and make's command line (x86_64/gcc, x86_64/clang, arm64/gcc, arm64/clang)")
    t.like(b1['config_name'], 'tinyconfig+base.config', 'the build names its config (tinyconfig + fragments)')
    t.like(b1['log_url'], '/api/v1/builds/', 'the build links its log')
    b3 = builds['stableq:candidate-3']
    t.ok(b3['valid'] is False and 'error: boom' in b3['log_excerpt'], 'build-failed: not valid, with the excerpt')
    t.ok(not [x for x in out['tests'] if x['build_id'] == b3['id']], '... and no tests')

    tests1 = [x for x in out['tests'] if x['build_id'] == b1['id']]
    t.is_(len(tests1), 24, 'every stored result of every run is a test')
    paths = sorted({x['path'] for x in tests1})
    t.ok({'boot', 'dmesg-clean', 'kunit.list.list_test_init', 'user-copy'} <= set(paths),
         'KCIDB paths boot, dmesg-clean, kunit.<suite>.<case>, user-copy', paths)
    t.ok('kunit.bad_suite__case__rm' in paths, 'a hostile test name keeps only [.a-zA-Z0-9_-] in its path', paths)
    t.ok('kselftest.timers.posix_timers' in paths, "a selftest's result is kselftest.TARGET.TEST", paths)
    t.ok({'kunit.list.list_test_splice', 'kunit.overflow.shift_sane_test.u8'} <= set(paths),
         'KUnit cases as kunit.SUITE.CASE, a parameterised one as kunit.SUITE.CASE.PARAM', paths)
    t.ok({'kselftest.size.get_size', 'kselftest.futex.futex_requeue.requeue_single'} <= set(paths),
         'kselftests as kselftest.TARGET.TEST, a TAP line of one as kselftest.TARGET.TEST.NAME', paths)
    sd = {x['path']: (x['status'], x['misc'].get('standing')) for x in tests1}
    t.is_((sd['kunit.list.list_test_splice'], sd['kselftest.size.get_size'],
           sd['kunit.overflow.shift_sane_test.u8'], sd['badptr']),
          (('FAIL', 'regression'), ('FAIL', 'known'), ('PASS', 'pass'), ('FAIL', 'flaky')),
          "misc.standing: a KUnit case's regression, a kselftest's known failure, a pass, a flaky test")
    st = {x['path']: x['status'] for x in tests1}
    t.is_((st['boot'], st['user-copy'], st['badptr'], st['proc-sanity']), ('PASS', 'FAIL', 'FAIL', 'SKIP'),
          'pass/fail/flaky/skip become PASS/FAIL/FAIL/SKIP')
    t.is_({x['misc']['stableq_result'] for x in tests1 if x['path'] == 'badptr'}, {'flaky'},
          '... a flaky test says so in misc')
    uc = [x for x in tests1 if x['path'] == 'user-copy'][0]
    t.ok(len(uc['log_excerpt']) <= 16384, 'a long log excerpt is cut to the schema limit')
    b4 = builds['stableq:candidate-4']
    t.is_([(x['path'], x['status']) for x in out['tests'] if x['build_id'] == b4['id']], [('boot', 'FAIL')],
          'a hung guest without results: boot FAIL')
    b5 = builds['stableq:candidate-5']
    t.is_([(x['path'], x['status']) for x in out['tests'] if x['build_id'] == b5['id']], [('boot', 'MISS')],
          'a boot step that never ran: boot MISS (the harness failed)')
    for x in out['tests']:
        if 'start_time' in x:
            datetime.datetime.fromisoformat(x['start_time'].replace('Z', '+00:00'))
    for c in out['checkouts'] + out['builds']:
        if 'start_time' in c:
            datetime.datetime.fromisoformat(c['start_time'].replace('Z', '+00:00'))
    t.ok(True, 'every start_time is an RFC 3339 date-time')

    # the check can fail: a wrong status or a bad id is caught
    bad = copy.deepcopy(out)
    bad['tests'][0]['status'] = 'BROKEN'
    bad['builds'][0]['id'] = 'no-origin'
    t.is_(len(list(validator.iter_errors(bad))), 2, 'the schema check catches a bad status and an id without origin')

    p = w.sq('kcidb', '--since', '2026-02-02')
    since = json.loads(p.stdout)
    t.is_([c['id'] for c in since['checkouts']], ['stableq:candidate-%d' % i for i in (3, 4, 5)],
          '--since 2026-02-02: only candidates finished since')
    t.ok(not list(validator.iter_errors(since)), '... valid too')
    p = w.sq('kcidb', '--since', '2026-02-02T10:30:00Z')
    t.is_(len(json.loads(p.stdout)['checkouts']), 2, '--since with a time of day')
    for badtime in ('yesterday', '2026-13-01', '2026-02-02T25:00', ''):
        p = w.sq('kcidb', '--since', badtime, check=False)
        t.ok(p.returncode == 2 and b'is not a time' in p.stderr and not p.stdout,
             '--since %r: exit 2, a clear error, nothing printed' % badtime, p.stderr)

    w.start()
    s, h, raw, j = w.get('/kcidb')
    t.ok(s == 200 and j == out, 'GET /api/v1/kcidb answers what `stableq kcidb` prints')
    s, h, raw, j = w.get('/kcidb?since=2026-02-02')
    t.ok(s == 200 and j == since, 'GET /api/v1/kcidb?since=... as --since')
    s, h, raw, j = w.get('/kcidb?since=tomorrow')
    t.ok(s == 400 and 'is not a time' in j['message'], 'a bad since: 400 naming it', j)
    s, h, raw, j = w.get('/patches/2/diff')
    t.ok(s == 200 and raw.decode() == stored[1] and h['content-type'].startswith('text/x-patch'),
         "GET /patches/2/diff: the patchset's file, as stored")
    s, h, raw, j = w.get('/patches/99/diff')
    t.is_(s, 404, 'an unknown patch: 404')
finally:
    w.cleanup()
sys.exit(t.done())
