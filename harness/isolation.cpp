#include "harness/isolation.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/case_journal.hpp"

namespace pecheck {

namespace {

nlohmann::json to_json(const PropertyResult& r) {
  nlohmann::json j = {{"verdict", static_cast<int>(r.verdict)},
                      {"cases", r.cases},
                      {"nontrivial_cases", r.nontrivial_cases},
                      {"vacuous", r.vacuous},
                      {"max_error_u", r.max_error_u},
                      {"bound_u", r.bound_u},
                      {"message", r.message},
                      {"counterexample", r.counterexample},
                      {"distribution", r.distribution}};
  if (!std::isnan(r.counterexample_error_u)) j["counterexample_error_u"] = r.counterexample_error_u;
  if (!std::isnan(r.counterexample_bound_u)) j["counterexample_bound_u"] = r.counterexample_bound_u;
  for (const auto& o : r.other_rules) {
    nlohmann::json e = {{"rule", o.rule}, {"counterexample", o.counterexample}, {"message", o.message}};
    if (!std::isnan(o.counterexample_error_u)) e["counterexample_error_u"] = o.counterexample_error_u;
    j["other_rules"].push_back(e);
  }
  return j;
}

void from_json(const nlohmann::json& j, PropertyResult& r) {
  r.verdict = static_cast<Verdict>(j.at("verdict").get<int>());
  r.cases = j.at("cases").get<int>();
  r.nontrivial_cases = j.at("nontrivial_cases").get<int>();
  r.vacuous = j.at("vacuous").get<bool>();
  // JSON has no infinity: an infinite error travels as null.
  r.max_error_u =
      j.at("max_error_u").is_null() ? std::numeric_limits<double>::infinity() : j.at("max_error_u").get<double>();
  r.bound_u = j.at("bound_u").is_null() ? std::numeric_limits<double>::infinity() : j.at("bound_u").get<double>();
  r.message = j.at("message").get<std::string>();
  r.counterexample = j.at("counterexample").get<std::string>();
  // Absent when none was measured (NaN); an infinite one travels as null.
  auto error = [](const nlohmann::json& e) {  // absent: none measured (NaN); null: infinite
    if (!e.contains("counterexample_error_u")) return std::numeric_limits<double>::quiet_NaN();
    return e.at("counterexample_error_u").is_null() ? std::numeric_limits<double>::infinity()
                                                    : e.at("counterexample_error_u").get<double>();
  };
  if (j.contains("other_rules"))
    for (const auto& e : j.at("other_rules"))
      r.other_rules.push_back({e.at("rule").get<std::string>(), e.at("counterexample").get<std::string>(),
                               e.at("message").get<std::string>(), error(e)});
  if (j.contains("counterexample_error_u"))
    r.counterexample_error_u = j.at("counterexample_error_u").is_null() ? std::numeric_limits<double>::infinity()
                                                                        : j.at("counterexample_error_u").get<double>();
  if (j.contains("counterexample_bound_u"))
    r.counterexample_bound_u = j.at("counterexample_bound_u").is_null() ? std::numeric_limits<double>::infinity()
                                                                        : j.at("counterexample_bound_u").get<double>();
  r.distribution = j.at("distribution").get<std::vector<std::pair<std::string, int>>>();
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return fmt::format("crashed: signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {} before reporting", WEXITSTATUS(status));
  return "ended abnormally";
}

[[noreturn]] void child(int fd, const std::function<std::string()>& body) {
  std::string payload;
  try {
    payload = body();
  } catch (const std::exception& e) {
    journal::note_fault(fmt::format("threw: {}", e.what()).c_str());
    _exit(4);
  }
  for (std::size_t done = 0; done < payload.size();) {
    const ssize_t n = ::write(fd, payload.data() + done, payload.size() - done);
    if (n <= 0) _exit(4);
    done += static_cast<std::size_t>(n);
  }
  _exit(0);
}

}  // namespace

ChildOutcome run_in_child(const std::function<std::string()>& body, double timeout_s, const ForkHooks& hooks) {
  const journal::Page page;  // the child notes each case here, so a crash names the case
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);  // nothing buffered may be written twice
  if (hooks.before) hooks.before();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (hooks.after_in_child) hooks.after_in_child();
    ::close(fds[0]);
    page.activate();
    child(fds[1], body);
  }
  if (hooks.after_in_parent) hooks.after_in_parent();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(err)));
  }
  ::close(fds[1]);
  ChildOutcome out;
  bool hung = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
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
    out.payload.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (hung) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.last_case = page.last_case();
  const std::string fault = page.fault();
  if (hung)
    out.failure = fmt::format("hung: no result after {} s, killed", timeout_s);
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    out.reported = true;
  else
    out.failure = fault.empty() ? describe_status(status) : fmt::format("{} ({})", fault, describe_status(status));
  return out;
}

PropertyResult run_isolated(const Property& property, const Backend& backend, DType dtype, const RunParams& params,
                            const IsolationOptions& options) {
  PropertyResult out;
  out.property = property.id;
  out.encoder = backend.name;
  out.dtype = dtype;
  out.seed = derive_seed(params.seed, property, dtype);
  const ChildOutcome child = run_in_child(
      [&] {
        try {
          const auto encoder = backend.make();
          return to_json(property.run(*encoder, dtype, params)).dump();
        } catch (const std::exception& e) {
          PropertyResult r;
          r.verdict = Verdict::crash;
          r.message = fmt::format("the encoder threw outside a case: {}", e.what());
          return to_json(r).dump();
        }
      },
      options.timeout_s, options.hooks);
  out.counterexample = child.last_case;
  if (child.reported) {
    try {
      from_json(nlohmann::json::parse(child.payload), out);
      return out;
    } catch (const std::exception& e) {
      out.message = fmt::format("unreadable result from the child: {}", e.what());
    }
  } else {
    out.message = child.failure;
  }
  out.verdict = Verdict::crash;
  return out;
}

}  // namespace pecheck
