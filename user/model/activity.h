/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The device activities a user can collect (manual 4.2-4.4), as one table. */
#ifndef TOPSPROF_ACTIVITY_H
#define TOPSPROF_ACTIVITY_H

#include <stddef.h>
#include <stdio.h>

enum activity_bit {
	ACT_MEMCPY = 1u << 0,	   /* ODTE: host<->device and device<->device copies */
	ACT_MEMCPY_CDTE = 1u << 1, /* CDTE: a kernel's internal data moves */
	ACT_MEMCPY_SDTE = 1u << 2, /* SDTE: a kernel's internal data moves */
	ACT_OPERATOR = 1u << 3,	   /* GCU kernels */
	ACT_ALL = ACT_MEMCPY | ACT_MEMCPY_CDTE | ACT_MEMCPY_SDTE | ACT_OPERATOR,
};

#define ACTIVITIES_DEFAULT (ACT_OPERATOR | ACT_MEMCPY)

struct activity {
	const char *name; /* as the manual spells it */
	enum activity_bit bit;
	const char *what;
};

extern const struct activity activities[];
extern const size_t activities_count;

/* Parse "operator,Memcpy" or "all" (any case). Returns 0, or -1 with the reason in err. */
int activity_parse_list(const char *list, unsigned *mask, char *err, size_t errlen);

/* the device's activity bits (include/gcu_readout.h) for a mask of enum activity_bit */
unsigned activity_to_gcu(unsigned mask);

/* --export-activities: the activity tree as JSON, checked as mask says */
char *activity_export_json(unsigned mask);
/* --import-activities: the mask of the activities checked in a tree read from text; -1 with
 * the reason (and where in the tree) in err */
int activity_import_json(const char *text, unsigned *mask, char *err, size_t errlen);

/* --query-activities */
void activity_print_query(FILE *out);

#endif
