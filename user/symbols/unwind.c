// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/unwind.h"

#include "lib/grow.h"
#include "lib/hash.h"
#include "target/elfinfo.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define EVAL_STACK 16 /* a DWARF expression's stack, deep enough for any CFI seen (PLT: 3) */
#define EXPR_MAX   64 /* operations in one expression kept (the PLT's: 9); longer: no rule */
/* code without CFI this close past a file's entry point is its _start (glibc's ld.so: the
 * return from _dl_init is 48 bytes in on x86-64) */
#define ENTRY_SPAN 128

/* one DWARF operation, as libdw gives it */
struct uop {
	uint8_t atom;
	uint64_t number, number2;
};

/* how a register of the caller is found */
enum rkind {
	R_UNDEF = 1, /* lost (call-clobbered); for the return address column: the outermost frame */
	R_AT = 2,    /* at the address the expression gives */
	R_VAL = 3,   /* the expression's value */
};

struct rreg {
	uint8_t reg, kind;
	uint16_t nops;
	uint32_t op; /* into unwinder.ops */
};

enum {
	RULE_NOCFI = 1,	 /* no CFI holds the address: frame pointers if the file has none at all */
	RULE_SIGNAL = 2, /* a signal trampoline's frame: its caller's pc is exact */
	RULE_BAD = 4,	 /* CFI that gives no caller (no CFA, return address or stack pointer) */
};

/* the rules at one address of one file; a register without one keeps its value */
struct rule {
	uint64_t vaddr;
	uint32_t file;
	uint8_t flags, ra, nregs;
	uint16_t cfa_nops;
	uint32_t cfa_op;
	uint32_t regs; /* into unwinder.regs */
};

struct ufile {
	char *path;
	struct elf_handle h; /* h.fd < 0 once the CFI is read, or for the vdso (in memory) */
	void *image;	     /* the vdso's copy */
	Dwarf_CFI *eh, *dbg;
	Dwarf *dw; /* for .debug_frame */
	struct elf_segs segs;
	uint64_t entry; /* e_entry: the process's first instruction when this is its program or
			 * its dynamic loader; 0: none */
	bool bad;	/* not an ELF file that could be read: frame pointers only */
};

struct unwinder {
	struct ufile *files;
	size_t nfiles, capfiles;
	struct idindex file_index; /* by path */
	struct rule *rules;
	size_t nrules, caprules;
	struct idindex rule_index; /* by (file, vaddr) */
	struct uop *ops;
	size_t nops, capops;
	struct rreg *regs;
	size_t nregs, capregs;
};

/* the walk of one stack: the current frame's registers */
struct walk {
	uint64_t r[UREG_N];
	uint64_t known; /* a bit per register */
	const uint8_t *stack;
	uint64_t base;
	size_t len;
};

int unwinder_new(struct unwinder **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void ufile_free(struct ufile *f)
{
	if (f->eh)
		dwarf_cfi_end(f->eh);
	if (f->dw)
		dwarf_end(f->dw); /* its .debug_frame CFI with it */
	if (f->h.e) {
		if (f->h.fd >= 0)
			elf_close(&f->h);
		else
			elf_end(f->h.e);
	}
	free(f->image);
	free(f->path);
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nfiles; i++)
		ufile_free(&u->files[i]);
	free(u->files);
	idindex_free(&u->file_index);
	free(u->rules);
	idindex_free(&u->rule_index);
	free(u->ops);
	free(u->regs);
	free(u);
}

void unwinder_stats(const struct unwinder *u, struct unwind_stats *st)
{
	st->files = u->nfiles;
	st->rules = u->nrules;
	st->bytes = u->caprules * sizeof(*u->rules) + u->rule_index.cap * sizeof(uint32_t) +
		    u->capops * sizeof(*u->ops) + u->capregs * sizeof(*u->regs) +
		    u->capfiles * sizeof(*u->files) + u->file_index.cap * sizeof(uint32_t);
}

/* -- files --------------------------------------------------------------------------------- */

