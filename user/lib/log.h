/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* One place for topsprof's own messages: errors, warnings, debug lines (and libbpf's). */
#ifndef TOPSPROF_LOG_H
#define TOPSPROF_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <bpf/libbpf.h>

void log_set_debug(bool on);
/* --quiet (without --debug asked for by name): debug lines go to the log file only */
void log_set_debug_quiet(bool quiet);
bool log_debug_enabled(void);

void pr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --log-file: from now on every line topsprof prints also goes to path (written atomically when
 * closed); 0, or -1 with the reason in err */
int log_tee_open(const char *path, bool force, char *err, size_t errlen);
/* finish the log file; 0, or -1 with the reason in err */
int log_tee_close(char *err, size_t errlen);

/* topsprof's own output to stream (stdout, or stderr) and the log file; quiet output goes to
 * the log file only */
void out_write(FILE *stream, bool quiet, const char *buf, size_t len);
/* a stream whose writes go to out_write(stdout, quiet, ...) as its buffer fills: a long report is
 * never held whole in memory. NULL when nothing would take them (quiet, and no log file) */
FILE *out_stream(bool quiet);
void out_print(FILE *stream, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* to standard output unless quiet, and the log file */
void out_print_quiet(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the same on stream */
void out_fprint_quiet(FILE *stream, bool quiet, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* libbpf_set_print() callback: libbpf's messages only under --debug */
int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap);

#endif
