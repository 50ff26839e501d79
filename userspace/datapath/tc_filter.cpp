#include "datapath/tc_filter.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "core/fd.hpp"

namespace levee {
namespace {

void parse_attrs(const rtattr* a, int len, const rtattr** out, int max) {
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
    if (a->rta_type <= max) out[a->rta_type] = a;
}

uint32_t u32_of(const rtattr* a) {
  uint32_t v = 0;
  if (a && RTA_PAYLOAD(a) >= sizeof v) std::memcpy(&v, RTA_DATA(a), sizeof v);
  return v;
}

TcFilter filter_of(const nlmsghdr* h) {
  const auto* t = static_cast<const tcmsg*>(NLMSG_DATA(h));
  TcFilter f;
  f.priority = static_cast<uint16_t>(TC_H_MAJ(t->tcm_info) >> 16);
  f.protocol = ntohs(static_cast<uint16_t>(TC_H_MIN(t->tcm_info)));
  f.handle = t->tcm_handle;
  const rtattr* a[TCA_MAX + 1] = {};
  parse_attrs(reinterpret_cast<const rtattr*>(reinterpret_cast<const char*>(t) + NLMSG_ALIGN(sizeof *t)),
              static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *t)), a, TCA_MAX);
  if (a[TCA_KIND]) {
    const auto* kind = static_cast<const char*>(RTA_DATA(a[TCA_KIND]));
    f.kind.assign(kind, strnlen(kind, RTA_PAYLOAD(a[TCA_KIND])));
  }
  f.chain = u32_of(a[TCA_CHAIN]);
  if (a[TCA_OPTIONS] && f.kind == "bpf") {
    const rtattr* b[TCA_BPF_MAX + 1] = {};
    parse_attrs(static_cast<const rtattr*>(RTA_DATA(a[TCA_OPTIONS])), static_cast<int>(RTA_PAYLOAD(a[TCA_OPTIONS])), b,
                TCA_BPF_MAX);
    f.prog_id = u32_of(b[TCA_BPF_ID]);
  }
  return f;
}

// Reads the replies of a dump into `out`; false with errno on a failure.
Status read_dump(int fd, uint32_t seq, std::vector<TcFilter>& out) {
  std::vector<char> buf(32768);
  for (;;) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error("read the interface's tc filters (netlink)");
    }
    int len = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_seq != seq) continue;
      if (h->nlmsg_type == NLMSG_DONE) return {};
      if (h->nlmsg_type == NLMSG_ERROR) {
        const int err = -static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
        // No clsact qdisc (or no interface): nothing there.
        if (err == EINVAL || err == ENOENT || err == ENODEV || err == 0) return {};
        return sys_error("list the interface's tc filters", err);
      }
      if (h->nlmsg_type == RTM_NEWTFILTER) out.push_back(filter_of(h));
    }
  }
}

}  // namespace

bpf_tc_hook tc_ingress_hook(unsigned ifindex) {
  bpf_tc_hook hook{};
  hook.sz = sizeof hook;
  hook.ifindex = static_cast<int>(ifindex);
  hook.attach_point = BPF_TC_INGRESS;
  return hook;
}

bpf_tc_opts tc_filter_opts(TcPlace place) {
  bpf_tc_opts o{};
  o.sz = sizeof o;
  o.handle = place.handle;
  o.priority = place.priority;
  return o;
}

Result<std::vector<TcFilter>> list_tc_filters(unsigned ifindex, bool ingress) {
  Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd.valid()) return sys_error("open a netlink socket to list tc filters");
  struct {
    nlmsghdr nh;
    tcmsg tc;
  } req{};
  constexpr uint32_t kSeq = 1;
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof req.tc);
  req.nh.nlmsg_type = RTM_GETTFILTER;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.nh.nlmsg_seq = kSeq;
  req.tc.tcm_family = AF_UNSPEC;
  req.tc.tcm_ifindex = static_cast<int>(ifindex);
  req.tc.tcm_parent = TC_H_MAKE(TC_H_CLSACT, ingress ? TC_H_MIN_INGRESS : TC_H_MIN_EGRESS);
  if (send(fd.get(), &req, req.nh.nlmsg_len, 0) < 0) return sys_error("ask for the interface's tc filters (netlink)");
  std::vector<TcFilter> out;
  LV_TRY(read_dump(fd.get(), kSeq, out));
  return out;
}

std::optional<TcPlace> free_tc_place(const std::vector<TcFilter>& filters) {
  for (uint16_t prio = 1; prio <= kTcPriorities; ++prio) {
    bool usable = true;
    std::set<uint32_t> taken;
    for (const TcFilter& f : filters) {
      if (f.chain != 0 || f.priority != prio) continue;
      usable &= f.kind == "bpf" && f.protocol == ETH_P_ALL;
      taken.insert(f.handle);
    }
    if (!usable) continue;
    for (uint32_t h = kTcHandle; h < kTcHandle + kTcHandles; ++h)
      if (!taken.contains(h)) return TcPlace{h, prio};
  }
  return std::nullopt;
}

uint32_t tc_prog_id_at(unsigned ifindex, TcPlace place) {
  if (!place.handle || !place.priority) return 0;
  bpf_tc_hook hook = tc_ingress_hook(ifindex);
  bpf_tc_opts o = tc_filter_opts(place);
  return bpf_tc_query(&hook, &o) == 0 ? o.prog_id : 0;
}

ProgIdentity prog_identity(int prog_fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  if (prog_fd < 0 || bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) return {};
  return {info.id, std::string(info.name, strnlen(info.name, sizeof info.name))};
}

ProgIdentity prog_identity_of_id(uint32_t id) {
  if (!id) return {};
  Fd fd(bpf_prog_get_fd_by_id(id));
  return fd.valid() ? prog_identity(fd.get()) : ProgIdentity{};
}

}  // namespace levee
