/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* One place for topsprof's own messages: errors, warnings, debug lines (and libbpf's). */
#ifndef TOPSPROF_LOG_H
#define TOPSPROF_LOG_H

#include <stdarg.h>
#include <stdbool.h>

#include <bpf/libbpf.h>

void log_set_debug(bool on);
bool log_debug_enabled(void);

void pr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* libbpf_set_print() callback: libbpf's messages only under --debug */
int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap);

#endif
