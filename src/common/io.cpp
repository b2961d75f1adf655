#include "common/io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "common/errors.h"

namespace whvi {

namespace {

// umask() can only be read by setting it: once, and put back at once.
mode_t process_umask() {
  static const mode_t mask = [] {
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
  }();
  return mask;
}

// Creates the folders above `target` that are missing; errors say why (a
// read-only file system, a part of the path that is a file, permissions).
void make_parent_folders(const std::filesystem::path& target, const std::string& what) {
  if (!target.has_parent_path()) return;
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  if (!ec) return;
  std::string fix = "check the path and its permissions";
  if (ec.value() == EROFS) fix = "the file system is read-only: choose a folder on a writable disk";
  if (ec.value() == ENOTDIR || ec.value() == EEXIST) fix = "a part of that path is a file, not a folder";
  throw Error("cannot create the folder " + target.parent_path().string() + " for " + what + ": " +
              ec.message() + " (" + fix + ")");
}

std::string kind_of_mode(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "a special file";
}

}  // namespace

std::string describe_path_kind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (!S_ISLNK(st.st_mode)) return kind_of_mode(st.st_mode);
  struct stat to {};
  if (::stat(path.c_str(), &to) == 0) return "a symbolic link to " + kind_of_mode(to.st_mode);
  if (errno == ELOOP) return "a symbolic link loop";
  if (errno == ENOENT) return "a dangling symbolic link (its target does not exist)";
  return "a symbolic link";
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  if (::stat(a.c_str(), &x) != 0 || ::stat(b.c_str(), &y) != 0) return false;
  return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

void check_output_path(const std::string& path, const std::string& what) {
  WHVI_CHECK(!path.empty(), what, ": the path is empty: give a file path");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    WHVI_CHECK(!S_ISLNK(st.st_mode), what, " '", path, "' is ", describe_path_kind(path),
               "; whvi never writes through a link (it could point anywhere): remove the link or give another "
               "path");
    WHVI_CHECK(!S_ISDIR(st.st_mode), what, " '", path, "' is a folder: give the path of a file in it");
    WHVI_CHECK(S_ISREG(st.st_mode), what, " '", path, "' is ", kind_of_mode(st.st_mode),
               ", not a regular file; whvi writes only regular files and leaves it as it is: give the path "
               "of a file");
    return;
  }
  const int err = errno;
  WHVI_CHECK(err == ENOENT, what, " '", path, "' cannot be written: ", std::strerror(err),
             err == ELOOP ? " (a folder on the path is a symbolic link loop)"
                          : err == ENOTDIR ? " (a part of the path is a file, not a folder)"
                                           : " (check the path and its permissions)");
  // the nearest existing folder above must be a folder
  std::filesystem::path up = std::filesystem::path(path).parent_path();
  while (!up.empty()) {
    struct stat ps {};
    if (::stat(up.c_str(), &ps) == 0) {
      WHVI_CHECK(S_ISDIR(ps.st_mode), what, " '", path, "' cannot be written: '", up.string(), "' is ",
                 kind_of_mode(ps.st_mode), ", not a folder");
      break;
    }
    if (errno == ELOOP)
      throw Error(what + " '" + path + "' cannot be written: '" + up.string() + "' is a symbolic link loop");
    if (up == up.parent_path()) break;
    up = up.parent_path();
  }
}

namespace {
std::function<void(const std::string&)>& commit_guard() {
  static std::function<void(const std::string&)> guard;
  return guard;
}
}  // namespace

void set_commit_guard(std::function<void(const std::string& path)> guard) { commit_guard() = std::move(guard); }

