/* prefix.c: the queued prefix of a branch's queue, whose running tree the checks keep. */
#include "prefix.h"
#include "db.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

void prefix_add(struct prefix *p, long long id, const char *diff)
{
	char hex[REPO_HEX_SIZE];

	repo_text_hash(diff, diff ? strlen(diff) : 0, hex);
	strbuf_addf(&p->list, "%lld %s\n", id, hex);
	p->n++;
}

void prefix_key(const struct prefix *p, const char *tip,
		char key[REPO_HEX_SIZE])
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "tip %s\n", tip);
	if (p->list.len)
		strbuf_addbuf(&sb, &p->list);
	repo_text_hash(sb.buf, sb.len, key);
	strbuf_release(&sb);
}

void prefix_release(struct prefix *p)
{
	if (!p)
		return;
	strbuf_release(&p->list);
	p->n = 0;
}

int prefix_find(sqlite3 *db, long long branch_id, const char *key,
		char tree[REPO_HEX_SIZE])
{
	char *t = NULL;
	int found = 0;

	if (db_query_text(db, &t,
			  "SELECT tree FROM check_prefix WHERE branch_id = ? AND"
			  " prefix_key = ?",
			  "it", branch_id, key) == 0 &&
	    t && strlen(t) == REPO_HEX_SIZE - 1) {
		memcpy(tree, t, REPO_HEX_SIZE);
		found = 1;
	}
	free(t);
	err_clear();
	return found;
}

int prefix_store(sqlite3 *db, long long branch_id, const char *key,
		 const char *tree, size_t n)
{
	int ret = db_exec(db,
		       "INSERT OR REPLACE INTO check_prefix (branch_id,"
		       " prefix_key, tree, patches) VALUES (?, ?, ?, ?)",
		       "ittd", branch_id, key, tree, (int)n);

	return ret < 0 ? ret : 0;
}
