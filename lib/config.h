/* config.h: stableq's settings, `key = value` lines (config/stableq.conf documents them). */
#ifndef STABLEQ_CONFIG_H
#define STABLEQ_CONFIG_H

/*
 * One stable branch stableq keeps a queue for: a `[branch KEY]` section of
 * the file, or, when the file has none, the top-level keys (the default
 * branch, its key "X.Y" from `branch = linux-X.Y.y`, else the git branch
 * name). Keys a section does not give inherit the top-level value. Owned
 * by the config.
 */
struct branch_conf {
	char *key;              /* "6.1", "6.12": --branch, ?branch= */
	char *branch;           /* the git branch: linux-6.12.y */
	char *linux_source;
	char *tree_dir;
	char *build_dir;
	char *queue_dir;
	char *queue_seed;
	char *kernel_config_dir;
	char *tests_file;
	char *guest_config;
	char *arches;           /* the matrix: "x86_64 arm64" */
	char *compilers;        /* "gcc clang" */
	char *broad_config_dir;
	char *debian_changelog;
	char *coverage_build_dir;
	char *coverage_boot;
	char *upstream_repo;
	char *stable_queue_repo;
};

/*
 * All strings are owned by the config and freed by config_free(). Relative
 * paths are taken relative to the directory stableq runs in. The per-branch
 * fields below (branch, linux_source, tree_dir, ...) point at the selected
 * branch's values in branches (config_select_branch(); the first branch
 * after config_load()): change a branch's value there, not through them. A
 * shallow copy of the struct may select another branch without touching
 * the original.
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
	char *guest_config;     /* quick | broad: kbuild/guestconf.h */
	char *arches;           /* the cells' architectures: x86_64 arm64 */
	char *compilers;        /* and compilers: gcc clang (runs/cell.h) */
	char *broad_config_dir; /* the broad guest's fragments */
	char *kunit_deny;       /* KUnit suites the broad guest leaves out */
	char *upstream_repo;    /* optional */
	char *stable_queue_repo; /* optional */
	char *qemu_accel;       /* auto | tcg | kvm */
	char *auto_revert;      /* yes | plan | propose */
	int revert_daily_limit; /* automatic reverts a day per branch */
	int revert_grace;       /* propose: seconds the author has to answer */
	char *test_baseline;    /* yes: failures are compared with the tip */
	char *baseline_idle;    /* yes: the daemon runs a new tip's baseline when idle */
	int candidates_pending_max; /* pending candidates a token may ask for */
	char *smtp_url;
	char *mail_from;
	char *mail_cc;          /* comma-separated */
	char *read_access;      /* loopback | open | token */
	char *web_root;         /* optional: serve web/ from disk */
	char *public_url;       /* links in KCIDB and LAVA exports; "": http://LISTEN */
	char *coverage_build_dir; /* build coverage: one O= per arch below it */
	char *coverage_config;  /* KCONFIG_ALLCONFIG of its allmodconfig */
	char *coverage_boot;    /* yes: a gcov boot counts each patch's executed lines */
	int make_jobs;
	int cell_jobs;          /* cells of a candidate at once; 0: one per CPU */
	int build_timeout;      /* seconds */
	int boot_timeout;       /* seconds */
	int qemu_memory;        /* MiB */
	int bisect_confirm;     /* repeats of each confirmation */
	int test_retries;       /* boots again while a test only failed */
	int build_cache_mb;     /* the build cache's bound; 0: no cache */
	int mail_max_attempts;
	int mail_backoff;       /* seconds, doubled per attempt */
	long max_patch_bytes;   /* one imported file or API body */
	int http_connections;
	int http_timeout;       /* seconds */
	int http_request_timeout; /* seconds for a request's headers and body */
	char *http_hosts;       /* Host names served besides loopback's; space/comma-separated */
	int poll_interval;      /* seconds between daemon passes */
	char *debian_changelog; /* changelog.Debian.gz of the tree's source package; "" none */
	int mail_bulk_limit;    /* more recipients than this in one step: the mail waits */
	int mail_max_recipients; /* To + Cc of one mail; more: Cc cut and the mail held */
	int min_soak_days;      /* days a fix is upstream in a tagged release before it is queued */
	char *intake_maildir;   /* maildirs the list's mail arrives in, ","-separated; "" none */
	char *intake_inbox;     /* public-inbox v2 archives (INBOX/git/N.git), ","-separated */
	char *rc_list;          /* where `stableq rc` sends the review series */
	int rc_window;          /* seconds from an -rc to its deadline (48 h) */
	char *regressions_list; /* stableq's confirmed culprits, for regzbot; "" none */
	char *rc_cc;            /* whom the rc's cover Cc's (testers), an address list */
	char *rc_git_url;       /* the git tree testers fetch the rc's tag from; "" none */
	char *release_signoff;  /* "Name <addr>": the Signed-off-by a release adds */
	char *tester_identity;  /* "Name <addr>": stableq's Tested-by on its own rc; "" none */
	char *sandbox;          /* bwrap | none: how code from a patch runs (sandbox.h) */
	char *build_user;       /* stableq as root: the user builds run as */
	int build_memory_mb;    /* RLIMIT_AS of each process of a build; 0: none */
	char *intake_build;     /* none | trusted: list mail built before a maintainer queues it */
	char *intake_trusted;   /* senders whose list mail is built (trusted) */
	struct branch_conf *branches; /* in file order; at least one */
	int nbranches;
	int selected;           /* index of the branch the fields above hold */
	const char *branch_key; /* its key (borrowed from branches) */
	int branches_owned;     /* the per-branch fields above are borrowed */
};

/* Fills defaults, then reads path (NULL: defaults only). Negative on a bad file. */
int config_load(struct config *c, const char *path);
void config_free(struct config *c);
/*
 * The branch named key, or the first one when key is NULL; NULL (with an
 * error listing the known keys) when there is no such branch.
 */
const struct branch_conf *config_branch(const struct config *c,
					const char *key);
/*
 * Points the per-branch fields of c at branch key's values (NULL: the
 * first branch). Negative, c unchanged, for an unknown key.
 */
int config_select_branch(struct config *c, const char *key);

/* Prints every key with its value, for `stableq config`. */
void config_dump(const struct config *c, void (*emit)(const char *line));

#endif