static uint64_t path_hash(const char *path)
{
	return hash_fnv1a(HASH_FNV_BASIS, path, strlen(path));
}

static uint64_t file_key(const void *ctx, uint32_t i)
{
	return path_hash(((const struct unwinder *)ctx)->files[i].path);
}

/* the CFI of an ELF image: .eh_frame, else .debug_frame; its segments and entry point */
static void read_cfi(struct ufile *f)
{
	GElf_Ehdr eh;

	elf_read_segments(f->h.e, &f->segs);
	if (gelf_getehdr(f->h.e, &eh))
		f->entry = eh.e_entry;
	f->eh = dwarf_getcfi_elf(f->h.e);
	/* .debug_frame (read with every other debug section) only for a file without .eh_frame */
	if (!elf_find_section(f->h.e, ".eh_frame") && elf_find_section(f->h.e, ".debug_frame")) {
		f->dw = dwarf_begin_elf(f->h.e, DWARF_C_READ, NULL);
		if (f->dw)
			f->dbg = dwarf_getcfi(f->dw);
	}
	f->bad = !f->segs.n || (!f->eh && !f->dbg);
	/* what the CFI needs is read: no descriptor held per file */
	if (f->h.fd >= 0 && elf_cntl(f->h.e, ELF_C_FDDONE) == 0) {
		close(f->h.fd);
		f->h.fd = -2;
	}
}

/* the vdso, which every process of this host has as topsprof has it: topsprof's own image */
static void read_vdso(struct ufile *f)
{
	const GElf_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size;

	f->h.fd = -1;
	f->bad = true;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1u << 20) || !(f->image = malloc(size)))
		return;
	memcpy(f->image, eh, size);
	if (elf_version(EV_CURRENT) == EV_NONE || !(f->h.e = elf_memory(f->image, size)))
		return;
	read_cfi(f);
}

/* the file at path (or "[vdso]"), read on first use; -1 when out of memory */
static int file_get(struct unwinder *u, const char *path)
{
	struct idindex *x = &u->file_index;
	struct ufile *f;
	uint32_t j;

	if (!idindex_room(x, (uint32_t)u->nfiles, file_key, u))
		return -1;
	for (j = idindex_first(x, path_hash(path)); x->slot[j]; j = idindex_next(x, j))
		if (!strcmp(u->files[x->slot[j] - 1].path, path))
			return (int)x->slot[j] - 1;
	if (!grow_array((void **)&u->files, &u->capfiles, u->nfiles, sizeof(*u->files)))
		return -1;
	f = &u->files[u->nfiles];
	memset(f, 0, sizeof(*f));
	f->h.fd = -1;
	f->path = strdup(path);
	if (!f->path)
		return -1;
	if (!strcmp(path, "[vdso]")) {
		read_vdso(f);
	} else if (elf_open(path, &f->h)) {
		f->h = (struct elf_handle){ .fd = -1 };
		f->bad = true;
	} else {
		read_cfi(f);
	}
	x->slot[j] = (uint32_t)++u->nfiles;
	return (int)u->nfiles - 1;
}

/* -- rules --------------------------------------------------------------------------------- */

static uint64_t rule_hash(uint32_t file, uint64_t vaddr)
{
	return hash_mix64(vaddr ^ ((uint64_t)file << 48));
}

static uint64_t rule_key(const void *ctx, uint32_t i)
{
	const struct rule *r = &((const struct unwinder *)ctx)->rules[i];

	return rule_hash(r->file, r->vaddr);
}

/* ops kept in the pool; false when out of memory or too many */
static bool keep_ops(struct unwinder *u, const Dwarf_Op *ops, size_t n, uint32_t *at)
{
	if (n > EXPR_MAX ||
	    !grow_array_to((void **)&u->ops, &u->capops, u->nops + n, sizeof(*u->ops)))
		return false;
	*at = (uint32_t)u->nops;
	for (size_t i = 0; i < n; i++)
		u->ops[u->nops++] = (struct uop){ ops[i].atom, ops[i].number, ops[i].number2 };
	return true;
}

