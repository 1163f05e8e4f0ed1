/* file.h: whole files and directories: atomic writes, mkdir -p, rm -rf (reading a file is strbuf_read_file()). */
#ifndef STABLEQ_FILE_H
#define STABLEQ_FILE_H

#include <stddef.h>

/* Writes data to path atomically (temp file + rename). 0 or -1 (err_set). */
int write_file_atomic(const char *path, const void *data, size_t len);

/* Creates dir and its parents (mkdir -p); 0 or negative (err_set). */
int mkdir_p(const char *dir);
/*
 * Opens rel (a relative path) below dir without following a symlink in
 * any of its components or leaving dir ("..", an absolute rel): for what
 * an untrusted writer (a build, sandbox.h) left there. flags as open(2)'s
 * (O_NOFOLLOW and O_CLOEXEC are added). The fd, or negative with
 * err_msg() naming the component that is a symlink.
 */
int file_open_beneath(const char *dir, const char *rel, int flags);
/* 1 when prog is an executable file in $PATH (as execvp would find it). */
int file_in_path(const char *prog);
/* rm -rf path (never follows symlinks); 0 when gone, or negative (err_set). */
int rm_rf(const char *path);

#endif
