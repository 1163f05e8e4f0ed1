/* token.c: API tokens in the tokens table: creation, removal, constant-time checks. */
#include "token.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "sha256.h"
#include "strbuf.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static const char hexdigits[] = "0123456789abcdef";

static void to_hex(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hexdigits[b[i] >> 4];
		out[2 * i + 1] = hexdigits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

void token_hash_hex(const void *data, size_t len, char hex[65])
{
	sha256_hex(data, len, hex);
}

int token_name_check(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > TOKEN_NAME_MAX)
		return err_set(ERR_INVALID,
			       "token name must be 1 to %d characters",
			       TOKEN_NAME_MAX);
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._@-") != n)
		return err_set(ERR_INVALID,
			       "token name '%s': only letters, digits and"
			       " . _ @ - are allowed",
			       name);
	return 0;
}

/* Fills buf with n bytes from the kernel's CSPRNG. */
static int random_bytes(unsigned char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = getrandom(buf + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return err_set(ERR_IO, "getrandom: %s", strerror(errno));
		got += (size_t)r;
	}
	return 0;
}

static const char *const scope_names[] = { NULL, "read", "write", "admin" };

const char *token_scope_name(int scope)
{
	return scope >= TOKEN_READ && scope <= TOKEN_ADMIN ? scope_names[scope]
							  : NULL;
}

int token_scope_parse(const char *s)
{
	for (int i = TOKEN_READ; s && i <= TOKEN_ADMIN; i++)
		if (!strcmp(s, scope_names[i]))
			return i;
	return err_set(ERR_INVALID, "unknown scope '%.40s' (read, write or admin)",
		       s ? s : "");
}

int token_add(sqlite3 *db, const char *name, const char *actor,
	      char **secret)
{
	return token_add_scoped(db, name, TOKEN_ADMIN, actor, secret);
}

int token_add_scoped(sqlite3 *db, const char *name, int scope,
		     const char *actor, char **secret)
{
	unsigned char raw[TOKEN_SECRET_HEX / 2];
	char hex[TOKEN_SECRET_HEX + 1], hash[65];
	long long ev;
	int ret;

	*secret = NULL;
	if ((ret = token_name_check(name)) < 0)
		return ret;
	if (!token_scope_name(scope))
		return err_set(ERR_INVALID, "token scope %d: not a scope", scope);
	if ((ret = random_bytes(raw, sizeof(raw))) < 0)
		return ret;
	to_hex(raw, sizeof(raw), hex);
	OPENSSL_cleanse(raw, sizeof(raw));
	token_hash_hex(hex, TOKEN_SECRET_HEX, hash);
	if ((ret = db_begin(db)) < 0)
		goto out;
	ret = db_exec(db,
		      "INSERT INTO tokens (name, hash, scope) VALUES (?, ?, ?)",
		      "ttt", name, hash, token_scope_name(scope));
	if (ret == ERR_CONFLICT)
		ret = err_set(ERR_EXISTS, "token '%s' exists already", name);
	if (ret >= 0 &&
	    (ev = event_add(db, actor, "token", db_last_id(db), "added",
			    "token %s (%s)", name, token_scope_name(scope))) < 0)
		ret = (int)ev;
	if ((ret = db_end(db, ret)) >= 0)
		*secret = xstrdup(hex);
out:
	OPENSSL_cleanse(hex, sizeof(hex));
	return ret < 0 ? ret : 0;
}

int token_remove(sqlite3 *db, const char *name, const char *actor)
{
	long long id = 0, ev;
	int ret;

	if ((ret = token_name_check(name)) < 0)
		return ret;
	if ((ret = db_begin(db)) < 0)
		return ret;
	ret = db_query_int(db, &id, "SELECT id FROM tokens WHERE name = ?", "t",
			   name);
	if (ret == ERR_NOTFOUND)
		ret = err_set(ERR_NOTFOUND, "no token named '%s'", name);
	if (ret >= 0)
		ret = db_exec(db, "DELETE FROM tokens WHERE id = ?", "i", id);
	if (ret >= 0 && (ev = event_add(db, actor, "token", id, "removed",
					"token %s", name)) < 0)
		ret = (int)ev;
	ret = db_end(db, ret);
	return ret < 0 ? ret : 0;
}

int token_check(sqlite3 *db, const char *secret, size_t len, char **name)
{
	return token_check_scoped(db, secret, len, name, NULL);
}

int token_check_scoped(sqlite3 *db, const char *secret, size_t len,
		       char **name, int *scope)
{
	char hash[65];
	sqlite3_stmt *st;
	char *found = NULL;
	int rc, found_scope = 0;

	*name = NULL;
	/* Hashing first makes the comparison independent of the input's length. */
	token_hash_hex(secret, len, hash);
	st = db_prepare(db, "SELECT name, hash, scope FROM tokens", NULL);
	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *h = db_col_text(st, 1);
		int same;
		if (!h || sqlite3_column_bytes(st, 1) != 64)
			continue;
		same = !CRYPTO_memcmp(h, hash, 64);
		/* Keep going after a match: the time does not tell which. */
		if (same && !found) {
			found = xstrdup(db_col_text(st, 0));
			found_scope = token_scope_parse(db_col_text(st, 2));
		}
	}
	if (rc != SQLITE_DONE) {
		free(found);
		err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return ERR_IO;
	}
	sqlite3_finalize(st);
	if (!found)
		return err_set(ERR_AUTH, "the token is not valid");
	*name = found;
	if (scope)
		*scope = found_scope > 0 ? found_scope : TOKEN_READ;
	return 0;
}

json_t *token_list_json(sqlite3 *db)
{
	return db_rows_json(db,
			    "SELECT id, name, scope, created_at FROM tokens"
			    " ORDER BY"
			    " name",
			    NULL);
}
