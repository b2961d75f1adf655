// Small file helpers shared by every writer of results.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace whvi {

// Writes `content` to `path` atomically: a temporary file in the same folder,
// created exclusively under an unpredictable name (mkstemp: O_CREAT|O_EXCL,
// never through a link; mode from the umask), flushed, then renamed over
// `path`. A crash never leaves a half-written file. Creates missing parent
// folders. `path` must be absent or a regular file: a symbolic link, a
// device, a FIFO, a socket or a folder is refused (check_output_path) and
// left as it is. Throws whvi::Error naming the path.
void write_file_atomic(const std::string& path, const std::string& content);

// A file written in pieces and put in place atomically, as write_file_atomic
// does: the pieces go to an exclusively created temporary file beside `path`;
// commit() flushes it and renames it over `path`; destroyed without commit(),
// the temporary file is removed and `path` is untouched. `path` "-" writes
// standard output directly.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const std::string& piece);
  void commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

// Throws whvi::Error unless `path` could be written by write_file_atomic:
// absent, or a regular file that is not a symbolic link, in a folder (or a
// folder to be created) that is not something else. `what` names the path in
// the message (e.g. "--out"). Called before any work, so a bad output path
// costs nothing.
void check_output_path(const std::string& path, const std::string& what);

// True when `a` and `b` name the same existing file (the same device and
// inode, links followed; hard links and other spellings of one path count).
bool same_file(const std::string& a, const std::string& b);

// What is at `path` (not following a final link), for messages: "a FIFO
// (named pipe)", "a character device", "a symbolic link", "a folder", ...;
// "" when nothing is there.
std::string describe_path_kind(const std::string& path);

// Reads a file the user named. It must be a regular file (links to one are
// followed); with `allow_pipe`, also a pipe (`-` is standard input,
// `<(...)` a /dev/fd path) or a named FIFO whose writer sends something
// within a second. Anything else (a FIFO with no writer, a device, a folder,
// a socket, a link loop) is an error within a second, naming what it is; so is
// a file larger than `max_bytes`. `what` names the file in messages (e.g.
// "the config file"). Never quotes the contents.
std::string read_user_file(const std::string& path, const std::string& what, size_t max_bytes,
                           bool allow_pipe = false);

// The command line as one shell-quoted string (recorded in result files); an
// absolute path of the binary (argv[0]) is recorded as "whvi".
std::string join_command_line(int argc, const char* const* argv);

}  // namespace whvi

namespace whvi {

// A data file: read_user_file with no size limit but memory, and when nothing is
// at `path`, "'PATH' not found" followed by `missing_hint` (where to get it).
std::string read_data_file(const std::string& path, const std::string& missing_hint);

// Reads and parses a JSON file the user named (read_user_file: regular files
// only, at most 1 GiB). A syntax error names the byte offset, never the text
// around it; `fix` ends the message (e.g. "delete it to recompute that split").
nlohmann::json read_json_file(const std::string& path, const std::string& what, const std::string& fix);

// An exclusive lock on `path` (created if missing; opened with O_NOFOLLOW, so a
// lock path that is a symbolic link or not a regular file is refused, naming
// it) held for the object's life:
// flock(2), so a process killed with -9 releases it and a stale file is never
// mistaken for a live lock. The holder's pid and `what` are written into the
// file, with a random token naming this holding (token()); a second taker
// gets a whvi::Error naming the holder's pid as the kernel reports it
// (/proc/locks), never the file's text. The file is removed when the lock is
// released.
class FileLock {
 public:
  FileLock(const std::string& path, const std::string& what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  // 32 hex digits, fresh for every lock taken: a process this one starts can
  // prove the lock it writes under is still this holding (lock_held_by).
  const std::string& token() const { return token_; }

 private:
  std::string path_, token_;
  int fd_ = -1;
};

// Whether the lock file at `path` is held (by a process other than the
// caller) and names `token` as its holding: what a split worker checks before
// it puts a file in place. Never throws.
bool lock_held_by(const std::string& path, const std::string& token) noexcept;

// A check run just before any file is put in place (AtomicFile::commit's
// rename, so every write_file_atomic): it throws to refuse the write, and the
// temporary file is removed. A split worker installs one that proves the run
// that started it still holds its lock (experiment/workers.h). Empty: none.
void set_commit_guard(std::function<void(const std::string& path)> guard);

// Keeps printable ASCII of `s` (first line, at most `max` characters), for
// error messages that quote foreign text (LibTorch errors, file contents).
std::string printable(const std::string& s, size_t max = 200);

// Folder walks in plain POSIX (nftw, opendir), not std::filesystem: the torch
// 2.x wheels' libtorch.so exports its own copy of libstdc++'s filesystem code
// (pytorch/pytorch#133437), and on a GPU machine the loader bound
// std::filesystem::remove_all to that copy, which crashed (docs/kernels.md, "CUDA").
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
