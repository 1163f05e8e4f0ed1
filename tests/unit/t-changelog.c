/* t-changelog.c: Debian's changelog parsed, indexed in a real SQLite file and looked up. */
#include "changelog.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "log.h"
#include "strbuf.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/release-6.1/changelog.Debian"
#define REAL "/usr/share/doc/linux-source-6.1/changelog.Debian.gz"

struct seen {
	struct strbuf all; /* "6.1.9|subject\n" per entry */
};

static int collect(void *arg, const char *series, long sublevel,
		   const char *subject)
{
	struct seen *s = arg;
	strbuf_addf(&s->all, "%s.%ld|%s\n", series, sublevel, subject);
	return 0;
}

static int stop_at_second(void *arg, const char *series, long sublevel,
			  const char *subject)
{
	int *n = arg;
	(void)series, (void)sublevel, (void)subject;
	return ++*n == 2 ? 7 : 0;
}

static void parse_fixture(void)
{
	struct strbuf text = STRBUF_INIT;
	struct seen s = { STRBUF_INIT };
	long n;
	int stops = 0;

	ok(strbuf_read_file(&text, FIXTURE, 1 << 20) == 0, "fixture read");
	n = changelog_parse(text.buf, text.len, collect, &s);
	is_int(n, 13, "13 upstream stable backports listed (a heading too)");
	like(s.all.buf, "6.1.8|frob: add the frobnicator\n",
	     "a ChangeLog-6.1.8 URL names the release of what follows");
	like(s.all.buf,
	     "6.1.10|frob: bound the frobnicator's queue length against a"
	     " full ring and against a stale tail\n",
	     "a wrapped subject is joined, its (CVE-...) left out");
	like(s.all.buf, "6.1.10|quux: take the lock before reading the count\n",
	     "the [x86] prefix is left out");
	like(s.all.buf, "6.1.9|quux: add a helper for the count\n",
	     "a CVE list on its own line is left out");
	like(s.all.buf, "6.1.9|quux: enumerate the quux bug\n",
	     "items grouped under a heading are listed");
	like(s.all.buf, "6.1.10|Revert \"widget: drop the extra reference\"\n",
	     "a revert is listed as written");
	ok(!strstr(s.all.buf, "Debian's own"),
	   "Debian's own patches are not upstream stable backports");
	ok(!strstr(s.all.buf, "real-time"), "nor the -rt update's items");
	ok(!strstr(s.all.buf, "config option"), "nor packaging changes");
	is_int(changelog_parse(text.buf, text.len, stop_at_second, &stops), 7,
	       "a callback's nonzero return stops the parse");
	is_int(changelog_parse("", 0, collect, &s), 0, "empty text: nothing");
	/* hostile text: no newline at the end, an endless item, odd URLs */
	struct strbuf bad = STRBUF_INIT;
	strbuf_addstr(&bad, "linux (1)\n\n  * New upstream stable update:\n"
			    "    https://x/ChangeLog-6.1\n    - no release\n"
			    "    https://x/ChangeLog-6.1.99999999999\n    - ");
	for (int i = 0; i < 5000; i++)
		strbuf_addstr(&bad, "long ");
	strbuf_reset(&s.all);
	n = changelog_parse(bad.buf, bad.len, collect, &s);
	is_int(n, 1, "an item under a bad URL is left out, a long one cut");
	ok(s.all.len < 1100, "... to about 1 KB");
	strbuf_release(&bad);
	strbuf_release(&text);
	strbuf_release(&s.all);
}

static void key_forms(void)
{
	struct strbuf k = STRBUF_INIT;

	changelog_subject_key(&k, "  \"net:  fix\tthe  thing\"  ");
	is_str(k.buf, "net: fix the thing", "a key: quotes and white space go");
	strbuf_release(&k);
}

