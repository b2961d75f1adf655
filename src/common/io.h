// Small file helpers shared by every writer of results.
#pragma once

#include <string>
#include <vector>

namespace whvi {

// Writes `content` to `path` atomically: a temporary file in the same folder,
// flushed, then renamed over `path`. A crash never leaves a half-written file.
// Creates missing parent folders. Throws whvi::Error naming the path.
void write_file_atomic(const std::string& path, const std::string& content);

// The command line as one shell-quoted string (recorded in result files); an
// absolute path of the binary (argv[0]) is recorded as "whvi".
std::string join_command_line(int argc, const char* const* argv);

}  // namespace whvi

namespace whvi {

// An exclusive lock on `path` (created if missing) held for the object's life:
// flock(2), so a process killed with -9 releases it and a stale file is never
// mistaken for a live lock. The holder's pid and `what` are written into the
// file; a second taker gets a whvi::Error naming the holder. The file is
// removed when the lock is released.
class FileLock {
 public:
  FileLock(const std::string& path, const std::string& what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// Keeps printable ASCII of `s` (first line, at most `max` characters), for
// error messages that quote foreign text (LibTorch errors, file contents).
std::string printable(const std::string& s, size_t max = 200);

// Folder walks in plain POSIX (nftw, opendir), not std::filesystem: the torch
// 2.x wheels' libtorch.so exports its own copy of libstdc++'s filesystem code
// (pytorch/pytorch#133437), and on a GPU machine the loader bound
// std::filesystem::remove_all to that copy, which crashed (README, "CUDA").
//
// Removes `path` (a file, a symbolic link or a folder with everything under
// it; links are removed, never followed). A missing path is no error. Returns
// "" on success, else what failed; never throws.
std::string remove_tree(const std::string& path) noexcept;

// The entries of folder `dir` (full paths, sorted; "." and ".." left out), and
// with `recursive` those of its sub-folders too (links not followed). Throws
// whvi::Error naming the folder if it cannot be read.
std::vector<std::string> list_dir(const std::string& dir, bool recursive = false);

// Copies the regular files directly in folder `from` into folder `to`
// (created if missing; existing files are replaced). Throws whvi::Error.
void copy_files(const std::string& from, const std::string& to);

}  // namespace whvi
