// input_file_test.cpp - every reader of files (the config, the CrowdSec key and password
// files, a blocklist) through core/input_file: a FIFO, a directory or a device is
// refused at once in one line, a pipe is read only where one is meant (deny import) and
// never waited on forever, and the size caps hold.
//
// A reader that waits forever would hang the test binary: each is run in a child
// process given a few seconds (within()), so such a wait fails the test instead.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "cli/blocklist.hpp"
#include "core/input_file.hpp"
#include "policy/config.hpp"
#include "policy/crowdsec.hpp"

namespace levee {
namespace {

using namespace std::chrono_literals;

// What fn returns, computed in a child process that has `limit` to finish; nothing if it
// did not (it is killed).
std::optional<std::string> within(std::chrono::milliseconds limit, const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string out = fn();
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  const auto until = std::chrono::steady_clock::now() + limit;
  bool ended = false;
  while (!ended) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fds[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    ended = n <= 0;
  }
  close(fds[0]);
  if (!ended) kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  if (!ended) return std::nullopt;
  return out;
}

template <typename T>
std::string message_of(const Result<T>& r) {
  return r ? std::string("(read)") : r.error().message();
}

class InputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("lv-input-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    fifo_ = (dir_ / "fifo").string();
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::trunc) << text;
    chmod(path.c_str(), 0600);
    return path;
  }
  std::filesystem::path dir_;
  std::string fifo_;
};

// A FIFO as the config (levee attach, reload, run, SIGHUP, suggest --config), the key
// file and the password file: refused at once, naming what it is. Before, open(2) waited
// for a writer that never came.
TEST_F(InputFiles, AFifoIsRefusedAtOnceByEveryReaderOfOneFile) {
  const auto config = within(5s, [&] { return message_of(read_config_text(fifo_)); });
  ASSERT_TRUE(config) << "reading a FIFO as the config waited";
  EXPECT_EQ(*config, fifo_ +
                         ": the config file is a FIFO, not a regular file; give the path of a levee config file "
                         "(see examples/levee.toml)");
  const auto key = within(5s, [&] { return message_of(read_cs_key(fifo_)); });
  ASSERT_TRUE(key) << "reading a FIFO as the CrowdSec key file waited";
  EXPECT_EQ(*key, fifo_ +
                      ": the CrowdSec key file is a FIFO, not a regular file; write the key `cscli bouncers add "
                      "levee -o raw` printed into it, alone, mode 600");
  const auto password = within(5s, [&] { return message_of(read_cs_password(fifo_)); });
  ASSERT_TRUE(password) << "reading a FIFO as the machine password file waited";
  EXPECT_NE(password->find("the CrowdSec machine password file is a FIFO, not a regular file"), std::string::npos)
      << *password;
}

TEST_F(InputFiles, DirectoriesAndDevicesAreRefusedAsWhatTheyAre) {
  EXPECT_EQ(message_of(read_config_text(dir_.string())),
            dir_.string() +
                ": the config file is a directory, not a regular file; give the path of a levee config file "
                "(see examples/levee.toml)");
  EXPECT_NE(message_of(read_cs_key("/dev/null")).find("the CrowdSec key file is a character device"),
            std::string::npos);
  // A blocklist may be a pipe, never a device that never ends.
  const auto zero = within(5s, [] { return message_of(cli::read_blocklist("/dev/zero")); });
  ASSERT_TRUE(zero);
  EXPECT_EQ(*zero,
            "/dev/zero: the blocklist is a character device, not a regular file or a pipe; give a file with one CIDR "
            "or address per line, or - to read standard input");
  EXPECT_NE(message_of(cli::read_blocklist(dir_.string())).find("is a directory, not a regular file or a pipe"),
            std::string::npos);
}