/* the rules libdw works out at vaddr from one CFI section; false when none holds it */
static bool rule_from_cfi(struct unwinder *u, Dwarf_CFI *cfi, uint64_t vaddr, struct rule *r)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops, mem[3];
	size_t nops;
	bool signal = false;
	int ra;

	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &fr) || !fr)
		return false;
	ra = dwarf_frame_info(fr, NULL, NULL, &signal);
	if (ra < 0 || ra >= UREG_N || dwarf_frame_cfa(fr, &ops, &nops) || !nops ||
	    !keep_ops(u, ops, nops, &r->cfa_op)) {
		r->flags = RULE_BAD;
		free(fr);
		return true;
	}
	r->ra = (uint8_t)ra;
	r->cfa_nops = (uint16_t)nops;
	r->flags = signal ? RULE_SIGNAL : 0;
	r->regs = (uint32_t)u->nregs;
	for (int reg = 0; reg < UREG_N && !(r->flags & RULE_BAD); reg++) {
		struct rreg rr = { .reg = (uint8_t)reg };
		Dwarf_Op in_reg;

		if (dwarf_frame_register(fr, reg, mem, &ops, &nops)) {
			/* a register the CFI does not speak of is kept, but not these two */
			if (reg == ra || reg == UREG_SP)
				r->flags = RULE_BAD;
			continue;
		}
		if (!nops && ops == NULL) { /* same value */
			/* on x86-64 the return address is always somewhere: "the caller's pc is
			 * this pc" would repeat the frame (arm64's is in the link register) */
			if (reg == ra && reg == UREG_PC)
				r->flags = RULE_BAD;
			continue;
		}
		/* in another register (DW_CFA_register): that register's value */
		if (nops == 1 && ((ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) ||
				  ops[0].atom == DW_OP_regx)) {
			in_reg = (Dwarf_Op){ .atom = DW_OP_bregx,
					     .number = ops[0].atom == DW_OP_regx
							       ? ops[0].number
							       : (Dwarf_Word)(ops[0].atom -
									      DW_OP_reg0) };
			ops = &in_reg;
			rr.kind = R_VAL;
		} else if (!nops) {
			rr.kind = R_UNDEF;
		} else if (ops[nops - 1].atom == DW_OP_stack_value) {
			rr.kind = R_VAL;
			nops--;
		} else {
			rr.kind = R_AT;
		}
		if (rr.kind != R_UNDEF) {
			if (!keep_ops(u, ops, nops, &rr.op)) {
				r->flags = RULE_BAD;
				break;
			}
			rr.nops = (uint16_t)nops;
		}
		if (!grow_array((void **)&u->regs, &u->capregs, u->nregs, sizeof(*u->regs))) {
			r->flags = RULE_BAD;
			break;
		}
		u->regs[u->nregs++] = rr;
		r->nregs++;
	}
	free(fr);
	return true;
}

/* the rules at vaddr of file, worked out on first use; NULL when out of memory */
static const struct rule *rule_get(struct unwinder *u, uint32_t file, uint64_t vaddr)
{
	struct idindex *x = &u->rule_index;
	struct ufile *f = &u->files[file];
	struct rule r = { .vaddr = vaddr, .file = file };
	uint32_t j;

	if (!idindex_room(x, (uint32_t)u->nrules, rule_key, u))
		return NULL;
	for (j = idindex_first(x, rule_hash(file, vaddr)); x->slot[j]; j = idindex_next(x, j)) {
		const struct rule *c = &u->rules[x->slot[j] - 1];

		if (c->vaddr == vaddr && c->file == file)
			return c;
	}
	if (f->bad || (!rule_from_cfi(u, f->eh, vaddr, &r) && !rule_from_cfi(u, f->dbg, vaddr, &r)))
		r.flags = RULE_NOCFI;
	if (!grow_array((void **)&u->rules, &u->caprules, u->nrules, sizeof(*u->rules)))
		return NULL;
	u->rules[u->nrules] = r;
	x->slot[j] = (uint32_t)++u->nrules;
	return &u->rules[u->nrules - 1];
}

