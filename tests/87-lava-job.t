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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
    mons = {m['name']: m for m in job['actions'][2]['test']['monitors']}
    t.is_(sorted(mons), ['kunit', 'stableq-guest'], 'the test set as monitors: KUnit, the guest tests')
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
