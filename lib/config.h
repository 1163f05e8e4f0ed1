/* config.h: stableq's settings, `key = value` lines (config/stableq.conf documents them). */
#ifndef STABLEQ_CONFIG_H
#define STABLEQ_CONFIG_H

/*
 * All strings are owned by the config and freed by config_free(). Relative
 * paths are taken relative to the directory stableq runs in.
 */
struct config {
	char *path;             /* the file read, or NULL for defaults only */
	char *db;
	char *var_dir;
	char *listen;           /* host:port */
	char *branch;
	char *linux_source;     /* the linux-source-6.1 tarball */
	char *tree_dir;         /* the git repository of the stable tree */
	char *build_dir;        /* O= of kernel builds */
	char *ccache_dir;
	char *icecc;            /* "": local builds; "on" or HOST[:PORT]: icecream farm */
	char *build_cache_dir;  /* built states; "": VAR_DIR/build-cache */
	char *queue_dir;        /* the quilt directory stableq processes */
	char *queue_seed;       /* copied into a missing queue_dir at start */
	char *kernel_config_dir;
	char *tests_file;
	char *upstream_repo;    /* optional */
	char *stable_queue_repo; /* optional */
	char *qemu_accel;       /* auto | tcg | kvm */
	char *auto_revert;      /* yes | plan */
	char *smtp_url;
	char *mail_from;
	char *mail_cc;          /* comma-separated */
	char *read_access;      /* loopback | open | token */
	char *web_root;         /* optional: serve web/ from disk */
	char *public_url;       /* links in KCIDB and LAVA exports; "": http://LISTEN */
	char *coverage_build_dir; /* build coverage: one O= per arch below it */
	char *coverage_config;  /* KCONFIG_ALLCONFIG of its allmodconfig */
	int make_jobs;
	int build_timeout;      /* seconds */
	int boot_timeout;       /* seconds */
	int qemu_memory;        /* MiB */
	int bisect_confirm;     /* repeats of each confirmation */
	int build_cache_mb;     /* the build cache's bound; 0: no cache */
	int mail_max_attempts;
	int mail_backoff;       /* seconds, doubled per attempt */
	long max_patch_bytes;   /* one imported file or API body */
	int http_connections;
	int http_timeout;       /* seconds */
	int http_request_timeout; /* seconds for a request's headers and body */
	int poll_interval;      /* seconds between daemon passes */
	char *debian_changelog; /* changelog.Debian.gz of the tree's source package; "" none */
	int mail_bulk_limit;    /* more recipients than this in one step: the mail waits */
};

/* Fills defaults, then reads path (NULL: defaults only). Negative on a bad file. */
int config_load(struct config *c, const char *path);
void config_free(struct config *c);
/* Prints every key with its value, for `stableq config`. */
void config_dump(const struct config *c, void (*emit)(const char *line));
/* The table of keys, for documentation tests. NULL-terminated names. */
const char *const *config_keys(void);

#endif
