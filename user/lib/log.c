// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/log.h"

#include "lib/outfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool debug_on, debug_quiet;
static struct outfile tee;
static bool tee_open;

void log_set_debug(bool on)
{
	debug_on = on;
}

void log_set_debug_quiet(bool quiet)
{
	debug_quiet = quiet;
}

bool log_debug_enabled(void)
{
	return debug_on;
}

int log_tee_open(const char *path, bool force, char *err, size_t errlen)
{
	if (outfile_open(&tee, path, force, err, errlen))
		return -1;
	tee_open = true;
	return 0;
}

int log_tee_close(char *err, size_t errlen)
{
	if (!tee_open)
		return 0;
	tee_open = false;
	return outfile_commit(&tee, err, errlen);
}

/* buf with every control character but line breaks and tabs shown as '?': names another user's
 * process chose (its command, its topstx messages, a session's) never reach a terminal as
 * escape sequences */
static void write_printable(FILE *f, const char *buf, size_t len)
{
	size_t from = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t')
			continue;
		fwrite(buf + from, 1, i - from, f);
		fputc('?', f);
		from = i + 1;
	}
	fwrite(buf + from, 1, len - from, f);
}

/* whole, even from several threads at once (the collectors open on threads) */
void out_write(FILE *stream, bool quiet, const char *buf, size_t len)
{
	if (!quiet) {
		flockfile(stream);
		write_printable(stream, buf, len);
		fflush(stream);
		funlockfile(stream);
	}
	if (tee_open) {
		flockfile(tee.f);
		write_printable(tee.f, buf, len);
		funlockfile(tee.f);
	}
}

static ssize_t out_stream_write(void *cookie, const char *buf, size_t len)
{
	out_write(stdout, cookie != NULL, buf, len);
	return (ssize_t)len;
}

FILE *out_stream(bool quiet)
{
	static const cookie_io_functions_t io = { .write = out_stream_write };
	FILE *f;

	if (quiet && !tee_open)
		return NULL;
	f = fopencookie(quiet ? (void *)1 : NULL, "w", io);
	/* a chunk at a time to out_write: whole lines but for the last */
	if (f)
		setvbuf(f, NULL, _IOFBF, 1 << 16);
	return f;
}

static void out_vprint_q(FILE *stream, bool quiet, const char *fmt, va_list ap)
{
	char small[1024], *buf = small;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (buf)
			vsnprintf(buf, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	if (buf && n > 0)
		out_write(stream, quiet, buf, (size_t)n);
	if (buf != small)
		free(buf);
}

static void out_vprint(FILE *stream, const char *fmt, va_list ap)
{
	out_vprint_q(stream, false, fmt, ap);
}

void out_print(FILE *stream, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprint(stream, fmt, ap);
	va_end(ap);
}

void out_fprint_quiet(FILE *stream, bool quiet, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprint_q(stream, quiet, fmt, ap);
	va_end(ap);
}

void out_print_quiet(bool quiet, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprint_q(stdout, quiet, fmt, ap);
	va_end(ap);
}

static void emit_q(bool quiet, const char *kind, const char *fmt, va_list ap)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "topsprof: %s: ", kind);

	out_write(stderr, quiet, head, (size_t)n);
	out_vprint_q(stderr, quiet, fmt, ap);
	out_write(stderr, quiet, "\n", 1);
}

static void emit(const char *kind, const char *fmt, va_list ap)
{
	emit_q(false, kind, fmt, ap);
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
	emit_q(debug_quiet, "debug", fmt, ap);
	va_end(ap);
}

int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!debug_on)
		return 0;
	out_write(stderr, debug_quiet, "topsprof: libbpf: ", sizeof("topsprof: libbpf: ") - 1);
	out_vprint_q(stderr, debug_quiet, fmt, ap);
	return 0;
}
