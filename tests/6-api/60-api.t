#!/usr/bin/env python3
"""60-api.t: the REST API of the real daemon: every route, every bad input, slow clients.

Starts `stableq serve -d` on a free loopback port with a temp database and a
small stable tree made here, imports real mail-format patches through
POST /patches, and drives every route of /api/v1. Each bad request must
answer its status with { "error", "message" } and change nothing in the
store (every table counted before and after).
"""
import gzip
import json
import os
import socket
import sqlite3
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import TOP, Tap, World, git  # noqa: E402

t = Tap()
w = World()
UPSTREAM_A = 'a1' * 20  # the upstream commit patch A is a backport of


def snapshot():
    """Every table's row count, every patch's state, the last event."""
    con = sqlite3.connect('file:%s?mode=ro' % w.db, uri=True, timeout=10)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        snap = {tb: con.execute('SELECT COUNT(*) FROM "%s"' % tb).fetchone()[0] for tb in tables}
        snap['~states'] = con.execute(
            "SELECT group_concat(id || ':' || state, ' ') FROM (SELECT id, state FROM patches ORDER BY id)").fetchone()[0]
        snap['~last_event'] = con.execute('SELECT MAX(id) FROM events').fetchone()[0]
        snap['~tokens'] = con.execute("SELECT group_concat(hash) FROM tokens").fetchone()[0]
        return snap
    finally:
        con.close()


def quiet(timeout=120):
    """Waits until the daemon has nothing to do and the store stays still for a second."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not w.idle(timeout=max(1, deadline - time.time())):
            return False
        before = snapshot()
        time.sleep(1.0)
        if snapshot() == before and w.get('/health')[3]['step'] == 'idle':
            return True
    return False


def q(sql, *args):
    con = sqlite3.connect('file:%s?mode=ro' % w.db, uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def is_error(status, j, want, name):
    """The status and the error shape of a bad request."""
    good = (status == want and isinstance(j, dict) and set(j) == {'error', 'message'}
            and isinstance(j['error'], str) and isinstance(j['message'], str) and j['message'])
    return t.ok(good, name, 'got: %r %r' % (status, j), 'expected: %d with {error, message}' % want)


def bad(name, want, fn, like=None):
    """A bad request: its status, its JSON error, and no change to the store."""
    before = snapshot()
    s, h, raw, j = fn()
    is_error(s, j, want, '%s -> %d' % (name, want))
    if like is not None:
        t.like(j and j.get('message'), like, '... message says %r' % like)
    after = snapshot()
    changed = {k: (before[k], after.get(k)) for k in before if before[k] != after.get(k)}
    t.ok(not changed, '... and nothing changed', 'changed: %r' % changed)
    return s, h, j


def raw_exchange(data, read_timeout=5, send_more=None, port=None):
    """Sends bytes on a fresh connection; returns the status line's code and the answer."""
    s = socket.create_connection(('127.0.0.1', port or w.port), timeout=read_timeout)
    try:
        s.sendall(data)
        if send_more:
            for chunk in send_more:
                try:
                    s.sendall(chunk)
                except OSError:
                    break
        buf = b''
        deadline = time.time() + read_timeout
        while time.time() < deadline:
            try:
                d = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                break
            if not d:
                break
            buf += d
            if b'\r\n\r\n' in buf:
                head, _, body = buf.partition(b'\r\n\r\n')
                n = [int(l.split(b':')[1]) for l in head.split(b'\r\n') if l.lower().startswith(b'content-length:')]
                if n and len(body) >= n[0]:
                    break
        code = int(buf.split(b' ')[1]) if buf.startswith(b'HTTP/') else None
        return code, buf
    finally:
        s.close()


def raw_answer(code, buf):
    """raw_exchange()'s answer as request() gives it: (status, {}, body, JSON or None)."""
    body = buf.partition(b'\r\n\r\n')[2]
    try:
        j = json.loads(body)
    except ValueError:
        j = None
    return code, {}, body, j


