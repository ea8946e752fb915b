#include "core/point/beside.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace rdmasweep {

bool BesideRun::overlapped() const {
  return point && background && point->began >= traffic_began && point->ended <= background->ended;
}

double background_seconds(double alone_seconds) { return 10 * alone_seconds + 2; }

double background_bound_seconds(double alone_seconds) { return kBesideBoundFactor * alone_seconds + 2; }

BesideRun run_beside(std::unique_ptr<ClientSession>& background, const BesideConnect& connect, const TestConfig& bg,
                     const std::function<std::optional<PointResult>()>& run_point, std::atomic<bool>* wind_up) {
  if (wind_up) wind_up->store(false);
  BesideRun out;
  std::mutex m;
  std::condition_variable cv;
  bool flowing = false, over = false;
  std::thread t([&] {
    try {
      if (!background || background->broken()) {
        background.reset();  // a broken session's socket closes: the server lets it go
        background = connect();
      }
      background->on_traffic([&] {
        std::lock_guard<std::mutex> l(m);
        out.traffic_began = std::chrono::steady_clock::now();
        flowing = true;
        cv.notify_all();
      });
      out.background = background->run(bg);
    } catch (const std::exception& e) {
      out.background_error = e.what();
    }
    std::lock_guard<std::mutex> l(m);
    out.traffic_ended = std::chrono::steady_clock::now();
    over = true;
    cv.notify_all();
  });
  bool start;
  {
    // Each of the background's steps is bounded by its session's --timeout: it flows or ends.
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return flowing || over; });
    start = !over;
  }
  std::exception_ptr failed;
  if (start) {
    try {
      out.point = run_point();
    } catch (...) {
      failed = std::current_exception();
    }
  }
  if (wind_up) wind_up->store(true);  // the point is done: so is the background's window
  t.join();
  if (background) background->on_traffic(nullptr);
  if (failed) std::rethrow_exception(failed);
  if (!start) out.point_error = "not run: the background ended before its traffic flowed (" + out.background_error + ")";
  return out;
}

}  // namespace rdmasweep