/* -- the walk ------------------------------------------------------------------------------ */

/* 8 bytes of the copied stack at addr: 0, or the reason the walk ends */
static int mem_read(const struct walk *w, uint64_t addr, uint64_t *v)
{
	if (addr < w->base)
		return STACK_END_BAD;
	if (addr - w->base > w->len || w->len - (addr - w->base) < 8)
		return STACK_END_STACK;
	memcpy(v, w->stack + (addr - w->base), 8);
	return 0;
}

static bool reg_get(const struct walk *w, uint64_t reg, uint64_t *v)
{
	if (reg >= UREG_N || !(w->known & (1ull << reg)))
		return false;
	*v = w->r[reg];
	return true;
}

/* A DWARF expression of CFI over the walk's registers, cfa (the CFA when known) first on its
 * stack when push_cfa; its value in *out. 0, or the reason the walk ends. */
static int eval(const struct walk *w, const struct uop *ops, size_t n, uint64_t cfa, bool have_cfa,
		uint64_t *out)
{
	uint64_t st[EVAL_STACK], a, b;
	size_t sp = 0;
	int err;

#define PUSH(v)                               \
	do {                                  \
		if (sp == EVAL_STACK)         \
			return STACK_END_BAD; \
		st[sp++] = (v);               \
	} while (0)
#define NEED(k)                               \
	do {                                  \
		if (sp < (k))                 \
			return STACK_END_BAD; \
	} while (0)

	for (size_t i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;

		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
		} else if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
			if (!reg_get(w, op - DW_OP_breg0, &a))
				return STACK_END_BAD;
			PUSH(a + ops[i].number);
		} else {
			switch (op) {
			case DW_OP_bregx:
				if (!reg_get(w, ops[i].number, &a))
					return STACK_END_BAD;
				PUSH(a + ops[i].number2);
				break;
			case DW_OP_call_frame_cfa:
				if (!have_cfa)
					return STACK_END_BAD;
				PUSH(cfa);
				break;
			case DW_OP_const1u:
			case DW_OP_const1s:
			case DW_OP_const2u:
			case DW_OP_const2s:
			case DW_OP_const4u:
			case DW_OP_const4s:
			case DW_OP_const8u:
			case DW_OP_const8s:
			case DW_OP_constu:
			case DW_OP_consts:
				PUSH(ops[i].number);
				break;
			case DW_OP_plus_uconst:
				NEED(1);
				st[sp - 1] += ops[i].number;
				break;
			case DW_OP_deref:
				NEED(1);
				err = mem_read(w, st[sp - 1], &st[sp - 1]);
				if (err)
					return err;
				break;
			case DW_OP_dup:
				NEED(1);
				a = st[sp - 1];
				PUSH(a);
				break;
			case DW_OP_drop:
				NEED(1);
				sp--;
				break;
			case DW_OP_over:
				NEED(2);
				a = st[sp - 2];
				PUSH(a);
				break;
			case DW_OP_swap:
				NEED(2);
				a = st[sp - 1];
				st[sp - 1] = st[sp - 2];
				st[sp - 2] = a;
				break;
			case DW_OP_neg:
				NEED(1);
				st[sp - 1] = -st[sp - 1];
				break;
			case DW_OP_not:
				NEED(1);
				st[sp - 1] = ~st[sp - 1];
				break;
			case DW_OP_plus:
			case DW_OP_minus:
			case DW_OP_mul:
			case DW_OP_and:
			case DW_OP_or:
			case DW_OP_xor:
			case DW_OP_shl:
			case DW_OP_shr:
			case DW_OP_shra:
			case DW_OP_ge:
			case DW_OP_gt:
			case DW_OP_le:
			case DW_OP_lt:
			case DW_OP_eq:
			case DW_OP_ne:
				NEED(2);
				b = st[--sp];
				a = st[sp - 1];
				switch (op) {
				case DW_OP_plus:
					a += b;
					break;
				case DW_OP_minus:
					a -= b;
					break;
				case DW_OP_mul:
					a *= b;
					break;
				case DW_OP_and:
					a &= b;
					break;
				case DW_OP_or:
					a |= b;
					break;
				case DW_OP_xor:
					a ^= b;
					break;
				case DW_OP_shl:
					a = b < 64 ? a << b : 0;
					break;
				case DW_OP_shr:
					a = b < 64 ? a >> b : 0;
					break;
				case DW_OP_shra:
					a = (uint64_t)((int64_t)a >> (b < 63 ? b : 63));
					break;
				case DW_OP_ge:
					a = (int64_t)a >= (int64_t)b;
					break;
				case DW_OP_gt:
					a = (int64_t)a > (int64_t)b;
					break;
				case DW_OP_le:
					a = (int64_t)a <= (int64_t)b;
					break;
				case DW_OP_lt:
					a = (int64_t)a < (int64_t)b;
					break;
				case DW_OP_eq:
					a = a == b;
					break;
				default:
					a = a != b;
					break;
				}
				st[sp - 1] = a;
				break;
			default:
				return STACK_END_BAD;
			}
		}
	}