static void index_and_find(const char *dir)
{
	char dbpath[512], gz[512];
	sqlite3 *db = NULL;
	long entries = 0, at = 0, rev = 0;
	int rebuilt = 0;

	snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
	snprintf(gz, sizeof(gz), "%s.gz", FIXTURE);
	ok(db_open(&db, dbpath) == 0, "a store");
	is_int(changelog_index(db, gz, &entries, &rebuilt), 0, "gz indexed");
	is_int(entries, 13, "... 13 entries");
	is_int(rebuilt, 1, "... read now");
	is_int(changelog_index(db, gz, &entries, &rebuilt), 0, "again");
	is_int(rebuilt, 0, "... not read again: the index is current");
	is_int(entries, 13, "... and knows its size");
	is_int(changelog_find(db, gz, "6.1", 10, "frob: count frobs in an"
			      " unsigned int", &at, &rev), 1, "found");
	is_int(at, 9, "... in 6.1.9");
	is_int(changelog_find(db, gz, "6.1", 10,
			      "\"FROB: bound the frobnicator's queue length"
			      " against a full ring and against a stale tail\"",
			      &at, &rev), 1, "found in another case, quoted");
	is_int(changelog_find(db, gz, "6.1", 10, "quux: fix a leak that came"
			      " after 6.1.10", &at, &rev), 0,
	       "a later release is not in a 6.1.10 tree");
	is_int(changelog_find(db, gz, "6.1", 11, "quux: fix a leak that came"
			      " after 6.1.10", &at, &rev), 1,
	       "... it is in a 6.1.11 tree");
	is_int(changelog_find(db, gz, "6.1", 10, "widget: drop the extra"
			      " reference", &at, &rev), 0,
	       "released, then reverted: not in the tree");
	is_int(at, 8, "... released in 6.1.8");
	is_int(rev, 10, "... reverted in 6.1.10");
	is_int(changelog_find(db, gz, "6.1", 9, "widget: drop the extra"
			      " reference", &at, &rev), 1,
	       "... in a 6.1.9 tree it is there");
	/* Debian's "[x86] quux: ..." for the upstream "x86/quux: ..." */
	is_int(changelog_find(db, gz, "6.1", 10, "x86/quux: take the lock"
			      " before reading the count", &at, &rev), 1,
	       "an arch moved into Debian's bracket: found");
	is_int(at, 10, "... in 6.1.10");
	is_int(changelog_find(db, gz, "6.1", 10, "mips/quux: take the lock"
			      " before reading the count", &at, &rev), 1,
	       "... the index keeps no bracket, so any arch prefix points"
	       " there (a subject only points: the lines decide)");
	is_int(changelog_find(db, gz, "6.1", 10, "notanarch/quux: take the"
			      " lock before reading the count", &at, &rev), 0,
	       "... a subsystem that is not an arch is not rewritten");
	is_int(changelog_find(db, gz, "6.6", 10, "frob: add the frobnicator",
			      &at, &rev), 0, "another series: not listed");
	is_int(changelog_find(db, gz, "6.1", 10, "", &at, &rev), 0,
	       "an empty subject: not listed");
	/* a touched file is read again */
	char plain[512];
	struct strbuf text = STRBUF_INIT;
	snprintf(plain, sizeof(plain), "%s/changelog.Debian", dir);
	strbuf_read_file(&text, FIXTURE, 1 << 20);
	strbuf_addstr(&text, "\nlinux (6.1.7-1) x; urgency=high\n\n"
			     "  * New upstream stable update:\n"
			     "    https://k/ChangeLog-6.1.7\n"
			     "    - old: a fix of 6.1.7\n");
	write_file_atomic(plain, text.buf, text.len);
	is_int(changelog_index(db, plain, &entries, &rebuilt), 0,
	       "a plain file is indexed too");
	is_int(entries, 14, "... 14 entries");
	is_int(changelog_find(db, plain, "6.1", 10, "old: a fix of 6.1.7", &at,
			      &rev), 1, "... looked up by its own path");
	is_int(changelog_find(db, gz, "6.1", 10, "old: a fix of 6.1.7", &at,
			      &rev), 0, "... not by the other's");
	strbuf_setlen(&text, text.len - 6);
	strbuf_addstr(&text, "6.1.7 and more\n");
	write_file_atomic(plain, text.buf, text.len);
	changelog_index(db, plain, &entries, &rebuilt);
	is_int(rebuilt, 1, "a changed file is indexed again");
	is_int(changelog_find(db, plain, "6.1", 10, "old: a fix of 6.1.7 and"
			      " more", &at, &rev), 1, "... with its new text");
	write_file_atomic(plain, "hello\n", 6);
	is_int(changelog_index(db, plain, &entries, &rebuilt), ERR_INVALID,
	       "a file that lists no release is not a changelog");
	like(err_msg(), "not a Debian kernel changelog", "... says so");
	is_int(changelog_find(db, plain, "6.1", 10, "old: a fix of 6.1.7 and"
			      " more", &at, &rev), 1,
	       "... and the index it had is kept");
	snprintf(plain, sizeof(plain), "%s/nothere.gz", dir);
	is_int(changelog_index(db, plain, &entries, &rebuilt), ERR_NOTFOUND,
	       "a missing file: ERR_NOTFOUND");
	strbuf_release(&text);

	if (access(REAL, R_OK) == 0) {
		is_int(changelog_index(db, REAL, &entries, &rebuilt), 0,
		       "Debian's changelog of linux-source-6.1 is indexed");
		ok(entries > 40000, "... %ld upstream stable backports",
		   entries);
		is_int(changelog_find(db, REAL, "6.1", 192, "xen-netback: Fix UAF"
				      " when reading statistics data", &at,
				      &rev), 1, "... a 6.1.192 backport is found");
		is_int(at, 192, "... in 6.1.192");
		is_int(changelog_find(db, REAL, "6.1", 192,
				      "drm: Fix use-after-free on framebuffers"
				      " and property blobs when calling"
				      " drm_dev_unplug",
				      &at, &rev),
		       0,
		       "... its revert ending in (regression in 6.1.167) is"
		       " matched");
		is_int(at, 167, "... released in 6.1.167");
		ok(rev > 167, "... reverted in 6.1.%ld", rev);
	} else {
		ok(0, "%s is installed (config/debian-packages)", REAL);
	}
	db_close(db);
}

