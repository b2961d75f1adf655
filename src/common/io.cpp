#include "common/io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/errors.h"

namespace whvi {

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  WHVI_CHECK(!ec, "cannot create folder ", target.parent_path().string(), ": ", ec.message());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  WHVI_CHECK(f, "cannot write ", tmp, ": ", std::strerror(errno));
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size() &&
                  std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error("failed writing " + tmp + " (disk full?)");
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
}

std::string join_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    // an absolute path of the binary names this machine, not the command: records say "whvi"
    if (i == 0 && !a.empty() && a[0] == '/') a = "whvi";
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"$`\\*?;&|<>()") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
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

FileLock::FileLock(const std::string& path, const std::string& what) : path_(path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    WHVI_CHECK(fd_ >= 0, "cannot create the lock file ", path, ": ", std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      std::ifstream in(path);
      std::string holder;
      std::getline(in, holder);
      ::close(fd_);
      fd_ = -1;
      WHVI_CHECK(err == EWOULDBLOCK, "cannot lock ", path, ": ", std::strerror(err));
      throw Error("another whvi process is already running " + what + " (lock " + path +
                  (holder.empty() ? std::string() : ", held by " + printable(holder)) +
                  "). Wait for it to finish, or give this run another output.name or output.dir");
    }
    // The file may have been removed (and replaced) by the previous holder
    // between our open and our flock: then retry on the new file.
    struct stat a {}, b {};
    if (::fstat(fd_, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev)
      break;
    ::close(fd_);
    fd_ = -1;
  }
  WHVI_CHECK(fd_ >= 0, "cannot lock ", path, ": it keeps being replaced by another process");
  const std::string line = "pid " + std::to_string(::getpid()) + " (" + what + ")\n";
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
    std::ifstream in(p, std::ios::binary);
    std::ofstream out(dst, std::ios::binary | std::ios::trunc);
    WHVI_CHECK(in.good() && out.good(), "cannot copy ", p, " to ", dst);
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) out.write(buf, in.gcount());
    WHVI_CHECK(in.eof() && out.good(), "failed copying ", p, " to ", dst, " (disk full?)");
  }
}

}  // namespace whvi
