"""apitest.py: shared by the API and dashboard tests: TAP, a small stable tree, the real daemon.

Everything is real: a git repository made here, patches in mail format
imported through the API, the stableq binary run as `stableq serve -d` on a
free loopback port with its own database and config.
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
STABLEQ = os.environ.get('STABLEQ', os.path.join(TOP, 'stableq'))


class Relay:
    """tests/lib/smtpd.py on a free loopback port, storing mail in self.inbox."""

    def __init__(self, prefix='stableq-relay-inbox.'):
        self.inbox = tempfile.mkdtemp(prefix=prefix)
        self.portf = self.inbox + '.port'
        self.proc = subprocess.Popen(['/usr/bin/python3', os.path.join(TOP, 'tests', 'lib', 'smtpd.py'),
                                      '--dir', self.inbox, '--port-file', self.portf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(self.portf) and open(self.portf).read().strip():
                break
            time.sleep(0.1)
        self.port = int(open(self.portf).read().strip())

    def envelopes(self):
        """Each delivered mail's envelope ({mail_from, rcpt_tos}), in order."""
        return [json.load(open(os.path.join(self.inbox, f)))
                for f in sorted(os.listdir(self.inbox)) if f.endswith('.json')]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        subprocess.run(['rm', '-rf', self.inbox, self.portf])