/* Debian's arch rewrites, as the subject would be listed. */
static void unarched(void)
{
	static const struct {
		const char *in, *want; /* want NULL: no rewrite */
	} c[] = {
		{"x86/bhi: add the helper", "bhi: add the helper"},
		{"arm64: fix the thing", "fix the thing"},
		{"s390/mm: fix the thing", "mm: fix the thing"},
		{"s390: fix the thing", "fix the thing"},
		{"armv7: not an arch of the list", NULL},
		{"x86:", NULL},
		{"x86/ bhi: a space after the slash", NULL},
		{"net: not an arch", NULL},
		{"", NULL},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		int r = changelog_subject_unarched(&sb, c[i].in);
		is_int(r, c[i].want != NULL, c[i].in);
		if (c[i].want)
			is_str(sb.buf, c[i].want, "... rewritten as Debian lists it");
		strbuf_release(&sb);
	}
}

/* Reverts as Debian writes them (the forms of linux 6.1's changelog). */
static void revert_forms(const char *dir)
{
	static const char text[] =
		"linux (6.1.170-1) bookworm-security; urgency=high\n\n"
		"  * New upstream stable update:\n"
		"    https://k/ChangeLog-6.1.168\n"
		"    - Revert \"drm: Fix use-after-free on framebuffers and"
		" property blobs when\n"
		"      calling drm_dev_unplug\" (regression in 6.1.167)\n"
		"    - scsi: Revert \"scsi: qla: Perform lockless command"
		" completion in abort\n      path\" (CVE-2025-68818)\n"
		"    - [s390x] Revert \"s390/cio: Fix device lifecycle\""
		" (regression in 6.1.165)\n"
		"    - Revert \"x86/bugs: Make the spectre default depend on"
		" it\" on v6.6 and older\n"
		"    - Revert \"wifi: baz: avoid the wait\" (Closes: #1120680,\n"
		"      #1120681)\n"
		"    - Revert \"Revert \"rr: drop the stale reference\"\""
		" (regression in 6.1.160)\n"
		"    - Revert \"KVM: PPC: Mark \"struct page\" dirty in"
		" the map\"\n"
		"    - PCI: sysfs: Revert \"rescan\" file renames\n"
		"    - net: fix the frob (again)\n"
		"    - net: fix the frob once more (regression in 6.1.150)\n"
		"    https://k/ChangeLog-6.1.150\n"
		"    - rr: drop the stale reference\n"
		"    - Revert \"rr: drop the stale reference\"\n"
		"    - drm: Fix use-after-free on framebuffers and property"
		" blobs when calling\n      drm_dev_unplug\n"
		"\n -- J <j@example.org>  Mon, 13 Jan 2026 10:00:00 +0100\n";
	struct seen s = { STRBUF_INIT };
	char path[512], dbpath[512];
	sqlite3 *db = NULL;
	long at = 0, rev = 0;

	changelog_parse(text, sizeof(text) - 1, collect, &s);
	like(s.all.buf,
	     "6.1.168|Revert \"drm: Fix use-after-free on framebuffers and"
	     " property blobs when calling drm_dev_unplug\"\n",
	     "Revert \"x\" (regression in 6.1.167), wrapped: 'Revert \"x\"'");
	like(s.all.buf,
	     "6.1.168|Revert \"scsi: qla: Perform lockless command completion"
	     " in abort path\"\n",
	     "scsi: Revert \"scsi: x\" (CVE-...): the subsystem before it goes");
	like(s.all.buf, "6.1.168|Revert \"s390/cio: Fix device lifecycle\"\n",
	     "[s390x] Revert \"s390/cio: x\" (regression in ...)");
	like(s.all.buf,
	     "6.1.168|Revert \"x86/bugs: Make the spectre default depend on"
	     " it\"\n",
	     "Revert \"x\" on v6.6 and older: the words after it go");
	like(s.all.buf, "6.1.168|Revert \"wifi: baz: avoid the wait\"\n",
	     "Revert \"x\" (Closes: #1, wrapped #2)");
	like(s.all.buf,
	     "6.1.168|Revert \"Revert \"rr: drop the stale reference\"\"\n",
	     "a revert of a revert keeps its nested quotes");
	like(s.all.buf,
	     "6.1.168|Revert \"KVM: PPC: Mark \"struct page\" dirty in the"
	     " map\"\n",
	     "a reverted subject that quotes: to the last quote");
	like(s.all.buf, "6.1.168|PCI: sysfs: Revert \"rescan\" file renames\n",
	     "a quoted word is no reverted subject: as written");
	like(s.all.buf, "6.1.168|net: fix the frob (again)\n",
	     "an upstream subject's own parenthesis stays");
	like(s.all.buf, "6.1.168|net: fix the frob once more\n",
	     "a (regression in ...) note after a subject goes");

	snprintf(path, sizeof(path), "%s/reverts", dir);
	snprintf(dbpath, sizeof(dbpath), "%s/r.db", dir);
	write_file_atomic(path, text, sizeof(text) - 1);
	ok(db_open(&db, dbpath) == 0 &&
		   changelog_index(db, path, NULL, NULL) == 0,
	   "indexed");
	is_int(changelog_find(db, path, "6.1", 170,
			      "drm: Fix use-after-free on framebuffers and"
			      " property blobs when calling drm_dev_unplug",
			      &at, &rev),
	       0, "released, then reverted with a (regression in ...) note");
	is_int(at, 150, "... released in 6.1.150");
	is_int(rev, 168, "... reverted in 6.1.168");
	is_int(changelog_find(db, path, "6.1", 170,
			      "scsi: Revert \"scsi: qla: Perform lockless"
			      " command completion in abort path\"",
			      &at, &rev),
	       1, "a revert patch of that form is found as Debian lists it");
	is_int(changelog_find(db, path, "6.1", 170,
			      "rr: drop the stale reference", &at, &rev),
	       1, "released, reverted, its revert reverted: it is back");
	is_int(rev, -1, "... not reverted");
	is_int(changelog_find(db, path, "6.1", 170,
			      "Revert \"rr: drop the stale reference\"", &at,
			      &rev),
	       0, "the revert itself was reverted");
	is_int(rev, 168, "... in 6.1.168");
	db_close(db);
	strbuf_release(&s.all);
}

int main(void)
{
	char dir[] = "/tmp/t-changelog.XXXXXX";

	log_init(0, 0);
	if (!mkdtemp(dir))
		return 1;
	parse_fixture();
	key_forms();
	unarched();
	index_and_find(dir);
	revert_forms(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
	return done_testing();
}