// A file over its cap is refused from its size, before a byte is read.
TEST_F(InputFiles, AFileOverItsCapIsRefusedWhole) {
  const std::string big = write("big.toml", "");
  ASSERT_EQ(truncate(big.c_str(), static_cast<off_t>(kMaxInputFileBytes + 1)), 0);
  EXPECT_EQ(
      message_of(read_config_text(big)),
      big + ": the config file is larger than 64 MiB; give the path of a levee config file (see examples/levee.toml)");
  EXPECT_EQ(message_of(cli::read_blocklist(big)),
            big + ": the blocklist is larger than 64 MiB; split it into smaller files and import each");
  const std::string key = write("key", std::string(kMaxCsKeyBytes + 1, 'k'));
  EXPECT_NE(message_of(read_cs_key(key)).find("the CrowdSec key file is larger than 4096 bytes"), std::string::npos);
  auto ok = read_config_text(write("good.toml", "[default]\nrate = 1\nburst = 1\n"));
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(*ok, "[default]\nrate = 1\nburst = 1\n");
}

// deny import takes a FIFO: what its writer sends is read to the writer's end.
TEST_F(InputFiles, ABlocklistFifoIsReadToItsWritersEnd) {
  const auto got = within(10s, [&] {
    std::thread writer([&] {
      const int fd = open(fifo_.c_str(), O_WRONLY | O_CLOEXEC);
      const std::string a = "198.51.100.0/24\n", b = "203.0.113.7\n";
      (void)!::write(fd, a.data(), a.size());
      usleep(100'000);  // two parts, apart
      (void)!::write(fd, b.data(), b.size());
      close(fd);
    });
    auto r = cli::read_blocklist(fifo_);
    writer.join();
    return r ? *r : r.error().message();
  });
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, "198.51.100.0/24\n203.0.113.7\n");
}

// A FIFO nobody writes, or a writer that stalls, ends the import after the wait, in one
// line; it never holds the command forever.
TEST_F(InputFiles, ABlocklistFifoWithNoWriterEndsAfterTheWait) {
  const auto got = within(10s, [&] { return message_of(cli::read_blocklist(fifo_, 300ms)); });
  ASSERT_TRUE(got) << "deny import of a FIFO with no writer waited past its limit";
  EXPECT_EQ(*got, fifo_ +
                      ": nothing came through the pipe for 0.3 s; start what writes it first (a FIFO waits for a "
                      "writer), or give a regular file");
  const auto stalled = within(10s, [&] {
    std::thread writer([&] {
      const int fd = open(fifo_.c_str(), O_WRONLY | O_CLOEXEC);
      (void)!::write(fd, "198.51.100.0/24\n", 16);
      usleep(1'000'000);  // stalls, then leaves
      close(fd);
    });
    auto r = cli::read_blocklist(fifo_, 300ms);
    writer.join();
    return message_of(r);
  });
  ASSERT_TRUE(stalled);
  EXPECT_NE(stalled->find("nothing came through the pipe for 0.3 s"), std::string::npos) << *stalled;
}

// `-` is standard input: a pipe or a redirected file; a terminal or a device is refused.
TEST_F(InputFiles, DashIsStandardInput) {
  const auto piped = within(10s, [] {
    int fds[2];
    if (pipe(fds) != 0) return std::string("pipe failed");
    (void)!::write(fds[1], "2001:db8::/32\n", 14);
    close(fds[1]);
    dup2(fds[0], STDIN_FILENO);
    auto r = cli::read_blocklist("-");
    return r ? *r : r.error().message();
  });
  ASSERT_TRUE(piped);
  EXPECT_EQ(*piped, "2001:db8::/32\n");
  const std::string file = write("list", "198.51.100.7\n");
  const auto redirected = within(10s, [&] {
    const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    dup2(fd, STDIN_FILENO);
    auto r = cli::read_blocklist("-");
    return r ? *r : r.error().message();
  });
  ASSERT_TRUE(redirected);
  EXPECT_EQ(*redirected, "198.51.100.7\n");
  const auto device = within(10s, [] {
    const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    dup2(fd, STDIN_FILENO);
    return message_of(cli::read_blocklist("-"));
  });
  ASSERT_TRUE(device);
  EXPECT_NE(device->find("standard input: the blocklist is a character device, not a regular file or a pipe"),
            std::string::npos)
      << *device;
}

}  // namespace
}  // namespace levee
