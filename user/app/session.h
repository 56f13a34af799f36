/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Sessions (manual 2.5, 4.1, 4.5): every profiling topsprof is a member of a session, and
 * `topsprof start|stop|cancel [--session NAME]` from another terminal controls every member.
 *
 * The registry is a shared directory ($TOPSPROF_RUN_DIR, default /run/topsprof, sticky and
 * world-writable) holding one namespace per user: a directory named after the uid ("0"; or
 * "0.<random>" when another user took the plain name first), owned by that user and writable by
 * nobody else, so that no user can plant files in, or block, another's sessions. In a namespace,
 * a directory per session, and in it per member <pid>.sock (a unix socket the member listens
 * on; a member is known by it) and <pid>.info (who, what, since when, collecting or paused). A
 * control connects, sends one line (start, stop, cancel) and reads one line back: "ok ..." or
 * "refused ...". A session name is looked up in the user's own namespaces first. Only root or
 * the user who owns the member may control it (the member checks the peer's credentials).
 * Members whose process is gone are stale: list, control, new sessions and --reset clean them
 * away.
 */
#ifndef TOPSPROF_SESSION_H
#define TOPSPROF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "app/cli.h"

struct session;

/* join (join) or create a session; name NULL: named by topsprof's pid. 0, or -1 with the
 * reason in err */
int session_open(struct session **out, const char *name, bool join, const char *command,
		 bool collecting, char *err, size_t errlen);
void session_close(struct session *s);
const char *session_name(const struct session *s);

/* the socket to wait on */
int session_fd(const struct session *s);
/* serve one control connection; the action to take (CTL_NONE when refused or malformed) */
enum control_action session_serve(struct session *s);
void session_set_state(struct session *s, bool collecting);

/* the client side: send action to every member of session name (NULL: the only session);
 * returns 0 when all took it, else -1 with one line in err */
int session_control(const char *name, enum control_action a, FILE *out, char *err, size_t errlen);
int session_list(FILE *out);
/* remove stale sessions, pinned BPF objects, ~/.trace.topspti.conf */
int session_reset(FILE *out);

const char *session_dir(void);

#endif
