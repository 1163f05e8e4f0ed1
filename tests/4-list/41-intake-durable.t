#!/usr/bin/env python3
"""41-intake-durable.t: a mail intake pass that is cut short loses nothing.

A maildir (written by Python's mailbox.Maildir, tmp/ then new/, as a
delivery agent does) holds a pass of 300 patches (60 series of three with
a cover, 120 single patches) and 700 replies: Reviewed-by, Acked-by and
Tested-by trailers, replies to replies and to covers, comments, 14 NAKs
and 6 drop requests. A control run reads it in one pass into a fresh
store. Then, each time into a fresh store:
  - `stableq intake` killed with SIGKILL at random points of its pass
    (several runs, some killed twice), then run to the end;
  - another process holding the store's write lock (sqlite3's BEGIN
    IMMEDIATE) for longer than the busy timeout while a pass runs, then
    intake again;
  - the store on a filesystem that fills up during the pass (a small tmpfs
    in a private mount namespace, unshare -m), then the space given back
    (remount) and intake again;
and the final store (each patch's state and reason, its trailers, the
latest result of each check, the queue order, every mail row) equals the
control run's. Last, a file written straight into new/ and read
half-written is read again, whole, once it changed.
"""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import mailbox

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Tap, TOP, STABLEQ, git  # noqa: E402

t = Tap()
T = tempfile.mkdtemp(prefix='stableq-41.')
SEED = int(os.environ.get('SEED', random.randrange(1 << 30)))
rnd = random.Random(SEED)
t.diag('seed %d (SEED=%d to run these kill points again)' % (SEED, SEED))

NPATCH = 300
LINES = 8 * NPATCH + 16


# ---- a stable tree: 6.1.10 with a lib.c each patch changes a line of ----
def make_tree():
    tree = os.path.join(T, 'linux')
    os.makedirs(tree)
    git(tree, 'init', '-q')
    with open(os.path.join(tree, 'lib.c'), 'w') as f:
        f.write(''.join('line %d\n' % i for i in range(1, LINES + 1)))
    with open(os.path.join(tree, 'Makefile'), 'w') as f:
        f.write('VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n')
    git(tree, 'add', '-A')
    git(tree, 'commit', '-qm', 'Linux 6.1.10')
    git(tree, 'tag', 'v6.1.10')
    git(tree, 'branch', '-q', 'linux-6.1.y')
    return tree


def diff(k):
    """Patch k changes line 8k+4 of lib.c; its hunk's context does not touch its neighbours'."""
    n = 8 * k + 4
    ctx_before = ['line %d' % i for i in range(n - 3, n)]
    ctx_after = ['line %d' % i for i in range(n + 1, n + 4)]
    body = [' ' + c for c in ctx_before] + ['-line %d' % n, '+line %d fixed' % n] + \
        [' ' + c for c in ctx_after]
    return ('diff --git a/lib.c b/lib.c\nindex 1111111..2222222 100644\n--- a/lib.c\n+++ b/lib.c\n'
            '@@ -%d,7 +%d,7 @@\n' % (n - 3, n - 3)) + '\n'.join(body) + '\n'


