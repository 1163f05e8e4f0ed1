#!/usr/bin/env python3
"""35-mail-guard.t: the bulk-mail guard, with a real relay (aiosmtpd) and the real daemon.

A step that would mail more authors than mail_bulk_limit (2 here) has its
mail held: it stays queued, is not delivered, and waits for a maintainer to
release it through the CLI or the API. A step within the limit mails at once.
"""
import glob
import os
import pwd
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import TOP, Tap, World  # noqa: E402

t = Tap()
inbox = tempfile.mkdtemp(prefix='stableq-guard-inbox.')
portf = os.path.join(inbox, '..', os.path.basename(inbox) + '.port')
relay = subprocess.Popen(['/usr/bin/python3', os.path.join(TOP, 'tests', 'lib', 'smtpd.py'),
                          '--dir', inbox, '--port-file', portf],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    if os.path.exists(portf) and open(portf).read().strip():
        break
    time.sleep(0.1)
port = int(open(portf).read().strip())
w = World(extra_conf='mail_bulk_limit = 2\nsmtp_url = smtp://127.0.0.1:%d\nmail_backoff = 1' % port)
UP = 'c3' * 20


def q(sql, *args):
    con = sqlite3.connect(w.db, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def delivered():
    return len(glob.glob(os.path.join(inbox, '*.eml')))


def mbox(*mails):
    path = tempfile.mktemp(dir=w.dir, suffix='.mbox')
    with open(path, 'w') as f:
        f.write(''.join(mails))
    return path


def fixup(n, who):
    return w.mail(n, 'lib: follow up on line 3, part %d' % n, 'Fixes: %s ("lib: fix line 3")' % UP[:12],
                  w.diff('lib.c', 'line %d\n' % n, 'line number %d\n' % n), author=who)


try:
    w.sq('import', mbox(w.mail(3, 'lib: fix line 3', 'Cc: stable@vger.kernel.org # 6.1.x',
                               w.diff('lib.c', 'line 3\n', 'line three\n'),
                               body='commit %s upstream.\n\nLine 3 was wrong.' % UP)))
    t.is_(q("SELECT state FROM patches WHERE id = 1"), [('queued',)], 'a patch is queued')
    w.sq('flag', '1', '--reason', 'breaks the boot')
    t.is_(q("SELECT COUNT(*) FROM mail WHERE hold IS NULL"), [(1,)], 'a flag mails one author: within the limit')

    out = w.sq('import', mbox(fixup(5, 'Ada <ada@example.org>'), fixup(7, 'Bob <bob@example.org>'),
                              fixup(9, 'Cy <cy@example.org>'))).stdout.decode()
    t.like(out, '3 held', 'three fix-ups of the broken patch are held back')
    t.is_(q("SELECT COUNT(*) FROM mail WHERE hold IS NOT NULL AND state = 'queued'"), [(3,)],
          '... their three mails (three authors, over the limit of 2) are held, still queued')
    t.like(q("SELECT hold FROM mail WHERE hold IS NOT NULL LIMIT 1")[0][0],
           'bulk: import would mail 3 people (mail_bulk_limit = 2)', '... the hold says why')
    t.ok(q("SELECT 1 FROM events WHERE subject_kind = 'mail' AND kind = 'held'"), '... and it is in the event log')
    out = w.sq('mail', 'list').stdout.decode()
    t.like(out, 'held: bulk: import would mail 3 people', '`stableq mail list` shows the held mail and why')

    r = w.sq('mail', 'send', check=False)
    t.is_(delivered(), 1, '`stableq mail send` delivers the flag mail only')
    t.like(r.stdout.decode(), '3 held by the bulk-mail guard', '... and says what waits')
    t.is_(r.returncode, 0, '... held mail is not mail that failed: exit 0')

    w.sq('import', mbox(fixup(11, 'Dee <dee@example.org>')))
    t.is_(q("SELECT COUNT(*) FROM mail WHERE hold IS NULL AND state = 'queued'"), [(1,)],
          'a step that mails one author is not held')

    before = q("SELECT id, hold FROM mail ORDER BY id")
    r = w.sq('mail', 'release', '999', check=False)
    t.is_(r.returncode, 1, '`stableq mail release 999`: no such held mail, exit 1')
    t.like(r.stderr.decode(), 'mail 999', '... naming it')
    r = w.sq('mail', 'release', '2', '999', check=False)
    t.is_(q("SELECT id, hold FROM mail ORDER BY id"), before, '... and one bad id changes nothing')
    t.is_(w.sq('mail', 'release', check=False).returncode, 2, '`stableq mail release` without ids: usage')

    held = [i for (i,) in q("SELECT id FROM mail WHERE hold IS NOT NULL ORDER BY id")]
    out = w.sq('mail', 'release', str(held[0])).stdout.decode()
    t.like(out, '1 released', '`stableq mail release ID` releases one')
    w.sq('mail', 'send', check=False)
    t.is_(delivered(), 3, '... it goes out with the next delivery (and the one within the limit)')
    t.ok(q("SELECT 1 FROM events WHERE subject_kind = 'mail' AND subject_id = ? AND kind = 'released'"
           " AND actor = ?", held[0], 'user:' + pwd.getpwuid(os.getuid()).pw_name),
         '... the release is in the event log, by the local user')

    # ---- the API and the daemon ----
    tok = w.token('maint')
    w.start()
    s, h, raw, j = w.get('/mail')
    t.ok(s == 200 and sum(1 for m in j['mail'] if m.get('hold')) == 2, 'GET /mail shows the two held mails', j)
    s, h, raw, j = w.post('/mail/%d/release' % held[1], {})
    t.is_(s, 401, 'POST /mail/{id}/release without a token -> 401')
    t.is_(q("SELECT COUNT(*) FROM mail WHERE hold IS NOT NULL"), [(2,)], '... nothing released')
    s, h, raw, j = w.post('/mail/999/release', {}, token=tok)
    t.is_(s, 404, 'POST /mail/999/release -> 404')
    s, h, raw, j = w.post('/mail/%d/release' % held[1], {}, token=tok)
    t.ok(s == 200 and j == {'released': 1, 'held': 1}, 'POST /mail/{id}/release -> 200, one released, one held', (s, j))
    s, h, raw, j = w.post('/mail/release', {}, token=tok)
    t.ok(s == 200 and j == {'released': 1, 'held': 0}, 'POST /mail/release releases the rest', (s, j))
    t.ok(w.wait('delivery', lambda: delivered() == 5, 30), 'the daemon delivers the released mail', delivered())
    t.ok(q("SELECT 1 FROM events WHERE kind = 'released' AND actor = 'token:maint'"),
         '... the release is recorded with its token')

    # an import through the API checks the patches in the same write (as
    # `stableq import` does), and that write is guarded too
    s, h, raw, j = w.post('/patches', ''.join([fixup(13, 'Eve <eve@example.org>'), fixup(15, 'Fay <fay@example.org>'),
                                               fixup(17, 'Gus <gus@example.org>')]),
                          headers={'Content-Type': 'application/mbox'}, token=tok)
    t.is_(s, 201, 'three more fix-ups posted through the API')
    t.is_(q("SELECT COUNT(*) FROM patches WHERE id IN (%s) AND state = 'held'" % ','.join(map(str, j['ids']))),
          [(3,)], '... checked before the answer: held as fix-ups of a broken patch')
    t.ok(w.idle(), 'the daemon is idle', w.daemon_log())
    t.like((q("SELECT hold FROM mail WHERE hold IS NOT NULL LIMIT 1") or [('',)])[0][0],
           'bulk: /patches would mail 3 people', "the import's write held their mail")
    time.sleep(2)
    t.is_(delivered(), 5, '... and did not deliver it')
    out = w.sq('mail', 'release', '--all').stdout.decode()
    t.like(out, '3 released', '`stableq mail release --all` releases them all (the README\'s command)')
    t.ok(w.wait('delivery', lambda: delivered() == 8, 30), '... and the daemon delivers them', delivered())
finally:
    w.cleanup()
    relay.terminate()
    relay.wait()
    for f in glob.glob(os.path.join(inbox, '*')):
        os.unlink(f)
    os.rmdir(inbox)
    if os.path.exists(portf):
        os.unlink(portf)
t.done()
