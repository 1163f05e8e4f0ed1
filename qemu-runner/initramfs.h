/* initramfs.h: writes an uncompressed cpio "newc" archive, the initramfs. */
#ifndef STABLEQ_INITRAMFS_H
#define STABLEQ_INITRAMFS_H

#include <stddef.h>

/*
 * The kernel unpacks a newc cpio given as initrd into its rootfs (an
 * uncompressed one needs no decompressor in the tiny kernel). No external
 * cpio program is involved: the format is 110 bytes of ASCII hex per entry.
 *
 * An entry is one of the kinds below. Paths are archive paths ("/bin/busybox"
 * or "bin/busybox": a leading '/' is dropped); they must not be empty, hold
 * "." or ".." components or empty components, and must be shorter than 4096
 * bytes. Every entry is written with uid 0, gid 0 and mtime 0, so the same
 * inputs give the same bytes.
 */
enum initramfs_kind {
	INITRAMFS_DIR,     /* a directory */
	INITRAMFS_FILE,    /* a regular file copied from host_path */
	INITRAMFS_DATA,    /* a regular file holding data[0..len) */
	INITRAMFS_SYMLINK, /* a symbolic link to target */
	INITRAMFS_CHARDEV, /* a character device node (major, minor) */
};

struct initramfs_entry {
	enum initramfs_kind kind;
	const char *path;
	/*
	 * Permission bits (07777). 0 means a default: the host file's bits
	 * for INITRAMFS_FILE, 0755 for directories, 0644 for data, 0777 for
	 * symlinks, 0600 for device nodes.
	 */
	unsigned mode;
	const char *host_path; /* INITRAMFS_FILE */
	const void *data;      /* INITRAMFS_DATA */
	size_t len;            /* INITRAMFS_DATA */
	const char *target;    /* INITRAMFS_SYMLINK */
	unsigned major, minor; /* INITRAMFS_CHARDEV */
};

/*
 * Writes entries[0..n) to out_path (through a temporary file renamed into
 * place, so a reader never sees half an archive). Missing parent directories
 * of an entry are written first (mode 0755): the kernel's unpacker does not
 * create them. A path given twice is an error, and so is a file that changes
 * size while it is copied. Entries are borrowed.
 *
 * Returns 0, or ERR_INVALID (bad path, bad kind, duplicate), ERR_NOTFOUND (a
 * host file is missing), ERR_TOOBIG (a file of 4 GiB or more) or ERR_IO; the
 * err_msg() names the entry and the host file.
 */
int initramfs_write(const char *out_path, const struct initramfs_entry *entries,
		    size_t n);

#endif
