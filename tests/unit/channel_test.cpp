// The control channel's heartbeat and silence bound on a socket pair: TICKs keep a
// quiet but live peer from being given up and never reach the caller; a peer that
// sends nothing at all is given up after the bound, whatever the wait asked for; a
// peer that closed after telling why is heard even when the connection was reset.
#include "core/control/channel.hpp"
#include "core/control/peer_link.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <thread>

namespace rdmasweep::control {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::pair<Channel, Channel> pair_of_channels() {
  int fd[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd), 0);
  return {Channel(fd[0], "a"), Channel(fd[1], "b")};
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST(Channel, TicksKeepAQuietPeerAliveAndAreNeverReturned) {
  auto [a, b] = pair_of_channels();
  a.start_heartbeat();
  b.bound_silence(4 * kTickEvery);
  const auto t0 = Clock::now();
  // Only TICKs arrive for longer than the bound: an ordinary timeout, not silence.
  EXPECT_THROW(b.recv(std::chrono::duration_cast<std::chrono::milliseconds>(6 * kTickEvery)), Timeout);
  EXPECT_GE(seconds_since(t0), 2.5);
  EXPECT_FALSE(b.try_recv()) << "a TICK was handed to the caller";
  a.send(MsgType::Done, {{"n", 1}});
  Message m = b.recv(2s);
  EXPECT_EQ(m.type, MsgType::Done);
  EXPECT_EQ(m.body["n"], 1);
}

TEST(Channel, APeerThatSendsNothingIsGivenUpAfterTheBound) {
  auto [a, b] = pair_of_channels();  // a stays open but never ticks: a stopped process
  b.bound_silence(300ms);
  const auto t0 = Clock::now();
  try {
    b.recv(std::chrono::hours(24));
    FAIL() << "recv returned";
  } catch (const Silent& e) {
    EXPECT_NE(std::string(e.what()).find("not even its heartbeat"), std::string::npos) << e.what();
  }
  EXPECT_LT(seconds_since(t0), 2.0) << "the bound was not kept";
  EXPECT_GE(seconds_since(t0), 0.3);
  EXPECT_THROW(b.try_recv(), Silent) << "an idle loop's look at the channel must say so too";
}

TEST(Channel, ASideThatWasAwayReadsBeforeItJudgesThePeerSilent) {
  auto [a, b] = pair_of_channels();
  a.start_heartbeat();
  b.bound_silence(4 * kTickEvery);
  // b does not read for longer than the bound (a long setup under a sanitizer, say);
  // a's TICKs wait in the socket all along.
  std::this_thread::sleep_for(6 * kTickEvery);
  a.send(MsgType::Done, {{"n", 2}});
  Message m = b.recv(2s);
  EXPECT_EQ(m.type, MsgType::Done);
  std::this_thread::sleep_for(6 * kTickEvery);
  EXPECT_FALSE(b.try_recv()) << "only TICKs came: nothing for the caller, and no silence";
}

// A peer that stops tells why and closes with this side's bytes unread, so its kernel
// resets the connection: the send that meets the reset gives the peer's reason, not
// "Connection reset by peer".
TEST(Channel, ASendThatMeetsTheResetGivesThePeersReason) {
  Listener l("127.0.0.1", 0);
  std::optional<Channel> a = Channel::connect("127.0.0.1", l.port(), 5s);
  std::optional<Channel> b = l.accept(5s);
  ASSERT_TRUE(b);
  b->send(MsgType::Tick);  // never read by a
  a->send(MsgType::Error, {{"message", "interrupted"}});
  a.reset();  // closes with a TICK unread: a reset, not a FIN
  const auto t0 = Clock::now();
  try {
    while (seconds_since(t0) < 30) b->send(MsgType::Done);
    FAIL() << "every send went through for 30 s after the peer closed";
  } catch (const ChannelError& e) {
    EXPECT_EQ(std::string(e.what()), "peer " + b->peer() + " reported: interrupted");
  }
}

TEST(Channel, NoBoundMeansOnlyTheWaitsOwnTimeout) {
  auto [a, b] = pair_of_channels();
  EXPECT_THROW(b.recv(200ms), Timeout);
  EXPECT_FALSE(b.try_recv());
}

// --target-spin's wait: the same message, timeout and silence as a sleeping one.
TEST(Channel, ASpinningWaitEndsAsASleepingOne) {
  auto ends = pair_of_channels();  // not a structured binding: C++17 lambdas cannot capture one
  Channel &a = ends.first, &b = ends.second;
  EXPECT_THROW(b.recv(200ms, true), Timeout);
  std::thread later([&a] {
    std::this_thread::sleep_for(100ms);
    a.send(MsgType::Done, {{"n", 3}});
  });
  Message m = b.recv(10s, true);
  later.join();
  EXPECT_EQ(m.type, MsgType::Done);
  EXPECT_EQ(m.body["n"], 3);
  b.bound_silence(300ms);
  EXPECT_THROW(b.recv(std::chrono::hours(24), true), Silent);
}

// A link with nothing of its own to poll (a mesh flow's) spins on try_recv: never
// its sleeping recv, and for as long as it takes.
class CountingLink final : public PeerLink {
 public:
  explicit CountingLink(int empty) : empty_(empty) {}
  void send(MsgType, const nlohmann::json&) override {}
  std::optional<Message> try_recv() override {
    ++looks;
    if (empty_ < 0 || looks <= empty_) return std::nullopt;
    Message m;
    m.type = MsgType::Done;
    return m;
  }
  Message recv(std::chrono::milliseconds) override {
    ADD_FAILURE() << "the spinning wait slept";
    return {};
  }
  const std::string& who() const override { return who_; }
  const std::string& me() const override { return who_; }
  int looks = 0;

 private:
  const int empty_;  // try_recv finds nothing this many times, then DONE; < 0: never
  const std::string who_ = "rank 1";
};

TEST(PeerLink, TheDefaultSpinningWaitPollsUntilTheMessageOrTheTimeout) {
  CountingLink soon(5000);
  EXPECT_EQ(soon.recv_spinning(10s).type, MsgType::Done);
  EXPECT_EQ(soon.looks, 5001);
  CountingLink never(-1);
  const auto t0 = Clock::now();
  try {
    never.recv_spinning(200ms);
    FAIL() << "returned";
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 sent nothing within 0.2 s"), std::string::npos) << e.what();
  }
  EXPECT_GE(seconds_since(t0), 0.2);
  EXPECT_GT(never.looks, 1);
}

TEST(Protocol, SilenceBoundIsThePeersTimeoutAndNeverUnderSixTicks) {
  EXPECT_EQ(silence_bound(20000), 20000ms);
  EXPECT_EQ(silence_bound(0), 6 * kTickEvery);
  EXPECT_EQ(silence_bound(1000), 6 * kTickEvery);
  Hello h;
  h.timeout_ms = 7000;
  EXPECT_EQ(hello_from_json(to_json(h)).timeout_ms, 7000u);
  EXPECT_EQ(to_string(MsgType::Tick), std::string("TICK"));
}

}  // namespace
}  // namespace rdmasweep::control
