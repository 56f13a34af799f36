// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "session.h"
#include "infile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* REPLY_WAIT_MS: a member on a busy host may take a while to get to its socket */
#define DEFAULT_DIR   "/run/topsprof"
#define REPLY_WAIT_MS 10000

struct session {
	char name[SESSION_NAME_MAX + 1];
	char dir[PATH_MAX];
	char sock[PATH_MAX + 32], info[PATH_MAX + 32];
	char command[1024];
	int fd;
	time_t since;
	bool collecting;
};

static const char *const actions[] = {
	[CTL_START] = "start", [CTL_STOP] = "stop", [CTL_CANCEL] = "cancel"
};

const char *session_dir(void)
{
	const char *d = getenv("TOPSPROF_RUN_DIR");

	return d && *d ? d : DEFAULT_DIR;
}

static bool alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* the shared directory every user may add to, each removing only their own: a real directory
 * (not a link), owned by root or by us; writable by others only with the sticky bit, so that
 * nobody can rename or remove another user's entries */
static int make_shared_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 01777) == 0) {
		chmod(path, 01777);
		return 0;
	}
	if (errno != EEXIST)
		return -errno;
	if (lstat(path, &st) || !S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != getuid()))
		return -EPERM;
	if ((st.st_mode & 0002) && !(st.st_mode & S_ISVTX) && chmod(path, st.st_mode | S_ISVTX))
		return -EPERM;
	return 0;
}

/* dir/name into out; false when it does not fit */
static bool path_join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n >= 0 && (size_t)n < len;
}

/* a directory that only its owner, uid, may change */
static bool owned_dir(const char *path, uid_t uid)
{
	struct stat st;

	return !lstat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == uid && !(st.st_mode & 0022);
}

/*
 * Each user's sessions live in a namespace of their own inside the shared directory: a
 * directory named after the uid ("1000"; "1000.Xk3aQ9" when someone else took the plain name
 * first), owned by that user and writable by nobody else. Another user can neither plant
 * entries in it nor, by taking a name, keep it from being made: names of theirs are ignored.
 */
static bool namespace_uid(const char *name, uid_t *uid)
{
	char *end;
	unsigned long v;

	if (name[0] < '0' || name[0] > '9')
		return false;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (errno || v > (uid_t)-1 || (*end && *end != '.'))
		return false;
	*uid = (uid_t)v;
	return true;
}

#define MAX_NAMESPACES 64

