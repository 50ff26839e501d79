// handoff_test.cpp - the pure rules of SYN authentication's proxy on the host: where
// levee's tc filter may go among other tools' filters (datapath/tc_filter.hpp), the options
// the SYN-ACKs leave out for the listener's sysctls (datapath/handoff.hpp), and the SYN cookie
// keys kept from a detach to the next attach (datapath/cookie_file.hpp).
#include <gtest/gtest.h>
#include <linux/if_ether.h>

#include "datapath/cookie_file.hpp"
#include "datapath/handoff.hpp"
#include "datapath/tc_filter.hpp"
#include "levee_abi.h"
#include "syncookie.h"

namespace levee {
namespace {

TcFilter filter(uint16_t prio, uint32_t handle, const char* kind = "bpf", uint16_t protocol = ETH_P_ALL,
                uint32_t chain = 0) {
  TcFilter f;
  f.chain = chain;
  f.priority = prio;
  f.protocol = protocol;
  f.handle = handle;
  f.kind = kind;
  return f;
}

// An empty hook: priority 1, handle 0x1ee. Another tool's cls_bpf filter at that very
// place: the next handle at priority 1 (levee's runs first there: cls_bpf puts a new
// filter at the head of its priority). A priority another kind or protocol holds: the
// next priority. Other chains do not matter; the head entry of a priority (handle 0)
// counts as that priority's kind.
TEST(TcPlace, AFreeHandleAtTheLowestPriorityLeveeCanShare) {
  EXPECT_EQ(free_tc_place({}), (TcPlace{0x1ee, 1}));
  EXPECT_EQ(free_tc_place({filter(1, 0), filter(1, 0x1ee)}), (TcPlace{0x1ef, 1}));
  EXPECT_EQ(free_tc_place({filter(1, 0), filter(1, 0x1ee), filter(1, 0x1ef)}), (TcPlace{0x1f0, 1}));
  EXPECT_EQ(free_tc_place({filter(1, 0, "matchall"), filter(1, 0x1ee, "matchall")}), (TcPlace{0x1ee, 2}));
  EXPECT_EQ(free_tc_place({filter(1, 0, "u32"), filter(2, 1, "flower")}), (TcPlace{0x1ee, 3}));
  EXPECT_EQ(free_tc_place({filter(1, 0x1ee, "bpf", ETH_P_IP)}), (TcPlace{0x1ee, 2})) << "another protocol";
  EXPECT_EQ(free_tc_place({filter(1, 0x1ee, "u32", ETH_P_ALL, 7)}), (TcPlace{0x1ee, 1})) << "another chain";
  std::vector<TcFilter> full;
  for (uint16_t p = 1; p <= kTcPriorities; ++p) full.push_back(filter(p, 1, "u32"));
  EXPECT_FALSE(free_tc_place(full)) << "no priority levee can share";
  full.clear();
  for (uint32_t h = 0; h < kTcHandles; ++h) full.push_back(filter(1, kTcHandle + h));
  EXPECT_EQ(free_tc_place(full), (TcPlace{0x1ee, 2})) << "every handle of priority 1 taken";
}

// A sysctl at 0 turns its option off in the SYN-ACKs; 1 (or 2: SACK and window scaling
// take only 0 and 1, timestamps 2 means without random offsets) or unreadable keeps it.
TEST(TcpSysctls, AnOptionItsNamespaceTurnedOffIsLeftOut) {
  EXPECT_EQ(tcp_off_of(TcpSysctls{1, 1, 1, 1}), 0u);
  EXPECT_EQ(tcp_off_of(TcpSysctls{0, 1, 1, 1}), uint32_t{LV_TCP_OFF_TS});
  EXPECT_EQ(tcp_off_of(TcpSysctls{1, 0, 1, 1}), uint32_t{LV_TCP_OFF_SACK});
  EXPECT_EQ(tcp_off_of(TcpSysctls{2, 1, 0, 1}), uint32_t{LV_TCP_OFF_WSCALE});
  EXPECT_EQ(tcp_off_of(TcpSysctls{0, 0, 0, 0}), uint32_t{LV_TCP_OFF_TS | LV_TCP_OFF_SACK | LV_TCP_OFF_WSCALE});
  EXPECT_EQ(tcp_off_of(TcpSysctls{}), 0u) << "unreadable: the kernel's default, on";
  EXPECT_FALSE(syncookies_on(TcpSysctls{1, 1, 1, 0}));
  EXPECT_TRUE(syncookies_on(TcpSysctls{1, 1, 1, 2}));
  EXPECT_TRUE(syncookies_on(TcpSysctls{}));
  EXPECT_EQ(tcp_options_text(0), "none");
  EXPECT_EQ(tcp_options_text(LV_TCP_OFF_TS | LV_TCP_OFF_WSCALE), "timestamps, window scaling");
}

SavedCookieKeys saved(uint64_t at_ns) {
  SavedCookieKeys k;
  k.boot_id = "0b5e7a1c-0000-4000-8000-000000000001";
  k.saved_ns = at_ns;
  k.keys[0][0] = 0x0123456789abcdefULL;
  k.keys[0][1] = 1;
  k.keys[1][0] = 0xfedcba9876543210ULL;
  k.keys[1][1] = 0xffffffffffffffffULL;
  return k;
}

TEST(CookieKeyFile, WhatADetachWritesAnAttachReadsBack) {
  const SavedCookieKeys k = saved(123'456'789'000);
  const std::string text = format_cookie_keys(k);
  EXPECT_EQ(text.rfind("levee-cookie-keys 1\n", 0), 0u) << text;
  const auto back = parse_cookie_keys(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->boot_id, k.boot_id);
  EXPECT_EQ(back->saved_ns, k.saved_ns);
  for (unsigned s = 0; s < 2; ++s)
    for (unsigned i = 0; i < 2; ++i) EXPECT_EQ(back->keys[s][i], k.keys[s][i]) << s << i;
  for (const std::string& bad :
       {std::string(""), std::string("levee-cookie-keys 2\n"), text.substr(0, text.find("key1")),  // a key missing
        text + "extra=1\n", text.substr(0, text.size() - 2) + "z\n"})
    EXPECT_FALSE(parse_cookie_keys(bad)) << bad;
}

// Reused only in the boot that saved them (CLOCK_MONOTONIC starts over at each) and
// while a cookie they made may still be good: two periods of 2^33 ns, 17.2 s.
TEST(CookieKeyFile, KeysServeOnlyTheSameBootWithinACookiesLife) {
  const uint64_t t = 5'000'000'000'000;
  const SavedCookieKeys k = saved(t);
  EXPECT_EQ(kCookieKeysKeepNs, 2 * LV_COOKIE_PERIOD_NS);
  EXPECT_TRUE(cookie_keys_reusable(k, k.boot_id, t));
  EXPECT_TRUE(cookie_keys_reusable(k, k.boot_id, t + kCookieKeysKeepNs - 1));
  EXPECT_FALSE(cookie_keys_reusable(k, k.boot_id, t + kCookieKeysKeepNs)) << "no cookie of theirs is good any more";
  EXPECT_FALSE(cookie_keys_reusable(k, "another-boot", t + 1));
  EXPECT_FALSE(cookie_keys_reusable(k, "", t + 1)) << "no boot id: never";
  EXPECT_FALSE(cookie_keys_reusable(k, k.boot_id, t - 1)) << "saved in the future: another clock";
  SavedCookieKeys zero = k;
  zero.keys[1][0] = zero.keys[1][1] = 0;
  EXPECT_FALSE(cookie_keys_reusable(zero, k.boot_id, t)) << "a zero key is none";
}

}  // namespace
}  // namespace levee
