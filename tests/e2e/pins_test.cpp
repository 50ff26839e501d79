// pins_test.cpp - what levee does with what it finds pinned: a filter whose interface is
// gone (removed, and created again under the same name) is refused every change and
// shown as orphaned by the readers; and the pin directory another user made or could
// rename (bpffs is 1777) is refused, never trusted; and pins of another state layout
// (another version's) are refused by every reader and change, `levee run` too.
#include <bpf/bpf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "levee_abi.h"

namespace lvt {
namespace {

class OrphanedFilter : public E2e {};
using PinnedLayout = E2e;

const std::string kOrphanConfig = kUdpClassPolicy + R"(
[[override]]
name = "partner"
networks = ["198.18.0.12"]
rate = 500
burst = 50
)";

// Attached, the interface deleted and one of the same name created: every command that
// changes the filter exits 1 with attach's line and its fix, and writes nothing (the
// policy's generation and lists as before). The readers still read it, saying first
// that it is orphaned. (They once returned 0 and printed the change as applied, while
// no program was attached to the new interface.)
TEST_F(OrphanedFilter, EveryChangeIsRefusedAndReadersSayOrphaned) {
  const std::string p = sb().ifname("p"), q = sb().ifname("q");
  TempDir dir;
  const std::string config = dir.write("levee.toml", kOrphanConfig);
  const std::string blocklist = dir.write("block.txt", "198.18.7.0/24\n198.18.7.9\n");
  sb().track(q);
  sb().ip_rx({"link", "add", p, "type", "veth", "peer", "name", q});
  attach({"--config", config}, q);
  ASSERT_EQ(sb().levee({"deny", "add", q, "198.18.5.5"}).code, 0);
  sb().ip_rx({"link", "del", p});  // takes q with it
  sb().ip_rx({"link", "add", p, "type", "veth", "peer", "name", q});
  sb().ip_rx({"link", "set", q, "up"});
  EXPECT_FALSE(xdp_query(sb().rx_ns(), q).any()) << "the new " << q << " has an XDP program";
  const nlohmann::json before = sb().status(q);
  ASSERT_FALSE(before.is_null());
  ASSERT_EQ(before.at("attached"), false) << before.dump();

  const std::vector<std::vector<std::string>> changes{
      {"deny", "add", q, "198.18.0.12"},
      {"deny", "del", q, "198.18.5.5"},
      {"deny", "import", q, blocklist},
      {"allow", "add", q, "198.18.0.11"},
      {"allow", "del", q, "198.18.0.11"},
      {"override", "add", q, "partner", "198.18.0.13"},
      {"override", "del", q, "198.18.0.12"},
      {"set", q, "--rate", "1"},
      {"set", q, "--mode", "monitor"},
      {"reload", q, "--config", config},
      {"unban", q, "198.18.0.1"},
      {"prune", q},
  };
  for (const auto& args : changes) {
    std::string line;
    for (const auto& a : args) line += a + " ";
    SCOPED_TRACE("levee " + line);
    expect_error(sb().levee(args), 1, q + " has levee pins left from an interface that is gone");
    EXPECT_NE(sb().levee(args).err.find("levee detach " + q), std::string::npos);
  }
  const nlohmann::json after = sb().status(q);
  ASSERT_FALSE(after.is_null());
  EXPECT_EQ(after.at("policy_generation"), before.at("policy_generation")) << "a refused change was published";
  EXPECT_EQ(after.at("lists"), before.at("lists")) << after.dump();
  EXPECT_EQ(after.at("classes"), before.at("classes")) << after.dump();
  EXPECT_FALSE(xdp_query(sb().rx_ns(), q).any());

  for (const std::vector<std::string>& read : {std::vector<std::string>{"stats", q, "--json"},
                                               {"show", q, "198.18.5.5", "--json"},
                                               {"deny", "list", q, "--json"},
                                               {"top", q, "--json"}}) {
    RunResult r = sb().levee(read);
    EXPECT_EQ(r.code, 0) << r.describe();
    EXPECT_NE(r.err.find(q + "'s filter is orphaned"), std::string::npos) << read[0] << ": " << r.describe();
    EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded())
        << "stdout is no longer the JSON alone: " << r.describe();
  }
  detach(q);
  EXPECT_FALSE(sb().pinned(q));
}

