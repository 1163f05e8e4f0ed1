#!/usr/bin/python3
"""sql_owners.py DIR: the SQL table references of DIR's .c files against
DIR/sql/OWNERS, one line each:
  refs TABLE FILE            a .c file (basename) names TABLE in SQL
  bad TABLE FILE             ... and is not an owner of it
  unowned TABLE              a table of sql/*.sql that OWNERS does not list
  unknown TABLE              a line of OWNERS for no table of sql/*.sql
SQL is found in C string literals (adjacent literals joined), after FROM,
JOIN, INTO, UPDATE or DELETE FROM. Sources are those of `git ls-files
'*.c'`, so the map holds wherever files move; tests/, fuzz/ and bench/
are not checked."""
import os
import re
import subprocess
import sys

top = sys.argv[1]
os.chdir(top)
# the schema the migrations leave, statement by statement
tables = set()
ddl = re.compile(r"CREATE (?:TABLE|VIEW) (?:IF NOT EXISTS )?([a-z_]+)"
                 r"|DROP (?:TABLE|VIEW) (?:IF EXISTS )?([a-z_]+)"
                 r"|ALTER TABLE ([a-z_]+) RENAME TO ([a-z_]+)")
for f in sorted(os.listdir("sql")):
    if not f.endswith(".sql"):
        continue
    for c, d, a, b in ddl.findall(open("sql/" + f).read()):
        if c:
            tables.add(c)
        tables.discard(d or a)
        if b:
            tables.add(b)

owners = {}
for line in open("sql/OWNERS"):
    p = line.split()
    if not p or p[0].startswith("#"):
        continue
    owners[p[0]] = set(p[1:])

lit = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
kw = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|DELETE\s+FROM)\s+([a-z_]+)\b")
refs = set()
for f in subprocess.check_output(["git", "ls-files", "*.c"], text=True).split():
    if f.split("/")[0] in ("tests", "fuzz", "bench"):
        continue
    s = open(f, errors="replace").read()
    groups, cur, last = [], "", None
    for m in lit.finditer(s):
        if last is not None and not s[last:m.start()].strip():
            cur += m.group(1)
        else:
            groups.append(cur)
            cur = m.group(1)
        last = m.end()
    groups.append(cur)
    for g in groups:
        for t in kw.findall(g):
            if t in tables:
                refs.add((t, os.path.basename(f)))

for t in sorted(tables - set(owners)):
    print("unowned", t)
for t in sorted(set(owners) - tables):
    print("unknown", t)
for t, f in sorted(refs):
    print("refs", t, f)
    if f not in owners.get(t, ()):
        print("bad", t, f)
