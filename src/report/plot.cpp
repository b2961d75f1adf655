#include "report/plot.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <vector>

#include "common/io.h"

namespace whvi::report {

namespace {

constexpr int kTimeoutSeconds = 120;
constexpr size_t kMaxPngBytes = size_t{64} << 20;

bool executable_file(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISREG(st.st_mode) && ::access(path, X_OK) == 0;
}

// The terminal: pngcairo where this gnuplot has it, else png.
std::string terminal(int width, int height, int font) {
  return "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size " + std::to_string(width) +
         "," + std::to_string(height) + " enhanced font 'sans," + std::to_string(font) +
         "' } else { set terminal png size " + std::to_string(width) + "," + std::to_string(height) + " }\n";
}

// SIGPIPE blocked in this thread while it writes gnuplot's input (a gnuplot
// that exits early gives EPIPE, not a dead whvi); a pending one is consumed.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeBlock() {
    const timespec zero{0, 0};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_{}, old_{};
};

struct Pipes {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  ~Pipes() {
    for (int* p : {in, out, err})
      for (int i = 0; i < 2; ++i)
        if (p[i] >= 0) ::close(p[i]);
  }
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Runs `exe -d`, `input` on its standard input, at most
// kTimeoutSeconds; returns "" and fills `out` on exit status 0, else why not.
std::string run_program(const std::string& exe, const std::string& input, std::string& out) {
  Pipes p;
  if (::pipe2(p.in, O_CLOEXEC) != 0 || ::pipe2(p.out, O_CLOEXEC) != 0 || ::pipe2(p.err, O_CLOEXEC) != 0)
    return std::string("cannot create a pipe: ") + std::strerror(errno);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p.in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, p.out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p.err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, "/");
  std::vector<std::string> env_s = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  if (const char* home = std::getenv("HOME")) env_s.push_back(std::string("HOME=") + home);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  // -d: no gnuplotrc, no ~/.gnuplot (an init file may run commands)
  std::string exe_copy = exe, defaults = "-d";
  char* argv[] = {exe_copy.data(), defaults.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return "cannot run " + exe + ": " + std::strerror(rc);
  Pipes::close_fd(p.in[0]), Pipes::close_fd(p.out[1]), Pipes::close_fd(p.err[1]);
  ::fcntl(p.in[1], F_SETFL, O_NONBLOCK);

  SigpipeBlock block;
  std::string err;
  size_t sent = 0;
  bool too_big = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutSeconds);
  while (p.out[0] >= 0 || p.err[0] >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd fds[3] = {{p.out[0], POLLIN, 0}, {p.err[0], POLLIN, 0}, {p.in[1], POLLOUT, 0}};
    if (::poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    if (fds[2].revents) {
      const ssize_t n = ::write(p.in[1], input.data() + sent, input.size() - sent);
      if (n > 0) sent += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) sent = input.size();
      if (sent >= input.size()) Pipes::close_fd(p.in[1]);
    }
    for (int k = 0; k < 2; ++k) {
      if (!fds[k].revents) continue;
      char buf[65536];
      int& fd = k == 0 ? p.out[0] : p.err[0];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0 && k == 0) out.append(buf, static_cast<size_t>(n));
      if (n > 0 && k == 1 && err.size() < 4096) err.append(buf, static_cast<size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) Pipes::close_fd(fd);
    }
    if (out.size() > kMaxPngBytes) {
      too_big = true;
      break;
    }
  }
  const bool timed_out = p.out[0] >= 0 || p.err[0] >= 0;
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (too_big) return exe + " wrote more than 64 MiB";
  if (timed_out) return exe + " did not finish within " + std::to_string(kTimeoutSeconds) + " s";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return exe + " failed" + (err.empty() ? std::string() : ": " + printable(err));
  return "";
}

}  // namespace

std::string gnuplot_path() {
  for (const char* p : {"/usr/bin/gnuplot", "/usr/local/bin/gnuplot"})
    if (executable_file(p)) return p;
  return "";
}

std::string gnuplot_string(const std::string& text) {
  std::string s = "'";
  size_t n = 0;
  for (char c : text) {
    if (++n > 200) break;
    const bool plain = c >= 32 && c < 127 && c != '\'' && c != '`' && c != '\\' && c != '@';
    s += plain ? c : ' ';
  }
  return s + "'";
}

