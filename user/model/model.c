// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "model/model.h"
#include "lib/grow.h"
#include "lib/strlist.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pending_str {
	uint64_t call_id;
	char *buf[2];
	uint32_t len[2];
	uint32_t got[2]; /* bytes received: fewer than len when a piece was lost */
	bool ended[2];	 /* the last piece arrived */
	bool truncated[2];
	uint8_t fault[2]; /* unreadable from here: 1 the string, 2 the attributes (API_STR_ATTR) */
	uint64_t fault_addr[2];
};

void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
}

void model_free(struct model *m)
{
	cpu_profile_free(&m->cpu);
	util_profile_free(&m->util);
	kernel_profile_free(&m->kernel);
	calls_free(&m->calls);
	for (size_t i = 0; i < m->nranges; i++) {
		free(m->ranges[i].domain);
		free(m->ranges[i].name);
	}
	for (size_t i = 0; i < m->nmarks; i++) {
		free(m->marks[i].domain);
		free(m->marks[i].name);
	}
	for (size_t i = 0; i < m->npending; i++) {
		free(m->pending[i].buf[0]);
		free(m->pending[i].buf[1]);
	}
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++) {
		for (uint32_t i = 0; i < m->dev[d].nnames; i++)
			free(m->dev[d].names[i]);
		free(m->dev[d].names);
		free(m->dev[d].pairs);
	}
	free(m->header);
	free(m->ops);
	free(m->ranges);
	free(m->marks);
	free(m->procs);
	free(m->pending);
	memset(m, 0, sizeof(*m));
}

static struct proc_info *proc_get(struct model *m, uint32_t pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid && !m->procs[i].exited)
			return &m->procs[i];
	if (!grow_array((void **)&m->procs, &m->procs_cap, m->nprocs, sizeof(*m->procs)))
		return NULL;
	memset(&m->procs[m->nprocs], 0, sizeof(*m->procs));
	m->procs[m->nprocs].pid = pid;
	return &m->procs[m->nprocs++];
}

