#include "datapath/local_routes.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace levee {
namespace {

struct MnlCloser {
  void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};

// The attributes of a route levee reads.
struct RouteAttrs {
  const nlattr* dst = nullptr;
  uint32_t table = 0;
};

int on_attr(const nlattr* attr, void* data) {
  auto* a = static_cast<RouteAttrs*>(data);
  if (mnl_attr_get_type(attr) == RTA_DST) a->dst = attr;
  if (mnl_attr_get_type(attr) == RTA_TABLE && mnl_attr_get_payload_len(attr) == 4) a->table = mnl_attr_get_u32(attr);
  return MNL_CB_OK;
}

// One route of the dump into `out` if it is a local route of the local table.
int on_route(const nlmsghdr* nlh, void* data) {
  auto* out = static_cast<std::vector<lv_local_key>*>(data);
  const auto* rtm = static_cast<const rtmsg*>(mnl_nlmsg_get_payload(nlh));
  if (rtm->rtm_type != RTN_LOCAL || (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)) return MNL_CB_OK;
  RouteAttrs a;
  a.table = rtm->rtm_table;
  if (mnl_attr_parse(nlh, sizeof(*rtm), on_attr, &a) < 0) return MNL_CB_ERROR;
  const size_t len = rtm->rtm_family == AF_INET ? 4 : 16;
  if (a.table != RT_TABLE_LOCAL || !a.dst || mnl_attr_get_payload_len(a.dst) != len) return MNL_CB_OK;
  lv_local_key k{};
  if (rtm->rtm_family == AF_INET) {
    k.addr[2] = htonl(0xffff);
    std::memcpy(&k.addr[3], mnl_attr_get_payload(a.dst), 4);
    k.prefixlen = 96 + rtm->rtm_dst_len;
  } else {
    std::memcpy(k.addr, mnl_attr_get_payload(a.dst), 16);
    k.prefixlen = rtm->rtm_dst_len;
  }
  out->push_back(k);
  return MNL_CB_OK;
}

bool key_eq(const lv_local_key& a, const lv_local_key& b) {
  return a.prefixlen == b.prefixlen && std::memcmp(a.addr, b.addr, sizeof a.addr) == 0;
}
bool key_less(const lv_local_key& a, const lv_local_key& b) {
  const int c = std::memcmp(a.addr, b.addr, sizeof a.addr);
  return c != 0 ? c < 0 : a.prefixlen < b.prefixlen;
}

}  // namespace

Result<std::vector<lv_local_key>> local_routes() {
  std::unique_ptr<mnl_socket, MnlCloser> nl(mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC));
  if (!nl || mnl_socket_bind(nl.get(), 0, MNL_SOCKET_AUTOPID) < 0)
    return sys_error("open a netlink socket to read the host's local routes");
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = RTM_GETROUTE;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  const auto seq = static_cast<uint32_t>(getpid());
  nlh->nlmsg_seq = seq;
  auto* rtm = static_cast<rtmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(rtmsg)));
  rtm->rtm_family = AF_UNSPEC;
  rtm->rtm_table = RT_TABLE_LOCAL;
  if (mnl_socket_sendto(nl.get(), nlh, nlh->nlmsg_len) < 0) return sys_error("ask the kernel for its local routes");
  std::vector<lv_local_key> out;
  const unsigned portid = mnl_socket_get_portid(nl.get());
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(nl.get(), buf.data(), buf.size());
    if (n < 0) return sys_error("read the kernel's local routes");
    const int r = mnl_cb_run(buf.data(), static_cast<size_t>(n), seq, portid, on_route, &out);
    if (r == MNL_CB_STOP) break;
    if (r < 0) return sys_error("read the kernel's local routes");
  }
  std::sort(out.begin(), out.end(), key_less);
  out.erase(std::unique(out.begin(), out.end(), key_eq), out.end());
  return out;
}

Result<size_t> sync_local(int map_fd, const std::vector<lv_local_key>& want) {
  std::vector<lv_local_key> have;
  lv_local_key k{}, next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    have.push_back(next);
    k = next;
    prev = &k;
  }
  std::sort(have.begin(), have.end(), key_less);
  size_t changed = 0;
  const uint8_t one = 1;
  for (const lv_local_key& w : want)
    if (!std::binary_search(have.begin(), have.end(), w, key_less)) {
      if (bpf_map_update_elem(map_fd, &w, &one, BPF_ANY))
        return sys_error("add one of the host's addresses to lv_local", errno,
                         "the host has more local routes than lv_local holds (" + std::to_string(LV_MAX_LOCAL) + ")");
      ++changed;
    }
  for (const lv_local_key& h : have)
    if (!std::binary_search(want.begin(), want.end(), h, key_less)) {
      if (bpf_map_delete_elem(map_fd, &h) && errno != ENOENT)
        return sys_error("remove a gone address from lv_local", errno);
      ++changed;
    }
  return changed;
}

}  // namespace levee