namespace {
// The temporary files of the AtomicFiles alive, removed by a stop signal
// (SIGINT, SIGTERM, SIGHUP) before it ends the process as it would have: a run
// or an export stopped mid-write leaves no hidden half-written file beside its
// output. Fixed slots, so the handler only reads memory and calls unlink().
constexpr int kTempSlots = 64;
struct TempSlot {
  std::atomic<int> state{0};  // 0 free, 2 being filled, 1 holds a path
  char path[4096];
};
TempSlot g_temps[kTempSlots];

void remove_temps_then_stop(int sig) {
  for (auto& slot : g_temps)
    if (slot.state.load() == 1) ::unlink(slot.path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Installed once, for each stop signal whose action is the default (one that is
// ignored, or handled by someone else, is left alone).
void install_temp_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_temps_then_stop;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

void register_temp(const std::string& path) {
  if (path.size() >= sizeof(TempSlot::path)) return;
  install_temp_cleanup();
  for (auto& slot : g_temps) {
    int free = 0;
    if (!slot.state.compare_exchange_strong(free, 2)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(1);
    return;
  }
}

void forget_temp(const std::string& path) {
  for (auto& slot : g_temps)
    if (slot.state.load() == 1 && path == slot.path) {
      slot.state.store(0);
      return;
    }
}
}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  if (path == "-") return;
  check_output_path(path, "output file");
  const std::filesystem::path target(path);
  make_parent_folders(target, path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : std::string(".");
  tmp_ = dir + "/." + target.filename().string() + ".tmp.XXXXXX";
  fd_ = ::mkostemp(tmp_.data(), O_CLOEXEC);  // O_CREAT|O_EXCL: never an existing file or link
  if (fd_ >= 0) register_temp(tmp_);
  WHVI_CHECK(fd_ >= 0, "cannot create a temporary file in ", dir, " to write ", path, ": ", std::strerror(errno),
             errno == EROFS ? " (the file system is read-only: choose a folder on a writable disk)" : "");
  if (::fchmod(fd_, 0666 & ~process_umask()) != 0) {
    const int err = errno;
    ::close(fd_);
    forget_temp(tmp_);
    ::unlink(tmp_.c_str());
    fd_ = -1;
    throw Error("cannot set the mode of a temporary file for " + path + ": " + std::strerror(err));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) {
    forget_temp(tmp_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::write(const std::string& piece) {
  if (path_ == "-") {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    WHVI_CHECK(!std::ferror(stdout), "cannot write to standard output: ", std::strerror(errno));
    return;
  }
  for (size_t done = 0; done < piece.size();) {
    const ssize_t n = ::write(fd_, piece.data() + done, piece.size() - done);
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : ENOSPC;
    WHVI_CHECK(n > 0, "failed writing ", path_, ": ", std::strerror(err),
               err == EFBIG ? " (a file-size limit, ulimit -f, is set: raise it)" : " (disk full?)");
    done += static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (path_ == "-") {
    WHVI_CHECK(std::fflush(stdout) == 0, "cannot write to standard output: ", std::strerror(errno));
    committed_ = true;
    return;
  }
  WHVI_CHECK(::fsync(fd_) == 0, "failed writing ", path_, ": ", std::strerror(errno), " (disk full?)");
  const int rc = ::close(fd_);
  fd_ = -1;
  WHVI_CHECK(rc == 0, "failed writing ", path_, ": ", std::strerror(errno), " (disk full?)");
  if (commit_guard()) commit_guard()(path_);  // throws to refuse; the destructor removes tmp_
  // The target may have been replaced since the first look: look again.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) check_output_path(path_, "output file");
  WHVI_CHECK(::rename(tmp_.c_str(), path_.c_str()) == 0, "cannot rename the temporary file to ", path_, ": ",
             std::strerror(errno));
  forget_temp(tmp_);  // (a stop signal before this line unlinks a name no longer there)
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  WHVI_CHECK(path != "-", "output file: '-' (standard output) is not a file here; give a file path");
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

std::string read_user_file(const std::string& path, const std::string& what, size_t max_bytes, bool allow_pipe) {
  const std::string named = what + " '" + path + "'";
  const bool from_stdin = allow_pipe && path == "-";
  if (!from_stdin) {
    WHVI_CHECK(!path.empty(), what, ": the path is empty");
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT) {
        const auto kind = describe_path_kind(path);
        WHVI_CHECK(kind.empty(), named, " is ", kind, ": give the path of a regular file");
        throw Error(named + " not found: no such file (check the path)");
      }
      WHVI_CHECK(err != ELOOP, named, " is a symbolic link loop: give the path of a regular file");
      throw Error("cannot read " + named + ": " + std::strerror(err) + " (check the path and its permissions)");
    }
    const bool fifo = S_ISFIFO(st.st_mode);
    WHVI_CHECK(!S_ISDIR(st.st_mode), named, " is a folder, not a file: give the path of a file");
    WHVI_CHECK(S_ISREG(st.st_mode) || (fifo && allow_pipe), named, " is ", kind_of_mode(st.st_mode),
               ", not a regular file: give the path of a regular file");
  }
  const int fd = from_stdin ? ::dup(0) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    throw Error("cannot read " + named + ": " + std::strerror(err) +
                (err == EACCES ? " (check its permissions)" : ""));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  WHVI_CHECK(::fstat(fd, &st) == 0, "cannot read ", named, ": ", std::strerror(errno));
  if (S_ISFIFO(st.st_mode)) {
    WHVI_CHECK(allow_pipe, named, " is a FIFO (named pipe), not a regular file: give the path of a regular file");
    // A named FIFO (not an anonymous pipe such as stdin or <(...)) must have a
    // writer: wait a second for something to arrive rather than hang.
    char link[64] = {0};
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(self.c_str(), link, sizeof link - 1);
    const bool anonymous = from_stdin || (n > 0 && std::string(link, static_cast<size_t>(n)).rfind("pipe:", 0) == 0);
    if (!anonymous) {
      struct pollfd p {fd, POLLIN, 0};
      int rc;
      do rc = ::poll(&p, 1, 1000);
      while (rc < 0 && errno == EINTR);
      WHVI_CHECK(rc > 0, named, " is a FIFO (named pipe) with no writer: nothing arrived within 1 s. Start "
                 "the writer first, or give the path of a regular file");
    }
  } else {
    WHVI_CHECK(S_ISREG(st.st_mode), named, " is ", kind_of_mode(st.st_mode),
               ", not a regular file: give the path of a regular file");
    WHVI_CHECK(static_cast<uint64_t>(st.st_size) <= max_bytes, named, " is larger than ", max_bytes / 1024,
               " KiB (", st.st_size / 1024, " KiB): is this the right file?");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    WHVI_CHECK(got >= 0, "error while reading ", named, ": ", std::strerror(errno));
    if (got == 0) break;
    text.append(buf, static_cast<size_t>(got));
    WHVI_CHECK(text.size() <= max_bytes, named, " is larger than ", max_bytes / 1024, " KiB: is this the right file?");
  }
  return text;
}

std::string read_data_file(const std::string& path, const std::string& missing_hint) {
  WHVI_CHECK(!describe_path_kind(path).empty(), "'", path, "' not found", missing_hint);
  return read_user_file(path, "data file", SIZE_MAX);
}

namespace {
// The deepest nesting of arrays and objects in JSON text (strings skipped).
// Checked before parsing: nlohmann's dump, comparison and whvi's walks recurse,
// so a file nested 200,000 deep would overflow the stack.
size_t json_depth(const std::string& text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}
}  // namespace

nlohmann::json read_json_file(const std::string& path, const std::string& what, const std::string& fix) {
  const std::string text = read_user_file(path, what, size_t{1} << 30);
  constexpr size_t kMaxJsonDepth = 64;  // whvi's records nest 6 deep
  if (json_depth(text) > kMaxJsonDepth)
    throw Error(path + " (" + what + ") nests arrays and objects more than " + std::to_string(kMaxJsonDepth) +
                " deep; no whvi file does: " + fix);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // its what() quotes the text read last: say where, not what
    throw Error("malformed JSON in " + path + " (" + what + ") at byte " + std::to_string(e.byte) + ": " + fix);
  } catch (const nlohmann::json::exception&) {
    throw Error("malformed JSON in " + path + " (" + what + "): " + fix);
  }
}

std::string join_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    // an absolute path of the binary names this machine, not the command: records say "whvi"
    if (i == 0 && !a.empty() && a[0] == '/') a = "whvi";
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"$`\\*?;&|<>()") == std::string::npos;
    bool control = false;  // a control byte is never written raw (a terminal, a Markdown line): bash's $'..'
    for (unsigned char c : a) control |= c < 0x20 || c == 0x7f;
    if (!out.empty()) out += ' ';
    if (control) {
      out += "$'";
      for (unsigned char c : a) {
        if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else {
          if (c == '\'' || c == '\\') out += '\\';
          out += static_cast<char>(c);
        }
      }
      out += '\'';
    } else if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace whvi

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace whvi {

namespace {

// 128 random bits as hex, from the kernel (not the training generators, so
// taking a lock moves no number).
std::string random_token() {
  unsigned char b[16] = {0};
  size_t got = 0;
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    while (got < sizeof b) {
      const ssize_t n = ::read(fd, b + got, sizeof b - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  WHVI_CHECK(got == sizeof b, "cannot read /dev/urandom for the run's lock token");
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (unsigned char c : b) t += {hex[c >> 4], hex[c & 15]};
  return t;
}

// The pid holding a flock(2) on the file `st` describes, as the kernel lists
// it in /proc/locks ("N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE ..."); -1 when
// it cannot be told. Never the lock file's own text, which anyone could write.
long lock_holder_pid(const struct stat& st) {
  FILE* f = std::fopen("/proc/locks", "re");
  if (!f) return -1;
  char line[512];
  long found = -1;
  const unsigned maj = major(st.st_dev), min = minor(st.st_dev);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strstr(line, "->")) continue;  // a waiter, not the holder
    char kind[32] = {0};
    long pid = 0;
    unsigned a = 0, b = 0;
    unsigned long ino = 0;
    if (std::sscanf(line, "%*[^:]: %31s %*s %*s %ld %x:%x:%lu", kind, &pid, &a, &b, &ino) == 5 &&
        std::strcmp(kind, "FLOCK") == 0 && a == maj && b == min && ino == st.st_ino && pid > 0) {
      found = pid;
      break;
    }
  }
  std::fclose(f);
  return found;
}

}  // namespace

bool lock_held_by(const std::string& path, const std::string& token) noexcept {
  if (token.empty()) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return false;
  bool held = false;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
      ::flock(fd, LOCK_UN);  // nobody holds it: the run that took it has ended
    } else if (errno == EWOULDBLOCK) {
      char buf[256] = {0};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      held = n > 0 && std::string(buf, static_cast<size_t>(n)).find(" run " + token + " ") != std::string::npos;
    }
  }
  ::close(fd);
  return held;
}

FileLock::FileLock(const std::string& path, const std::string& what) : path_(path) {
  make_parent_folders(std::filesystem::path(path), "the lock file " + path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    // O_NOFOLLOW: a planted link must not make whvi write its pid elsewhere;
    // O_NONBLOCK: a FIFO in its place must not hang the open.
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
    if (fd_ < 0) {
      const int err = errno;
      WHVI_CHECK(err != ELOOP, "the lock file ", path, " is ", describe_path_kind(path),
                 "; whvi never follows a link for its lock: remove it (it is not whvi's)");
      throw Error("cannot create the lock file " + path + ": " + std::strerror(err) +
                  (err == EROFS ? " (the file system is read-only: choose an output.dir on a writable disk)"
                                : " (check output.dir and its permissions)"));
    }
    struct stat own {};
    if (::fstat(fd_, &own) != 0 || !S_ISREG(own.st_mode)) {
      const std::string kind = describe_path_kind(path);
      ::close(fd_);
      fd_ = -1;
      throw Error("the lock file " + path + " is " + kind + ", not a regular file: remove it (it is not whvi's)");
    }
    if (own.st_nlink != 1) {
      // A hard link: writing the pid would change the other file it names.
      const auto links = own.st_nlink;
      ::close(fd_);
      fd_ = -1;
      throw Error("the lock file " + path + " has " + std::to_string(links) +
                  " hard links (it shares its data with another file); whvi never writes through one: "
                  "remove it (it is not whvi's)");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const long holder = lock_holder_pid(own);
      ::close(fd_);
      fd_ = -1;
      WHVI_CHECK(err == EWOULDBLOCK, "cannot lock ", path, ": ", std::strerror(err));
      throw Error("another whvi process is already running " + what + " (lock " + path +
                  (holder > 0 ? ", held by process " + std::to_string(holder) : std::string()) +
                  "). Wait for it to finish, or give this run another output.name or output.dir");
    }
    // The file may have been removed (and replaced) by the previous holder
    // between our open and our flock: then retry on the new file.
    struct stat b {};
    if (::lstat(path.c_str(), &b) == 0 && own.st_ino == b.st_ino && own.st_dev == b.st_dev) break;
    ::close(fd_);
    fd_ = -1;
  }
  WHVI_CHECK(fd_ >= 0, "cannot lock ", path, ": it keeps being replaced by another process");
  token_ = random_token();
  const std::string line = "pid " + std::to_string(::getpid()) + " run " + token_ + " (" + what + ")\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const auto n = ::write(fd_, line.data(), line.size());
  }
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before unlocking, so no one locks a removed file unnoticed
  ::close(fd_);
}

std::string printable(const std::string& s, size_t max) {
  std::string out;
  for (char c : s) {
    if (c == '\n') break;
    if (c >= 32 && c < 127) out += c;
    else out += '?';
    if (out.size() >= max) {
      out += "...";
      break;
    }
  }
  return out;
}

}  // namespace whvi

#include <dirent.h>
#include <ftw.h>

#include <algorithm>

namespace whvi {
namespace {

thread_local std::string g_remove_error;

int remove_one(const char* path, const struct stat*, int flag, struct FTW*) {
  // FTW_DP: a folder after its contents; FTW_DNR: one that could not be read
  // (its contents stay, so its rmdir fails and says so).
  const int rc = (flag == FTW_DP || flag == FTW_DNR) ? ::rmdir(path) : ::unlink(path);
  if (rc != 0 && errno != ENOENT && g_remove_error.empty())
    g_remove_error = std::string("cannot remove ") + path + ": " + std::strerror(errno);
  return 0;  // go on: remove as much as possible
}

void list_into(const std::string& dir, bool recursive, std::vector<std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  WHVI_CHECK(d, "cannot read folder ", dir, ": ", std::strerror(errno));
  std::vector<std::string> here;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    here.push_back(dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name);
  }
  ::closedir(d);
  std::sort(here.begin(), here.end());
  for (const auto& p : here) {
    out.push_back(p);
    struct stat st {};
    if (recursive && ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) list_into(p, true, out);
  }
}

}  // namespace

std::string remove_tree(const std::string& path) noexcept {
  try {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0)
      return errno == ENOENT ? std::string() : "cannot remove " + path + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode))
      return ::unlink(path.c_str()) == 0 || errno == ENOENT ? std::string()
                                                            : "cannot remove " + path + ": " + std::strerror(errno);
    g_remove_error.clear();
    if (::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && g_remove_error.empty())
      g_remove_error = "cannot walk " + path + ": " + std::strerror(errno);
    return g_remove_error;
  } catch (...) {
    return "cannot remove " + path + ": out of memory";
  }
}

std::vector<std::string> list_dir(const std::string& dir, bool recursive) {
  std::vector<std::string> out;
  list_into(dir, recursive, out);
  return out;
}

void copy_files(const std::string& from, const std::string& to) {
  if (::mkdir(to.c_str(), 0755) != 0)
    WHVI_CHECK(errno == EEXIST, "cannot create folder ", to, ": ", std::strerror(errno));
  for (const auto& p : list_dir(from)) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const std::string dst = to + "/" + p.substr(p.find_last_of('/') + 1);
    write_file_atomic(dst, read_user_file(p, "file", SIZE_MAX));
  }
}

}  // namespace whvi
