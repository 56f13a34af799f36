// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Output files (outfile.c): planted symlinks never followed, existing files kept unless forced,
 * the umask followed, a full disk named, nothing left behind (not even after SIGKILL: the file
 * has no name until it is complete), the directory opened once, a directory others can change
 * said. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/outfile.h"

/* outfile.c's random names, made predictable when a test asks, to plant links at them */
static bool fixed_random;
static uint64_t next_random;

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	if (fixed_random && len == sizeof(uint64_t)) {
		uint64_t v = next_random++;

		memcpy(buf, &v, sizeof(v));
		return (ssize_t)len;
	}
	return syscall(SYS_getrandom, buf, len, flags);
}

/* a file system without O_TMPFILE, when a test asks: outfile.c falls back to named files */
static bool refuse_tmpfile;

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (refuse_tmpfile && (flags & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

/* a kernel before 6.10, where linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH: refused as it
 * refuses it (ENOENT), when a test asks */
static bool refuse_empty_path;

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	if (refuse_empty_path && (flags & AT_EMPTY_PATH)) {
		errno = ENOENT;
		return -1;
	}
	return (int)syscall(SYS_linkat, olddirfd, oldpath, newdirfd, newpath, flags);
}

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_outfile.XXXXXX");
	assert_non_null(mkdtemp(dir));
	fixed_random = false;
	refuse_tmpfile = false;
	refuse_empty_path = false;
	umask(022);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	umount2(dir, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* the names in d, sorted, joined with spaces */
static const char *listing(const char *d)
{
	static char out[4096];
	struct dirent **names;
	int n = scandir(d, &names, NULL, alphasort);

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
				 out[0] ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return out;
}

/* write text to path through the mechanism; 0 or -1 with err */
static int write_out(const char *path, bool force, const char *text, char *err, size_t errlen)
{
	struct outtarget t;
	struct outfile o;
	int rc;

	if (outtarget_file(&t, path, force, err, errlen))
		return -1;
	rc = outfile_create(&o, &t, NULL, err, errlen);
	if (!rc) {
		fputs(text, o.f);
		rc = outfile_commit(&o, err, errlen);
	}
	outtarget_close(&t);
	return rc;
}

static void test_symlink_at_final_name(void **state)
{
	char path[128], victim[128], buf[64], err[512];
	struct stat st;

	(void)state;
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	put(victim, "precious");
	assert_int_equal(symlink(victim, path), 0);
	/* without --force-overwrite: refused, the link and its target as they were */
	assert_int_equal(write_out(path, false, "new", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out.txt: exists"));
	assert_string_equal(slurp(victim, buf, sizeof(buf)), "precious");
	/* with it: the link itself is replaced, never written through */
	assert_int_equal(write_out(path, true, "new", err, sizeof(err)), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(slurp(path, buf, sizeof(buf)), "new");
	assert_string_equal(slurp(victim, buf, sizeof(buf)), "precious");
	assert_string_equal(listing(dir), "out.txt victim");
}

/* a link planted where the temporary file (or the private directory) will be is not followed:
 * the name is taken as in use and another is made */
static void test_symlink_at_temp_names(void **state)
{
	char path[128], victim[128], link[256], buf[64], err[512];
	struct outtarget t;
	struct outfile o;

	(void)state;
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	put(victim, "precious");
	fixed_random = true;
	next_random = 100;
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	/* the names the next random values give */
	for (uint64_t r = next_random; r < next_random + 4; r++) {
		snprintf(link, sizeof(link), "%s/.out.txt.%016llx.tmp", dir, (unsigned long long)r);
		assert_int_equal(symlink(victim, link), 0);
		snprintf(link, sizeof(link), "%s/.topsprof-%016llx", dir, (unsigned long long)r);
		assert_int_equal(symlink(dir, link), 0);
	}
	assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
	fputs("new", o.f);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	/* the private variant, past links planted for its directory */
	assert_int_equal(outfile_create_private(&o, &t, "db.vpd", err, sizeof(err)), 0);
	{
		int fd = open(o.db, O_WRONLY | O_NOFOLLOW);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "db", 2), 2);
		close(fd);
	}
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	outtarget_close(&t);
	assert_string_equal(slurp(victim, buf, sizeof(buf)), "precious");
	assert_string_equal(slurp(path, buf, sizeof(buf)), "new");
	snprintf(link, sizeof(link), "%s/db.vpd", dir);
	assert_string_equal(slurp(link, buf, sizeof(buf)), "db");
	/* --force-overwrite: the nameless file is linked at a temporary name first, past links
	 * planted there, then renamed over the final name */
	next_random = 200;
	for (uint64_t r = next_random; r < next_random + 4; r++) {
		snprintf(link, sizeof(link), "%s/.out.txt.%016llx.tmp", dir, (unsigned long long)r);
		assert_int_equal(symlink(victim, link), 0);
	}
	assert_int_equal(write_out(path, true, "forced", err, sizeof(err)), 0);
	fixed_random = false;
	assert_string_equal(slurp(victim, buf, sizeof(buf)), "precious");
	assert_string_equal(slurp(path, buf, sizeof(buf)), "forced");
}

static void test_existing_file(void **state)
{
	char path[128], buf[64], err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	put(path, "keep");
	assert_int_equal(write_out(path, false, "new", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exists (use --force-overwrite to replace it)"));
	assert_string_equal(slurp(path, buf, sizeof(buf)), "keep");
	assert_int_equal(write_out(path, true, "new", err, sizeof(err)), 0);
	assert_string_equal(slurp(path, buf, sizeof(buf)), "new");
	assert_string_equal(listing(dir), "out.csv");
}

/* another rank's file that appeared while we wrote: kept without --force-overwrite */
static void test_appeared_during_write(void **state)
{
	char path[128], buf[64], err[512];
	struct outtarget t;
	struct outfile o;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.prof", dir);
	for (int force = 0; force < 2; force++) {
		for (int priv = 0; priv < 2; priv++) {
			unlink(path);
			assert_int_equal(outtarget_file(&t, path, force, err, sizeof(err)), 0);
			if (priv) {
				int fd;

				assert_int_equal(
					outfile_create_private(&o, &t, NULL, err, sizeof(err)), 0);
				fd = open(o.db, O_WRONLY);
				assert_true(fd >= 0);
				assert_int_equal(write(fd, "new", 3), 3);
				close(fd);
			} else {
				assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
				fputs("new", o.f);
			}
			put(path, "other");
			if (force) {
				assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
				assert_string_equal(slurp(path, buf, sizeof(buf)), "new");
			} else {
				assert_int_equal(outfile_commit(&o, err, sizeof(err)), -1);
				assert_non_null(
					strstr(err, "out.prof: appeared while topsprof ran"));
				assert_string_equal(slurp(path, buf, sizeof(buf)), "other");
			}
			outtarget_close(&t);
			assert_string_equal(listing(dir), "out.prof");
		}
	}
}

static void test_umask(void **state)
{
	char path[128], err[512];
	struct outtarget t;
	struct outfile o;
	struct stat st;
	int fd;

	(void)state;
	umask(027);
	snprintf(path, sizeof(path), "%s/a.json", dir);
	assert_int_equal(write_out(path, false, "{}", err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* the private variant (SQLite's) too */
	snprintf(path, sizeof(path), "%s/b.vpd", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	assert_int_equal(outfile_create_private(&o, &t, NULL, err, sizeof(err)), 0);
	fd = open(o.db, O_WRONLY);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	outtarget_close(&t);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* a directory output made here follows it too */
	snprintf(path, sizeof(path), "%s/vpd", dir);
	assert_int_equal(outtarget_dir(&t, path, false, err, sizeof(err)), 0);
	outtarget_close(&t);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	umask(0);
	snprintf(path, sizeof(path), "%s/c.txt", dir);
	assert_int_equal(write_out(path, false, "x", err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0666);
	umask(022);
}

static bool small_tmpfs(unsigned long flags)
{
	if (mount("tmpfs", dir, "tmpfs", flags, "size=64k")) {
		/* said, not hidden: the case is not checked here */
		fprintf(stderr, "SKIPPED: cannot mount a tmpfs on %s: %s\n", dir, strerror(errno));
		return false;
	}
	return true;
}

static void test_full_disk(void **state)
{
	char path[128], filler[128], err[512], *big = malloc(256 << 10);
	struct outtarget t;
	struct outfile o;
	int fd;

	(void)state;
	assert_non_null(big);
	if (!small_tmpfs(0)) {
		free(big);
		skip();
	}
	memset(big, 'x', 256 << 10);
	snprintf(path, sizeof(path), "%s/big.prof", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
	fwrite(big, 1, 256 << 10, o.f);
	/* a writer sees its writes fail, not memory */
	assert_int_equal(outfile_write_error(&o), ENOSPC);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "big.prof: No space left on device"));
	assert_string_equal(listing(dir), "");
	/* the same when the failure is seen only at the end: the disk nearly full, the content
	 * still in the stream's buffer */
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	fd = open(filler, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, big, 56 << 10), 56 << 10);
	close(fd);
	assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
	for (int i = 0; i < 12; i++)
		fwrite(big, 1, 1 << 10, o.f);
	assert_int_equal(outfile_write_error(&o), 0);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "big.prof: No space left on device"));
	assert_string_equal(listing(dir), "filler");
	unlink(filler);
	/* and with the private variant */
	assert_int_equal(outfile_create_private(&o, &t, NULL, err, sizeof(err)), 0);
	fd = open(o.db, O_WRONLY);
	assert_true(fd >= 0);
	assert_true(write(fd, big, 256 << 10) < 256 << 10);
	close(fd);
	outfile_abort(&o);
	assert_string_equal(listing(dir), "");
	outtarget_close(&t);
	free(big);
}

static void test_unwritable_dirs(void **state)
{
	char path[128], err[512];
	struct outtarget t;

	(void)state;
	snprintf(path, sizeof(path), "%s/missing/x.csv", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "missing/x.csv: No such file or directory"));
	snprintf(path, sizeof(path), "%s/missing/deeper", dir);
	assert_int_equal(outtarget_dir(&t, path, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "missing/deeper: No such file or directory"));
	/* a read-only mount: found when the outputs are prepared, not at the end of the run */
	if (!small_tmpfs(MS_RDONLY))
		skip();
	snprintf(path, sizeof(path), "%s/x.csv", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "x.csv: Read-only file system"));
	assert_int_equal(outtarget_dir(&t, dir, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "Read-only file system"));
}

/* the directory is the one opened when the outputs were prepared, even if the path changes */
static void test_directory_opened_once(void **state)
{
	char sub[96], moved[96], path[160], buf[64], err[512];
	struct outtarget t, d;
	struct outfile o;
	int fd;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/out", dir);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/x.csv", sub);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	assert_int_equal(outtarget_dir(&d, sub, false, err, sizeof(err)), 0);
	assert_int_equal(rename(sub, moved), 0);
	/* a new directory, then a link to elsewhere, at the old path */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
	fputs("here", o.f);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(symlink("/", sub), 0);
	assert_int_equal(outfile_create_private(&o, &d, "p.vpd", err, sizeof(err)), 0);
	fd = open(o.db, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "db", 2), 2);
	close(fd);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	outtarget_close(&t);
	outtarget_close(&d);
	snprintf(path, sizeof(path), "%s/x.csv", moved);
	assert_string_equal(slurp(path, buf, sizeof(buf)), "here");
	snprintf(path, sizeof(path), "%s/p.vpd", moved);
	assert_string_equal(slurp(path, buf, sizeof(buf)), "db");
	assert_string_equal(listing(moved), "p.vpd x.csv");
	assert_int_equal(access("/p.vpd", F_OK), -1);
	assert_int_equal(access("/x.csv", F_OK), -1);
}

/* aborting, failing or committing: no temporary file or private directory stays */
static void test_nothing_left_behind(void **state)
{
	char path[128], err[512];
	struct outtarget t;
	struct outfile o;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/x.raw", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	assert_string_equal(listing(dir), "");
	assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
	fputs("half", o.f);
	outfile_abort(&o);
	assert_string_equal(listing(dir), "");
	/* SQLite leaves a journal beside its file: it goes with the private directory */
	assert_int_equal(outfile_create_private(&o, &t, NULL, err, sizeof(err)), 0);
	{
		char journal[sizeof(o.db) + 16];

		snprintf(journal, sizeof(journal), "%s-journal", o.db);
		fd = open(journal, O_WRONLY | O_CREAT, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	outfile_abort(&o);
	assert_string_equal(listing(dir), "");
	assert_int_equal(outfile_create_private(&o, &t, NULL, err, sizeof(err)), 0);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	assert_string_equal(listing(dir), "x.raw");
	outtarget_close(&t);
	/* outfile_open by path (the log file, --export-activities) is the same mechanism */
	snprintf(path, sizeof(path), "%s/run.log", dir);
	assert_int_equal(outfile_open(&o, path, false, err, sizeof(err)), 0);
	fputs("log", o.f);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	assert_int_equal(outfile_open(&o, path, false, err, sizeof(err)), -1);
	assert_int_equal(outfile_check(path, true, err, sizeof(err)), 0);
	assert_string_equal(listing(dir), "run.log x.raw");
}

/* a directory at the output's name is refused even with --force-overwrite */
static void test_directory_at_name(void **state)
{
	char path[128], err[512];
	struct outtarget t;

	(void)state;
	snprintf(path, sizeof(path), "%s/d", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(outtarget_file(&t, path, true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/d: is a directory"));
	snprintf(path, sizeof(path), "%s/d/", dir);
	assert_int_equal(outtarget_file(&t, path, true, err, sizeof(err)), -1);
	/* a link where a directory output would be made is not followed */
	snprintf(path, sizeof(path), "%s/vpd", dir);
	assert_int_equal(symlink("/nonexistent-target", path), 0);
	assert_int_equal(outtarget_dir(&t, path, false, err, sizeof(err)), -1);
}

/* the file has no name until it is complete: a SIGKILL while it is written leaves nothing;
 * where the file system has no O_TMPFILE, a named temporary file, removed on failure */
static void test_unnamed_until_complete(void **state)
{
	char path[128], buf[64], err[512];
	struct outtarget t;
	struct outfile o;
	int status;
	pid_t pid;

	(void)state;
	snprintf(path, sizeof(path), "%s/x.raw", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
	assert_true(o.unnamed);
	fputs("data", o.f);
	fflush(o.f);
	assert_string_equal(listing(dir), "");
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	assert_string_equal(listing(dir), "x.raw");
	assert_string_equal(slurp(path, buf, sizeof(buf)), "data");
	unlink(path);
	/* killed while writing */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (outfile_create(&o, &t, NULL, err, sizeof(err)))
			_exit(1);
		fputs("half", o.f);
		fflush(o.f);
		raise(SIGKILL);
		_exit(1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_string_equal(listing(dir), "");
	/* without O_TMPFILE: a named temporary while it is written, nothing after a failure */
	refuse_tmpfile = true;
	assert_int_equal(outfile_create(&o, &t, NULL, err, sizeof(err)), 0);
	assert_false(o.unnamed);
	fputs("named", o.f);
	assert_non_null(strstr(listing(dir), ".x.raw."));
	put(path, "other");
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "x.raw: appeared while topsprof ran"));
	assert_string_equal(listing(dir), "x.raw");
	unlink(path);
	assert_int_equal(write_out(path, false, "named", err, sizeof(err)), 0);
	assert_string_equal(slurp(path, buf, sizeof(buf)), "named");
	assert_int_equal(write_out(path, true, "again", err, sizeof(err)), 0);
	assert_string_equal(slurp(path, buf, sizeof(buf)), "again");
	assert_string_equal(listing(dir), "x.raw");
	outtarget_close(&t);
}

/* a user without CAP_DAC_READ_SEARCH: the nameless file linked with AT_EMPTY_PATH where the
 * kernel lets its opener do so (6.10 on), else through /proc */
static void test_unnamed_not_root(void **state)
{
	char path[128], buf[64], err[512];
	struct stat st;
	int status;
	pid_t pid;

	(void)state;
	if (geteuid()) {
		fprintf(stderr, "SKIPPED: needs root to become another user\n");
		skip();
	}
	assert_int_equal(chmod(dir, 0777), 0);
	for (int old_kernel = 0; old_kernel < 2; old_kernel++) {
		snprintf(path, sizeof(path), "%s/user%d.csv", dir, old_kernel);
		refuse_empty_path = old_kernel;
		pid = fork();
		assert_true(pid >= 0);
		if (!pid) {
			if (setgid(65534) || setuid(65534))
				_exit(2);
			_exit(write_out(path, false, "mine", err, sizeof(err)) ? 1 : 0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_int_equal(lstat(path, &st), 0);
		assert_int_equal(st.st_uid, 65534);
		assert_string_equal(slurp(path, buf, sizeof(buf)), "mine");
	}
	/* root on such a kernel: AT_EMPTY_PATH refused all the same, /proc works */
	snprintf(path, sizeof(path), "%s/root.csv", dir);
	assert_int_equal(write_out(path, false, "root", err, sizeof(err)), 0);
	assert_string_equal(slurp(path, buf, sizeof(buf)), "root");
	assert_string_equal(listing(dir), "root.csv user0.csv user1.csv");
}

/* a directory another user can change is said: they can replace the file once written */
static void test_exposed(void **state)
{
	char sub[96], path[160], want[256], msg[512];
	struct outtarget t;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/out", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/x.csv", sub);
	assert_int_equal(outtarget_file(&t, path, false, msg, sizeof(msg)), 0);
	assert_int_equal(outtarget_exposed(&t, msg, sizeof(msg)), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(outtarget_exposed(&t, msg, sizeof(msg)), 1);
	snprintf(want, sizeof(want),
		 "%s is writable by others: they can replace the file once written", sub);
	assert_string_equal(msg, want);
	/* the sticky bit: only the owner of a file may rename it */
	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(outtarget_exposed(&t, msg, sizeof(msg)), 0);
	assert_int_equal(chmod(sub, 0775), 0);
	assert_int_equal(outtarget_exposed(&t, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, " is writable by group "));
	if (!geteuid()) {
		assert_int_equal(chmod(sub, 0755), 0);
		assert_int_equal(chown(sub, 65534, 65534), 0);
		assert_int_equal(outtarget_exposed(&t, msg, sizeof(msg)), 1);
		assert_non_null(strstr(msg, " is writable by user "));
	}
	outtarget_close(&t);
	/* a directory that is the output: named itself */
	assert_int_equal(outtarget_dir(&t, sub, false, msg, sizeof(msg)), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	if (!geteuid())
		assert_int_equal(chown(sub, 0, 0), 0);
	assert_int_equal(outtarget_exposed(&t, msg, sizeof(msg)), 1);
	assert_string_equal(msg, want);
	outtarget_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_symlink_at_final_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_at_temp_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_appeared_during_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_opened_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_left_behind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_at_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unnamed_until_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unnamed_not_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exposed, setup, teardown),
	};

	return cmocka_run_group_tests_name("outfile", tests, NULL, NULL);
}
