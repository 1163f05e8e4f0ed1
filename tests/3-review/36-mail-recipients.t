#!/usr/bin/env python3
"""36-mail-recipients.t: one mail's recipients are capped, and the bulk guard counts them.

Issue 23, item 1: a flagged patch with 300 Signed-off-by lines made one
mail with 301 recipients, queued and not held. Now one mail goes to
mail_max_recipients people at most (the author first, then the
Signed-off-by chain in order) and is held with the reason; a step that
mails few authors but many addresses in all is held by the bulk guard.
Delivery goes to a real SMTP server on loopback (tests/lib/smtpd.py).
"""
import json
import os
import sqlite3
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import Relay, Tap, World  # noqa: E402

t = Tap()
relay = Relay('stableq-rcpt-inbox.')
w = World(extra_conf='mail_bulk_limit = 2\nsmtp_url = smtp://127.0.0.1:%d\nmail_backoff = 1' % relay.port)


def q(sql, *args):
    con = sqlite3.connect(w.db, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def mbox(*mails):
    path = tempfile.mktemp(dir=w.dir, suffix='.mbox')
    with open(path, 'w') as f:
        f.write(''.join(mails))
    return path


def patch(n, author, signers, prefix='PATCH 6.1'):
    trailers = ''.join('Signed-off-by: %s\n' % s for s in signers)
    return w.mail(n, 'lib: fix line %d' % n, 'Cc: stable@vger.kernel.org # 6.1.x\n' + trailers.rstrip('\n'),
                  w.diff('lib.c', 'line %d\n' % n, 'line number %d\n' % n), author=author, prefix=prefix)


try:
    signers = ['Relay %d <relay%d@example.net>' % (i, i) for i in range(300)]
    w.sq('import', mbox(patch(3, 'Mal <mal@example.org>', signers)))
    t.is_(q("SELECT state FROM patches WHERE id = 1"), [('queued',)], 'a patch with 300 Signed-off-by lines is queued')
    w.sq('flag', '1', '--reason', 'breaks the boot')
    rows = q("SELECT rcpt_to, hold, state FROM mail")
    t.is_(len(rows), 1, 'flagging it makes one mail')
    rcpt = json.loads(rows[0][0])
    t.is_(len(rcpt), 10, '... to 10 recipients (mail_max_recipients), not 301')
    t.is_(rcpt[0], 'mal@example.org', '... the author first')
    t.is_(rcpt[1:], ['relay%d@example.net' % i for i in range(9)], '... then the Signed-off-by chain in order')
    t.like(rows[0][1] or '', 'the patch names 301 people', '... and it is held, saying why')
    t.like(rows[0][1] or '', 'mail_max_recipients = 10', '... naming the limit')
    t.is_(rows[0][2], 'queued', '... still queued')
    t.ok(q("SELECT 1 FROM events WHERE subject_kind = 'mail' AND kind = 'held'"), '... the hold is in the event log')
    head = w.sq('mail', 'show', '1').stdout.decode().split('\r\n\r\n')[0]
    t.ok('relay9@example.net' not in head and 'relay8@example.net' in head, '... its Cc header holds the capped list only')
    w.sq('mail', 'send', check=False)
    t.is_(len(relay.envelopes()), 0, '`stableq mail send` does not deliver it')
    t.like(w.sq('mail', 'list').stdout.decode(), 'held: recipients:', '`stableq mail list` shows the hold')
    w.sq('mail', 'release', '1')
    w.sq('mail', 'send')
    env = relay.envelopes()
    t.is_(len(env), 1, 'released, it goes out once')
    t.is_(len(env[0]['rcpt_tos'] if env else []), 10, '... to 10 recipients at the SMTP server')

    # One author, a series of three, each mail within the cap (10) but 28
    # addresses in all: over mail_bulk_limit (2) x mail_max_recipients (10).
    more = []
    for k, n in enumerate((5, 7, 9)):
        more.append(patch(n, 'Sam <sam@example.org>',
                          ['Hop %d <hop%d.%d@example.net>' % (i, k, i) for i in range(9)],
                          prefix='PATCH 6.1 %d/3' % (k + 1)))
    w.sq('import', mbox(*more))
    ids = [str(i) for (i,) in q("SELECT id FROM patches WHERE author_email = 'sam@example.org' ORDER BY id")]
    t.is_(len(ids), 3, 'three patches of one author with nine signers each')
    before = q("SELECT COUNT(*) FROM mail")[0][0]
    out = w.sq('revert', ids[0], '--reason', 'breaks the boot', '--no-confirm', check=False)
    rows = q("SELECT rcpt_to, hold FROM mail WHERE id > ?", before)
    n_addr = len({a for (r, _) in rows for a in json.loads(r)})
    t.ok(len(rows) == 3 and n_addr == 28, 'dropping the first (with its series) mails one author 3 times, 28 addresses',
         (rows, out.stdout, out.stderr))
    t.ok(rows and all(h and 'would mail 28 addresses' in h for (_, h) in rows),
         '... the bulk guard holds them: too many addresses for one step', rows)
    w.sq('mail', 'send', check=False)
    t.is_(len(relay.envelopes()), 1, '... and nothing more is delivered')
finally:
    w.cleanup()
    relay.stop()
t.done()
