/* app.c: shared set-up of commands: the store and the state directory. */
#include "app.h"
#include "db.h"
#include "err.h"
#include "strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


int app_open_db(struct app *app)
{
	char *dir = xstrdup(app->cfg.db), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash) {
		*slash = '\0';
		if (*dir)
			ret = mkdir_p(dir);
	}
	free(dir);
	if (ret < 0)
		return ret;
	return db_open(&app->db, app->cfg.db);
}
