// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "log.h"

#include <stdio.h>

static bool debug_on;

void log_set_debug(bool on)
{
	debug_on = on;
}

bool log_debug_enabled(void)
{
	return debug_on;
}

static void emit(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "topsprof: %s: ", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("error", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("warning", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (!debug_on)
		return;
	va_start(ap, fmt);
	emit("debug", fmt, ap);
	va_end(ap);
}

int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!debug_on)
		return 0;
	fputs("topsprof: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}
