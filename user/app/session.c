// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "app/session.h"
#include "lib/infile.h"
#include "lib/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
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
#define DIR_FLAGS     (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/*
 * Every directory is opened once, without following links, checked on the open descriptor
 * (owner, mode), and used through it (openat, unlinkat, renameat, and /proc/self/fd/N/NAME for
 * the sockets): another user can rename or swap what is at a path meanwhile, never what a
 * descriptor refers to. Files of another user's are only read, never removed, but by --reset.
 */

struct session {
	char name[SESSION_NAME_MAX + 1];
	char where[PATH_MAX + SESSION_NAME_MAX + 2]; /* the session's directory, for messages */
	char command[1024];
	int fd;	   /* the listening socket */
	int nsfd;  /* our namespace */
	int dirfd; /* the session's directory in it */
	bool made; /* our socket and info exist, ours to remove */
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

/* name in dirfd as a directory that only owner may change: its descriptor, or -1 */
static int open_owned_dir(int dirfd, const char *name, uid_t owner)
{
	int fd = openat(dirfd, name, DIR_FLAGS);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) || st.st_uid != owner || (st.st_mode & 0022))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* the shared directory every user may add to, each removing only their own: a real directory
 * (not a link), owned by root or by us; writable by others only with the sticky bit, so that
 * nobody can rename or remove another user's entries. Its descriptor, or -errno */
static int open_shared_dir(bool create)
{
	struct stat st;
	int fd;

	if (create && !mkdir(session_dir(), 01777)) {
		fd = open(session_dir(), DIR_FLAGS);
		if (fd >= 0 && fchmod(fd, 01777)) { /* past the umask */
			close(fd);
			fd = -1;
		}
		return fd >= 0 ? fd : -errno;
	}
	fd = open(session_dir(), DIR_FLAGS);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (st.st_uid != 0 && st.st_uid != getuid()) ||
	    ((st.st_mode & 0022) && !(st.st_mode & S_ISVTX) &&
	     (st.st_uid != getuid() || fchmod(fd, (st.st_mode & 07777) | S_ISVTX)))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * Each user's sessions live in a namespace of their own inside the shared directory: a
 * directory named after the uid ("1000"; "1000.3f9a0c1e" when someone else took the plain name
 * first), owned by that user and writable by nobody else. Another user can neither plant
 * entries in it nor, by taking a name, keep it from being made: names of theirs are ignored.
 */
/* a name as --session-new takes them: letters, digits, '-' and '_' (nothing a terminal acts on,
 * whoever made it) */
static bool plain_name(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') || s[n] == '-' || s[n] == '_'))
			return false;
	return n && n <= SESSION_NAME_MAX;
}

/* the entries of the directory fd refers to (fd stays ours); NULL on failure */
static DIR *dir_at(int fd)
{
	int dfd = openat(fd, ".", DIR_FLAGS);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d && dfd >= 0)
		close(dfd);
	return d;
}

static bool namespace_uid(const char *name, uid_t *uid)
{
	char *end;
	unsigned long v;

	if (name[0] < '0' || name[0] > '9')
		return false;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (errno || v > (uid_t)-1 || (*end && (*end != '.' || !plain_name(end + 1))))
		return false;
	*uid = (uid_t)v;
	return true;
}

/* fn(namespace fd, its owner, its name, ctx) for every namespace: uid's own first, then (unless
 * mine_only) the others'; a non-zero return stops the walk and is returned */
typedef int (*namespace_fn)(int nsfd, uid_t owner, const char *name, void *ctx);

static int each_namespace(uid_t uid, bool mine_only, namespace_fn fn, void *ctx)
{
	int base = open_shared_dir(false), rc = 0;

	for (int pass = 0; base >= 0 && pass < (mine_only ? 1 : 2) && !rc; pass++) {
		DIR *d = dir_at(base);
		struct dirent *de;

		while (d && !rc && (de = readdir(d))) {
			uid_t owner;
			int nsfd;

			if (!namespace_uid(de->d_name, &owner) || (owner == uid) != (pass == 0))
				continue;
			nsfd = open_owned_dir(base, de->d_name, owner);
			if (nsfd < 0)
				continue;
			rc = fn(nsfd, owner, de->d_name, ctx);
			close(nsfd);
		}
		if (d)
			closedir(d);
	}
	if (base >= 0)
		close(base);
	return rc;
}

