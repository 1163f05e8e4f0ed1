/* t-token.c: API tokens: creation, hashing, constant-time checks, removal. */
#include "db.h"
#include "embed.h"
#include "err.h"
#include "tap.h"
#include "token.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char dir[] = "/tmp/t-token.XXXXXX", path[64], *a = NULL, *b = NULL,
	     *name = NULL, hex[65];
	sqlite3 *db;
	long long n = 0;
	json_t *list;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.db", dir);
	ok(db_open(&db, path) == 0, "db_open");

	token_hash_hex("abc", 3, hex);
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	       "token_hash_hex is sha256");

	ok(token_add(db, "alice", "cli", &a) == 0, "token_add alice");
	ok(a && strlen(a) == 64 && strspn(a, "0123456789abcdef") == 64,
	   "the secret is 32 random bytes in hex");
	ok(token_add(db, "bob", "cli", &b) == 0 && b && strcmp(a, b),
	   "a second token differs");
	is_int(token_add(db, "alice", "cli", &name), ERR_EXISTS,
	       "the same name again: ERR_EXISTS");
	ok(!name, "... and no secret");
	is_int(token_add(db, "", "cli", &name), ERR_INVALID, "an empty name");
	is_int(token_add(db, "a b", "cli", &name), ERR_INVALID, "a name with a space");
	is_int(token_add(db, "x/../y", "cli", &name), ERR_INVALID, "a name with a slash");
	ok(token_name_check("ci-bot_2.stable@example") == 0, "letters, digits, . _ @ - are fine");

	db_query_int(db, &n, "SELECT COUNT(*) FROM tokens WHERE hash = ?", "t", a);
	is_int(n, 0, "the secret itself is not stored");
	token_hash_hex(a, 64, hex);
	db_query_int(db, &n, "SELECT COUNT(*) FROM tokens WHERE hash = ?", "t", hex);
	is_int(n, 1, "its sha256 is");
	db_query_int(db, &n, "SELECT COUNT(*) FROM events WHERE subject_kind = 'token'"
			     " AND kind = 'added' AND actor = 'cli'", NULL);
	is_int(n, 2, "each addition is an event");

	ok(token_check(db, a, 64, &name) == 0 && name && !strcmp(name, "alice"),
	   "token_check finds alice");
	free(name);
	name = NULL;
	ok(token_check(db, b, 64, &name) == 0 && name && !strcmp(name, "bob"),
	   "token_check finds bob");
	free(name);
	name = NULL;
	is_int(token_check(db, a, 63, &name), ERR_AUTH, "a prefix of a token is refused");
	is_int(token_check(db, "", 0, &name), ERR_AUTH, "an empty token is refused");
	{
		char c[65];
		memcpy(c, a, 65);
		c[10] = c[10] == '0' ? '1' : '0';
		is_int(token_check(db, c, 64, &name), ERR_AUTH, "one digit off is refused");
		ok(!name, "... with no name");
	}
	{
		char big[4096];
		memset(big, 'a', sizeof(big));
		is_int(token_check(db, big, sizeof(big), &name), ERR_AUTH,
		       "a long token is refused");
	}

	list = token_list_json(db);
	ok(json_array_size(list) == 2, "token_list_json lists 2");
	is_str(json_string_value(json_object_get(json_array_get(list, 0), "name")), "alice",
	       "... by name");
	ok(!json_object_get(json_array_get(list, 0), "hash"), "... without hashes");
	json_decref(list);

	ok(token_remove(db, "alice", "cli") == 0, "token_remove alice");
	is_int(token_check(db, a, 64, &name), ERR_AUTH, "alice's token no longer works");
	is_int(token_remove(db, "alice", "cli"), ERR_NOTFOUND, "removing it again: ERR_NOTFOUND");
	db_query_int(db, &n, "SELECT COUNT(*) FROM events WHERE subject_kind = 'token'"
			     " AND kind = 'removed'", NULL);
	is_int(n, 1, "the removal is an event");

	/* Scopes (issue 23): read < write < admin, stored and checked. */
	{
		char *r = NULL, *w = NULL;
		int scope = 0;
		ok(token_add_scoped(db, "bot", TOKEN_READ, "cli", &r) == 0 &&
			   token_add_scoped(db, "tester", TOKEN_WRITE, "cli", &w) == 0,
		   "token_add_scoped: a read and a write token");
		ok(token_check_scoped(db, r, 64, &name, &scope) == 0 &&
			   scope == TOKEN_READ,
		   "token_check_scoped: bot is read");
		free(name);
		ok(token_check_scoped(db, w, 64, &name, &scope) == 0 &&
			   scope == TOKEN_WRITE,
		   "... tester is write");
		free(name);
		ok(token_check_scoped(db, b, 64, &name, &scope) == 0 &&
			   scope == TOKEN_ADMIN,
		   "... bob (token_add) is admin");
		free(name);
		is_int(token_scope_parse("root"), ERR_INVALID, "an unknown scope is refused");
		like(err_msg(), "read, write or admin", "... naming the known ones");
		is_int(token_add_scoped(db, "x", 7, "cli", &name), ERR_INVALID,
		       "token_add_scoped with no such scope fails");
		list = token_list_json(db);
		is_str(json_string_value(json_object_get(json_array_get(list, 0), "scope")),
		       "admin", "token_list_json says each token's scope");
		json_decref(list);

		/*
		 * A token made before scopes: a store built by the migrations
		 * before sql/012 (whatever comes after it), its token made then;
		 * opening it runs 012 on, which makes the token admin.
		 */
		db_close(db);
		db = NULL;
		{
			sqlite3 *raw = NULL;
			char pragma[64];
			int count = 0;

			char side[80];

			/* the first store is done with: its files go now */
			unlink(path);
			snprintf(side, sizeof(side), "%s-wal", path);
			unlink(side);
			snprintf(side, sizeof(side), "%s-shm", path);
			unlink(side);
			strcat(path, ".old");
			unlink(path);
			sqlite3_open(path, &raw);
			for (const struct embedded_file *f = embedded_files; f->path; f++) {
				if (!db_migration_name(f->path))
					continue;
				if (!strncmp(f->path, "sql/012-", 8))
					break;
				sqlite3_exec(raw, f->start, NULL, NULL, NULL);
				count++;
			}
			snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", count);
			sqlite3_exec(raw, pragma, NULL, NULL, NULL);
			token_hash_hex(r, 64, hex);
			db_exec(raw, "INSERT INTO tokens (name, hash) VALUES ('old', ?)", "t", hex);
			sqlite3_close(raw);
		}
		ok(db_open(&db, path) == 0, "a store from before scopes opens (sql/012 runs)");
		ok(token_check_scoped(db, r, 64, &name, &scope) == 0 && scope == TOKEN_ADMIN,
		   "... and its token works as admin");
		free(name);
		free(r);
		free(w);
	}

	free(a);
	free(b);
	db_close(db);
	unlink(path);
	{
		char wal[80];
		snprintf(wal, sizeof(wal), "%s-wal", path);
		unlink(wal);
		snprintf(wal, sizeof(wal), "%s-shm", path);
		unlink(wal);
	}
	rmdir(dir);
	return done_testing();
}
