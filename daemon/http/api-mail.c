/* api-mail.c: POST /mail/release and /mail/{id}/release: mail held by the bulk-mail guard goes out. */
#include "api-int.h"
#include "guard.h"
#include "serve.h"

void api_post_mail_release(struct api_request *req, struct api_response *res,
			   json_t *body)
{
	long long id = req->id;
	int n = guard_release(req->app.bc.db, &id, id > 0, req->app.bc.actor);

	(void)body;
	if (n < 0) {
		api_fail(res, n);
		return;
	}
	api_json(res, 200,
		 json_pack("{s:i, s:I}", "released", n, "held",
			   (json_int_t)guard_held_count(req->app.bc.db)));
	serve_wake(); /* the daemon delivers what is due */
}