#undef PUSH
#undef NEED
	if (!sp)
		return STACK_END_BAD;
	*out = st[sp - 1];
	return 0;
}

/* A return address as code: on arm64 without the pointer authentication bits a function built
 * with -mbranch-protection signs it with (past the 48 bits of user addresses; libdw does not
 * undo DW_CFA_AARCH64_negate_ra_state). */
static uint64_t strip_pac(uint64_t ra)
{
#if defined(__aarch64__)
	return ra & ((1ull << 48) - 1);
#else
	return ra;
#endif
}

/* the caller's registers by the rules r: 0, or the reason the walk ends */
static int step_cfi(struct unwinder *u, struct walk *w, const struct rule *r, uint64_t *ra)
{
	struct walk caller = *w;
	uint64_t cfa, v;
	bool ra_set = false;
	int err;

	err = eval(w, &u->ops[r->cfa_op], r->cfa_nops, 0, false, &cfa);
	if (err)
		return err;
	/* the CFA is the caller's stack pointer, unless a rule says otherwise */
	caller.r[UREG_SP] = cfa;
	caller.known |= 1ull << UREG_SP;
	for (uint32_t i = 0; i < r->nregs; i++) {
		const struct rreg *rr = &u->regs[r->regs + i];

		if (rr->kind == R_UNDEF) {
			caller.known &= ~(1ull << rr->reg);
			if (rr->reg == r->ra)
				return STACK_END_ENTRY;
			continue;
		}
		err = eval(w, &u->ops[rr->op], rr->nops, cfa, true, &v);
		if (!err && rr->kind == R_AT)
			err = mem_read(w, v, &v);
		if (err) {
			/* a register other than these two the walk may do without */
			if (rr->reg == r->ra || rr->reg == UREG_SP)
				return err;
			caller.known &= ~(1ull << rr->reg);
			continue;
		}
		caller.r[rr->reg] = v;
		caller.known |= 1ull << rr->reg;
		if (rr->reg == r->ra)
			ra_set = true;
	}
	if (!ra_set && !reg_get(w, r->ra, &v))
		return STACK_END_BAD;
	*ra = caller.r[r->ra];
	/* a caller's frame is above its callee's, or (an arm64 leaf without a frame) where it
	 * is, but then the walk must move on */
	if (!(r->flags & RULE_SIGNAL) &&
	    (caller.r[UREG_SP] < w->r[UREG_SP] ||
	     (caller.r[UREG_SP] == w->r[UREG_SP] && strip_pac(*ra) == w->r[UREG_PC])))
		return STACK_END_BAD;
	*w = caller;
	return 0;
}

/* the caller by frame pointers: the frame record {caller's frame pointer, return address} at
 * the frame pointer, on x86-64 and arm64 alike */
