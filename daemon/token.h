/* token.h: API tokens: random secrets shown once, stored as SHA-256, checked in constant time. */
#ifndef STABLEQ_TOKEN_H
#define STABLEQ_TOKEN_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>

/* A secret is 32 random bytes in hex; a name is [A-Za-z0-9._@-]{1,64}. */
#define TOKEN_SECRET_HEX 64
#define TOKEN_NAME_MAX 64

/* 0 if name is a valid token name, else ERR_INVALID with err_msg(). */
int token_name_check(const char *name);

/*
 * Creates the token name (one transaction, with an event by actor):
 * *secret gets the secret, NUL-terminated, TOKEN_SECRET_HEX + 1 bytes
 * (caller frees), which is shown once and never stored. ERR_EXISTS if the
 * name is taken, ERR_INVALID for a bad name.
 */
int token_add(sqlite3 *db, const char *name, const char *actor,
	      char **secret);

/*
 * What a token may do, each scope including the ones before it: read the
 * API; write (import, flag, override, candidates); admin (revert, release
 * held mail). Tokens made before scopes are admin (sql/012).
 */
enum token_scope { TOKEN_READ = 1, TOKEN_WRITE = 2, TOKEN_ADMIN = 3 };

/* "read", "write", "admin"; NULL for anything else. */
const char *token_scope_name(int scope);
/* The scope named s, or ERR_INVALID naming it and the known ones. */
int token_scope_parse(const char *s);

/* token_add() with a scope (token_add() makes admin tokens). */
int token_add_scoped(sqlite3 *db, const char *name, int scope,
		     const char *actor, char **secret);

/* Removes the token name (with an event). ERR_NOTFOUND if there is none. */
int token_remove(sqlite3 *db, const char *name, const char *actor);

/*
 * Checks a presented secret (len bytes, not necessarily NUL-terminated)
 * against every stored token, in constant time per token and without
 * stopping at a match. 0 and *name (caller frees) on a match, ERR_AUTH
 * otherwise (ERR_IO if the store cannot be read).
 */
int token_check(sqlite3 *db, const char *secret, size_t len, char **name);
/* The same, with the token's scope in *scope. */
int token_check_scoped(sqlite3 *db, const char *secret, size_t len,
		       char **name, int *scope);

/* [{id, name, scope, created_at}] by name; a new reference or NULL (err_msg()). */
json_t *token_list_json(sqlite3 *db);

/* sha256 of data as 64 lowercase hex digits + NUL into hex[65]. */
void token_hash_hex(const void *data, size_t len, char hex[65]);

#endif
