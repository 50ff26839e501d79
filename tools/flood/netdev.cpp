#include "netdev.hpp"

#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace levee::flood {
namespace {

struct OwnedFd {
  int fd;
  explicit OwnedFd(int f) : fd(f) {}
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
};

void add_attr(std::vector<uint8_t>& msg, uint16_t type, const void* data, size_t len) {
  size_t off = NLMSG_ALIGN(msg.size());
  msg.resize(off + RTA_SPACE(len), 0);
  auto* rta = reinterpret_cast<rtattr*>(msg.data() + off);
  rta->rta_type = type;
  rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
  std::memcpy(RTA_DATA(rta), data, len);
}

template <typename Fn>
void for_each_attr(const void* start, size_t len, Fn&& fn) {
  auto* rta = static_cast<const rtattr*>(start);
  int left = static_cast<int>(len);
  for (; RTA_OK(rta, left); rta = RTA_NEXT(rta, left))
    fn(rta->rta_type & NLA_TYPE_MASK, RTA_DATA(rta), RTA_PAYLOAD(rta));
}

template <typename T>
T attr_as(const void* data, size_t len) {
  T v{};
  std::memcpy(&v, data, len < sizeof v ? len : sizeof v);
  return v;
}

// One attribute of an RTM_NEWLINK answer into li.
void read_link_attr(LinkInfo& li, unsigned type, const void* d, size_t len) {
  switch (type) {
    case IFLA_IFNAME:
      li.name.assign(static_cast<const char*>(d), strnlen(static_cast<const char*>(d), len));
      break;
    case IFLA_ADDRESS:
      if (len == 6) {
        pkt::Mac m;
        std::memcpy(m.data(), d, 6);
        li.mac = m;
      }
      break;
    case IFLA_MTU:
      li.mtu = attr_as<uint32_t>(d, len);
      break;
    case IFLA_NUM_TX_QUEUES:
      li.num_tx_queues = attr_as<uint32_t>(d, len);
      break;
    case IFLA_NUM_RX_QUEUES:
      li.num_rx_queues = attr_as<uint32_t>(d, len);
      break;
    case IFLA_LINK:
      li.link = attr_as<int32_t>(d, len);
      break;
    case IFLA_LINK_NETNSID:
      li.link_netnsid = attr_as<int32_t>(d, len);
      break;
    case IFLA_STATS64: {
      auto s = attr_as<rtnl_link_stats64>(d, len);
      li.stats.tx_packets = s.tx_packets;
      li.stats.tx_dropped = s.tx_dropped;
      li.stats.rx_packets = s.rx_packets;
      break;
    }
    case IFLA_XDP:
      for_each_attr(d, len, [&](unsigned t, const void* x, size_t l) {
        if (t == IFLA_XDP_ATTACHED) li.xdp_attached = attr_as<uint8_t>(x, l);
      });
      break;
    case IFLA_LINKINFO:
      for_each_attr(d, len, [&](unsigned t, const void* x, size_t l) {
        if (t == IFLA_INFO_KIND) li.kind.assign(static_cast<const char*>(x), strnlen(static_cast<const char*>(x), l));
      });
      break;
    default:
      break;
  }
}

}  // namespace

void enter_netns(const std::string& name_or_path) {
  std::string path = name_or_path.find('/') == std::string::npos ? "/var/run/netns/" + name_or_path : name_or_path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open network namespace " + path + ": " + std::strerror(errno));
  OwnedFd guard(fd);
  if (::setns(fd, CLONE_NEWNET) != 0)
    throw std::runtime_error("cannot enter network namespace " + path + ": " + std::strerror(errno));
}

std::optional<LinkInfo> get_link(int ifindex, std::optional<int> target_nsid) {
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return std::nullopt;
  OwnedFd guard(fd);

  std::vector<uint8_t> req(NLMSG_SPACE(sizeof(ifinfomsg)), 0);
  auto* nlh = reinterpret_cast<nlmsghdr*>(req.data());
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  nlh->nlmsg_seq = 1;
  auto* ifi = static_cast<ifinfomsg*>(NLMSG_DATA(nlh));
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = ifindex;
  if (target_nsid) {
    int32_t nsid = *target_nsid;
    add_attr(req, IFLA_TARGET_NETNSID, &nsid, sizeof nsid);
  }
  reinterpret_cast<nlmsghdr*>(req.data())->nlmsg_len = static_cast<uint32_t>(req.size());

  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, req.data(), req.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return std::nullopt;

  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::vector<uint8_t> buf(size_t{64} * 1024);
  ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
  if (n <= 0) return std::nullopt;

  for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, static_cast<unsigned>(n)); h = NLMSG_NEXT(h, n)) {
    if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE) return std::nullopt;
    if (h->nlmsg_type != RTM_NEWLINK) continue;
    auto* info = static_cast<ifinfomsg*>(NLMSG_DATA(h));
    LinkInfo li;
    li.ifindex = info->ifi_index;
    li.flags = info->ifi_flags;
    for_each_attr(IFLA_RTA(info), IFLA_PAYLOAD(h),
                  [&](unsigned type, const void* d, size_t len) { read_link_attr(li, type, d, len); });
    return li;
  }
  return std::nullopt;
}

std::optional<LinkStats> stats_of(int ifindex) {
  auto li = get_link(ifindex);
  if (!li) return std::nullopt;
  return li->stats;
}

std::optional<std::pair<unsigned, unsigned>> active_queues(const std::string& dev) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  OwnedFd guard(fd);
  ethtool_channels ch{};
  ch.cmd = ETHTOOL_GCHANNELS;
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", dev.c_str());
  ifr.ifr_data = reinterpret_cast<char*>(&ch);
  if (::ioctl(fd, SIOCETHTOOL, &ifr) != 0) return std::nullopt;
  return std::make_pair(ch.rx_count + ch.combined_count, ch.tx_count + ch.combined_count);
}

std::optional<LinkInfo> get_peer(const LinkInfo& self) {
  if (self.kind != "veth" || !self.link || *self.link <= 0) return std::nullopt;
  return get_link(*self.link, self.link_netnsid);
}

pkt::Mac parse_mac(const std::string& s) {
  pkt::Mac m{};
  unsigned v[6];
  char extra;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &extra) != 6)
    throw std::invalid_argument("not a MAC address: " + s);
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 0xff) throw std::invalid_argument("not a MAC address: " + s);
    m[i] = static_cast<uint8_t>(v[i]);
  }
  return m;
}

std::string format_mac(const pkt::Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

}  // namespace levee::flood
