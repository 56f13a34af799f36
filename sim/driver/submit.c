// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The device's command queue (submit.h), shared by the user-space device and the kernel-mode
 * driver. */
#include "submit.h"

#include "writer.h"

struct model_slot model_schedule(uint64_t *engine_free, uint64_t *stream_ready, uint64_t submit,
				 uint64_t dur)
{
	struct model_slot s;

	s.start = submit;
	if (*stream_ready > s.start)
		s.start = *stream_ready;
	if (*engine_free > s.start)
		s.start = *engine_free;
	s.end = s.start + dur;
	*engine_free = s.end;
	*stream_ready = s.end;
	return s;
}

static void emit(struct gcu_region *r, const struct gcu_cmd *c, uint32_t engine, uint32_t kind,
		 uint64_t start, uint64_t end, uint64_t bytes)
{
	struct gcu_record rec = {
		.kind = (uint16_t)kind,
		.engine = (uint8_t)engine,
		.copy_kind = (uint8_t)(c->kind == GCU_REC_KERNEL ? GCU_COPY_NONE : c->copy_kind),
		.device = r->hdr->device,
		.pid = c->pid,
		.tid = c->tid,
		.stream_id = c->stream_id,
		.launch_id = c->launch_id,
		.name_id = c->kind == GCU_REC_KERNEL ? c->name_id : 0,
		.start_ticks = start,
		.end_ticks = end,
		.bytes = bytes,
	};

	gcu_ring_push(r, &rec);
}

void gcu_device_submit(struct gcu_region *r, uint64_t *engine_free, struct gcu_cmd *c)
{
	unsigned enabled = gcu_enabled(r);
	bool kernel = c->kind == GCU_REC_KERNEL;
	struct model_slot slot, cdte = { 0, 0 }, sdte = { 0, 0 };

	if (c->engine >= GCU_ENGINE_COUNT)
		c->engine = GCU_ENGINE_COMPUTE;
	slot = model_schedule(&engine_free[c->engine], &c->stream_ready, c->submit_ticks,
			      c->dur_ticks);
	c->start_ticks = slot.start;
	if (kernel && c->dte) {
		/* inside the kernel: CDTE brings its data in at the start, SDTE out at the end */
		cdte.start = slot.start;
		cdte.end = slot.start + c->cdte_ticks;
		sdte.end = slot.end;
		sdte.start = slot.end - c->sdte_ticks;
		engine_free[GCU_ENGINE_CDTE] = cdte.end;
		engine_free[GCU_ENGINE_SDTE] = sdte.end;
	}
	if (enabled & (kernel ? GCU_ACT_OPERATOR : GCU_ACT_MEMCPY))
		emit(r, c, c->engine, c->kind, slot.start, slot.end, c->bytes);
	if (kernel && c->dte && c->dte_bytes && (enabled & GCU_ACT_CDTE))
		emit(r, c, GCU_ENGINE_CDTE, GCU_REC_DTE, cdte.start, cdte.end, c->dte_bytes);
	if (kernel && c->dte && c->dte_bytes && (enabled & GCU_ACT_SDTE))
		emit(r, c, GCU_ENGINE_SDTE, GCU_REC_DTE, sdte.start, sdte.end, c->dte_bytes);
}
