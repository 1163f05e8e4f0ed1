/* t-rc-reply.c: rc_reply() on replies built by hand (struct review as CONTRACTS.md gives it), the holds and the override, release_message() and rc_config_check(). */
#include "config.h"
#include "rc-int.h"
#include "release.h"
#include "review.h"
#include "tap.h"
#include "tqueue.h"

#include <unistd.h>

/* A reply from addr with Message-Id mid and, optionally, a Tested-by. */
static struct patch *reply(const char *name, const char *addr, const char *mid,
			   int tested)
{
	struct patch *p = xcalloc(1, sizeof(*p));

	p->subject = xstrdup("Re: [PATCH 6.1 00/2] 6.1.193-rc1 review");
	p->author_name = xstrdup(name);
	p->author_email = xstrdup(addr);
	p->message_id = xstrdup(mid);
	p->message = xstrdup("");
	if (tested) {
		p->tags = xcalloc(1, sizeof(*p->tags));
		p->tags[0].kind = xstrdup("tested_by");
		p->tags[0].value = xstrdup(addr);
		p->tags[0].extra = xstrdup(name);
		p->ntags = 1;
	}
	return p;
}

static struct review says(unsigned what, int build_fail)
{
	struct review r = { 0 };

	r.says = what;
	r.quote = xstrdup("> the reply's own words\n");
	r.report.build_total = 10;
	r.report.build_pass = 10 - build_fail;
	r.report.build_fail = build_fail;
	r.report.qemu_total = r.report.qemu_pass = 5;
	r.report.qemu_fail = 0;
	r.report.summary = xstrfmt("Build results: total: 10 pass: %d fail: %d",
				   10 - build_fail, build_fail);
	return r;
}

/* rc_reply() in its own transaction; its return and action. */
static int apply(struct branch_ctx *bc, long long rc, struct patch *p,
		 struct review *r, struct strbuf *action)
{
	int ret;

	strbuf_reset(action);
	db_begin(bc->db);
	ret = rc_reply(bc->db, rc, p, r, action);
	db_end(bc->db, ret);
	patch_free(p);
	review_release(r);
	return ret;
}

static char *hold(struct branch_ctx *bc, long long rc)
{
	char *why = NULL;

	if (rc_first_hold(bc->db, rc, &why) <= 0) {
		free(why);
		return NULL;
	}
	return why;
}