try:
    # ---- a released patch, made with the CLI before the daemon runs -------------
    tok = w.token('alice')
    t.ok(len(tok) == 64 and all(c in '0123456789abcdef' for c in tok),
         'stableq token add prints a 32-byte hex token')
    stored = q("SELECT name, hash FROM tokens")
    t.ok(stored and stored[0][0] == 'alice' and stored[0][1] != tok and len(stored[0][1]) == 64,
         'the token is stored hashed, not in clear')
    p = w.sq('token', 'add', 'alice', check=False)
    t.ok(p.returncode != 0 and b'exists' in p.stderr, 'a second token of the same name is refused')
    listing = w.sq('token', 'list').stdout.decode()
    t.ok('alice' in listing and tok not in listing, 'stableq token list names tokens, never secrets')
    tok_bob = w.token('bob')
    # scopes (issue 23): `token add NAME --scope read|write|admin`, shown in `token list`
    p = w.sq('token', 'add', 'ci-bot', '--scope', 'read')
    t.like(p.stderr.decode(), "token 'ci-bot' (read) added", 'stableq token add NAME --scope read')
    rows = [l.split()[:2] for l in w.sq('token', 'list').stdout.decode().splitlines()]
    t.ok(['ci-bot', 'read'] in rows and ['alice', 'admin'] in rows,
         '... token list shows each scope (without --scope: admin)', rows)
    p = w.sq('token', 'add', 'root-bot', '--scope', 'root', check=False)
    t.ok(p.returncode == 2 and b'read, write or admin' in p.stderr, '... an unknown scope is refused, naming the known ones')
    t.is_(q("SELECT COUNT(*) FROM tokens WHERE name = 'root-bot'"), [(0,)], '... and nothing is stored')

    os.makedirs(os.path.join(w.dir, 'cli'), exist_ok=True)
    r_mail = w.mail(30, 'lib: fix line 30', 'Fixes: %s ("lib: spell two")' % w.s1[:12],
                    w.diff('lib.c', 'line 30\n', 'line thirty\n'))
    with open(os.path.join(w.dir, 'cli', 'r.patch'), 'w') as f:
        f.write(r_mail)
    w.sq('import', os.path.join(w.dir, 'cli', 'r.patch'))
    w.sq('release', '--force')
    t.is_(q("SELECT state FROM patches WHERE id = 1"), [('released',)],
          'setup: patch 1 is released on the branch (CLI)')
    R = 1

    w.start()
    t.ok(w.alive(), 'stableq serve -d runs on 127.0.0.1:%d' % w.port)
    t.ok(w.idle(), 'the daemon settles (idle, nothing pending)', w.daemon_log())

    # ---- reads on a fresh store -----------------------------------------------
    s, h, raw, j = w.get('/health')
    t.is_(s, 200, 'GET /health -> 200')
    t.ok(j and j['ok'] is True and j['db'] == 'ok' and j['step'] == 'idle'
         and j['queue']['released'] == 1 and set(j['queue']) >= {'queued', 'held', 'broken'},
         '... ok, db, step and the queue by state', j)
    t.like(h.get('content-type'), 'application/json', '... as application/json')

    s, h, raw, j = w.request('HEAD', '/api/v1/health')
    t.ok(s == 200 and raw == b'', 'HEAD /health -> 200 without a body')

    # ---- import through the API -----------------------------------------------
    a_mail = w.mail(7, 'lib: fix line 7', 'Fixes: 0123456789ab ("something nobody knows")',
                    w.diff('lib.c', 'line 7\n', 'line 7\nline seven\n'),
                    body='commit %s upstream.\n\nLine 7 was wrong.' % UPSTREAM_A)
    b_mail = w.mail(20, 'lib: fix line 20', '', w.diff('lib.c', 'line 20\n', 'line twenty\n'))
    mbox = a_mail + b_mail
    s, h, raw, j = w.post('/patches', mbox, headers={'Content-Type': 'application/mbox'}, token=tok)
    t.is_(s, 201, 'POST /patches (an mbox of two) -> 201')
    t.ok(j and j['added'] == 2 and j['duplicates'] == 0 and len(j['ids']) == 2, '... added 2', j)
    A, B = (j or {'ids': [0, 0]})['ids']
    t.is_(q("SELECT actor FROM sources ORDER BY id DESC LIMIT 1"), [('token:alice',)],
          '... the source is recorded with actor token:alice')
    t.ok(q("SELECT 1 FROM events WHERE kind = 'imported' AND actor = 'token:alice'"),
         '... and so is the import event')
    # checked in the POST (intake_submit()), as the token that sent them:
    # the same events as through the CLI or the daemon, the check's own too
    for p in (A, B):
        t.is_(q("SELECT kind, actor FROM events WHERE subject_kind = 'patch' AND subject_id = ? ORDER BY id", p),
              [('imported', 'token:alice'), ('checked', 'token:alice'), ('state', 'token:alice')],
              '... patch %d: imported, checked and state events, by token:alice' % p)

    s, h, raw, j = w.post('/patches', mbox, headers={'Content-Type': 'text/plain; charset=utf-8'}, token=tok)
    t.ok(s == 200 and j['added'] == 0 and j['duplicates'] == 2 and j['ids'] == [A, B],
         'the same mbox again -> 200, 2 duplicates, nothing added', (s, j))

    settled = w.wait('checks', lambda: all(st != 'imported' for (st,) in
                                           q("SELECT state FROM patches WHERE id IN (?, ?)", A, B)), 60)
    t.ok(settled, 'the daemon checks the imported patches', w.daemon_log())
    t.ok(w.idle(), 'the daemon is idle again')

    s, h, raw, j = w.get('/patches')
    t.is_(s, 200, 'GET /patches -> 200')
    t.ok(j and j['total'] == 3 and j['limit'] == 50 and j['offset'] == 0
         and [p['id'] for p in j['patches']] == [R, A, B], '... {total, limit, offset, patches} in queue order', j)
    pa = [p for p in j['patches'] if p['id'] == A][0]
    t.ok(pa['state'] == 'checked' and pa['checks']['fixes'] == 'unknown'
         and pa['state_reason'], '... patch A waits for a human: fixes unknown, with a reason', pa)
    with open(os.path.join(TOP, 'web', 'openapi.json')) as f:
        summary = json.load(f)['components']['schemas']['PatchSummary']
    t.ok(all(sorted(p) == sorted(summary['required']) for p in j['patches']),
         '... each patch is a summary with the fields of PatchSummary in web/openapi.json', pa)
    plain = raw
    s, h, raw, j = w.get('/patches?view=full', headers={'Accept-Encoding': 'gzip, deflate'})
    t.ok(s == 200 and h.get('content-encoding') == 'gzip' and h.get('vary') == 'Accept-Encoding'
         and len(raw) < len(gzip.decompress(raw)),
         'Accept-Encoding: gzip: the answer is gzipped, with Vary: Accept-Encoding', h)
    full = gzip.decompress(raw) if h.get('content-encoding') == 'gzip' else raw
    s, h, raw, j = w.get('/patches', headers={'Accept-Encoding': 'gzip;q=0, identity'})
    t.ok(s == 200 and 'content-encoding' not in h and raw == plain,
         '... gzip;q=0: the same answer as it is', h)
    s, h, raw, j = w.get('/patches?view=full')
    t.ok(raw == full, '... and the gzipped bytes are the plain answer\'s')
    etag = h.get('etag', '')
    s2, h2, raw2, j2 = w.get('/patches?view=full', headers={'If-None-Match': etag})
    t.ok(etag and s2 == 304 and not raw2 and h2.get('etag') == etag,
         'If-None-Match with the answer\'s ETag -> 304, no body (the dashboard\'s polls)', (etag, s2, h2))
    pa = [p for p in (j or {}).get('patches', []) if p['id'] == A]
    pa = pa[0] if pa else {}
    t.ok(s == 200 and pa.get('verdicts', {}).get('fixes', {}).get('result') == 'unknown'
         and pa['verdicts']['fixes']['detail'] and pa.get('checks', {}).get('fixes') == 'unknown'
         and 'files' in pa, 'GET /patches?view=full: each verdict with its reason, the files', pa)
    t.ok('diff' not in pa and 'message' not in pa, '... the list leaves out messages and diffs')

    s, h, raw, j = w.get('/patches?state=released&limit=1&offset=0')
    t.ok(s == 200 and j['total'] == 1 and [p['id'] for p in j['patches']] == [R],
         'GET /patches?state=released&limit=1 filters', j)
    s, h, raw, j = w.get('/patches?limit=1&offset=1')
    t.ok(s == 200 and j['total'] == 3 and [p['id'] for p in j['patches']] == [A],
         'GET /patches?limit=1&offset=1 pages', j)

    s, h, raw, j = w.get('/patches/%d' % A)
    t.is_(s, 200, 'GET /patches/{id} -> 200')
    t.ok(j and j['subject'] == 'lib: fix line 7' and j['upstream'] == UPSTREAM_A
         and 'fixes' in j['verdicts'] and 'applies' in j['verdicts']
         and j['checks'] == {k: v['result'] for k, v in j['verdicts'].items()}
         and isinstance(j['tags'], list) and isinstance(j['events'], list)
         and isinstance(j['candidates'], list) and isinstance(j['reverts'], list)
         and 'diff' in j and 'line seven' in j['diff'], '... in full: tags, verdicts, events, candidates, reverts, diff', j)

    # ---- bad input: each changes nothing ---------------------------------------
    t.ok(quiet(), 'the daemon is idle before the bad requests')
    good_patch = w.mail(21, 'lib: fix line 21', '', w.diff('lib.c', 'line 21\n', 'line twenty-one\n'))
    ct_mbox = {'Content-Type': 'application/mbox'}

    s, h, j = bad('POST /patches without a token', 401,
                  lambda: w.post('/patches', good_patch, headers=ct_mbox), 'Bearer')
    t.like(h.get('www-authenticate'), 'Bearer', '... with WWW-Authenticate: Bearer')
    bad('POST /patches with a wrong token', 403,
        lambda: w.post('/patches', good_patch, headers=ct_mbox, token='0' * 64))
    bad('POST /patches with a token of another length', 403,
        lambda: w.post('/patches', good_patch, headers=ct_mbox, token=tok[:-1]))
    bad('POST /patches with Basic credentials', 401,
        lambda: w.post('/patches', good_patch, headers=dict(ct_mbox, Authorization='Basic YTpi')))
    bad('POST /patches with an empty Bearer', 401,
        lambda: w.post('/patches', good_patch, headers=dict(ct_mbox, Authorization='Bearer ')))
    bad('POST /patches: not a patch', 422,
        lambda: w.post('/patches', 'hello, this is no patch\n', headers=ct_mbox, token=tok))
    nodiff = w.mail(22, 'lib: no diff', '', '').replace('---\n-- \n', '---\n')
    bad('POST /patches: a mail without a diff', 422,
        lambda: w.post('/patches', nodiff, headers=ct_mbox, token=tok))
    bad('POST /patches: NUL bytes', 422,
        lambda: w.post('/patches', good_patch.replace('line twenty-one', 'line\0twenty-one'),
                       headers=ct_mbox, token=tok))
    trunc = good_patch[:good_patch.index('+line twenty-one')]
    bad('POST /patches: a truncated hunk', 422,
        lambda: w.post('/patches', trunc, headers=ct_mbox, token=tok))
    bad('POST /patches: an empty body', 400,
        lambda: w.post('/patches', b'', headers=ct_mbox, token=tok))
    bad('POST /patches as application/json', 415,
        lambda: w.post('/patches', good_patch, headers={'Content-Type': 'application/json'}, token=tok))
    bad('POST /patches without a Content-Type', 415,
        lambda: w.post('/patches', good_patch, token=tok))
    big = good_patch + 'x' * 70000
    bad('POST /patches over max_patch_bytes (Content-Length)', 413,
        lambda: w.post('/patches', big, headers=ct_mbox, token=tok))

    def chunked_big():
        head = ('POST /api/v1/patches HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n'
                'Content-Type: application/mbox\r\nTransfer-Encoding: chunked\r\n\r\n' % tok).encode()
        chunk = b'%x\r\n%s\r\n' % (8192, b'y' * 8192)
        return raw_answer(*raw_exchange(head, 10, [chunk] * 10 + [b'0\r\n\r\n']))
    bad('POST /patches chunked, over max_patch_bytes', 413, chunked_big)

    def early_413():
        # The limit is refused from the headers: the body is never sent.
        head = ('POST /api/v1/patches HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n'
                'Content-Type: application/mbox\r\nContent-Length: 99999999\r\n\r\n' % tok).encode()
        t0 = time.time()
        code, buf = raw_exchange(head, 5)
        body = buf.partition(b'\r\n\r\n')[2]
        return code, {'t': time.time() - t0}, body, json.loads(body) if body else None
    s, h, j = bad('POST /patches announcing 99 MB', 413, early_413)
    t.ok(h['t'] < 2, '... answered from the headers, before any body (%.2f s)' % h['t'])

    flag = '/patches/%d/flag' % A
    bad('flag: malformed JSON', 400,
        lambda: w.post(flag, '{"reason": ', headers={'Content-Type': 'application/json'}, token=tok),
        'malformed JSON')
    bad('flag: a JSON array', 400, lambda: w.post(flag, ['x'], token=tok), 'object')
    bad('flag: reason of the wrong type', 400, lambda: w.post(flag, {'reason': 5}, token=tok), 'reason')
    bad('flag: an unknown field', 400,
        lambda: w.post(flag, {'reason': 'x', 'severity': 'high'}, token=tok), "unknown field 'severity'")
    bad('flag: no reason', 400, lambda: w.post(flag, {}, token=tok), "'reason' is required")
    bad('flag: an empty body', 400, lambda: w.post(flag, b'', headers={'Content-Type': 'application/json'},
                                                   token=tok), "'reason' is required")
    bad('flag: a blank reason', 400, lambda: w.post(flag, {'reason': '   '}, token=tok))
    bad('flag: a reason with NUL', 400, lambda: w.post(flag, '{"reason": "a\\u0000b"}',
                                                      headers={'Content-Type': 'application/json'}, token=tok))
    bad('flag: duplicate keys', 400,
        lambda: w.post(flag, '{"reason": "a", "reason": "b"}', headers={'Content-Type': 'application/json'},
                       token=tok))
    bad('flag: trailing garbage', 400,
        lambda: w.post(flag, '{"reason": "a"} x', headers={'Content-Type': 'application/json'}, token=tok))
    bad('flag: a form as application/x-www-form-urlencoded (read as JSON)', 400,
        lambda: w.post(flag, 'reason=x', headers={'Content-Type': 'application/x-www-form-urlencoded'},
                       token=tok), 'malformed JSON')
    bad('flag: as text/plain', 415,
        lambda: w.post(flag, '{"reason": "a"}', headers={'Content-Type': 'text/plain'}, token=tok))
    bad('flag: a JSON body over the limit', 413,
        lambda: w.post(flag, {'reason': 'x' * 70000}, token=tok))
    bad('flag: without a token', 401, lambda: w.post(flag, {'reason': 'x'}))
    bad('flag: a wrong token', 403, lambda: w.post(flag, {'reason': 'x'}, token='f' * 64))
    bad('flag: an unknown patch', 404, lambda: w.post('/patches/999999/flag', {'reason': 'x'}, token=tok),
        '999999')
    bad('flag: an id that is no number', 404, lambda: w.post('/patches/abc/flag', {'reason': 'x'}, token=tok))
    bad('flag: an id with a leading zero', 404, lambda: w.post('/patches/0%d/flag' % A, {'reason': 'x'}, token=tok))
    bad('revert: no reason without dry_run', 400,
        lambda: w.post('/patches/%d/revert' % A, {'dry_run': False}, token=tok), 'reason')
    bad('revert: dry_run of the wrong type', 400,
        lambda: w.post('/patches/%d/revert' % A, {'dry_run': 'yes'}, token=tok), 'dry_run')
    bad('revert: an unknown patch', 404,
        lambda: w.post('/patches/999999/revert', {'reason': 'x'}, token=tok))
    bad('override: an unknown patch', 404,
        lambda: w.post('/patches/999999/override', {'reason': 'x'}, token=tok))
    bad('override: a released patch', 409,
        lambda: w.post('/patches/%d/override' % R, {'reason': 'x'}, token=tok))
    bad('candidates: upto of the wrong type', 400, lambda: w.post('/candidates', {'upto': 'x'}, token=tok))
    bad('candidates: upto 0', 400, lambda: w.post('/candidates', {'upto': 0}, token=tok))
    bad('candidates: upto 1.5', 400, lambda: w.post('/candidates', {'upto': 1.5}, token=tok))
    bad('candidates: an unknown upto', 404, lambda: w.post('/candidates', {'upto': 999999}, token=tok))
    bad('candidates: upto a patch that is not queued', 409,
        lambda: w.post('/candidates', {'upto': A}, token=tok), 'not queued')
    bad('candidates: an unknown field', 400, lambda: w.post('/candidates', {'all': True}, token=tok))

    bad('an unknown route', 404, lambda: w.get('/nope'))
    bad('a trailing slash', 404, lambda: w.get('/patches/'))
    bad('outside /api/v1', 404, lambda: w.request('GET', '/api/v2/patches'))
    bad('an unknown static file', 404, lambda: w.request('GET', '/nope.html'))
    bad('a path that climbs', 404, lambda: w.request('GET', '/../../etc/passwd'))
    s, h, j = bad('DELETE /patches/{id}', 405, lambda: w.request('DELETE', '/api/v1/patches/%d' % A))
    t.is_(h.get('allow'), 'GET, HEAD', '... Allow: GET, HEAD')
    s, h, j = bad('PUT /patches', 405, lambda: w.request('PUT', '/api/v1/patches', body='x'))
    t.is_(h.get('allow'), 'GET, HEAD, POST', '... Allow: GET, HEAD, POST')
    s, h, j = bad('GET /patches/{id}/flag', 405, lambda: w.get(flag))
    t.is_(h.get('allow'), 'POST', '... Allow: POST')
    s, h, j = bad('POST to a static file', 405, lambda: w.request('POST', '/index.html', body='x'))
    t.is_(h.get('allow'), 'GET, HEAD', '... Allow: GET, HEAD')

    bad('GET /patches?state=bogus', 400, lambda: w.get('/patches?state=bogus'), 'bogus')
    def get_with_body(path, length, body=b''):
        return lambda: raw_answer(*raw_exchange(
            ('GET /api/v1%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n' % (path, length)).encode()
            + body, 5))
    bad('GET /patches with a body', 400, get_with_body('/patches', 5, b'hello'), 'takes no body')
    bad('GET /patches announcing an 8 MB body', 400, get_with_body('/patches', 8 << 20), 'takes no body')
    bad('GET /patches?limit=0', 400, lambda: w.get('/patches?limit=0'), 'limit')
    bad('GET /patches?limit=abc', 400, lambda: w.get('/patches?limit=abc'))
    bad('GET /patches?limit=99999', 400, lambda: w.get('/patches?limit=99999'))
    bad('GET /patches?offset=-1', 400, lambda: w.get('/patches?offset=-1'))
    bad('GET /patches?limit=1&limit=2', 400, lambda: w.get('/patches?limit=1&limit=2'), 'twice')
    bad('GET /patches?view=compact', 400, lambda: w.get('/patches?view=compact'), "unknown view 'compact'")
    bad('GET /patches?sort=id', 400, lambda: w.get('/patches?sort=id'), "unknown query argument 'sort'")
    bad('GET /health?x=1', 400, lambda: w.get('/health?x=1'))
    bad('GET /patches/{unknown}', 404, lambda: w.get('/patches/999999'), '999999')
    bad('GET /candidates/{unknown}', 404, lambda: w.get('/candidates/999999'))
    bad('GET /candidates?purpose=x', 400, lambda: w.get('/candidates?purpose=x'))
    bad('GET /builds/{unknown}/log', 404, lambda: w.get('/builds/999999/log'))
    bad('GET /bisections/{unknown}', 404, lambda: w.get('/bisections/999999'))
    bad('GET /reverts/{unknown}', 404, lambda: w.get('/reverts/999999'))
    bad('GET /reverts/{unknown}/patch', 404, lambda: w.get('/reverts/999999/patch'))
    bad('GET /events?since=x', 400, lambda: w.get('/events?since=x'))
    bad('GET /mail?state=lost', 400, lambda: w.get('/mail?state=lost'))
    bad('a request with 40 query arguments', 400,
        lambda: w.get('/patches?' + '&'.join('a%d=1' % i for i in range(40))))
    t.ok(w.alive(), 'the daemon is still running after the bad requests')

    # ---- writes ---------------------------------------------------------------
    s, h, raw, j = w.post(flag, {'reason': 'breaks the boot of my test box'}, token=tok)
    t.is_(s, 200, 'POST /patches/{id}/flag -> 200')
    t.ok(j and j['patch']['id'] == A and j['patch']['state'] == 'broken', '... the patch is broken', j)
    t.ok(q("SELECT 1 FROM events WHERE subject_kind = 'patch' AND subject_id = ? AND actor = 'token:alice'", A),
         '... the event records actor token:alice')
    t.ok(q("SELECT 1 FROM flags WHERE patch_id = ? AND reason = 'breaks the boot of my test box'"
           " AND actor = 'token:alice'", A), '... the flag keeps the reason and who')
    # the daemon stores a revert plan for it (auto_revert = plan): let it
    t.ok(quiet(), 'the daemon settles after the flag')
    bad('flag an already broken patch', 409, lambda: w.post(flag, {'reason': 'again'}, token=tok_bob))

    s, h, raw, j = w.get('/mail')
    t.is_(s, 200, 'GET /mail -> 200')
    mine = [m for m in (j or {}).get('mail', []) if m['patch_id'] == A]
    t.ok(mine and mine[0]['kind'] == 'flagged' and mine[0]['state'] in ('queued', 'invalid')
         and 'attempts' in mine[0] and 'last_error' in mine[0] and 'jane@example.org' in mine[0]['rcpt_to'],
         '... the author\'s mail about the flag, with state, attempts, last_error', j)
    t.ok(mine and not any(k in mine[0] for k in ('headers_and_body', 'body', 'head')),
         '... without bodies in the list')
    t.like(mine and mine[0]['subject'], 'lib: fix line 7', '... with its subject')
    s, h, raw, j = w.get('/mail?state=sent&limit=5')
    t.ok(s == 200 and j['mail'] == [], 'GET /mail?state=sent -> none sent (no relay)')

    # A fix-up of the broken patch is held.
    d_mail = w.mail(8, 'lib: fix line 8 after the line 7 fix',
                    'Fixes: %s ("lib: fix line 7")' % UPSTREAM_A[:12],
                    w.diff('lib.c', 'line 8\n', 'line eight\n'))
    s, h, raw, j = w.post('/patches', d_mail, headers={'Content-Type': 'message/rfc822'}, token=tok)
    t.ok(s == 201 and j['added'] == 1, 'POST /patches as message/rfc822 -> 201', (s, j))
    D = j['ids'][0] if j else 0
    st = w.wait('held', lambda: q("SELECT state FROM patches WHERE id = ?", D)[0][0] != 'imported', 60)
    t.is_(q("SELECT state FROM patches WHERE id = ?", D), [('held',)],
          'the fix-up of the broken patch is held by the checks')
    t.ok(w.idle(), 'the daemon is idle again')

    s, h, raw, j = w.post('/patches/%d/revert' % A, {'dry_run': True}, token=tok)
    t.is_(s, 200, 'POST /patches/{id}/revert dry_run -> 200')
    items = (j or {}).get('plan', {}).get('items', [])
    t.ok(j and j['dry_run'] is True and {i['patch_id'] for i in items} == {A, D}
         and all(i['action'] == 'drop' for i in items),
         '... the plan drops the patch and its held fix-up', j)
    t.is_(q("SELECT state FROM patches WHERE id IN (?, ?) ORDER BY id", A, D), [('broken',), ('held',)],
          '... and changes nothing')

    s, h, raw, j = w.post('/patches/%d/revert' % A, {'reason': 'broken: take it out'}, token=tok)
    t.ok(s == 201, 'POST /patches/{id}/revert -> 201', (s, j))
    RV1 = (j or {}).get('revert_id')
    t.ok(j and j['dry_run'] is False and RV1 and j['revert']['id'] == RV1, '... with the revert', j)
    t.is_(q("SELECT state FROM patches WHERE id IN (?, ?) ORDER BY id", A, D), [('dropped',), ('dropped',)],
          '... both are dropped from the queue')
    t.ok(q("SELECT 1 FROM reverts WHERE id = ? AND actor = 'token:alice'", RV1 or 0),
         '... the revert records actor token:alice')
    t.ok(quiet(), 'the daemon settles after the revert')
    bad('revert a dropped patch', 409, lambda: w.post('/patches/%d/revert' % A, {'reason': 'again'}, token=tok))
    bad('revert plan of a dropped patch', 409,
        lambda: w.post('/patches/%d/revert' % A, {'dry_run': True}, token=tok))
    bad('override a dropped patch', 409, lambda: w.post('/patches/%d/override' % D, {'reason': 'x'}, token=tok))
    bad('GET /reverts/{id}/patch of drops only', 404, lambda: w.get('/reverts/%d/patch' % RV1))

    # The released patch: a real revert commit on the branch.
    tip_before = git(w.tree, 'rev-parse', 'linux-6.1.y')
    s, h, raw, j = w.post('/patches/%d/revert' % R, {'reason': 'regresses line 30'}, token=tok)
    t.ok(s == 201, 'POST /patches/{id}/revert of a released patch -> 201', (s, j))
    RV2 = (j or {}).get('revert_id')
    t.ok(j and j['revert']['items'] and j['revert']['items'][0]['action'] == 'revert', '... a revert item', j)
    t.is_(q("SELECT state FROM patches WHERE id = ?", R), [('reverted',)], '... the patch is reverted')
    tip_after = git(w.tree, 'rev-parse', 'linux-6.1.y')
    t.ok(tip_after != tip_before and 'Revert "lib: fix line 30"' in git(w.tree, 'log', '-1', '--format=%B', 'linux-6.1.y'),
         '... with a revert commit on the branch')
    s, h, raw, j = w.get('/reverts/%d/patch' % RV2)
    t.is_(s, 200, 'GET /reverts/{id}/patch -> 200')
    t.like(h.get('content-type'), 'text/x-patch', '... as text/x-patch')
    t.like(raw.decode(errors='replace'), 'Revert "lib: fix line 30"', '... the revert in mail format')
    t.like(raw.decode(errors='replace'), '-line thirty', '... with its diff')

    s, h, raw, j = w.get('/reverts')
    t.ok(s == 200 and [r['id'] for r in j['reverts']] == [RV2, RV1], 'GET /reverts -> both, newest first', j)
    s, h, raw, j = w.get('/reverts/%d' % RV1)
    t.ok(s == 200 and j['id'] == RV1 and {i['patch_id'] for i in j['items']} == {A, D},
         'GET /reverts/{id} -> the items', j)

    s, h, raw, j = w.get('/patches/%d' % R)
    t.ok(s == 200 and j['reverts'] and j['reverts'][0]['id'] == RV2, 'GET /patches/{id} shows its revert', j)

    # Override a patch waiting for a human: it is queued; a candidate runs.
    s, h, raw, j = w.post('/patches/%d/override' % B, {'reason': 'I checked: it is a fix'}, token=tok_bob)
    t.is_(s, 200, 'POST /patches/{id}/override -> 200')
    t.ok(j and j['patch']['state'] == 'queued', '... the patch is queued', j)
    t.ok(q("SELECT 1 FROM events WHERE subject_id = ? AND actor = 'token:bob'", B),
         '... the event records actor token:bob')

    s, h, raw, j = w.post('/candidates', {'upto': B}, token=tok)
    t.is_(s, 202, 'POST /candidates -> 202')
    C = (j or {}).get('id')
    t.ok(C, '... with the candidate\'s id', j)
    s, h, raw, j = w.get('/candidates/%d' % C)
    t.ok(s == 200 and j['id'] == C and j['patch_ids'] == [B] and j['purpose'] == 'queue',
         'GET /candidates/{id} -> the candidate of the queue up to the patch', j)
    s, h, raw, j = w.post('/candidates', None, token=tok)
    t.ok(s == 200 and j and j['id'] == C and j['created'] is False,
         'POST /candidates without a body -> 200: the whole queue is the same queue, its candidate is C', j)

    done = w.wait('candidate', lambda: w.get('/candidates/%d' % C)[3].get('verdict'), 120, 0.5)
    t.ok(done, 'the daemon runs the candidate to a verdict (%s)' % done, w.daemon_log())
    s, h, raw, j = w.get('/candidates?limit=50')
    t.ok(s == 200 and C in [c['id'] for c in j['candidates']], 'GET /candidates lists it')
    s, h, raw, j = w.get('/candidates?purpose=queue&limit=1')
    t.ok(s == 200 and len(j['candidates']) == 1, 'GET /candidates?purpose=queue&limit=1')
    s, h, raw, cj = w.get('/candidates/%d' % C)
    t.ok(s == 200 and cj['step'] == 'done' and 'tests' in cj and 'build' in cj,
         'GET /candidates/{id} -> step done, build and tests', cj)
    s, h, raw, pj = w.get('/patches/%d' % B)
    t.ok(s == 200 and C in [c['id'] for c in pj['candidates']],
         'GET /patches/{id} lists the candidates that included it')

    bid = (cj.get('build') or {}).get('id') or (q("SELECT MAX(id) FROM builds")[0][0])
    t.ok(bid, 'a build was recorded', cj)
    s, h, raw, j = w.get('/builds/%d/log' % (bid or 0))
    t.ok(s == 200 and h.get('content-type', '').startswith('text/plain') and len(raw) > 0,
         'GET /builds/{id}/log -> the log as text/plain (%d bytes)' % len(raw), (s, raw[:300]))
    t.ok(quiet(180), 'the daemon settles after the candidates (and any bisection)', w.daemon_log())
    logpath = q("SELECT log_path FROM builds WHERE id = ?", bid or 0)
    if logpath and logpath[0][0] and os.path.exists(logpath[0][0]):
        os.rename(logpath[0][0], logpath[0][0] + '.gone')
    bad('GET /builds/{id}/log once the file is gone', 404, lambda: w.get('/builds/%d/log' % (bid or 0)), 'gone')

    s, h, raw, j = w.get('/bisections')
    t.is_(s, 200, 'GET /bisections -> 200')
    bis = (j or {}).get('bisections', [])
    t.ok(bis and isinstance(bis[0].get('steps'), int), '... the failing queue candidate was bisected', j)
    s, h, raw, j = w.get('/bisections/%d' % (bis[0]['id'] if bis else 0))
    t.ok(s == 200 and isinstance(j.get('steps'), list) and 'state' in j,
         'GET /bisections/{id} -> the bisection with its steps', j)

    # ---- the rest of the reads ------------------------------------------------
    s, h, raw, j = w.get('/events?since=0&limit=5')
    t.ok(s == 200 and [e['id'] for e in j['events']] == [1, 2, 3, 4, 5],
         'GET /events?since=0&limit=5 -> the first five, oldest first', j)
    last = q("SELECT MAX(id) FROM events")[0][0]
    s, h, raw, j = w.get('/events?since=%d' % (last - 2))
    t.ok(s == 200 and [e['id'] for e in j['events']][:2] == [last - 1, last],
         'GET /events?since=ID -> the events after ID', j)
    s, h, raw, j = w.get('/events?limit=3')
    t.ok(s == 200 and len(j['events']) == 3 and j['events'][-1]['id'] >= last,
         'GET /events -> the most recent', j)
    t.ok(any(e['actor'] == 'token:alice' for e in w.get('/events?limit=1000')[3]['events']),
         '... writes are in the log as token:alice')

    s, h, raw, j = w.get('/metrics')
    text = raw.decode()
    t.ok(s == 200 and h.get('content-type', '').startswith('text/plain'), 'GET /metrics -> 200 text/plain')
    t.like(text, 'stableq_patches{state="reverted"} 1', '... patches by state')
    t.like(text, 'stableq_candidates{verdict=', '... candidates by verdict')
    t.like(text, 'stableq_mail{state="queued"}', '... mail by state')
    t.like(text, 'stableq_http_requests_total{code="404"}', '... HTTP requests by status')
    t.like(text, 'stableq_build_seconds_count', '... build seconds')
    n200 = [int(l.split()[-1]) for l in text.splitlines() if l.startswith('stableq_http_requests_total{code="200"}')]
    t.ok(n200 and n200[0] > 10, '... counting the requests answered', n200)

    s, h, raw, j = w.get('/routes')
    t.ok(s == 200 and j['base'] == '/api/v1' and {'method': 'POST', 'path': '/patches/{id}/flag', 'write': True, 'scope': 'write', 'query': []}
         in j['routes'], 'GET /routes -> the route table')
    s, h, raw, j = w.get('/openapi.json')
    t.ok(s == 200 and j.get('openapi', '').startswith('3.0') and '/patches' in j['paths'],
         'GET /openapi.json -> the OpenAPI document')

    s, h, raw, j = w.get('/health')
    t.ok(s == 200 and j['queue']['dropped'] == 2 and j['queue']['reverted'] == 1 and j['last_event_id'] == last,
         'GET /health -> the queue by state after the changes', j)

    s, h, raw, j = w.request('GET', '/')
    t.ok(s == 200 and h.get('content-type', '').startswith('text/html') and b'app.js' in raw,
         'GET / -> the dashboard')
    t.like(h.get('content-security-policy'), "default-src 'self'", '... with a content security policy')
    for f, ct in (('/app.js', 'text/javascript'), ('/style.css', 'text/css'), ('/openapi.json', 'application/json')):
        s, h, raw, j = w.request('GET', f)
        t.ok(s == 200 and h.get('content-type', '').startswith(ct) and len(raw) > 100,
             'GET %s -> %s' % (f, ct))

    # ---- SIGHUP: the server is stopped and started again with the new config ----
    import signal
    w.proc.send_signal(signal.SIGHUP)
    back = w.wait('reload', lambda: 'SIGHUP: configuration reloaded' in w.daemon_log(), 10, 0.1)
    s, h, raw, j = w.get('/patches?limit=1')
    t.ok(back and s == 200 and j['total'] == 4, 'after SIGHUP the API answers again (same port, same store)', (s, j))

    # ---- issue 23: the last HTTP quirks, in the whole daemon (63 runs it under ASan) ----
    for te in (b'xchunked', b'chunked, identity'):
        t0 = time.time()
        code, buf = raw_exchange(b'POST /api/v1/candidates HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer '
                                 + tok.encode() + b'\r\nTransfer-Encoding: ' + te + b'\r\n\r\n2\r\n{}\r\n0\r\n\r\n', 5)
        t.ok(code == 501 and time.time() - t0 < 2.0,
             'Transfer-Encoding: %s -> 501 at once (%.2f s)' % (te.decode(), time.time() - t0), buf[:200])
    for cl in (b'2, 2', b'-1', b'+2', b'0x2'):
        code, buf = raw_exchange(b'POST /api/v1/candidates HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: '
                                 + cl + b'\r\n\r\n{}', 5)
        t.ok(code == 400 and buf.count(b'HTTP/1.1') == 1 and b'"bad-request"' in buf,
             'Content-Length: %s -> one clean 400' % cl.decode(), buf[:400])
    code, buf = raw_exchange(b'POST /api/v1/patches/1/flag HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer '
                             + tok.encode() + b'\x00junk\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', 5)
    t.is_(code, 400, 'Authorization: Bearer TOKEN<NUL>junk -> 400')
    code, buf = raw_exchange(b'GET /index.html%00.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 5)
    t.is_(code, 400, 'GET /index.html%00.js -> 400')
    code, buf = raw_exchange(b'GET /api/v1/patches?branch=6.1%00evil HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 5)
    t.is_(code, 400, '?branch=6.1%00evil -> 400')
    code, buf = raw_exchange(b'POST /api/v1/patches/1/flag HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer '
                             + tok.encode() + b'\r\nAuthorization: Bearer x\r\nContent-Length: 2\r\n\r\n{}', 5)
    t.is_(code, 400, 'two Authorization headers -> 400')
    code, buf = raw_exchange(b'GET /api/v1/mail HTTP/1.1\r\nHost: rebound.example\r\n\r\n', 5)
    t.ok(code == 421 and b'"mail"' not in buf, 'Host: rebound.example -> 421, the outbox is not read', buf[:300])

    # ---- slow and half-open clients do not block others -----------------------
    idle = []
    for i in range(24):
        s = socket.create_connection(('127.0.0.1', w.port), timeout=5)
        if i % 3 == 0:
            s.sendall(b'GET /api/v1/patches HTTP/1.1\r\nHost: 127.0.0.1\r\n')  # half a request
        elif i % 3 == 1:
            s.sendall(b'POST /api/v1/patches HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n'
                      b'Content-Type: text/plain\r\nContent-Length: 5000\r\n\r\nFrom x' % tok.encode())
        idle.append(s)  # i % 3 == 2: connected, silent
    t0 = time.time()
    s, h, raw, j = w.get('/patches?limit=50', timeout=5)
    dt = time.time() - t0
    t.ok(s == 200 and dt < 1.0, 'with 24 idle or half-sent connections a read answers in %.3f s' % dt)
    t0 = time.time()
    s, h, raw, j = w.get('/health', timeout=5)
    t.ok(s == 200 and time.time() - t0 < 1.0, '... and so does /health')

    def closed(sock):
        sock.settimeout(0.2)
        try:
            return sock.recv(4096) == b''
        except socket.timeout:
            return False
        except OSError:
            return True
    t0 = time.time()
    gone = w.wait('timeouts', lambda: all(closed(x) for x in idle), 10, 0.3)
    t.ok(gone, 'the server closes them after http_timeout (3 s): %.1f s' % (time.time() - t0))
    for x in idle:
        x.close()
    t.ok(w.alive(), 'the daemon is still running')
    s, h, raw, j = w.get('/health')
    t.is_(s, 200, '... and answers')

    rc = w.stop()
    t.is_(rc, 0, 'SIGTERM: the daemon exits cleanly')
    log = open(w.log, errors='replace').read()
    t.ok('AddressSanitizer' not in log and 'runtime error' not in log, 'no sanitizer report in the log')
    t.like(log, 'http: POST /api/v1/patches/%d/flag 200 token:alice' % A, 'writes are logged with their actor')

    # ---- read_access = token ------------------------------------------------------
    w2 = World(read_access='token')
    try:
        tok2 = w2.token('reader')
        w2.start()
        s, h, raw, j = w2.get('/patches')
        is_error(s, j, 401, 'read_access = token: a read without a token -> 401')
        s, h, raw, j = w2.get('/patches', token='1' * 64)
        is_error(s, j, 403, '... with a wrong token -> 403')
        s, h, raw, j = w2.get('/patches', token=tok2)
        t.ok(s == 200 and j['total'] == 0, '... with a token -> 200')
        s, h, raw, j = w2.request('GET', '/')
        t.is_(s, 200, '... the dashboard\'s files are served (the data is not)')
        # Authorized on the headers: an 8 MB body is not waited for.
        t0 = time.time()
        code, buf = raw_exchange(b'GET /api/v1/patches HTTP/1.1\r\nHost: 127.0.0.1\r\n'
                                 b'Content-Length: 8388608\r\n\r\n', 5, port=w2.port)
        t.ok(code == 401 and time.time() - t0 < 1.0,
             '... a read announcing an 8 MB body, without a token -> 401 at once (%.2f s)' % (time.time() - t0),
             buf[:300])
    finally:
        w2.cleanup()
except Exception as e:  # a crash of the test is a failure, with its story
    import traceback
    t.ok(False, 'the test ran to its end', traceback.format_exc(), w.daemon_log())
finally:
    w.cleanup()
sys.exit(t.done())
