/* patch.h: one patch as parsed from a mail, a git format-patch file or `git show` text. */
#ifndef STABLEQ_PATCH_H
#define STABLEQ_PATCH_H

#include <stddef.h>

/*
 * Tag kinds (struct patch_tag.kind), each from the message's trailers/notes:
 *   "fixes"          Fixes: <sha> ("subject")          value sha (lower-case hex), extra subject
 *   "stable"         Cc: [<]stable@vger.kernel.org[>] [# annotation]
 *                                                      value the address, extra the annotation ("6.1.x", "5.10+") or NULL
 *   "prereq"         Cc: stable # 6.1.x: a1f84a3: subject  (prerequisite note)
 *                                                      value sha, extra "subject" (annotation kept in a "stable" tag too)
 *   "stable_dep_of"  Stable-dep-of: <sha> ("subject")  value sha, extra subject
 *   "upstream"       "commit <sha> upstream." / "[ Upstream commit <sha> ]" / git-show "commit <sha>" header
 *                                                      value sha
 *   "signed_off_by", "reported_by", "reviewed_by", "acked_by", "tested_by", "cc"
 *                                                      value address, extra name (may be NULL)
 *   "link"           Link: <url>                        value url
 *   "noautosel"      Cc: stable+noautosel@kernel.org    value address, extra reason
 * Strings are owned by the patch.
 */
struct patch_tag {
	char *kind;
	char *value;
	char *extra;
};

struct patch_file {
	char *path;     /* new path ("a/"/"b/" or a quilt "linux.orig/" stripped); old path for deletions */
	char change;    /* 'A' added (also a copy), 'M' modified, 'D' deleted, 'R' renamed */
	int binary;     /* a "GIT binary patch" or "Binary files ... differ" */
	char *old_path; /* renames and copies: the source path, else NULL (owned) */
};

struct patch {
	char *subject;        /* without "Re:" and "[PATCH ...]" prefixes; never NULL ("" for a bare diff) */
	char *subject_prefix; /* "PATCH 6.1 2/3" or NULL */
	int series_part;      /* n of [PATCH n/m], 0 if none */
	int series_total;     /* m of [PATCH n/m], 0 if none */
	char *author_name;    /* decoded (RFC 2047), or NULL */
	char *author_email;   /* addr-spec as written (compare without case), or NULL */
	char *sender_email;   /* the mail's own From: (before git am's in-body From:
			       * names the author), or NULL: who sent it */
	char *date;           /* as written in the Date: header, or NULL */
	char *message_id;     /* without <>, or NULL */
	char *in_reply_to;    /* without <>, or NULL */
	char *upstream;       /* upstream sha named by the message, or NULL */
	char *message;        /* the commit message: subject line, blank, body with trailers (no diffstat);
			       * "" for a bare diff. subject, message, names: always valid UTF-8 */
	char *diff;           /* the diff text, from the first "diff --git" (or "--- a/") line to
			       * its last hunk (no mail signature); bytes as sent, maybe not UTF-8 */
	char *filename;       /* set by callers (series import), may be NULL */
	struct patch_tag *tags;
	size_t ntags;
	struct patch_file *files;
	size_t nfiles;
	char patch_id[41];    /* hex SHA-1 of the diff, white space and line numbers ignored
			       * (the same for a mail, `git show` and quilt form of one change) */
	int adds_file;        /* the diff creates a file */
	int adds_kconfig;     /* adds a "config FOO" entry to a Kconfig file */
	int touches_uapi;     /* changes include/uapi/ or arch/x/include/uapi/ */
	int reply;            /* the Subject: began with "Re:" */
	int auto_reply;       /* an automatic reply: RFC 3834 Auto-Submitted (not "no"),
			       * Precedence: bulk/junk/list, or X-Autoreply */
	size_t subject_cut;   /* the subject was this long, over PATCH_TEXT_MAX, and is cut; else 0 */
	size_t name_cut;      /* the same for author_name */
};

/*
 * The lines a diff adds (a changed line is one removed and one added),
 * by their line number in the new file: fn(ctx, path, line) for each, in
 * diff order, path the new path without its "b/" (borrowed for the call).
 * Deleted files give none. Returns how many, or ERR_INVALID for a
 * malformed hunk header. For a coverage boot's executed lines (gcov.h).
 */
