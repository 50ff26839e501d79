// lapi.hpp - Debian's real CrowdSec Local API for the end-to-end tests (crowdsec -no-cs,
// unpacked by scripts/test.sh's ensure_crowdsec, never installed), run in a namespace of
// the test's own, its state in a TempDir, the server a child that dies with the test.
// Shared by crowdsec_test.cpp (levee as a bouncer) and crowdsec_machine_test.cpp (levee
// as a machine).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "levee_run.hpp"

namespace lvt {

inline constexpr int kLapiPort = 18080;
inline constexpr const char* kKey = "levee0e2e0bouncer0key00000000000";

inline std::string crowdsec_dir() {
  const char* d = getenv("LEVEE_CROWDSEC_DIR");
  return d ? d : "/var/cache/levee-test/crowdsec";
}

// Debian's CrowdSec Local API in the receiver namespace, its state in `dir`.
class Lapi {
 public:
  // `listen`: the address it listens on in `ns` (another namespace's hosts reach it
  // through a link of the test's own).
  Lapi(const std::string& ns, const TempDir& dir, const std::string& listen = "127.0.0.1")
      : ns_(ns), dir_(dir.path()), bin_(crowdsec_dir() + "/usr/bin/") {
    const std::string& d = dir_;
    std::ifstream profiles(crowdsec_dir() + "/etc/crowdsec/profiles.yaml");
    std::stringstream p;
    p << profiles.rdbuf();
    dir.write("profiles.yaml", p.str());
    // No online_client block: that is what keeps it offline (and -no-cs: the API only).
    // Its log goes to a file in `dir`: on stdout, a pipe nobody reads while it runs, an
    // import's log lines would fill it and stall the server.
    cfg_ = dir.write("config.yaml", "common: {daemonize: false, log_media: file, log_level: info, log_dir: " + d +
                                        "/}\n"
                                        "config_paths: {config_dir: " +
                                        d + "/, data_dir: " + d + "/, hub_dir: " + d + "/hub/, index_path: " + d +
                                        "/hub/.index.json, simulation_path: " + d +
                                        "/simulation.yaml}\n"
                                        "db_config: {type: sqlite, db_path: " +
                                        d +
                                        "/crowdsec.db, use_wal: true}\n"
                                        "api:\n  client: {credentials_path: " +
                                        d +
                                        "/local_api_credentials.yaml}\n"
                                        "  server: {listen_uri: " +
                                        listen + ":" + std::to_string(kLapiPort) + ", profiles_path: " + d +
                                        "/profiles.yaml}\n"
                                        "prometheus: {enabled: false}\n");
    // Registering writes the database: done before the server starts.
    cscli({"bouncers", "add", "levee", "-k", kKey});
    cscli({"machines", "add", "cscli-local", "--auto", "-f", d + "/local_api_credentials.yaml"});
  }
  ~Lapi() { stop(); }

  void start() {
    RunOptions o;
    o.netns = ns_;
    o.die_with_parent = true;
    o.timeout = std::chrono::milliseconds(600'000);
    child_.emplace(std::vector<std::string>{bin_ + "crowdsec", "-c", cfg_, "-no-cs"}, o);
    ASSERT_TRUE(
        eventually([&] { return http_get(ns_, kLapiPort, "/health").status == 200 || !child_->running(); }, 20'000));
    ASSERT_TRUE(child_->running()) << child_->stop().describe();
  }
  // SIGKILL: a crash, nothing flushed or said to its clients.
  void kill() {
    if (!child_) return;
    ::kill(child_->pid(), SIGKILL);
    child_->wait();
    child_.reset();
  }
  // A machine of its own, with a password (registering writes the database: works
  // before the server starts).
  void add_machine(const std::string& name, const std::string& password) {
    cscli({"machines", "add", name, "--password", password, "-f", dir_ + "/" + name + ".credentials.yaml"});
  }
  // SIGTERM: it exits at once with 143, a normal stop.
  void stop() {
    if (!child_) return;
    RunResult r = child_->stop();
    EXPECT_TRUE(r.code == 143 || r.code == 0) << r.describe();
    child_.reset();
  }
  // cscli on this Local API (its database, or the server when a command needs it).
  std::string cscli(std::vector<std::string> args) const {
    std::vector<std::string> argv{bin_ + "cscli", "-c", cfg_, "--error"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions o;
    o.netns = ns_;
    o.timeout = std::chrono::milliseconds(120'000);
    // 1.4.6 on SQLite may refuse a write with "database is locked" while a bouncer pulls
    // (a pull writes the bouncer's last pull time); the write was rolled back: again.
    RunResult r = run(argv, o);
    for (int i = 0; i < 5 && r.code != 0 && r.err.find("database is locked") != std::string::npos; ++i) {
      usleep(200'000);
      r = run(argv, o);
    }
    if (r.code != 0) throw std::runtime_error("cscli failed: " + r.describe());
    return r.out;
  }
  // A statement on its database (Debian's sqlite3), the server stopped.
  void sql(const std::string& statement) const { must({"sqlite3", dir_ + "/crowdsec.db", statement}); }
  // Its address as a client in `ns` sees it (another host: the far end of its link).
  std::string url(const std::string& host = "127.0.0.1") const {
    return "http://" + host + ":" + std::to_string(kLapiPort);
  }

 private:
  std::string ns_, dir_, bin_, cfg_;
  std::optional<Child> child_;
};

}  // namespace lvt