std::string gnuplot_datablock(const std::string& name, const std::string& csv) {
  std::string s = "$" + name + " << EOD\n";
  const auto first = csv.find('\n');
  std::istringstream rows(first == std::string::npos ? std::string() : csv.substr(first + 1));
  for (std::string line; std::getline(rows, line);)
    if (!line.empty() && line != "EOD") s += line + "\n";
  return s + "EOD\n";
}

std::string draw_png(const std::string& script, const std::string& png) {
  const std::string exe = gnuplot_path();
  if (exe.empty()) return "gnuplot is not installed (/usr/bin/gnuplot): install gnuplot-nox for figures";
  std::string bytes;
  const std::string why = run_program(exe, "unset output\n" + script, bytes);
  if (!why.empty()) return why;
  if (bytes.size() < 8 || bytes.compare(0, 4, "\x89PNG") != 0) return exe + " wrote no PNG image";
  try {
    write_file_atomic(png, bytes);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string plot_toy(const std::string& grid_csv, const std::string& data_csv, const std::string& title,
                     const std::string& png) {
  std::string s = terminal(900, 560, 12);
  s += gnuplot_datablock("pred", grid_csv) + gnuplot_datablock("data", data_csv);
  s += "set datafile separator ','\n";
  if (!title.empty()) s += "set title " + gnuplot_string(title) + " noenhanced\n";
  s += R"(set xlabel 'x'
set ylabel 'y'
set key top left box opaque
set grid lc rgb '#e0e0e0'
set style fill transparent solid 1.0 noborder
plot $pred using 1:4:5 with filledcurves lc rgb '#c6dbef' title '95% interval', \
     $pred using 1:6:7 with filledcurves lc rgb '#6baed6' title '75% interval', \
     $pred using 1:2 with lines lw 2.5 lc rgb '#08306b' title 'predictive mean', \
     $data using 1:2 with points pt 7 ps 0.6 lc rgb '#000000' title 'data'
)";
  return draw_png(s, png);
}

std::string plot_reliability(const std::string& bins_csv, const std::string& title, const std::string& png) {
  std::string s = terminal(560, 640, 10);
  s += gnuplot_datablock("bins", bins_csv);
  s += "set datafile separator ','\nset datafile missing 'NaN'\n";
  s += "set multiplot layout 2,1 title " + gnuplot_string(title) + " noenhanced\n";
  s += R"(set lmargin 10
set xrange [0:1]
set yrange [0:1]
set ylabel 'accuracy'
set style fill solid 0.6 border -1
set key top left
set grid
plot $bins using (($1+$2)/2):4:($2-$1) with boxes lc rgb '#3b6ea5' title 'accuracy per bin', \
     x with lines dt 2 lc rgb 'black' title 'perfect calibration'
set autoscale y
set yrange [0:*]
set xlabel 'confidence (largest predicted class probability)'
set ylabel 'test points'
plot $bins using (($1+$2)/2):3:($2-$1) with boxes lc rgb '#888888' notitle
unset multiplot
)";
  return draw_png(s, png);
}

std::string plot_ood(const std::string& ood_csv, const std::string& title, const std::string& png) {
  std::string s = terminal(600, 640, 10);
  s += gnuplot_datablock("ood", ood_csv);
  s += "set datafile separator ','\n";
  s += "set multiplot layout 2,1 title " + gnuplot_string(title) + " noenhanced\n";
  s += R"(set style fill transparent solid 0.5 border -1
set ylabel 'share of rows'
set grid
set key top right
set xlabel 'predictive entropy (nats)'
plot $ood using ((strcol(1) eq 'entropy') ? ($2+$3)/2 : NaN):4:($3-$2) with boxes lc rgb '#3b6ea5' title 'test rows (in distribution)', \
     $ood using ((strcol(1) eq 'entropy') ? ($2+$3)/2 : NaN):5:($3-$2) with boxes lc rgb '#c0392b' title 'out of distribution'
set xlabel 'mutual information (nats)'
plot $ood using ((strcol(1) eq 'mutual_information') ? ($2+$3)/2 : NaN):4:($3-$2) with boxes lc rgb '#3b6ea5' title 'test rows (in distribution)', \
     $ood using ((strcol(1) eq 'mutual_information') ? ($2+$3)/2 : NaN):5:($3-$2) with boxes lc rgb '#c0392b' title 'out of distribution'
unset multiplot
)";
  return draw_png(s, png);
}

}  // namespace whvi::report