class PinDirectory : public E2e {};

// What each step of a script printed: "@@ NAME RC" then its output.
struct Step {
  int rc = -1;
  std::string out;
};
std::map<std::string, Step> steps_of(const std::string& text) {
  std::map<std::string, Step> steps;
  std::istringstream in(text);
  std::string line;
  Step* cur = nullptr;
  while (std::getline(in, line)) {
    if (line.rfind("@@ ", 0) == 0) {
      std::istringstream head(line.substr(3));
      std::string name;
      int rc = -1;
      head >> name >> rc;
      cur = &steps[name];
      cur->rc = rc;
    } else if (cur) {
      cur->out += line + "\n";
    }
  }
  return steps;
}

// Another user (nobody) squatting levee's pin directory on a bpffs of mode 1777, as the
// host's is: attach refuses it, naming the path, its owner and the `rm -r` that clears
// it, and attaches nothing; once levee made the directory (0700, root's) nobody can
// rename or plant anything in it, and it stays after the last detach, so the squat
// cannot come back. A directory of another user's inside, or one others may write, is
// refused too. All of it on a bpffs of its own, in a mount namespace of its own (never
// the host's /sys/fs/bpf/levee, which other filters may use): the bpffs, and anything
// pinned in it, go with that namespace, also when the test fails.
// (Before, attach said "already attached" to the squat, and detach removed the
// directory when the last interface went, leaving it to whoever made it first.)
TEST_F(PinDirectory, AnotherUsersDirectoryIsRefusedAndLeveesIsKept) {
  const std::string iface = sb().rx_if();
  const std::string script = R"(
set -u
L=/sys/fs/bpf/levee
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
trap 'rm -rf "$L"' EXIT  # unpinning a link detaches it
step() { local name=$1 out rc; shift; out=$("$@" 2>&1); rc=$?; echo "@@ $name $rc"; printf '%s\n' "$out"; }
mount -t bpf -o mode=1777 bpf /sys/fs/bpf || exit 97
step squat $NOBODY mkdir -p "$L/$IF"
step attach_squatted "$LEVEE" attach "$IF" --rate 500 --burst 100
step xdp_squatted ip -d link show dev "$IF"
step status_squatted "$LEVEE" status
rm -r "$L"
step attach "$LEVEE" attach "$IF" --rate 500 --burst 100
step root_made stat -c '%a %u' "$L"
step dir_made stat -c '%a %u' "$L/$IF"
step rename $NOBODY mv "$L/$IF" "$L/moved"
step plant $NOBODY mkdir "$L/planted"
step detach "$LEVEE" detach "$IF"
step root_kept stat -c '%a %u' "$L"
step squat_kept $NOBODY mkdir "$L/$IF"
mkdir "$L/foreign" && chown 65534:65534 "$L/foreign"
step status_foreign "$LEVEE" status
rmdir "$L/foreign"
chmod 0770 "$L"
step status_writable "$LEVEE" status
chmod 0700 "$L"
step status_fixed "$LEVEE" status
)";
  RunResult r = run({"env", "LEVEE=" LEVEE_BIN, "IF=" + iface, "unshare", "--mount", "--propagation", "private", "bash",
                     "-c", script},
                    RunOptions{.netns = sb().rx_ns()});
  ASSERT_EQ(r.code, 0) << r.describe();
  auto steps = steps_of(r.out);
  auto at = [&](const std::string& name) -> const Step& {
    static const Step missing;
    auto it = steps.find(name);
    EXPECT_NE(it, steps.end()) << name << " did not run:" << r.describe();
    return it == steps.end() ? missing : it->second;
  };
  const std::string root = "/sys/fs/bpf/levee";
  EXPECT_EQ(at("squat").rc, 0) << at("squat").out;
  for (const char* refused : {"attach_squatted", "status_squatted"}) {
    SCOPED_TRACE(refused);
    EXPECT_EQ(at(refused).rc, 1) << at(refused).out;
    EXPECT_NE(at(refused).out.find("levee: " + root + " is owned by uid 65534"), std::string::npos) << at(refused).out;
    EXPECT_NE(at(refused).out.find("rm -r " + root + "\n"), std::string::npos) << at(refused).out;
  }
  EXPECT_EQ(at("xdp_squatted").out.find("xdp"), std::string::npos) << "attached anyway: " << at("xdp_squatted").out;

  EXPECT_EQ(at("attach").rc, 0) << at("attach").out;
  EXPECT_EQ(at("root_made").out, "700 0\n");
  EXPECT_EQ(at("dir_made").out, "700 0\n");
  EXPECT_NE(at("rename").rc, 0) << "nobody renamed a live interface's directory";
  EXPECT_NE(at("plant").rc, 0) << "nobody created a directory in levee's";
  EXPECT_EQ(at("detach").rc, 0) << at("detach").out;
  EXPECT_EQ(at("root_kept").out, "700 0\n") << "the last detach removed (or changed) " << root;
  EXPECT_NE(at("squat_kept").rc, 0) << "nobody squatted the interface's directory after the last detach";

  EXPECT_EQ(at("status_foreign").rc, 1) << at("status_foreign").out;
  EXPECT_NE(at("status_foreign").out.find(root + "/foreign is owned by uid 65534"), std::string::npos)
      << at("status_foreign").out;
  EXPECT_NE(at("status_foreign").out.find("rm -r " + root + "/foreign"), std::string::npos) << at("status_foreign").out;
  EXPECT_EQ(at("status_writable").rc, 1) << at("status_writable").out;
  EXPECT_NE(at("status_writable").out.find(root + " is writable by other users (mode 0770)"), std::string::npos)
      << at("status_writable").out;
  EXPECT_NE(at("status_writable").out.find("chmod 0700 " + root), std::string::npos) << at("status_writable").out;
  EXPECT_EQ(at("status_fixed").rc, 0) << at("status_fixed").out;
  EXPECT_FALSE(xdp_query(sb().rx_ns(), iface).any()) << "an XDP program outlived the test's bpffs";
}