long patch_added_lines(const char *diff, size_t len,
		       void (*fn)(void *ctx, const char *path, long line),
		       void *ctx);

/*
 * Subjects and names longer than this are cut (at a character's edge) and
 * end with PATCH_CUT_MARK: a 400 KB subject is hostile, not information.
 */
#define PATCH_TEXT_MAX 1000
#define PATCH_CUT_MARK " [cut]"

/*
 * Parses one message: a mail (RFC 5322 headers, folded lines, RFC 2047
 * words, quoted-printable, base64 or 8bit body, git am's in-body From:/
 * Subject:/Date:), `git show` text ("commit <sha>", "Author:", "Date:",
 * indented or plain message, diff), or a quilt patch (description whose
 * first paragraph is the subject, then the diff; or a bare diff). name is used in messages
 * ("queue/0001-x.patch:12: Fixes: 'xyz' is not a hex SHA"). Errors, each
 * ERR_INVALID with a message naming name and line: no diff, a truncated or
 * malformed hunk, NUL bytes, a non-UTF-8 header, a Fixes:/Stable-dep-of:
 * with a non-hex SHA, input over max_bytes (ERR_TOOBIG). *out is owned by
 * the caller (patch_free()).
 */
int patch_parse(struct patch **out, const char *buf, size_t len,
		const char *name, size_t max_bytes);
void patch_free(struct patch *p);

/*
 * patch_parse() with the position of buf in a larger file: first_line is the
 * line number of buf's first line in name (1 for a whole file), so that
 * messages point into the file. With PATCH_SKIP_COVER a cover letter
 * ("[PATCH 0/m]" without a diff) is not an error: 0 is returned with *out
 * set to NULL.
 */
#define PATCH_SKIP_COVER 1u
/* ... and a reply ("Re: ...") without a diff, a review in a thread's mbox */
#define PATCH_SKIP_REPLY 2u
/*
 * ... and any message without a diff is parsed as it is (diff NULL, no
 * files): a reply, a cover letter, a review (the mail intake's view).
 */
#define PATCH_ANY_MESSAGE 4u
int patch_parse_at(struct patch **out, const char *buf, size_t len,
		   const char *name, size_t max_bytes, size_t first_line,
		   unsigned flags);

/*
 * Splits an mbox (one or many messages, "From " separator lines, ">From "
 * unquoting) and parses each message; cover letters ("[PATCH 0/m]" without
 * a diff) and replies without a diff (reviews in a thread's mbox) are
 * skipped, every other message without a diff is an error. Error lines count from the start of the file. A file that
 * is not an mbox but a single message is accepted too. Returns the number of patches (>= 1) in
 * *out (caller frees each and the array), or negative: one bad message
 * fails the whole file (nothing is half-imported).
 */
int mbox_parse(struct patch ***out, const char *buf, size_t len,
	       const char *name, size_t max_bytes);

/*
 * A commit message made safe to write in mail or patch form (a revert's
 * message, with a subject and a reason from outside): the subject line is
 * one line without control characters; in the body, control characters
 * other than tabs go, and a line a reader of the patch would take for the
 * end of the message or for a diff ("---", "diff ", "Index: ", "--- ",
 * "+++ ", "@@ ", "From ") is indented by one space. Appends to out.
 */
struct strbuf;
void patch_safe_message(struct strbuf *out, const char *msg);

/* The tags of a kind, in order: returns the count, fills at most max. */
size_t patch_tags_of(const struct patch *p, const char *kind,
		     const struct patch_tag **out, size_t max);

/*
 * Does the stable annotation (a "stable" tag's extra: "6.1.x", "5.10+",
 * "4.19.x-5.15.x", "v6.1", "6.1") cover the kernel version ("6.1.192")?
 * 1 yes, 0 no, negative if the annotation cannot be read.
 */
int stable_version_covers(const char *annotation, const char *version);
/*
 * The same for a whole "Cc: stable" tag: an unversioned one (annotation NULL
 * or blank) means every applicable tree, so it covers every version (1).
 */
int stable_cc_covers(const char *annotation, const char *version);

#endif