static void config_cases(void)
{
	static const struct {
		const char *list, *git, *pub;
		int refused;
		const char *what;
	} cases[] = {
		{ "stable@vger.kernel.org", "", "http://127.0.0.1:8080", 1,
		  "a loopback public_url for a list elsewhere" },
		{ "Stable <stable@vger.kernel.org>", "/srv/linux", "", 1,
		  "a path as rc_git_url" },
		{ "stable@vger.kernel.org", "git://localhost/linux.git", "", 1,
		  "git://localhost" },
		{ "stable@vger.kernel.org", "", "http://[::1]:8080/", 1,
		  "http://[::1]" },
		{ "stable@vger.kernel.org", "file:///srv/linux", "", 1,
		  "file://" },
		{ "stable@vger.kernel.org",
		  "git://git.kernel.org/pub/scm/linux/kernel/git/stable/"
		  "linux-stable-rc.git",
		  "https://stableq.example.org", 0, "public URLs" },
		{ "stable@vger.kernel.org", "git@git.example.org:linux.git", "",
		  0, "an scp-like URL elsewhere" },
		{ "stable@localhost", "/srv/linux", "http://127.0.0.1:8080", 0,
		  "a list on this machine may be told local URLs" },
		{ "stable@vger.kernel.org", "", "", 0,
		  "no URL at all: the cover points at the thread" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct config c = { 0 };
		c.rc_list = (char *)cases[i].list;
		c.rc_git_url = (char *)cases[i].git;
		c.public_url = (char *)cases[i].pub;
		int ret = rc_config_check(&c);
		is_int(ret < 0, cases[i].refused, "rc_config_check: %s",
		       cases[i].what);
		if (ret < 0)
			like(err_msg(), *cases[i].git ? "rc_git_url" : "public_url",
			     "... naming the key");
	}
}

static void message_cases(void)
{
	json_t *p = json_pack(
		"{s:s, s:[{s:s,s:s,s:s}, {s:s,s:s,s:s}, {s:s,s:s,s:s},"
		" {s:s,s:s,s:s}, {s:s,s:s,s:s}]}",
		"message",
		"lib: fix\n\ncommit abc upstream.\n\nBody.\n\nCc: <stable@vger.kernel.org>\n"
		"Reviewed-by: Early <early@example.org>\nSigned-off-by: Greg"
		" <greg@example.org>\nSigned-off-by: Jane <jane@example.org>\n",
		"tags", "kind", "reviewed_by", "value", "early@example.org",
		"extra", "Early", "kind", "signed_off_by", "value",
		"jane@example.org", "extra", "Jane", "kind", "tested_by", "value",
		"tom@example.org", "extra", "Tom", "kind", "acked_by", "value",
		"ann@example.org", "extra", "Ann\nSigned-off-by: Evil <e@x>",
		"kind", "reviewed_by", "value", "rita@example.org", "extra",
		"Rita");
	struct strbuf sb = STRBUF_INIT;

	release_message(&sb, p, "Greg <greg@example.org>");
	is_str(sb.buf,
	       "lib: fix\n\ncommit abc upstream.\n\nBody.\n\nCc: <stable@vger.kernel.org>\n"
	       "Reviewed-by: Early <early@example.org>\nSigned-off-by: Jane"
	       " <jane@example.org>\nTested-by: Tom <tom@example.org>\n"
	       "Acked-by: Ann Signed-off-by: Evil <e@x> <ann@example.org>\n"
	       "Reviewed-by: Rita <rita@example.org>\n"
	       "Signed-off-by: Greg <greg@example.org>\n",
	       "release_message: the replies' trailers after the message's, in"
	       " order, once each, one line each; the sign-off moved to the"
	       " bottom");
	strbuf_reset(&sb);
	json_object_set_new(p, "message", json_string("lib: fix\n\nNo trailers here.\n"));
	json_object_set_new(p, "tags", json_array());
	release_message(&sb, p, NULL);
	is_str(sb.buf, "lib: fix\n\nNo trailers here.\n",
	       "... no trailers and no sign-off: the message as it was");
	strbuf_reset(&sb);
	release_message(&sb, p, "Greg <greg@example.org>");
	is_str(sb.buf, "lib: fix\n\nNo trailers here.\n\nSigned-off-by: Greg <greg@example.org>\n",
	       "... a message without trailers gets a trailer paragraph");
	strbuf_release(&sb);
	json_decref(p);
}

int main(void)
{
	char dir[] = "/tmp/t-rc-reply.XXXXXX";
	struct branch_ctx bc;
	struct strbuf action = STRBUF_INIT;
	struct review r;
	long long rc, id = 0;
	char *why;

	if (!mkdtemp(dir))
		return 1;
	tq_open(&bc, dir, "");
	if (db_exec(bc.db,
		    "INSERT INTO rcs (branch_id, version, deadline,"
		    " cover_message_id, actor) VALUES (?, '6.1.193-rc1', 0,"
		    " 'cover@x', 'test')",
		    "i", bc.branch_id) < 0) {
		printf("Bail out! %s\n", err_msg());
		return 1;
	}
	rc = db_last_id(bc.db);

	r = says(0, 0);
	is_int(apply(&bc, rc, reply("Tom", "tom@example.org", "t1@x", 1), &r,
		     &action),
	       1, "a Tested-by on the cover: recorded");
	is_str(action.buf, "tested rc 1 by tom@example.org", "... so the action says");
	r = says(0, 0);
	is_int(apply(&bc, rc, reply("Tom", "tom@example.org", "t1@x", 1), &r,
		     &action),
	       0, "... the same reply again: nothing new");
	r = says(0, 0);
	is_int(apply(&bc, rc, reply("Quiet", "q@example.org", "q1@x", 0), &r,
		     &action),
	       0, "a reply that says nothing for the rc: 0");
	ok(!(why = hold(&bc, rc)), "nothing holds the release yet");
	free(why);

	r = says(REVIEW_NAK, 0);
	is_int(apply(&bc, rc, reply("Nina", "nina@example.org", "n1@x", 1), &r,
		     &action),
	       1, "a NAK on the cover: recorded");
	is_str(action.buf, "NAK on rc 1 by nina@example.org",
	       "... as a NAK, not a Tested-by, though it carries one");
	is_int(db_int(bc.db, 1, "SELECT count(*) FROM rc_tested WHERE tester = 'nina@example.org'", NULL),
	       0, "... no Tested-by for a NAK");
	why = hold(&bc, rc);
	is_str(why, "a NAK from Nina <nina@example.org> (Message-Id <n1@x>)",
	       "the NAK holds the release, named");
	free(why);
	is_int(rc_override(&bc, rc, "", &id), ERR_INVALID, "an override needs a reason");
	is_int(rc_override(&bc, rc, "firmware, not the rc", &id), 0, "rc_override with a reason");
	is_int(id, rc, "... of the rc");
	ok(!(why = hold(&bc, rc)), "... nothing holds it now");
	free(why);
	is_int(rc_override(&bc, rc, "again", &id), ERR_CONFLICT,
	       "an override with nothing to lift: ERR_CONFLICT");

	r = says(REVIEW_WITHDRAW, 0);
	is_int(apply(&bc, rc, reply("Nina", "nina@example.org", "n2@x", 0), &r,
		     &action),
	       1, "a NAK withdrawn: recorded");
	is_str(action.buf, "NAK withdrawn on rc 1 by nina@example.org", "... so");

	r = says(REVIEW_REPORT, 0);
	is_int(apply(&bc, rc, reply("Pat", "pat@example.org", "p1@x", 0), &r,
		     &action),
	       1, "a passing report without a Tested-by: recorded");
	ok(!(why = hold(&bc, rc)), "... it holds nothing");
	free(why);
	r = says(REVIEW_REPORT, 2);
	is_int(apply(&bc, rc, reply("Ted", "ted@example.org", "p2@x", 1), &r,
		     &action),
	       1, "a failing report with a Tested-by: recorded");
	is_str(action.buf, "report on rc 1 by ted@example.org, tested rc 1 by ted@example.org",
	       "... the report and the Tested-by");
	ok(!(why = hold(&bc, rc)), "... it holds nothing (the tester says it is fine)");
	free(why);
	r = says(REVIEW_REPORT, 2);
	is_int(apply(&bc, rc, reply("Guenter", "gt@example.org", "g1@x", 0), &r,
		     &action),
	       1, "a failing report without a Tested-by: recorded");
	is_str(action.buf, "failing report on rc 1 by gt@example.org", "... as failing");
	why = hold(&bc, rc);
	is_str(why, "a failing report without a Tested-by from Guenter <gt@example.org>"
		    " (Message-Id <g1@x>): Build results: total: 10 pass: 8 fail: 2",
	       "it holds the release, though an earlier override was made");
	free(why);
	is_int(db_int(bc.db, 1, "SELECT count(*) FROM rc_reports WHERE rc_id = ?", "i", rc),
	       5, "five reports stored");
	is_int(db_int(bc.db, 1, "SELECT build_fail FROM rc_reports WHERE message_id = 'g1@x'", NULL),
	       2, "... with their numbers");
	is_int(rc_override(&bc, rc, "known on the tip", &id), 0, "a second override");
	ok(!(why = hold(&bc, rc)), "... lifts it");
	free(why);
	{
		json_t *o = rc_json(bc.db, bc.branch_id, rc);
		is_int(json_array_size(json_object_get(o, "reports")), 5,
		       "rc_json: every report");
		is_str(json_string_value(json_object_get(
			       json_object_get(o, "override"), "reason")),
		       "known on the tip", "... the override and its reason");
		json_decref(o);
	}

	message_cases();
	config_cases();
	strbuf_release(&action);
	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
