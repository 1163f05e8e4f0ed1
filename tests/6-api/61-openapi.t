#!/usr/bin/env python3
"""61-openapi.t: the routes the daemon serves and web/openapi.json agree, both ways.

The served side is the route table of a running daemon (GET /api/v1/routes),
checked against the routes really answering (no 404 for a listed route); the
documented side is web/openapi.json as in the tree and as served (the copy
compiled in must be the same). Every method and path, the query arguments,
which routes need a token, the {id} parameters and the error answers must
match; every $ref must resolve.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from apitest import TOP, Tap, World  # noqa: E402

t = Tap()
w = World()
try:
    with open(os.path.join(TOP, 'web', 'openapi.json')) as f:
        doc = json.load(f)
    t.ok(doc.get('openapi', '').startswith('3.0'), 'web/openapi.json is OpenAPI 3.0')
    t.ok(doc.get('servers') == [{'url': '/api/v1'}], '... served under /api/v1')

    w.start()
    s, h, raw, served_doc = w.get('/openapi.json')
    t.ok(s == 200 and served_doc == doc, 'GET /api/v1/openapi.json is web/openapi.json (the copy compiled in is current)')
    s, h, raw, j = w.get('/routes')
    t.is_(s, 200, 'GET /api/v1/routes -> 200')
    routes = (j or {}).get('routes', [])
    t.ok(len(routes) >= 20, 'the route table has %d routes' % len(routes))

    served = {(r['method'].lower(), r['path']): r for r in routes}
    documented = {}
    for path, ops in doc['paths'].items():
        for method, op in ops.items():
            documented[(method, path)] = op

    for key in sorted(served):
        t.ok(key in documented, 'served %s %s is documented' % (key[0].upper(), key[1]))
    for key in sorted(documented):
        t.ok(key in served, 'documented %s %s is served' % (key[0].upper(), key[1]))

    # Each listed route answers (with a made-up id: 404 from the handler, not the router).
    for (method, path), r in sorted(served.items()):
        url = path.replace('{id}', '999999')
        if method == 'get':
            s, h, raw, j = w.get(url)
        else:
            s, h, raw, j = w.post(url, {})  # no token: refused before the handler
        routed = not (s == 404 and j and j.get('message', '').startswith('no route'))
        want = (s in (200, 404)) if method == 'get' else (s == 401)
        t.ok(routed and s != 405 and want, '%s %s is routed (%d)' % (method.upper(), url, s), j)

    ids = set()
    for (method, path), op in sorted(documented.items()):
        name = '%s %s' % (method.upper(), path)
        r = served.get((method, path))
        if not r:
            continue
        params = op.get('parameters', [])
        q_doc = sorted(p['name'] for p in params if p['in'] == 'query')
        t.is_(q_doc, sorted(r['query']), '%s: the query arguments agree' % name)
        has_id = '{id}' in path
        p_doc = [p for p in params if p['in'] == 'path']
        t.ok((not has_id and not p_doc) or
             (has_id and len(p_doc) == 1 and p_doc[0]['name'] == 'id' and p_doc[0]['required'] is True
              and p_doc[0]['schema']['type'] == 'integer'),
             '%s: the {id} parameter' % name)
        needs = op.get('security') == [{'bearerAuth': []}]
        t.is_(needs, r['write'], '%s: needs a token exactly when it writes' % name)
        resp = op.get('responses', {})
        ok_codes = [c for c in resp if c.startswith('2')]
        t.ok(ok_codes, '%s: documents its success' % name)
        errs = ['401', '403'] + (['400', '413', '415'] if r['write'] else [])
        if has_id:
            errs.append('404')
        t.ok(all(c in resp for c in errs), '%s: documents the errors %s' % (name, ', '.join(errs)),
             sorted(resp))
        t.ok(all(resp[c].get('content', {}).get('application/json', {}).get('schema') ==
                 {'$ref': '#/components/schemas/Error'} for c in resp if c[0] in '45' and c != '503'),
             '%s: every error answer is the Error object' % name)
        t.ok(op.get('operationId') and op['operationId'] not in ids, '%s: a unique operationId' % name)
        ids.add(op.get('operationId'))
        if r['write'] and path != '/patches':
            body = op.get('requestBody', {}).get('content', {})
            t.ok(list(body) == ['application/json'], '%s: takes a JSON body' % name)

    # The Error object is the one every error answer has.
    err = doc['components']['schemas']['Error']
    t.ok(sorted(err['required']) == ['error', 'message'] and err.get('additionalProperties') is False,
         'the Error object is {error, message}')
    s, h, raw, j = w.get('/nope')
    t.ok(s == 404 and sorted(j) == ['error', 'message'], '... as answered')

    # Every $ref resolves.
    refs = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == '$ref':
                    refs.append(v)
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)

    def resolve(ref):
        node = doc
        for part in ref.lstrip('#/').split('/'):
            node = node.get(part) if isinstance(node, dict) else None
        return node
    bad = [r for r in refs if not r.startswith('#/') or resolve(r) is None]
    t.ok(refs and not bad, 'all %d $refs resolve' % len(refs), bad)
finally:
    w.cleanup()
sys.exit(t.done())