def patch_mail(k, msgid, prefix, irt=None):
    hdr = ['From: Dev %d <dev%d@example.org>' % (k % 17, k % 17),
           'To: stable@vger.kernel.org',
           'Date: Mon, 1 Sep 2025 10:%02d:%02d +0000' % (k // 60 % 60, k % 60),
           'Subject: [%s] lib: fix line %d' % (prefix, 8 * k + 4),
           'Message-Id: <%s>' % msgid]
    if irt:
        hdr += ['In-Reply-To: <%s>' % irt, 'References: <%s>' % irt]
    return '\n'.join(hdr) + '\n\ncommit %040x upstream.\n\nFix line %d.\n\n' \
        'Cc: <stable@vger.kernel.org>\nSigned-off-by: Dev %d <dev%d@example.org>\n---\n%s' % (
            0xabc000 + k, 8 * k + 4, k % 17, k % 17, diff(k))


def cover_mail(s, msgid):
    return ('From: Dev %d <dev%d@example.org>\nTo: stable@vger.kernel.org\n'
            'Date: Mon, 1 Sep 2025 09:00:00 +0000\nSubject: [PATCH 6.1 0/3] lib fixes %d\n'
            'Message-Id: <%s>\n\nThree fixes for lib.c.\n' % (3 * s % 17, 3 * s % 17, s, msgid))


def reply_mail(i, msgid, irt, body):
    return ('From: Reviewer %d <rev%d@example.org>\nTo: stable@vger.kernel.org\n'
            'Date: Mon, 1 Sep 2025 11:%02d:%02d +0000\nSubject: Re: lib\n'
            'Message-Id: <%s>\nIn-Reply-To: <%s>\nReferences: <%s>\n\n'
            '> quoted text; a NAK quoted here does not count\n\n%s\n' % (
                i, i, i // 60 % 60, i % 60, msgid, irt, irt, body))


def make_mails():
    """The 1,000 messages, as (name, text); replies only point at messages of the pass."""
    mails = []
    patch_ids = []   # message-ids of the patches
    covers = []
    k = 0
    for s in range(60):
        c = 'cover%d@example.org' % s
        covers.append(c)
        mails.append(cover_mail(s, c))
        for part in (1, 2, 3):
            m = 'p%d@example.org' % k
            # the series' patches come from its cover's author
            text = patch_mail(k, m, 'PATCH 6.1 %d/3' % part, c)
            text = text.replace('Dev %d <dev%d@' % (k % 17, k % 17), 'Dev %d <dev%d@' % (3 * s % 17, 3 * s % 17), 1)
            mails.append(text)
            patch_ids.append(m)
            k += 1
    while k < NPATCH:
        m = 'p%d@example.org' % k
        mails.append(patch_mail(k, m, 'PATCH 6.1'))
        patch_ids.append(m)
        k += 1
    replies = []
    naks = rnd.sample(range(NPATCH), 14)
    drops = rnd.sample([i for i in range(NPATCH) if i not in naks], 6)
    for i, p in enumerate(naks):
        replies.append((patch_ids[p], 'This breaks the frobnicator (%d).\n\nNAK' % i))
    for i, p in enumerate(drops):
        replies.append((patch_ids[p], 'Please drop this one, it needs a prerequisite (%d).' % i))
    n = len(replies)
    while n < 700:
        r = n % 10
        if r < 3:
            target = patch_ids[rnd.randrange(NPATCH)]
            body = 'Looks right.\n\nReviewed-by: Reviewer %d <rev%d@example.org>' % (n, n)
        elif r < 5:
            target = patch_ids[rnd.randrange(NPATCH)]
            body = 'Acked-by: Reviewer %d <rev%d@example.org>' % (n, n)
        elif r == 5:
            target = covers[rnd.randrange(len(covers))]
            body = 'Boots here.\n\nTested-by: Reviewer %d <rev%d@example.org>' % (n, n)
        elif r == 6 and n > 30:
            # a reply to an earlier reply: it leads up to that one's patch
            target = 'r%d@example.org' % rnd.randrange(20, n)
            body = 'Agreed with the above.\n\nReviewed-by: Reviewer %d <rev%d@example.org>' % (n, n)
        else:
            target = patch_ids[rnd.randrange(NPATCH)]
            body = 'A comment on this, number %d.' % n
        replies.append((target, body))
        n += 1
    for i, (target, body) in enumerate(replies):
        mails.append(reply_mail(i, 'r%d@example.org' % i, target, body))
    return mails


def write_maildir(path, mails):
    md = mailbox.Maildir(path, create=True)
    for m in mails:
        md.add(m.encode())


tree = make_tree()
mails = make_mails()
maildir = os.path.join(T, 'Maildir')
write_maildir(maildir, mails)


def conf(name, db):
    d = os.path.join(T, name)
    os.makedirs(d, exist_ok=True)
    c = os.path.join(d, 'stableq.conf')
    with open(c, 'w') as f:
        f.write('\n'.join([
            'db = %s' % db,
            'var_dir = %s/var' % d,
            'tree_dir = %s' % tree,
            'build_dir = %s/build' % d,
            'queue_dir = %s/queue' % d,
            'queue_seed =',
            'debian_changelog =',
            'kernel_config_dir = %s/config/kernel/6.1/quick' % TOP,
            'intake_maildir = %s' % maildir,
            'listen = 127.0.0.1:0', '']))
    return c


def intake(c, **kw):
    return subprocess.run([STABLEQ, '-c', c, 'intake'], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=600, **kw)


def store(db):
    """What a pass leaves, by Message-Id (no row ids, no times)."""
    s = sqlite3.connect(db)
    q = lambda sql: s.execute(sql).fetchall()  # noqa: E731
    out = {
        'patches': q("SELECT message_id, state, coalesce(state_reason, '') FROM patches ORDER BY message_id"),
        'order': q("SELECT message_id FROM patches ORDER BY queue_pos, id"),
        'tags': q("SELECT p.message_id, t.kind, t.value, coalesce(t.extra, '') FROM patch_tags t"
                  " JOIN patches p ON p.id = t.patch_id ORDER BY 1, 2, 3, 4"),
        'checks': q("SELECT p.message_id, v.check_name, v.result FROM verdicts v JOIN patches p ON"
                    " p.id = v.patch_id WHERE v.id = (SELECT max(id) FROM verdicts w WHERE"
                    " w.patch_id = v.patch_id AND w.check_name = v.check_name) ORDER BY 1, 2"),
        'mail': q("SELECT m.message_id, m.kind, coalesce(p.message_id, ''), coalesce(m.action, ''),"
                  " coalesce(m.error, '') FROM mail_messages m LEFT JOIN patches p ON"
                  " p.id = m.patch_id ORDER BY m.message_id"),
    }
    s.close()
    return out


def differs(a, b):
    """A few lines saying where two stores differ."""
    lines = []
    for k in a:
        x, y = set(a[k]), set(b[k])
        if k == 'order' and a[k] != b[k] and x == y:
            lines.append('%s: the same rows in another order' % k)
        for r in sorted(x - y)[:4]:
            lines.append('%s: control has %r' % (k, r))
        for r in sorted(y - x)[:4]:
            lines.append('%s: this run has %r' % (k, r))
        if len(x ^ y) > 8:
            lines.append('%s: %d rows differ in all' % (k, len(x ^ y)))
    return '\n'.join(lines)


try:
    # ---- the control run: one pass, uninterrupted ----
    cdb = os.path.join(T, 'control', 'stableq.db')
    cc = conf('control', cdb)
    t0 = time.time()
    p = intake(cc)
    span = time.time() - t0
    out = p.stdout.decode(errors='replace')
    t.ok(p.returncode == 0, 'control: stableq intake of the pass (%.1f s)' % span, out)
    t.like(out, 'intake: 1060 messages read (0 seen before): 300 patches in 180 series',
           '... 1,060 messages (60 covers): 300 patches in 180 series')
    control = store(cdb)
    t.is_(len(control['patches']), 300, '... 300 patches stored')
    nheld = sum(1 for r in control['patches'] if r[1] == 'held')
    t.is_(nheld, 20, '... 20 held: 14 NAKs and 6 drop requests')
    t.is_(len([r for r in control['mail'] if r[1] == 'reply']), 700, '... 700 replies recorded')
    t.ok(len(control['tags']) > 0 and len(control['checks']) > 0, '... with trailers and checks')

    # ---- kill -9 at random points of a pass, then intake again ----
    for run in range(6):
        name = 'kill%d' % run
        db = os.path.join(T, name, 'stableq.db')
        c = conf(name, db)
        points = []
        for _ in range(1 + (run % 2)):   # odd runs are killed twice
            at = rnd.uniform(0.05, 0.95) * span
            points.append('%.2f s' % at)
            proc = subprocess.Popen([STABLEQ, '-c', c, 'intake'], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(at)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        p = intake(c)
        got = store(db)
        t.ok(p.returncode == 0 and got == control,
             'kill -9 at %s of the pass, then intake: the store equals the control run\'s' % ', '.join(points),
             p.stdout.decode(errors='replace')[-2000:], differs(control, got))

    # ---- another process holds the write lock for longer than the busy timeout ----
    # Once the pass has stored its replies' rows, it is stopped (SIGSTOP)
    # between two of its transactions, another process takes the write
    # lock (BEGIN IMMEDIATE) and the pass goes on (SIGCONT) while the lock
    # is held 13 s, longer than its busy timeout of 10 s.
    db = os.path.join(T, 'lock', 'stableq.db')
    c = conf('lock', db)
    proc = subprocess.Popen([STABLEQ, '-c', c, 'intake'], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    holder = None
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not holder:
        try:
            s = sqlite3.connect('file:%s?mode=ro' % db, uri=True, timeout=0.1)
            n = s.execute("SELECT count(*) FROM mail_messages WHERE kind = 'reply'").fetchone()[0]
            s.close()
        except sqlite3.Error:
            n = 0
        if not n:
            time.sleep(0.005)
            continue
        proc.send_signal(signal.SIGSTOP)
        lock = sqlite3.connect(db, timeout=0.05, isolation_level=None)
        try:
            lock.execute('BEGIN IMMEDIATE')
            holder = lock
        except sqlite3.OperationalError:
            lock.close()   # stopped inside a transaction: try again a little later
        proc.send_signal(signal.SIGCONT)
        if not holder:
            time.sleep(rnd.uniform(0.001, 0.02))
    if holder:
        time.sleep(13)
        holder.execute('ROLLBACK')
        holder.close()
    first = proc.communicate(timeout=300)[0].decode(errors='replace')
    t.ok(holder is not None and proc.returncode != 0 and 'locked' in first,
         'a lock held 13 s mid-pass (busy timeout 10 s): the pass stops, "database is locked"', first[-1500:])
    p = intake(c)
    got = store(db)
    t.ok(p.returncode == 0 and got == control, '... then intake: the store equals the control run\'s',
         p.stdout.decode(errors='replace')[-2000:], differs(control, got))

    # ---- a disk that fills up during the pass, then has room again ----
    size = os.path.getsize(cdb) + (os.path.getsize(cdb + '-wal') if os.path.exists(cdb + '-wal') else 0)
    for frac in (60, 85, 97):
        full = os.path.join(T, 'full%d' % frac)
        os.makedirs(full)
        os.makedirs(full + '.copy')
        db = os.path.join(full, 'stableq.db')
        c = conf('fullconf%d' % frac, db)
        kib = max(256, size * frac // 100 // 1024)
        script = '''
set -u
mount -t tmpfs -o size=%dk tmpfs "$1" || exit 99
"$2" -c "$3" intake > "$1.first" 2>&1; echo "first: $?" >> "$1.first"
mount -o remount,size=262144k "$1" || exit 98
"$2" -c "$3" intake > "$1.second" 2>&1; echo "second: $?" >> "$1.second"
cp "$1"/stableq.db* "$1.copy/"
''' % kib
        p = subprocess.run(['unshare', '-m', 'sh', '-c', script, 'sh', full, STABLEQ, c],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
        first = open(full + '.first').read() if os.path.exists(full + '.first') else ''
        second = open(full + '.second').read() if os.path.exists(full + '.second') else ''
        t.ok(p.returncode == 0 and 'first: 1' in first and 'full' in first,
             'a tmpfs of %d KiB (%d%% of the store; unshare -m) fills up during the pass: it stops,'
             ' "disk is full"' % (kib, frac), p.stdout.decode(errors='replace'), first[-1500:])
        got = store(os.path.join(full + '.copy', 'stableq.db'))
        t.ok('second: 0' in second and got == control,
             '... then, with room again (remount), intake: the store equals the control run\'s',
             second[-2000:], differs(control, got))

    # ---- a file written straight into new/, read half-written ----
    db = os.path.join(T, 'half', 'stableq.db')
    c = conf('half', db)
    intake(c)
    text = patch_mail(NPATCH + 1, 'half@example.org', 'PATCH 6.1')
    path = os.path.join(maildir, 'new', '2000000000.half.host')
    cut = text.index('@@ -')
    with open(path, 'w') as f:
        f.write(text[:cut + 20])
    p = intake(c)
    s = sqlite3.connect(db)
    n = s.execute("SELECT count(*) FROM patches WHERE message_id = 'half@example.org'").fetchone()[0]
    s.close()
    t.is_(n, 0, 'a patch file read half-written in new/: nothing of it stored')
    time.sleep(0.05)
    with open(path, 'w') as f:
        f.write(text)
    p = intake(c)
    s = sqlite3.connect(db)
    row = s.execute("SELECT m.kind, p.subject FROM mail_messages m LEFT JOIN patches p ON"
                    " p.id = m.patch_id WHERE m.message_id = 'half@example.org'").fetchall()
    s.close()
    t.is_(row, [('patch', 'lib: fix line %d' % (8 * (NPATCH + 1) + 4))],
          '... written whole, it is read again and imported (not invalid for good)')
    os.unlink(path)
finally:
    shutil.rmtree(T, ignore_errors=True)
sys.exit(t.done())