static int take_first(int nsfd, uid_t owner, const char *name, void *ctx)
{
	(void)owner;
	(void)name;
	*(int *)ctx = dup(nsfd);
	return 1;
}

/* our namespace's descriptor, made when there is none; or -errno */
static int own_namespace(char *where, size_t len)
{
	int fd = -1, base;
	char name[32];

	each_namespace(getuid(), true, take_first, &fd);
	if (fd >= 0)
		return fd;
	base = open_shared_dir(true);
	if (base < 0)
		return base;
	snprintf(name, sizeof(name), "%u", (unsigned)getuid());
	/* the plain name taken by someone else: a name nobody can guess */
	for (int i = 0; fd < 0 && i < 8; i++) {
		struct stat st;

		if (i)
			snprintf(name, sizeof(name), "%u.%08x", (unsigned)getuid(),
				 (uint32_t)outfile_random());
		if (mkdirat(base, name, 0755) && errno != EEXIST)
			break;
		fd = openat(base, name, DIR_FLAGS);
		/* ours (never another user's changed), past the umask */
		if (fd >= 0 && (fstat(fd, &st) || st.st_uid != getuid() || fchmod(fd, 0755))) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			close(fd);
			fd = open_owned_dir(base, name, getuid());
		}
	}
	close(base);
	snprintf(where, len, "%s/%s", session_dir(), name);
	return fd >= 0 ? fd : -EPERM;
}

/* a unix socket address for name in the directory dirfd refers to */
static int sock_addr(struct sockaddr_un *a, int dirfd, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	return snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", dirfd, name) <
			       (int)sizeof(a->sun_path)
		       ? 0
		       : -ENAMETOOLONG;
}

/* A connection to member pid's socket in dirfd, checked to be that very process listening as
 * owner: a link or another socket put at the name meanwhile (connect follows links), or a pid
 * taken again by another process (its socket has no listener), is refused. The connection's
 * descriptor (blocking), or -1: errno EAGAIN when the member's queue is full, else the reason */
