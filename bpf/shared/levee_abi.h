/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * levee_abi.h - everything that crosses the kernel/user boundary, defined once: the
 * version and the map names here, the rest by subject in the headers included below.
 *
 * The XDP program (bpf/levee.bpf.c) and the controller (userspace/) both include this
 * file, or only the subject they need. Pinned maps outlive the controller that created
 * them, so a controller adopting pinned state checks LV_ABI_VERSION before it touches
 * anything: change it whenever a layout in any of these headers changes. What only the
 * datapath reads (its tunables and scratch offsets) is in bpf/tunables.h.
 */
#ifndef LEVEE_ABI_H
#define LEVEE_ABI_H

#include <linux/types.h>

#define LV_ABI_VERSION 14

/* Map names as the kernel sees them (BPF_OBJ_NAME_LEN is 16) and as they are pinned. */
#define LV_MAP_STATE "lv_state"
#define LV_MAP_POLICY "lv_policy"
#define LV_MAP_PERCPU "lv_percpu"
#define LV_MAP_LIST4_0 "lv_list4_0"
#define LV_MAP_LIST4_1 "lv_list4_1"
#define LV_MAP_LIST6_0 "lv_list6_0"
#define LV_MAP_LIST6_1 "lv_list6_1"
#define LV_MAP_HOST4_0 "lv_host4_0"
#define LV_MAP_HOST4_1 "lv_host4_1"
#define LV_MAP_HOST6_0 "lv_host6_0"
#define LV_MAP_HOST6_1 "lv_host6_1"
#define LV_MAP_SHARED "lv_shared"
#define LV_MAP_BANS "lv_bans"
#define LV_MAP_SEEN "lv_seen"
#define LV_MAP_GOOD "lv_good"
#define LV_MAP_LOCAL "lv_local"
#define LV_MAP_EVENTS "lv_events"
#define LV_MAP_CS_HOST4 "lv_cs_host4"
#define LV_MAP_CS_HOST6 "lv_cs_host6"
#define LV_MAP_CS_NET4 "lv_cs_net4"
#define LV_MAP_CS_NET6 "lv_cs_net6"
#define LV_PIN_LINK "link"

/* Everything else, by subject. */
#include "common_types.h"
#include "reasons.h"
#include "per_source.h"
#include "synauth_types.h"
#include "policy_types.h"
#include "list_types.h"
#include "class_shared.h"
#include "event_types.h"
#include "filters.h"
#include "percpu.h"

#endif /* LEVEE_ABI_H */