static int step_fp(struct walk *w, uint64_t *ra)
{
	uint64_t fp, nfp;
	int err;

	if (!reg_get(w, UREG_FP, &fp))
		return STACK_END_NOCFI;
	if (!fp) /* the process's entry clears it: the outermost frame */
		return STACK_END_ENTRY;
	if (((w->known >> UREG_SP) & 1 && fp < w->r[UREG_SP]) || fp & 7 || fp < w->base)
		return STACK_END_NOCFI;
	err = mem_read(w, fp, &nfp) ?: mem_read(w, fp + 8, ra);
	if (err)
		return err == STACK_END_BAD ? STACK_END_NOCFI : err;
	w->r[UREG_FP] = nfp;
	w->r[UREG_SP] = fp + 16;
#if defined(__aarch64__)
	/* the frame record is at the bottom of an arm64 frame: the caller's sp is not known */
	w->known &= ~(1ull << UREG_SP);
#endif
	return 0;
}

size_t unwind_user(struct unwinder *u, const struct procmaps *maps, const struct unwind_input *in,
		   uint64_t *ips, size_t max, enum stack_end *end)
{
	struct walk w = { .stack = in->stack, .len = in->stack_len };
	/* the leaf's pc, and a pc a signal interrupted, are not return addresses */
	bool exact = true;
	size_t n = 0, put = 0;

	*end = STACK_END_NOREGS;
	if (!in->regs[UREG_SP] || !in->regs[UREG_PC])
		return 0;
	memcpy(w.r, in->regs, sizeof(w.r));
	w.known = (UREG_N < 64 ? (1ull << UREG_N) : 0) - 1;
	w.base = in->regs[UREG_SP];
	for (;;) {
		uint64_t pc = w.r[UREG_PC], off, vaddr, ra = 0;
		const struct procmap *m;
		const struct rule *r = NULL;
		int err, fi;

		if (n == max) {
			*end = STACK_END_DEPTH;
			return n;
		}
		if (!pc) {
			*end = STACK_END_ENTRY;
			return n;
		}
		m = procmaps_find(maps, pc, &off);
		if (!m) {
			*end = STACK_END_UNMAPPED;
			return n;
		}
		ips[n++] = pc;
		/* a file, but never one of another mount namespace at its path here; the vdso */
		if (m->path && ((m->path[0] == '/' && (m->open_path || !m->foreign)) ||
				!strcmp(m->path, "[vdso]"))) {
			fi = file_get(u, m->open_path ? m->open_path : m->path);
			if (fi >= 0 && elf_segs_vaddr(&u->files[fi].segs, off - !exact, &vaddr))
				r = rule_get(u, (uint32_t)fi, vaddr);
		}
		if (r && (r->flags & RULE_BAD)) {
			*end = STACK_END_BAD;
			return n;
		}
		/* code without CFI in a file that has CFI (hand-written, or past its tables): its
		 * frame pointer register may hold anything. Just past the file's entry point it
		 * is the process's first frame (the dynamic loader's _start, which calls
		 * _dl_start and the libraries' constructors, has none) */
		if (r && (r->flags & RULE_NOCFI) && !u->files[r->file].bad) {
			const struct ufile *f = &u->files[r->file];

			*end = f->entry && r->vaddr >= f->entry && r->vaddr - f->entry < ENTRY_SPAN
				       ? STACK_END_ENTRY
				       : STACK_END_NOCFI;
			return n;
		}
		err = r && !(r->flags & RULE_NOCFI) ? step_cfi(u, &w, r, &ra) : step_fp(&w, &ra);
		if (err) {
			*end = (enum stack_end)err;
			return n;
		}
		ra = strip_pac(ra);
		exact = r && (r->flags & RULE_SIGNAL);
		/* where a uretprobe took a return address, the kernel's trampoline stands */
		if (in->uret && in->uret->tramp && ra == in->uret->tramp && put < KC_URET_MAX &&
		    in->uret->ret[put])
			ra = in->uret->ret[put++];
		w.r[UREG_PC] = ra;
	}
}