// Pins of another state layout (a levee of another version attached them): every reader
// and every change, `levee run`'s adoption too, is refused in one line naming both
// layouts and the fix, and nothing reads them as this version's.
TEST_F(PinnedLayout, AnotherLayoutIsRefusedByEveryReaderAndChangeNamingBoth) {
  attach({"--rate", "500", "--burst", "100"});
  levee::Fd policy(bpf_obj_get((sb().pin_dir() + "/" + LV_MAP_POLICY).c_str()));
  ASSERT_TRUE(policy.valid());
  bpf_map_info info{};
  uint32_t len = sizeof info;
  ASSERT_EQ(bpf_obj_get_info_by_fd(policy.get(), &info, &len), 0);
  std::vector<uint8_t> value(info.value_size);
  const uint32_t key = 0;
  ASSERT_EQ(bpf_map_lookup_elem(policy.get(), &key, value.data()), 0);
  const std::vector<uint8_t> ours = value;
  const uint32_t other = LV_ABI_VERSION + 1000;
  std::memcpy(value.data(), &other, sizeof other);  // lv_control.abi_version comes first
  ASSERT_EQ(bpf_map_update_elem(policy.get(), &key, value.data(), BPF_EXIST), 0);
  const std::string said = "was attached by a levee with state layout " + std::to_string(other) + ", this one uses " +
                           std::to_string(LV_ABI_VERSION);
  TempDir dir;
  const std::string config = dir.write("levee.toml", kUdpClassPolicy);
  RunOptions quick;
  quick.timeout = std::chrono::milliseconds(15'000);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"stats", sb().rx_if()},
                                             {"set", sb().rx_if(), "--rate", "1"},
                                             {"reload", sb().rx_if(), "--config", config},
                                             {"run", sb().rx_if(), "--config", config}}) {
    SCOPED_TRACE("levee " + args[0]);
    const RunResult r = sb().levee(args, quick);
    expect_error(r, 1, said);
  }
  ASSERT_EQ(bpf_map_update_elem(policy.get(), &key, ours.data(), BPF_EXIST), 0);
  EXPECT_EQ(sb().levee({"stats", sb().rx_if()}).code, 0);
}

}  // namespace
}  // namespace lvt