static int connect_member(int dirfd, pid_t pid, uid_t owner)
{
	struct sockaddr_un a;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char name[32];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	snprintf(name, sizeof(name), "%d.sock", (int)pid);
	if (fd < 0)
		return -1;
	if (sock_addr(&a, dirfd, name) || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	if (clen != sizeof(cred) || cred.pid != pid || cred.uid != owner) {
		close(fd);
		errno = EACCES;
		return -1;
	}
	fcntl(fd, F_SETFL, 0);
	return fd;
}

/* members of a session directory: the pids of its sockets (made once, never replaced, so a
 * reader cannot miss one while an info file is rewritten) that a process listens on. The files
 * of processes gone are removed when the directory is ours (clean), never another user's. */
static int members(int dirfd, bool clean, pid_t *pids, int max)
{
	DIR *d = dir_at(dirfd);
	struct dirent *de;
	struct stat dst, fst;
	int n = 0;

	if (!d || fstat(dirfd, &dst)) {
		int err = -errno;

		if (d)
			closedir(d);
		return err;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		bool sock = !strcmp(end, ".sock");
		int probe;

		if (end == de->d_name ||
		    (!sock && strncmp(end, ".info", 5) && strncmp(end, ".sock", 5)))
			continue;
		if (!alive((pid_t)pid)) {
			if (clean)
				unlinkat(dirfd, de->d_name, 0);
			continue;
		}
		/* a member's socket is its owner's, in its owner's directory */
		if (!sock || fstatat(dirfd, de->d_name, &fst, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISSOCK(fst.st_mode) || fst.st_uid != dst.st_uid)
			continue;
		probe = connect_member(dirfd, (pid_t)pid, dst.st_uid);
		if (probe >= 0)
			close(probe);
		if (probe >= 0 || errno == EAGAIN) { /* a full queue: busy, not gone */
			if (n < max)
				pids[n++] = (pid_t)pid;
		} else if (clean && errno == ECONNREFUSED) {
			/* a socket is put in place listening: without a listener, its process is
			 * gone (its pid taken again since) */
			char info[32];

			snprintf(info, sizeof(info), "%ld.info", pid);
			unlinkat(dirfd, de->d_name, 0);
			unlinkat(dirfd, info, 0);
		}
	}
	closedir(d);
	return n;
}

/* a session found: its directory (open), its owner, its members */
struct found {
	const char *name; /* wanted; NULL: every session (fn called for each) */
	int (*fn)(struct found *f, void *ctx);
	void *ctx;
	int dirfd, nsfd; /* the session's directory and its namespace */
	uid_t owner;
	char sname[NAME_MAX + 1], nsname[NAME_MAX + 1];
	pid_t pids[64];
	int n;
};

static int visit_session(struct found *f, int nsfd, uid_t owner, const char *nsname,
			 const char *sname)
{
	int rc;

	if (!plain_name(sname))
		return 0; /* not a session's: nothing of it is printed */
	f->dirfd = open_owned_dir(nsfd, sname, owner);
	if (f->dirfd < 0)
		return 0;
	f->owner = owner;
	snprintf(f->sname, sizeof(f->sname), "%s", sname);
	f->n = members(f->dirfd, owner == getuid(), f->pids, 64);
	if (f->n <= 0) {
		close(f->dirfd);
		f->dirfd = -1;
		return 0;
	}
	if (f->name) { /* found: kept open for the caller */
		f->nsfd = dup(nsfd);
		snprintf(f->nsname, sizeof(f->nsname), "%s", nsname);
		return 1;
	}
	rc = f->fn(f, f->ctx);
	close(f->dirfd);
	f->dirfd = -1;
	return rc;
}

static int visit_namespace(int nsfd, uid_t owner, const char *name, void *ctx)
{
	struct found *f = ctx;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (f->name)
		return visit_session(f, nsfd, owner, name, f->name);
	d = dir_at(nsfd);
	while (d && !rc && (de = readdir(d)))
		rc = visit_session(f, nsfd, owner, name, de->d_name);
	if (d)
		closedir(d);
	return rc;
}

/* session name with live members, in our namespaces first (mine_only: only there): 1 with
 * f->dirfd open, or 0 */
static int find_session(const char *name, bool mine_only, struct found *f)
{
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->dirfd = f->nsfd = -1;
	return each_namespace(getuid(), mine_only, visit_namespace, f) > 0;
}

/* fn for every session with live members (mine_only: ours only) */
static int each_session(bool mine_only, int (*fn)(struct found *f, void *ctx), void *ctx)
{
	struct found f = { .fn = fn, .ctx = ctx, .dirfd = -1, .nsfd = -1 };

	return each_namespace(getuid(), mine_only, visit_namespace, &f);
}

static int write_info(const struct session *s)
{
	char tmp[80], name[64];
	FILE *f;
	int fd;

	snprintf(name, sizeof(name), "%d.info", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	unlinkat(s->dirfd, tmp, 0);
	/* a new file, never through a link */
	fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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
	return renameat(s->dirfd, tmp, s->dirfd, name) ? -errno : 0;
}

int session_open(struct session **out, const char *name, bool join, const char *command,
		 bool collecting, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct sockaddr_un addr;
	char sock[64], tmp[80], ns[PATH_MAX];
	struct found f;
	int rc;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->fd = s->nsfd = s->dirfd = -1;
	if (name)
		snprintf(s->name, sizeof(s->name), "%s", name);
	else
		snprintf(s->name, sizeof(s->name), "%d", (int)getpid());
	snprintf(s->command, sizeof(s->command), "%s", command);
	s->since = time(NULL);
	s->collecting = collecting;
	rc = open_shared_dir(true);
	if (rc < 0) {
		named_errf(err, errlen, session_dir(), ": %s",
			   rc == -EPERM ? "not a directory of root's or ours" : strerror(-rc));
		goto fail;
	}
	close(rc);
	rc = find_session(s->name, true, &f);
	if (join && !rc) {
		snprintf(err, errlen, "--session %s: no such session (see topsprof --session-list)",
			 s->name);
		goto fail;
	}
	if (!join && rc) {
		close(f.dirfd);
		close(f.nsfd);
		snprintf(err, errlen,
			 "--session-new %s: the session exists (join it with --session)", s->name);
		goto fail;
	}
	if (join) {
		s->nsfd = f.nsfd;
		s->dirfd = f.dirfd;
		snprintf(ns, sizeof(ns), "%s/%s", session_dir(), f.nsname);
	} else {
		s->nsfd = own_namespace(ns, sizeof(ns));
		if (s->nsfd < 0) {
			named_errf(err, errlen, ns, ": %s", strerror(-s->nsfd));
			goto fail;
		}
	}
	snprintf(s->where, sizeof(s->where), "%s/%s", ns, s->name);
	if (!join) {
		if (mkdirat(s->nsfd, s->name, 0755) && errno != EEXIST) {
			named_errf(err, errlen, s->where, ": %s", strerror(errno));
			goto fail;
		}
		s->dirfd = open_owned_dir(s->nsfd, s->name, getuid());
		if (s->dirfd < 0) {
			named_errf(err, errlen, s->where, ": not a directory of ours");
			goto fail;
		}
	}
	/* bound under a temporary name and put in place listening, after the info: a member is
	 * found by its socket, which then answers and has its info */
	snprintf(sock, sizeof(sock), "%d.sock", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", sock);
	unlinkat(s->dirfd, tmp, 0);
	s->made = true;
	rc = write_info(s);
	if (rc) {
		named_errf(err, errlen, s->where, ": %s", strerror(-rc));
		goto fail;
	}
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0 || sock_addr(&addr, s->dirfd, tmp) ||
	    bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    /* anyone may ask; the peer's credentials decide */
	    fchmodat(s->dirfd, tmp, 0666, 0) || listen(s->fd, 8) ||
	    renameat(s->dirfd, tmp, s->dirfd, sock)) {
		named_errf(err, errlen, s->where, ": %s", strerror(errno));
		unlinkat(s->dirfd, tmp, 0);
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
	char name[64];

	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->made) {
		snprintf(name, sizeof(name), "%d.sock", (int)getpid());
		unlinkat(s->dirfd, name, 0);
		snprintf(name, sizeof(name), "%d.info", (int)getpid());
		unlinkat(s->dirfd, name, 0);
		/* only when no other member is left in it */
		unlinkat(s->nsfd, s->name, AT_REMOVEDIR);
	}
	if (s->dirfd >= 0)
		close(s->dirfd);
	if (s->nsfd >= 0)
		close(s->nsfd);
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

/* what another user wrote, fit to print: control characters (a terminal's escapes) become '?' */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* a user's name; the last two asked are kept (a member refusing a flood of one user's
 * connections looks nothing up again: a directory service may be slow) */
static const char *user_name(uid_t uid, char *buf, size_t len)
{
	static struct {
		bool set;
		uid_t uid;
		char name[64];
	} seen[2];
	static int next;
	struct passwd *pw;

	for (int i = 0; i < 2; i++)
		if (seen[i].set && seen[i].uid == uid) {
			snprintf(buf, len, "%s", seen[i].name);
			return buf;
		}
	pw = getpwuid(uid);
	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	printable(buf);
	seen[next].set = true;
	seen[next].uid = uid;
	snprintf(seen[next].name, sizeof(seen[next].name), "%s", buf);
	next ^= 1;
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
		printable(line);
	}
	if (n == 0) {
		/* closed without a word: a client seeing whether we listen */
	} else if (clen != sizeof(cred)) {
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

struct pick_ctx {
	char *name;
	size_t len;
	int found;
};

static int pick_one(struct found *f, void *p)
{
	struct pick_ctx *c = p;

	if (c->found++ == 0)
		snprintf(c->name, c->len, "%s", f->sname);
	return 0;
}

/* the session to control: named (ours, else another user's of that name), or the only one
 * there is (of ours; of anyone's when we have none); found in f */
static int pick(const char *name, struct found *f, char *err, size_t errlen)
{
	char sname[NAME_MAX + 1];
	struct pick_ctx c = { sname, sizeof(sname), 0 };

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
	}
	/* ours first, else another user's (who will refuse, saying so) */
	if (find_session(name, true, f) || find_session(name, false, f))
		return 0;
	snprintf(err, errlen, "--session %s: no such session (see topsprof --session-list)", name);
	return -1;
}

static int send_one(int dirfd, uid_t owner, pid_t pid, enum control_action a, char *reply_line,
		    size_t len)
{
	int fd = connect_member(dirfd, pid, owner);
	struct timeval tv = { REPLY_WAIT_MS / 1000, (REPLY_WAIT_MS % 1000) * 1000 };
	char msg[16];
	ssize_t n;
	int sent;

	if (fd < 0) {
		snprintf(reply_line, len, "refused: cannot reach it (%s)",
			 errno == EACCES ? "not that member's socket" : strerror(errno));
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
	printable(reply_line);
	return strncmp(reply_line, "ok", 2) ? -1 : 0;
}

int session_control(const char *name, enum control_action a, FILE *out, char *err, size_t errlen)
{
	char line[512];
	struct found f;
	int failed = 0;

	if (pick(name, &f, err, errlen))
		return -1;
	for (int i = 0; i < f.n; i++) {
		if (send_one(f.dirfd, f.owner, f.pids[i], a, line, sizeof(line))) {
			snprintf(err, errlen, "session %s, topsprof %d: %s", f.sname,
				 (int)f.pids[i], line + (strncmp(line, "refused: ", 9) ? 0 : 9));
			failed++;
		} else {
			fprintf(out, "==== session %s, topsprof %d: %s\n", f.sname, (int)f.pids[i],
				actions[a]);
		}
	}
	close(f.dirfd);
	close(f.nsfd);
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
			printable(out);
			return;
		}
	}
}

/* a member's info: a regular file of the directory's owner, read without waiting */
static bool read_info(int dirfd, uid_t owner, pid_t pid, char *text, size_t len)
{
	char name[32];
	struct stat st;
	ssize_t n = -1;
	int fd;

	snprintf(name, sizeof(name), "%d.info", (int)pid);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == owner)
		n = read(fd, text, len - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return n > 0;
}

struct list_ctx {
	FILE *out;
	int count;
};

static int list_one(struct found *f, void *p)
{
	struct list_ctx *c = p;

	for (int i = 0; i < f->n; i++) {
		char text[2048], state[32], since[32], cmd[1024], when[32], owner[64];
		time_t t;

		if (!read_info(f->dirfd, f->owner, f->pids[i], text, sizeof(text)))
			continue;
		info_value(text, "state", state, sizeof(state));
		info_value(text, "since", since, sizeof(since));
		info_value(text, "command", cmd, sizeof(cmd));
		t = (time_t)atoll(since);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		/* the owner is the directory's, not what its info says */
		fprintf(c->out, "    %-20s %8d %-10s %-19s %-10s %s\n", f->sname, (int)f->pids[i],
			state, when, user_name(f->owner, owner, sizeof(owner)), cmd);
		c->count++;
	}
	return 0;
}

int session_list(FILE *out)
{
	struct list_ctx c = { out, 0 };

	fprintf(out, "==== Sessions:\n");
	fprintf(out, "    %-20s %8s %-10s %-19s %-10s %s\n", "NAME", "PID", "STATE", "SINCE",
		"OWNER", "COMMAND");
	each_session(false, list_one, &c);
	if (!c.count)
		fprintf(out, "    (none)\n");
	return 0;
}

struct reset_ctx {
	FILE *out;
	int live;
};

/* stale sessions of a namespace: their files and directories removed, the live ones named */
static int reset_namespace(int nsfd, uid_t owner, const char *nsname, void *p)
{
	struct reset_ctx *c = p;
	DIR *d = dir_at(nsfd);
	struct dirent *de;

	(void)nsname;
	while (d && (de = readdir(d))) {
		pid_t pids[64];
		int sfd, n;

		if (!plain_name(de->d_name))
			continue;
		sfd = open_owned_dir(nsfd, de->d_name, owner);
		if (sfd < 0)
			continue;
		n = members(sfd, true, pids, 64);
		close(sfd);
		for (int i = 0; i < n; i++)
			fprintf(c->out, "==== kept session %s: topsprof %d is running\n",
				de->d_name, (int)pids[i]);
		if (n == 0)
			unlinkat(nsfd, de->d_name, AT_REMOVEDIR);
		c->live += n > 0 ? n : 0;
	}
	if (d)
		closedir(d);
	return 0;
}

int session_reset(FILE *out)
{
	struct reset_ctx c = { out, 0 };
	const char *home = getenv("HOME");
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	/* root tidies every user's namespace, a user their own */
	each_namespace(getuid(), getuid() != 0, reset_namespace, &c);
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
	fprintf(out, "==== topsprof state reset%s\n", c.live ? " (running sessions kept)" : "");
	return 0;
}
