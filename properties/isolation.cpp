#include "properties/isolation.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

namespace pecheck {

namespace {

nlohmann::json to_json(const PropertyResult& r) {
  return {{"verdict", static_cast<int>(r.verdict)},
          {"cases", r.cases},
          {"max_error_u", r.max_error_u},
          {"bound_u", r.bound_u},
          {"message", r.message},
          {"counterexample", r.counterexample},
          {"distribution", r.distribution}};
}

void from_json(const nlohmann::json& j, PropertyResult& r) {
  r.verdict = static_cast<Verdict>(j.at("verdict").get<int>());
  r.cases = j.at("cases").get<int>();
  // JSON has no infinity: an infinite error travels as null.
  r.max_error_u =
      j.at("max_error_u").is_null() ? std::numeric_limits<double>::infinity() : j.at("max_error_u").get<double>();
  r.bound_u = j.at("bound_u").is_null() ? std::numeric_limits<double>::infinity() : j.at("bound_u").get<double>();
  r.message = j.at("message").get<std::string>();
  r.counterexample = j.at("counterexample").get<std::string>();
  r.distribution = j.at("distribution").get<std::vector<std::pair<std::string, int>>>();
}

[[noreturn]] void child(int fd, const Property& property, const Backend& backend, DType dtype,
                        const RunParams& params) {
  std::string payload;
  try {
    const auto encoder = backend.make();
    payload = to_json(property.run(*encoder, dtype, params)).dump();
  } catch (const std::exception& e) {
    PropertyResult r;
    r.verdict = Verdict::crash;
    r.message = fmt::format("the encoder threw outside a case: {}", e.what());
    payload = to_json(r).dump();
  }
  for (std::size_t done = 0; done < payload.size();) {
    const ssize_t n = ::write(fd, payload.data() + done, payload.size() - done);
    if (n <= 0) _exit(4);
    done += static_cast<std::size_t>(n);
  }
  _exit(0);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return fmt::format("crashed: signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {} before reporting", WEXITSTATUS(status));
  return "ended abnormally";
}

}  // namespace

PropertyResult run_isolated(const Property& property, const Backend& backend, DType dtype, const RunParams& params,
                            const IsolationOptions& options) {
  PropertyResult out;
  out.property = property.id;
  out.encoder = backend.name;
  out.dtype = dtype;
  out.seed = derive_seed(params.seed, property.id, dtype);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], property, backend, dtype, params);
  }
  ::close(fds[1]);
  std::string payload;
  bool hung = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout_s);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      hung = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // EOF: the child finished or died
    payload.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (hung) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (hung) {
    out.verdict = Verdict::crash;
    out.message = fmt::format("hung: no result after {} s, killed", options.timeout_s);
    return out;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    try {
      from_json(nlohmann::json::parse(payload), out);
      return out;
    } catch (const std::exception& e) {
      out.message = fmt::format("unreadable result from the child: {}", e.what());
    }
  } else {
    out.message = describe_status(status);
  }
  out.verdict = Verdict::crash;
  return out;
}

}  // namespace pecheck