/* the namespaces in the shared directory: uid's own first (with mine_only, only those) */
static int namespaces(uid_t uid, bool mine_only, char (*out)[PATH_MAX], int max)
{
	DIR *d = opendir(session_dir());
	struct dirent *de;
	int n = 0, mine = 0;

	while (d && (de = readdir(d)) && n < max) {
		uid_t owner;

		if (!namespace_uid(de->d_name, &owner) || (mine_only && owner != uid))
			continue;
		snprintf(out[n], PATH_MAX, "%s/%s", session_dir(), de->d_name);
		if (!owned_dir(out[n], owner))
			continue;
		if (owner == uid && n > mine) { /* ours before the others' */
			char tmp[PATH_MAX];

			memcpy(tmp, out[mine], PATH_MAX);
			memcpy(out[mine], out[n], PATH_MAX);
			memcpy(out[n], tmp, PATH_MAX);
		}
		mine += owner == uid;
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* our namespace, made when there is none */
static int own_namespace(char *out, size_t len)
{
	char found[1][PATH_MAX];

	if (namespaces(getuid(), true, found, 1) == 1) {
		snprintf(out, len, "%s", found[0]);
		return 0;
	}
	snprintf(out, len, "%s/%u", session_dir(), (unsigned)getuid());
	if (mkdir(out, 0755) && errno != EEXIST)
		return -errno;
	if (!owned_dir(out, getuid())) {
		/* the plain name is someone else's: a name nobody can guess */
		snprintf(out, len, "%s/%u.XXXXXX", session_dir(), (unsigned)getuid());
		if (!mkdtemp(out))
			return -errno;
	}
	return chmod(out, 0755) ? -errno : 0;
}

/* a session's directory in our namespace: ours alone */
static int make_own_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return owned_dir(path, getuid()) ? 0 : -EPERM;
}

static int write_info(const struct session *s)
{
	char tmp[PATH_MAX + 64];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", s->info);
	unlink(tmp);
	/* a new file, never through a link */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	fprintf(f, "pid=%d\nuid=%u\nsince=%lld\nstate=%s\ncommand=%s\n", (int)getpid(),
		(unsigned)getuid(), (long long)s->since, s->collecting ? "collecting" : "paused",
		s->command);
	if (fclose(f))
		return -errno;
	return rename(tmp, s->info) ? -errno : 0;
}

/* members of a session directory: the pids of its sockets (made once, never replaced, so a
 * reader cannot miss one while an info file is rewritten); the files of processes gone are
 * removed */
static int members(const char *sdir, pid_t *pids, int max)
{
	DIR *d;
	struct dirent *de;
	struct stat dst, fst;
	int n = 0;

	if (lstat(sdir, &dst) || !S_ISDIR(dst.st_mode))
		return -ENOENT;
	d = opendir(sdir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		char path[PATH_MAX];
		bool sock = !strcmp(end, ".sock");

		if (end == de->d_name ||
		    (!sock && strncmp(end, ".info", 5) && strncmp(end, ".sock", 5)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", sdir, de->d_name);
		if (!alive((pid_t)pid)) {
			unlink(path);
			continue;
		}
		/* a member's socket is its owner's, in its owner's directory */
		if (sock && !lstat(path, &fst) && S_ISSOCK(fst.st_mode) &&
		    fst.st_uid == dst.st_uid && n < max)
			pids[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

/* session name's directory with live members, in our namespaces first (mine_only: only
 * there); its member count, or 0 */
static int find_session(const char *name, bool mine_only, char *sdir, size_t len, pid_t *pids,
			int max)
{
	char ns[MAX_NAMESPACES][PATH_MAX];
	int nns = namespaces(getuid(), mine_only, ns, MAX_NAMESPACES);

	for (int i = 0; i < nns; i++) {
		int n;

		if (!path_join(sdir, len, ns[i], name))
			continue;
		n = members(sdir, pids, max);
		if (n > 0)
			return n;
	}
	return 0;
}

int session_open(struct session **out, const char *name, bool join, const char *command,
		 bool collecting, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char ns[PATH_MAX];
	pid_t pids[64];
	int n, rc;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->fd = -1;
	if (name)
		snprintf(s->name, sizeof(s->name), "%s", name);
	else
		snprintf(s->name, sizeof(s->name), "%d", (int)getpid());
	snprintf(s->command, sizeof(s->command), "%s", command);
	s->since = time(NULL);
	s->collecting = collecting;
	rc = make_shared_dir(session_dir());
	if (rc) {
		named_errf(err, errlen, session_dir(), ": %s",
			   rc == -EPERM ? "not a directory of root's or ours" : strerror(-rc));
		goto fail;
	}
	n = find_session(s->name, true, s->dir, sizeof(s->dir), pids, 64);
	if (join && n <= 0) {
		snprintf(err, errlen, "--session %s: no such session (see topsprof --session-list)",
			 s->name);
		goto fail;
	}
	if (!join && n > 0) {
		snprintf(err, errlen,
			 "--session-new %s: the session exists (join it with --session)", s->name);
		goto fail;
	}
	if (!join) {
		rc = own_namespace(ns, sizeof(ns));
		if (rc) {
			named_errf(err, errlen, ns, ": %s", strerror(-rc));
			goto fail;
		}
		if (!path_join(s->dir, sizeof(s->dir), ns, s->name)) {
			snprintf(err, errlen, "session %s: the name is too long", s->name);
			goto fail;
		}
	}
	rc = make_own_dir(s->dir);
	if (rc) {
		snprintf(err, errlen, "session %s: %s", s->name,
			 rc == -EPERM ? "its directory belongs to another user" : strerror(-rc));
		s->dir[0] = '\0'; /* not ours to remove */
		goto fail;
	}
	snprintf(s->sock, sizeof(s->sock), "%s/%d.sock", s->dir, (int)getpid());
	snprintf(s->info, sizeof(s->info), "%s/%d.info", s->dir, (int)getpid());
	if (strlen(s->sock) + 4 >= sizeof(addr.sun_path)) {
		named_errf(err, errlen, s->sock, ": the path is too long for a socket");
		goto fail;
	}
	/* bound under a temporary name and put in place listening, after the info: a member is
	 * found by its socket, which then answers and has its info */
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s.tmp", s->sock);
	unlink(addr.sun_path);
	rc = write_info(s);
	if (rc) {
		named_errf(err, errlen, s->info, ": %s", strerror(-rc));
		goto fail;
	}
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    chmod(addr.sun_path, 0666) /* anyone may ask; the peer's credentials decide */ ||
	    listen(s->fd, 8) || rename(addr.sun_path, s->sock)) {
		named_errf(err, errlen, s->sock, ": %s", strerror(errno));
		unlink(addr.sun_path);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	session_close(s);
	return -1;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->sock[0])
		unlink(s->sock);
	if (s->info[0])
		unlink(s->info);
	if (s->dir[0])
		rmdir(s->dir);
	free(s);
}

const char *session_name(const struct session *s)
{
	return s->name;
}

int session_fd(const struct session *s)
{
	return s->fd;
}

void session_set_state(struct session *s, bool collecting)
{
	if (s->collecting == collecting)
		return;
	s->collecting = collecting;
	write_info(s);
}

static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && send(fd, buf, (size_t)n, MSG_NOSIGNAL) < 0)
		return;
}

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

enum control_action session_serve(struct session *s)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char line[64] = "", who[64], owner[64];
	enum control_action a = CTL_NONE;
	struct timespec wait = { 0, 1000000 };
	ssize_t n = -1;
	/* non-blocking: a client that connects and says nothing cannot hold topsprof up */
	int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	bool allowed;

	if (fd < 0)
		return CTL_NONE;
	allowed = !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) &&
		  (cred.uid == 0 || cred.uid == getuid());
	/* one short line, within 20 ms */
	for (int i = 0; allowed && i < 20 && n < 0; i++) {
		n = read(fd, line, sizeof(line) - 1);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			nanosleep(&wait, NULL);
		else if (n < 0)
			break;
	}
	if (n > 0) {
		line[n] = '\0';
		line[strcspn(line, "\r\n")] = '\0';
	}
	if (clen != sizeof(cred)) {
		reply(fd, "refused: cannot tell who asks\n");
	} else if (!allowed) {
		reply(fd, "refused: %s may not control session %s of %s (pid %d)\n",
		      user_name(cred.uid, who, sizeof(who)), s->name,
		      user_name(getuid(), owner, sizeof(owner)), (int)getpid());
	} else {
		for (int i = CTL_START; i <= CTL_CANCEL; i++)
			if (!strcmp(line, actions[i]))
				a = (enum control_action)i;
		if (a == CTL_NONE)
			reply(fd, "refused: '%s' is not start, stop or cancel\n", line);
		/* the state a list shows once the asker has its answer */
		else if (a != CTL_CANCEL)
			session_set_state(s, a == CTL_START);
		if (a != CTL_NONE)
			reply(fd, "ok %s %d\n", actions[a], (int)getpid());
	}
	close(fd);
	return a;
}

/* --- the client side ----------------------------------------------------------------------- */

/* each session with live members (mine_only: in our namespaces only): fn(directory, name,
 * members, count, ctx); a non-zero return stops the walk */
typedef int (*session_fn)(const char *sdir, const char *name, const pid_t *pids, int n, void *ctx);

static int each_session(bool mine_only, session_fn fn, void *ctx)
{
	char ns[MAX_NAMESPACES][PATH_MAX];
	int nns = namespaces(getuid(), mine_only, ns, MAX_NAMESPACES), rc = 0;

	for (int i = 0; i < nns && !rc; i++) {
		DIR *d = opendir(ns[i]);
		struct dirent *de;

		while (d && !rc && (de = readdir(d))) {
			char sdir[PATH_MAX];
			pid_t pids[64];
			int n;

			if (de->d_name[0] == '.')
				continue;
			if (!path_join(sdir, sizeof(sdir), ns[i], de->d_name))
				continue;
			n = members(sdir, pids, 64);
			if (n > 0)
				rc = fn(sdir, de->d_name, pids, n, ctx);
		}
		if (d)
			closedir(d);
	}
	return rc;
}

struct pick_ctx {
	char *sdir, *name;
	size_t len;
	int found;
};

static int pick_one(const char *sdir, const char *name, const pid_t *pids, int n, void *p)
{
	struct pick_ctx *c = p;

	(void)pids;
	(void)n;
	if (c->found++ == 0) {
		snprintf(c->sdir, c->len, "%s", sdir);
		snprintf(c->name, c->len, "%s", name);
	}
	return 0;
}

/* the session to control: named (ours, else another user's of that name), or the only one
 * there is (of ours; of anyone's when we have none); its directory and member count */
static int pick(const char *name, char *sdir, char *sname, size_t len, pid_t *pids, int max,
		char *err, size_t errlen)
{
	struct pick_ctx c = { sdir, sname, len, 0 };
	int n;

	if (!name) {
		each_session(true, pick_one, &c);
		if (!c.found)
			each_session(false, pick_one, &c);
		if (c.found != 1) {
			snprintf(err, errlen,
				 c.found ? "%d sessions are running: name one with --session NAME"
					 : "no session is running",
				 c.found);
			return -1;
		}
		name = sname;
	} else {
		snprintf(sname, len, "%s", name);
	}
	n = find_session(name, false, sdir, len, pids, max);
	if (n <= 0)
		snprintf(err, errlen, "--session %s: no such session (see topsprof --session-list)",
			 name);
	return n > 0 ? n : -1;
}

static int send_one(const char *sock, enum control_action a, char *reply_line, size_t len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { REPLY_WAIT_MS / 1000, (REPLY_WAIT_MS % 1000) * 1000 };
	char msg[16];
	ssize_t n;
	int sent;

	if (strlen(sock) >= sizeof(addr.sun_path)) {
		snprintf(reply_line, len, "refused: its socket path is too long");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(addr.sun_path, sock, strlen(sock) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		snprintf(reply_line, len, "refused: cannot reach it (%s)", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(msg, sizeof(msg), "%s\n", actions[a]);
	/* a member that refuses answers without reading: its answer is still there to read */
	sent = send(fd, msg, strlen(msg), MSG_NOSIGNAL) == (ssize_t)strlen(msg) ? 0 : errno;
	n = read(fd, reply_line, len - 1);
	close(fd);
	if (n <= 0) {
		snprintf(reply_line, len, "refused: %s", sent ? strerror(sent) : "no answer");
		return -1;
	}
	reply_line[n] = '\0';
	reply_line[strcspn(reply_line, "\n")] = '\0';
	return strncmp(reply_line, "ok", 2) ? -1 : 0;
}

int session_control(const char *name, enum control_action a, FILE *out, char *err, size_t errlen)
{
	char sname[PATH_MAX], sdir[PATH_MAX], sock[PATH_MAX + 32], line[512];
	pid_t pids[64];
	int n, failed = 0;

	n = pick(name, sdir, sname, sizeof(sdir), pids, 64, err, errlen);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		snprintf(sock, sizeof(sock), "%s/%d.sock", sdir, (int)pids[i]);
		if (send_one(sock, a, line, sizeof(line))) {
			snprintf(err, errlen, "session %s, topsprof %d: %s", sname, (int)pids[i],
				 line + (strncmp(line, "refused: ", 9) ? 0 : 9));
			failed++;
		} else {
			fprintf(out, "==== session %s, topsprof %d: %s\n", sname, (int)pids[i],
				actions[a]);
		}
	}
	return failed ? -1 : 0;
}

/* key=value from a member's info file */
static void info_value(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	out[0] = '\0';
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			size_t vl = strcspn(p + kl + 1, "\n");

			snprintf(out, len, "%.*s", (int)vl, p + kl + 1);
			return;
		}
	}
}

static int list_one(const char *sdir, const char *name, const pid_t *pids, int n, void *p)
{
	FILE *out = ((void **)p)[0];
	int *count = ((void **)p)[1];

	for (int i = 0; i < n; i++) {
		char path[PATH_MAX + 32], text[2048] = "", state[32], since[32], uid[32], cmd[1024],
					  when[32], owner[64];
		FILE *f;
		size_t len;
		time_t t;

		snprintf(path, sizeof(path), "%s/%d.info", sdir, (int)pids[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		len = fread(text, 1, sizeof(text) - 1, f);
		text[len] = '\0';
		fclose(f);
		info_value(text, "state", state, sizeof(state));
		info_value(text, "since", since, sizeof(since));
		info_value(text, "uid", uid, sizeof(uid));
		info_value(text, "command", cmd, sizeof(cmd));
		t = (time_t)atoll(since);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		fprintf(out, "    %-20s %8d %-10s %-19s %-10s %s\n", name, (int)pids[i], state,
			when, user_name((uid_t)atoi(uid), owner, sizeof(owner)), cmd);
		(*count)++;
	}
	return 0;
}

int session_list(FILE *out)
{
	int count = 0;
	void *ctx[2] = { out, &count };

	fprintf(out, "==== Sessions:\n");
	fprintf(out, "    %-20s %8s %-10s %-19s %-10s %s\n", "NAME", "PID", "STATE", "SINCE",
		"OWNER", "COMMAND");
	each_session(false, list_one, ctx);
	if (!count)
		fprintf(out, "    (none)\n");
	return 0;
}

/* stale sessions of dir's: their files and directories removed, the live ones named */
static int reset_sessions(const char *dir, FILE *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int live = 0;

	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		pid_t pids[64];
		int n;

		if (de->d_name[0] == '.')
			continue;
		if (!path_join(path, sizeof(path), dir, de->d_name))
			continue;
		n = members(path, pids, 64);
		for (int i = 0; i < n; i++)
			fprintf(out, "==== kept session %s: topsprof %d is running\n", de->d_name,
				(int)pids[i]);
		if (n == 0)
			rmdir(path);
		live += n > 0 ? n : 0;
	}
	if (d)
		closedir(d);
	return live;
}

int session_reset(FILE *out)
{
	char ns[MAX_NAMESPACES][PATH_MAX];
	/* root tidies every user's namespace, a user their own */
	int nns = namespaces(getuid(), getuid() != 0, ns, MAX_NAMESPACES), live = 0;
	DIR *d = opendir(session_dir());
	struct dirent *de;
	const char *home = getenv("HOME");
	char path[PATH_MAX];

	for (int i = 0; i < nns; i++)
		live += reset_sessions(ns[i], out);
	/* sessions an older topsprof kept in the shared directory itself, ours */
	while (d && (de = readdir(d))) {
		struct stat st;
		uid_t uid;

		if (de->d_name[0] == '.' || namespace_uid(de->d_name, &uid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", session_dir(), de->d_name);
		if (!lstat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == getuid()) {
			pid_t pids[64];
			int n = members(path, pids, 64);

			if (n == 0)
				rmdir(path);
			live += n > 0 ? n : 0;
		}
	}
	if (d)
		closedir(d);
	/* BPF objects pinned by topsprof (none today, but an older or crashed one may have) */
	d = opendir("/sys/fs/bpf");
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "topsprof", 8))
			continue;
		snprintf(path, sizeof(path), "/sys/fs/bpf/%s", de->d_name);
		if (!unlink(path))
			fprintf(out, "==== removed %s\n", path);
	}
	if (d)
		closedir(d);
	if (home) {
		snprintf(path, sizeof(path), "%s/.trace.topspti.conf", home);
		if (!unlink(path))
			fprintf(out, "==== removed %s\n", path);
	}
	fprintf(out, "==== topsprof state reset%s\n", live ? " (running sessions kept)" : "");
	return 0;
}