class Tap:
    """A TAP producer that can fail: the exit status says so."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, *diag):
        self.n += 1
        print('%sok %d - %s' % ('' if cond else 'not ', self.n, name))
        if not cond:
            self.failed += 1
            for d in diag:
                for line in str(d).splitlines() or ['']:
                    print('#   ' + line)
        sys.stdout.flush()
        return bool(cond)

    def is_(self, got, want, name):
        return self.ok(got == want, name, 'got:      %r' % (got,),
                       'expected: %r' % (want,))

    def like(self, got, sub, name):
        return self.ok(got is not None and sub in got, name,
                       '%r' % (got,), 'does not contain %r' % (sub,))

    def diag(self, *msg):
        for m in msg:
            for line in str(m).splitlines():
                print('# ' + line)

    def done(self):
        print('1..%d' % self.n)
        sys.stdout.flush()
        return 1 if self.failed or not self.n else 0


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(args, cwd=None, env=None, check=True, input=None):
    p = subprocess.run(args, cwd=cwd, env=env, input=input,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    if check and p.returncode:
        raise RuntimeError('%s: exit %d\n%s%s' % (' '.join(args), p.returncode,
                                                  p.stdout.decode(errors='replace'),
                                                  p.stderr.decode(errors='replace')))
    return p


GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@example.org',
               GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@example.org',
               GIT_CONFIG_NOSYSTEM='1', HOME=os.environ.get('HOME', '/tmp'))


def git(repo, *args):
    return run(['git', '-c', 'init.defaultBranch=master', '-C', repo] + list(args),
               env=GIT_ENV).stdout.decode().strip()


class World:
    """A temp dir with a small stable tree, a config and a database.

    two_branches: a second tree for 6.12 (a clone of the 6.1 tree with the
    6.12.5 version and one commit of its own, "lib: spell four", self.s4),
    and the config's [branch 6.1] and [branch 6.12] sections for both.
    """

    def __init__(self, read_access='loopback', extra_conf='', port=None, two_branches=False,
                 poll_interval=1):
        self.dir = tempfile.mkdtemp(prefix='stableq-api.')
        # builds run as the unprivileged build user (sandbox.h), who must
        # reach the world's tree and build directory: mkdtemp makes 0700
        os.chmod(self.dir, 0o755)
        self.tree = os.path.join(self.dir, 'linux')
        self.db = os.path.join(self.dir, 'stableq.db')
        self.conf = os.path.join(self.dir, 'stableq.conf')
        self.port = port or free_port()
        self.base = 'http://127.0.0.1:%d' % self.port
        self.proc = None
        self.log = os.path.join(self.dir, 'daemon.log')
        self._make_tree()
        sections = ''
        if two_branches:
            self.tree612 = os.path.join(self.dir, 'linux-6.12')
            self._make_tree_612()
            sections = '\n'.join(
                ['[branch 6.1]', 'tree_dir = %s' % self.tree, 'branch = linux-6.1.y',
                 'build_dir = %s/build' % self.dir, 'queue_dir = %s/queue' % self.dir,
                 'coverage_build_dir = %s/build-cover' % self.dir,
                 '[branch 6.12]', 'tree_dir = %s' % self.tree612, 'branch = linux-6.12.y',
                 'build_dir = %s/build-6.12' % self.dir, 'queue_dir = %s/queue-6.12' % self.dir,
                 'coverage_build_dir = %s/build-cover-6.12' % self.dir, ''])
            os.makedirs(os.path.join(self.dir, 'queue-6.12'), exist_ok=True)
        with open(self.conf, 'w') as f:
            f.write('\n'.join([
                'db = %s' % self.db,
                'var_dir = %s/var' % self.dir,
                'listen = 127.0.0.1:%d' % self.port,
                'tree_dir = %s' % self.tree,
                'build_dir = %s/build' % self.dir,
                'ccache_dir = %s/ccache' % self.dir,
                'queue_dir = %s/queue' % self.dir,
                'kernel_config_dir = %s/config/kernel/6.1/quick' % TOP,
                'tests_file = %s/config/tests.conf' % TOP,
                # the maintainer decides: broken patches wait for a revert by hand
                'auto_revert = plan',
                'read_access = %s' % read_access,
                'max_patch_bytes = 65536',
                'http_timeout = 3',
                'poll_interval = %d' % poll_interval,
                # the small tree has no kernel to run a tip's baseline on
                # while idle (59-retry-failed.t tests that on the real one)
                'baseline_idle = no',
                extra_conf, sections]))
        os.makedirs(os.path.join(self.dir, 'queue'), exist_ok=True)

    # ---- the tree and the patches ----

    def _make_tree(self):
        t = self.tree
        os.makedirs(t)
        git(t, 'init', '-q')
        with open(os.path.join(t, 'lib.c'), 'w') as f:
            f.write(''.join('line %d\n' % i for i in range(1, 41)))
        with open(os.path.join(t, 'a.c'), 'w') as f:
            f.write('int a;\n')
        with open(os.path.join(t, 'Makefile'), 'w') as f:
            f.write('VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n')
        git(t, 'add', '-A')
        git(t, 'commit', '-qm', 'Linux 6.1.10')
        git(t, 'tag', 'v6.1.10')
        self._edit('lib.c', 'line 2\n', 'line two\n')
        git(t, 'commit', '-qam', 'lib: spell two')
        self.s1 = git(t, 'rev-parse', 'HEAD')
        git(t, 'branch', '-q', 'linux-6.1.y')

    def _make_tree_612(self):
        """6.12: the 6.1 tree's history, then its own release and a commit only it has."""
        t = self.tree612
        run(['git', 'clone', '-q', self.tree, t], env=GIT_ENV)
        git(t, 'remote', 'remove', 'origin')
        self._edit('Makefile', 'PATCHLEVEL = 1\nSUBLEVEL = 10\n', 'PATCHLEVEL = 12\nSUBLEVEL = 5\n', tree=t)
        git(t, 'commit', '-qam', 'Linux 6.12.5')
        git(t, 'tag', 'v6.12.5')
        self._edit('lib.c', 'line 4\n', 'line four\n', tree=t)
        git(t, 'commit', '-qam', 'lib: spell four')
        self.s4 = git(t, 'rev-parse', 'HEAD')
        git(t, 'branch', '-q', 'linux-6.12.y')

    def _edit(self, name, old, new, tree=None):
        p = os.path.join(tree or self.tree, name)
        with open(p) as f:
            s = f.read()
        assert old in s, (name, old)
        with open(p, 'w') as f:
            f.write(s.replace(old, new, 1))

    def diff(self, name, old, new):
        """The diff of one change to the tree's file, as git writes it."""
        self._edit(name, old, new)
        d = git(self.tree, 'diff', name)
        git(self.tree, 'checkout', '-q', name)
        return d + '\n'

    def mail(self, n, subject, trailers, diff, body=None, author='Jane Dev <jane@example.org>',
             prefix='PATCH 6.1'):
        """A patch in mail format (git format-patch / send-email style); prefix: [PATCH 6.12] for 6.12."""
        return ('From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
                'From: %s\n'
                'Date: Mon, 1 Sep 2025 10:%02d:00 +0000\n'
                'Subject: [%s] %s\n'
                'Message-Id: <api-%d.%d@example.org>\n'
                '\n'
                '%s\n\n'
                '%s'
                'Signed-off-by: %s\n'
                '---\n'
                '%s'
                '-- \n2.39.5\n\n') % (author, n % 60, prefix, subject, n, os.getpid(),
                                      body or 'Body of %s.' % subject,
                                      trailers + '\n' if trailers else '',
                                      author, diff)

    # ---- the CLI and the daemon ----

    def sq(self, *args, check=True, input=None):
        env = dict(os.environ, STABLEQ_NO_DEFAULT_CONFIG='1')
        return run([STABLEQ, '-c', self.conf] + list(args), cwd=TOP, env=env,
                   check=check, input=input)

    def token(self, name):
        return self.sq('token', 'add', name).stdout.decode().strip()

    def start(self):
        env = dict(os.environ, STABLEQ_NO_DEFAULT_CONFIG='1')
        self.logf = open(self.log, 'ab')
        self.proc = subprocess.Popen([STABLEQ, '-c', self.conf, 'serve', '-d'],
                                     cwd=TOP, env=env, stdin=subprocess.DEVNULL,
                                     stdout=self.logf, stderr=self.logf)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('the daemon exited with %d:\n%s' %
                                   (self.proc.returncode, self.daemon_log()))
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError('the daemon did not listen within 20 s:\n' + self.daemon_log())

    def stop(self):
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.logf.close()
        rc = self.proc.returncode
        self.proc = None
        return rc

    def q(self, sql, *args):
        """The rows of a read-only query on the store."""
        import sqlite3
        con = sqlite3.connect('file:%s?mode=ro' % self.db, uri=True, timeout=10)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def daemon_log(self):
        try:
            with open(self.log, errors='replace') as f:
                return f.read()[-4000:]
        except OSError:
            return ''

    def cleanup(self):
        self.stop()
        subprocess.run(['rm', '-rf', self.dir])

    # ---- HTTP ----

    def request(self, method, path, body=None, headers=None, token=None, timeout=10):
        """(status, headers, raw body, JSON or None)."""
        c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=timeout)
        h = dict(headers or {})
        if token is not None:
            h['Authorization'] = 'Bearer ' + token
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
            h.setdefault('Content-Type', 'application/json')
        if isinstance(body, str):
            body = body.encode()
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            raw = r.read()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()
        try:
            j = json.loads(raw) if raw else None
        except ValueError:
            j = None
        return r.status, hdrs, raw, j

    def get(self, path, **kw):
        return self.request('GET', '/api/v1' + path, **kw)

    def post(self, path, body=None, **kw):
        return self.request('POST', '/api/v1' + path, body=body, **kw)

    def wait(self, what, cond, timeout=60, step=0.2):
        """Polls cond() until it is true (bounded); returns its last value."""
        deadline = time.time() + timeout
        v = None
        while time.time() < deadline:
            v = cond()
            if v:
                return v
            time.sleep(step)
        return v

    def idle(self, timeout=90):
        """True once the daemon has nothing to do: idle, no pending work."""
        def quiet():
            s, _, _, h = self.get('/health')
            if s != 200 or h['step'] != 'idle' or h['pending_candidates'] or h['candidate']:
                return False
            if h['queue'].get('imported'):
                return False
            return h
        # idle twice in a row, a poll apart: the loop may be about to start a step
        first = self.wait('idle', quiet, timeout)
        if not first:
            return False
        time.sleep(1.2)
        return self.wait('idle', quiet, timeout)