void model_add_proc_event(struct model *m, const struct tp_proc_event *e)
{
	struct proc_info *p = proc_get(m, e->hdr.pid);

	if (!p)
		return;
	memcpy(p->comm, e->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = '\0';
	if (e->hdr.type == EV_PROC_FORK)
		p->ppid = e->ppid;
	if (e->hdr.type == EV_PROC_EXIT) {
		p->exited = true;
		p->exit_code = e->exit_code;
	}
}

static struct pending_str *pending_get(struct model *m, uint64_t call_id, bool create)
{
	for (size_t i = 0; i < m->npending; i++)
		if (m->pending[i].call_id == call_id)
			return &m->pending[i];
	if (!create ||
	    !grow_array((void **)&m->pending, &m->pending_cap, m->npending, sizeof(*m->pending)))
		return NULL;
	memset(&m->pending[m->npending], 0, sizeof(*m->pending));
	m->pending[m->npending].call_id = call_id;
	return &m->pending[m->npending++];
}

void model_add_str(struct model *m, const struct tp_str_event *e)
{
	struct pending_str *p = pending_get(m, e->call_id, true);
	unsigned k = e->index & 1;
	uint32_t end = e->offset + e->len;
	char *buf;

	/* strings are cut at --topstx-max-bytes-size, 1 MiB at most */
	if (!p || e->len > API_STR_CHUNK || e->offset > (1u << 20))
		return;
	if (e->last & API_STR_FAULT) {
		/* neither the probe nor topsprof could read it: lost, and said so where it shows */
		p->fault[k] = e->last & API_STR_ATTR ? 2 : 1;
		p->fault_addr[k] = e->fault.addr;
		p->ended[k] = true;
		m->lost_unreadable++;
		return;
	}
	if ((e->last & API_STR_RECOVERED) && API_STR_POS(e->last))
		m->str_recovered++;
	if (end > p->len[k] || !p->buf[k]) {
		buf = realloc(p->buf[k], (size_t)end + 1);
		if (!buf)
			return;
		if (end > p->len[k])
			memset(buf + p->len[k], 0, end - p->len[k]);
		p->buf[k] = buf;
		p->len[k] = end;
		buf[end] = '\0';
	}
	memcpy(p->buf[k] + e->offset, e->data, e->len);
	p->got[k] += e->len;
	if (API_STR_POS(e->last))
		p->ended[k] = true;
	if (API_STR_POS(e->last) == API_STR_CUT)
		p->truncated[k] = true;
}

/* what came of a string before it could not be read, then where: "[unreadable string at 0x...]" */
static char *unreadable(char *came, uint8_t fault, uint64_t addr)
{
	char *s = NULL;

	if (asprintf(&s, "%s[unreadable %s at 0x%" PRIx64 "]", came ? came : "",
		     fault == 2 ? "attributes" : "string", addr) < 0)
		s = NULL;
	free(came);
	return s;
}

static void note_time(struct model *m, uint64_t start, uint64_t end)
{
	if (!m->first_ns || start < m->first_ns)
		m->first_ns = start;
	if (end > m->last_ns)
		m->last_ns = end;
}

/* summary_only: a runtime call's statistics as it streams, its strings (if any) dropped */
static void count_call(struct model *m, const struct tp_api_event *e)
{
	uint64_t dur = e->hdr.ts_ns - e->start_ns;
	struct fn_stat *d = &m->streamed[e->fn];
	struct pending_str *p;

	note_time(m, e->start_ns, e->hdr.ts_ns);
	if (!d->count || dur < d->min_ns)
		d->min_ns = dur;
	if (dur > d->max_ns)
		d->max_ns = dur;
	d->count++;
	d->total_ns += dur;
	m->calls_not_kept++;
	if (m->npending && (p = pending_get(m, e->call_id, false))) {
		free(p->buf[0]);
		free(p->buf[1]);
		*p = m->pending[--m->npending];
	}
}

static void fill_call(struct api_call *c, const struct tp_api_event *e)
{
	memset(c, 0, sizeof(*c));
	c->call_id = e->call_id;
	c->fn = e->fn;
	c->pid = e->hdr.pid;
	c->tid = e->hdr.tid;
	c->flags = e->flags;
	c->start_ns = e->start_ns;
	c->end_ns = e->hdr.ts_ns;
	c->ret = e->ret;
	memcpy(c->args, e->args, sizeof(e->args));
	memcpy(c->args + API_REG_ARGS, e->stack, sizeof(e->stack));
	memcpy(c->attr, e->attr, sizeof(c->attr));
}

static bool keep_call(struct model *m, const struct api_call *c)
{
	if (!calls_add(&m->calls, c)) {
		m->lost_calls++;
		return false;
	}
	m->ncalls = m->calls.n;
	note_time(m, c->start_ns, c->end_ns);
	if (m->on_call)
		m->on_call(m->on_call_ctx, m, c, m->ncalls - 1);
	return true;
}

void model_add_call(struct model *m, const struct tp_api_event *e)
{
	struct api_call c;
	struct pending_str *p;

	if (e->fn >= api_table_len)
		return;
	if (m->summary_only && api_table[e->fn].domain != DOM_TOPSTX) {
		count_call(m, e);
		return;
	}
	fill_call(&c, e);
	p = m->npending ? pending_get(m, e->call_id, false) : NULL;
	if (p) {
		for (int k = 0; k < 2; k++) {
			c.str[k] = p->buf[k];
			c.str_len[k] = p->len[k];
			/* a lost piece leaves a hole or takes the end: show what came, marked */
			c.truncated[k] = p->truncated[k] ||
					 (p->buf[k] && (!p->ended[k] || p->got[k] < p->len[k]));
			if (p->buf[k] && p->got[k] < p->len[k])
				c.str_len[k] = (uint32_t)strlen(p->buf[k]);
			if (p->fault[k]) {
				c.str[k] = unreadable(c.str[k], p->fault[k], p->fault_addr[k]);
				c.str_len[k] = c.str[k] ? (uint32_t)strlen(c.str[k]) : 0;
				c.truncated[k] = false;
			}
			p->buf[k] = NULL; /* in c.str[k], freed once the store has its copy */
		}
		*p = m->pending[--m->npending];
	}
	keep_call(m, &c);
	free(c.str[0]);
	free(c.str[1]);
}

int model_add_call_strs(struct model *m, const struct tp_api_event *e, char *const str[2],
			const uint32_t len[2], const bool truncated[2])
{
	struct api_call c;

	if (e->fn >= api_table_len)
		return -1;
	if (m->summary_only && api_table[e->fn].domain != DOM_TOPSTX) {
		count_call(m, e);
		return 0;
	}
	fill_call(&c, e);
	for (int k = 0; k < 2; k++) {
		c.str[k] = str[k];
		c.str_len[k] = len[k];
		c.truncated[k] = truncated[k];
	}
	return keep_call(m, &c) ? 1 : -1;
}

void model_add_stat(struct model *m, uint32_t fn, const struct api_stat *s)
{
	struct fn_stat *d;

	if (fn >= api_table_len || !s->count)
		return;
	d = &m->stats[fn];
	if (!d->count || s->min_ns < d->min_ns)
		d->min_ns = s->min_ns;
	if (s->max_ns > d->max_ns)
		d->max_ns = s->max_ns;
	d->count += s->count;
	d->total_ns += s->total_ns;
}

/* the model's copy of a device's name, kept per name id */
static const char *dev_name(struct gcu_dev *d, uint32_t id, const char *name)
{
	if (!id || !name || id >= GCU_RO_MAX_NAME_ID)
		return NULL;
	if (id > d->nnames) {
		char **n = realloc(d->names, (size_t)id * sizeof(*n));

		if (!n)
			return NULL;
		memset(n + d->nnames, 0, (id - d->nnames) * sizeof(*n));
		d->names = n;
		d->nnames = id;
	}
	if (!d->names[id - 1])
		d->names[id - 1] = strdup(name);
	return d->names[id - 1];
}

void model_add_gcu(struct model *m, const struct gcu_record *r, const char *name)
{
	struct gcu_op *op;

	if (r->device >= GCU_RO_MAX_DEVICES)
		return;
	if (!grow_array((void **)&m->ops, &m->ops_cap, m->nops, sizeof(*m->ops)))
		return;
	op = &m->ops[m->nops++];
	memset(op, 0, sizeof(*op));
	op->rec = (struct gcu_oprec){ .launch_id = r->launch_id,
				      .start_ticks = r->start_ticks,
				      .end_ticks = r->end_ticks,
				      .bytes = r->bytes,
				      .pid = r->pid,
				      .tid = r->tid,
				      .stream_id = r->stream_id,
				      .name_id = r->name_id,
				      .device = (uint8_t)r->device,
				      /* a kind past a byte's stays one no record has */
				      .kind = r->kind > UINT8_MAX ? UINT8_MAX : (uint8_t)r->kind,
				      .engine = r->engine,
				      .copy_kind = r->copy_kind };
	op->call = -1;
	op->name = dev_name(&m->dev[r->device], r->name_id, name);
}

struct gcu_record gcu_op_record(const struct gcu_op *op)
{
	return (struct gcu_record){ .kind = op->rec.kind,
				    .engine = op->rec.engine,
				    .copy_kind = op->rec.copy_kind,
				    .device = op->rec.device,
				    .pid = op->rec.pid,
				    .stream_id = op->rec.stream_id,
				    .launch_id = op->rec.launch_id,
				    .name_id = op->rec.name_id,
				    .tid = op->rec.tid,
				    .start_ticks = op->rec.start_ticks,
				    .end_ticks = op->rec.end_ticks,
				    .bytes = op->rec.bytes };
}

void model_add_sync(struct model *m, int dev, uint64_t host_ns, uint64_t ticks)
{
	struct gcu_dev *d;

	if (dev < 0 || dev >= GCU_RO_MAX_DEVICES)
		return;
	d = &m->dev[dev];
	if (!grow_array((void **)&d->pairs, &d->pairs_cap, d->npairs, sizeof(*d->pairs)))
		return;
	d->pairs[d->npairs++] = (struct sync_pair){ host_ns, ticks };
}

/* --- topstx: pair pushes with pops and starts with ends ----------------------------------------- */

struct open_range {
	uint32_t pid, tid;
	uint64_t domain; /* handle; 0: default */
	uint64_t id;	 /* start/end ranges */
	/* the opening call's (its name is the store's) */
	const char *name;
	uint64_t start_ns;
	bool truncated;
};

struct tx_state {
	struct open_range *open;
	size_t nopen, cap;
	struct {
		uint32_t pid;
		uint64_t handle;
		const char *name;
	} domains[256];
	size_t ndomains;
	const char *include;
};

static const char *domain_name(const struct tx_state *s, uint32_t pid, uint64_t handle)
{
	for (size_t i = s->ndomains; i-- > 0;)
		if (s->domains[i].pid == pid && s->domains[i].handle == handle)
			return s->domains[i].name;
	return "(unknown domain)";
}

static bool domain_included(const char *include, const char *name)
{
	struct strlist_iter it;
	const char *item;
	size_t len;

	if (!include)
		return false;
	strlist_init(&it, include);
	while (strlist_next(&it, &item, &len))
		if ((len == 3 && !strncmp(item, "all", 3)) ||
		    (strlen(name) == len && !strncmp(item, name, len)))
			return true;
	return false;
}

static void add_range(struct model *m, const struct tx_state *s, const struct open_range *o,
		      uint64_t end_ns)
{
	const char *dom = o->domain ? domain_name(s, o->pid, o->domain) : NULL;
	struct tx_range *r;

	if (dom && !domain_included(s->include, dom))
		return;
	if (!grow_array((void **)&m->ranges, &m->ranges_cap, m->nranges, sizeof(*m->ranges)))
		return;
	r = &m->ranges[m->nranges++];
	r->domain = dom ? strdup(dom) : NULL;
	r->name = strdup(o->name ? o->name : "");
	r->pid = o->pid;
	r->tid = o->tid;
	r->start_ns = o->start_ns;
	r->end_ns = end_ns;
	r->truncated = o->truncated;
}

static void add_mark(struct model *m, const struct tx_state *s, const struct api_call *c,
		     uint64_t domain)
{
	const char *dom = domain ? domain_name(s, c->pid, domain) : NULL;
	const char *name = c->str[0] ? c->str[0] : "";

	if (dom && !domain_included(s->include, dom))
		return;
	for (size_t i = 0; i < m->nmarks; i++) {
		if (!strcmp(m->marks[i].name, name) &&
		    ((!dom && !m->marks[i].domain) ||
		     (dom && m->marks[i].domain && !strcmp(dom, m->marks[i].domain)))) {
			m->marks[i].count++;
			return;
		}
	}
	if (!grow_array((void **)&m->marks, &m->marks_cap, m->nmarks, sizeof(*m->marks)))
		return;
	m->marks[m->nmarks].domain = dom ? strdup(dom) : NULL;
	m->marks[m->nmarks].name = strdup(name);
	m->marks[m->nmarks].count = 1;
	m->nmarks++;
}

static void tx_call(struct model *m, struct tx_state *s, const struct api_call *c)
{
	const struct api_fn *f = &api_table[c->fn];
	uint64_t domain = f->domain_arg != NO_ARG ? c->args[f->domain_arg] : 0;

	switch (f->tx) {
	case TX_DOMAIN_NEW:
		if (c->ret && s->ndomains < sizeof(s->domains) / sizeof(s->domains[0])) {
			s->domains[s->ndomains].pid = c->pid;
			s->domains[s->ndomains].handle = (uint64_t)c->ret;
			s->domains[s->ndomains].name = c->str[0] ? c->str[0] : "";
			s->ndomains++;
		}
		return;
	case TX_PUSH:
	case TX_START:
		if ((f->tx == TX_PUSH && c->ret < 0) || (f->tx == TX_START && !c->ret))
			return; /* refused by the library */
		if (!grow_array((void **)&s->open, &s->cap, s->nopen, sizeof(*s->open)))
			return;
		s->open[s->nopen++] = (struct open_range){
			c->pid,		f->tx == TX_PUSH ? c->tid : 0,
			domain,		f->tx == TX_START ? (uint64_t)c->ret : 0,
			c->str[0],	c->start_ns,
			c->truncated[0]
		};
		return;
	case TX_POP:
	case TX_END:
		for (size_t i = s->nopen; i-- > 0;) {
			struct open_range *o = &s->open[i];
			bool match = o->pid == c->pid && o->domain == domain &&
				     (f->tx == TX_POP ? (o->tid == c->tid && !o->id)
						      : (o->id && o->id == c->args[f->id_arg]));

			if (!match)
				continue;
			add_range(m, s, o, c->end_ns);
			memmove(o, o + 1, (s->nopen - i - 1) * sizeof(*o));
			s->nopen--;
			return;
		}
		return;
	case TX_MARK:
		add_mark(m, s, c, domain);
		return;
	default:
		return;
	}
}

void model_finish(struct model *m, bool stats_from_calls, const char *include_domains)
{
	struct tx_state s;

	memset(&s, 0, sizeof(s));
	s.include = include_domains;
	for (size_t i = 0; i < m->ncalls; i++) {
		uint32_t fn = calls_fn(&m->calls, i);

		if (api_table[fn].domain == DOM_TOPSTX) {
			struct api_call c;

			calls_get(&m->calls, i, &c);
			tx_call(m, &s, &c);
		} else if (stats_from_calls) {
			uint64_t dur = calls_duration(&m->calls, i);
			struct api_stat one = { 1, dur, dur, dur };

			model_add_stat(m, fn, &one);
		}
	}
	for (unsigned f = 0; stats_from_calls && f < api_table_len; f++) {
		const struct fn_stat *d = &m->streamed[f];
		struct api_stat st = { d->count, d->total_ns, d->min_ns, d->max_ns };

		model_add_stat(m, f, &st);
	}
	m->tx_open = s.nopen;
	free(s.open);
}

uint64_t model_lost_total(const struct model *m)
{
	return m->lost_calls + m->lost_strings + m->lost_depth + m->lost_stats +
	       m->lost_proc_events + m->lost_pids + m->lost_unreadable;
}

static bool own_pid(const struct model *m, uint32_t pid)
{
	if (pid == m->root_pid)
		return true;
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return true;
	return false;
}

void model_keep_own_gcu(struct model *m)
{
	size_t j = 0;

	for (size_t i = 0; i < m->nops; i++)
		if (own_pid(m, m->ops[i].rec.pid))
			m->ops[j++] = m->ops[i];
	m->nops = j;
}

void model_clear_collected(struct model *m)
{
	calls_free(&m->calls);
	for (size_t i = 0; i < m->npending; i++) {
		free(m->pending[i].buf[0]);
		free(m->pending[i].buf[1]);
	}
	m->ncalls = m->npending = m->nops = 0;
	m->calls_not_kept = 0;
	memset(m->streamed, 0, sizeof(m->streamed));
	memset(m->stats, 0, sizeof(m->stats));
	m->first_ns = m->last_ns = 0;
	util_profile_clear(&m->util);
	kernel_profile_clear(&m->kernel);
}
