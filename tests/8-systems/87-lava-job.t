#!/usr/bin/python3
"""87-lava-job.t: `stableq lava-job CANDIDATE` against lava-common's job schema.

The job is validated with lava_common.schemas.validate (Debian's lava-common,
python3-voluptuous) in strict mode. Real store, real git tree; the images
are files standing where a build and a boot leave them (tests/85 does the
same on a real kernel). Also: a test set whose text needs quoting survives
the YAML, and the errors: unknown candidate, no kernel, a kernel already
overwritten by a later build, bad arguments.
"""
import hashlib
import os
import sqlite3
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, World  # noqa: E402

import yaml  # noqa: E402  (Debian: python3-yaml, a dependency of lava-common)
from lava_common.schemas import validate  # noqa: E402  (Debian: lava-common)

t = Tap()
tests_conf = '''[test boot]
kind = boot
description = reaches "userspace": yes, really

[test dmesg-clean]
kind = console
fail_on = Oops|BUG:|a.b(c)*
description = no oops

[test kunit]
kind = ktap

[test user-copy]
kind = guest
command = insmod /lib/modules/x.ko
timeout = 90
description = naïve: 'quotes' & "double" # not a comment: {braces} [list]

[test kselftest]
kind = kselftest
targets = size futex
timeout = 30
description = from the candidate's tree
'''
w = World()
try:
    lines = [ln for ln in open(w.conf).read().splitlines()
             if not ln.startswith('tests_file')]
    lines.append('tests_file = %s/tests.conf' % w.dir)
    with open(w.conf, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    with open(os.path.join(w.dir, 'tests.conf'), 'w') as f:
        f.write(tests_conf)
    os.makedirs(os.path.join(w.dir, 'build/arch/x86/boot'))
    os.makedirs(os.path.join(w.dir, 'var/guest'))
    kernel = os.urandom(4096)
    initrd = os.urandom(8192)
    with open(os.path.join(w.dir, 'build/arch/x86/boot/bzImage'), 'wb') as f:
        f.write(kernel)
    with open(os.path.join(w.dir, 'var/guest/initramfs.cpio'), 'wb') as f:
        f.write(initrd)
    w.sq('queue')  # makes the store
    db = sqlite3.connect(w.db)
    for cid, result in ((1, 'ok'), (2, 'failed'), (3, 'ok')):
        db.execute("INSERT INTO builds (commit_sha, config_hash, result) VALUES ('c', 'h', ?)", (result,))
        db.execute("INSERT INTO candidates (id, patch_ids, commit_sha, build_id, step, verdict)"
                   " VALUES (?, '[]', ?, last_insert_rowid(), 'done', ?)",
                   (cid, '%040d' % cid, 'pass' if result == 'ok' else 'build-failed'))
    db.execute("INSERT INTO candidates (id, patch_ids, step) VALUES (4, '[]', 'pending')")
    # candidate 3 against the tip's run (candidate 5): test cases as
    # testcase.c leaves them, with the tip's result of each
    db.execute("INSERT INTO candidates (id, purpose, patch_ids, step, verdict) VALUES (5, 'baseline', '[]', 'done', 'fail')")
    db.execute("UPDATE candidates SET tip_candidate_id = 5 WHERE id = 3")
    cases = [('boot', 'pass', 'pass'), ('dmesg-clean', 'pass', 'pass'), ('kunit', 'known', 'fail'),
             ('kunit.list.list_test_init', 'pass', 'pass'), ('kunit.list.list_test_splice', 'known', 'fail'),
             ('user-copy', 'pass', 'pass'), ('kselftest.size', 'pass', 'pass'),
             ('kselftest.size.get_size', 'pass', 'pass'), ('kselftest.futex', 'pass', 'pass'),
             ('kselftest.futex.futex_wait', 'pass', 'flaky'), ('kselftest.futex.futex_requeue', 'known', 'fail'),
             ('kselftest.futex.futex_wait_timeout', 'pass', None)]
    for name, status, tip in cases:
        db.execute("INSERT INTO test_cases (candidate_id, name, status, tip, runs, fails) VALUES (3, ?, ?, ?, 1, ?)",
                   (name, status, tip, 1 if status == 'known' else 0))
    db.commit()
    db.close()

    out = os.path.join(w.dir, 'lava')
    p = w.sq('lava-job', '3', '--out', out, '--url', 'https://lab.example.org/stableq/3/')
    text = p.stdout.decode()
    job = yaml.safe_load(text)
    try:
        validate(job, strict=True)
        err = None
    except Exception as e:  # voluptuous.Invalid and friends
        err = '%r at %s' % (e, getattr(e, 'path', '?'))
    t.ok(err is None, 'the job validates with lava-common (strict)', err, text)
    t.is_(job['device_type'], 'qemu', 'device type qemu')
    t.is_([next(iter(a)) for a in job['actions']], ['deploy', 'boot', 'test'], 'deploy, boot, test')
    deploy = job['actions'][0]['deploy']
    t.is_((deploy['to'], deploy['images']['kernel']['url'], deploy['images']['ramdisk']['url']),
          ('tmpfs', 'https://lab.example.org/stableq/3/bzImage', 'https://lab.example.org/stableq/3/initramfs.cpio'),
          'the kernel and initramfs, at --url')
    t.is_((deploy['images']['kernel']['sha256sum'], deploy['images']['ramdisk']['sha256sum']),
          (hashlib.sha256(kernel).hexdigest(), hashlib.sha256(initrd).hexdigest()), '... with their sha256')
    t.ok(open(os.path.join(out, 'bzImage'), 'rb').read() == kernel and
         open(os.path.join(out, 'initramfs.cpio'), 'rb').read() == initrd, 'the images are copied to --out')
    t.is_(open(os.path.join(out, 'job.yaml')).read(), text, '... with the job')
    boot = job['actions'][1]['boot']
    t.is_((boot['method'], boot['media']), ('qemu', 'tmpfs'), 'boot method qemu from tmpfs')
    monitors = job['actions'][2]['test']['monitors']
    mons = {m['name']: m for m in monitors}
    t.is_([m['name'] for m in monitors], ['kunit', 'stableq-guest', 'kselftest'],
          'the test set as monitors, in console order: KUnit, the guest tests, the kselftests')
    import re
    g = re.compile(mons['stableq-guest']['pattern'])
    m = g.search('@@stableq end user-copy 0')
    t.ok(m and mons['stableq-guest']['fixupdict'][m.group('result')] == 'pass' and
         m.group('test_case_id') == 'user-copy', "the guest monitor reads /init's markers: 0 passes")
    m = g.search('@@stableq end user-copy 137')
    t.ok(m and mons['stableq-guest']['fixupdict'][m.group('result')] == 'fail', '... anything else fails')
    k = re.compile(mons['kunit']['pattern'])
    m = k.search('    not ok 3 list_test_splice')
    t.ok(m and mons['kunit']['fixupdict'][m.group('result')] == 'fail' and
         m.group('test_case_id') == 'list_test_splice', 'the KUnit monitor reads KTAP')
    t.is_(job['metadata']['stableq.test.user-copy'],
          "guest: naïve: 'quotes' & \"double\" # not a comment: {braces} [list]",
          'text that needs quoting comes through the YAML exactly')
    t.is_(job['metadata']['stableq.candidate'], 3, 'the metadata names the candidate')

    # the whole test set, and how each test stands on the tip
    meta = job['metadata']
    t.is_(sorted(k[len('stableq.test.'):] for k in meta if k.startswith('stableq.test.')),
          ['boot', 'dmesg-clean', 'kselftest.futex', 'kselftest.size', 'kunit', 'user-copy'],
          'every test of the tests file is in the job, a kselftest section as its targets')
    t.like(meta['stableq.test.kselftest.size'], 'tools/testing/selftests/size',
           "... a target says where its tests come from")
    t.is_((meta['stableq.tip.boot'], meta['stableq.tip.user-copy'], meta['stableq.tip.kselftest.size']),
          ('pass', 'pass', 'pass'), "each test's result on the branch tip")
    t.ok(meta['stableq.tip.kunit'].startswith('fail, expected') and
         meta['stableq.tip.kunit.list.list_test_splice'].startswith('fail, expected') and
         meta['stableq.tip.kselftest.futex.futex_requeue'].startswith('fail, expected'),
         '... known failures, a KUnit case and a kselftest among them, marked expected',
         {k: v for k, v in meta.items() if k.startswith('stableq.tip')})
    t.is_(meta.get('stableq.tip.kselftest.futex.futex_wait'), 'flaky', '... a test flaky on the tip says so')
    t.ok('stableq.tip.kunit.list.list_test_init' not in meta and
         'stableq.tip.kselftest.futex.futex_wait_timeout' not in meta,
         '... cases that pass there (or that it never ran) are only counted')
    t.is_(meta['stableq.tip'], 'candidate 5: 7 pass, 3 fail (expected), 1 flaky, 0 skip',
          '... and the tip run is named, with its counts')
    # user-copy 90 s, the four kselftests the candidate ran 30 s each: 4 min
    t.is_(job['actions'][2]['test']['timeout']['minutes'] - job['actions'][1]['boot']['timeout']['minutes'], 4,
          "the test action's timeout: the boot's, each guest test's and each kselftest's the candidate ran")

    # LAVA runs the monitors one after the other over the console, each
    # from its start to its end (pexpect: the earliest match wins, the end
    # before a result on a tie); here on what a boot prints
    def run_monitors(mons, console):
        pos, results = 0, []
        for m in mons:
            s = re.compile(m['start']).search(console, pos)
            if not s:
                results.append((m['name'], 'START NOT FOUND', ''))
                return results
            pos = s.end()
            end, pat = re.compile(m['end']), re.compile(m['pattern'])
            while True:
                e, r = end.search(console, pos), pat.search(console, pos)
                if not r or (e and e.start() <= r.start()):
                    if not e:
                        results.append((m['name'], 'END NOT FOUND', ''))
                        return results
                    pos = e.end()
                    break
                g = r.groupdict()
                results.append((m['name'], g['test_case_id'],
                                m.get('fixupdict', {}).get(g['result'], g['result'])))
                pos = r.end()
        return results
    tok = '7f3a9c'
    console = '\r\n'.join([
        'Linux version 6.1.192', 'KTAP version 1', '1..1', '    # Subtest: list', '    1..2',
        '    ok 1 list_test_init', '    not ok 2 list_test_splice', 'not ok 1 list',
        '@@stableq userspace ' + tok, '@@stableq kernel 6.1.192 ' + tok,
        '@@stableq begin user-copy ' + tok, 'test_user_copy: ok', '@@stableq end user-copy 0 ' + tok,
        '@@stableq begin kselftest.size.get_size ' + tok, 'ok 1 get_size', '@@stableq end kselftest.size.get_size 0 ' + tok,
        '@@stableq begin kselftest.futex.futex_wait ' + tok, '@@stableq end kselftest.futex.futex_wait 4 ' + tok,
        '@@stableq begin kselftest.futex.futex_requeue ' + tok, '@@stableq end kselftest.futex.futex_requeue 42 ' + tok,
        '@@stableq begin kselftest.futex.futex_wait_timeout ' + tok,
        '@@stableq end kselftest.futex.futex_wait_timeout 1 ' + tok,
        '@@stableq done ' + tok, ''])
    t.is_(run_monitors(monitors, console),
          [('kunit', 'list_test_init', 'pass'), ('kunit', 'list_test_splice', 'fail'), ('kunit', 'list', 'fail'),
           ('stableq-guest', 'user-copy', 'pass'),
           ('kselftest', 'kselftest.size.get_size', 'pass'), ('kselftest', 'kselftest.futex.futex_wait', 'skip'),
           ('kselftest', 'kselftest.futex.futex_requeue', 'fail'),
           ('kselftest', 'kselftest.futex.futex_wait_timeout', 'fail')],
          'run as LAVA runs them, the monitors give every result of the boot: '
          'KUnit cases, guest tests, kselftests (4 skips, 42 fails)')
    no_ksft = console.replace('kselftest.', 'gone.').split('@@stableq begin gone.size')[0] + '@@stableq done\r\n'
    t.is_(run_monitors(monitors, no_ksft)[-1], ('stableq-guest', 'user-copy', 'pass'),
          'a boot without kselftests: the kselftest monitor starts and ends at "@@stableq done"')
    t.ok(all(isinstance(v, str) for k, v in meta.items() if k.startswith('stableq.t')),
         'metadata values are strings')

    # without a guest test: the console monitor, its substrings as literals
    with open(os.path.join(w.dir, 'tests.conf'), 'w') as f:
        f.write(tests_conf.split('[test kunit]')[0])
    p = w.sq('lava-job', '3')
    job2 = yaml.safe_load(p.stdout)
    validate(job2, strict=True)
    mon = job2['actions'][2]['test']['monitors'][0]
    c = re.compile(mon['pattern'])
    t.ok(c.search('x a.b(c)* y') and not c.search('abc') and
         mon['fixupdict']['a.b(c)*'] == 'fail' and mon['fixupdict']['userspace'] == 'pass',
         'console tests: fail_on substrings matched literally; userspace passes')
    t.ok(job2['actions'][0]['deploy']['images']['kernel']['url'].startswith('file:///'),
         'without --url: file:// URLs of the copies')

    for args, code, msg, name in (
            (['9'], 1, 'no such candidate', 'an unknown candidate'),
            (['2'], 1, 'has no kernel to boot (build-failed)', 'a candidate whose build failed'),
            (['4'], 1, 'has no kernel to boot', 'a candidate not built yet'),
            (['1'], 1, 'no longer in', 'a kernel a later build overwrote'),
            ([], 2, 'usage', 'no candidate'),
            (['x1'], 2, 'usage', 'a candidate that is not a number'),
            (['3', '--out'], 2, 'usage', '--out without a directory')):
        p = w.sq('lava-job', *args, check=False)
        t.ok(p.returncode == code and msg in p.stderr.decode() and not p.stdout,
             '%s: exit %d, "%s", nothing printed' % (name, code, msg), p.stderr)
finally:
    w.cleanup()
sys.exit(t.done())
