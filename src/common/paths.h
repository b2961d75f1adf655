// What a file's name says it is, in one place: the command line and the config
// loader both tell a data file given where a config belongs (data/csv.cpp and
// data/npy.cpp read them).
#pragma once

#include <cctype>
#include <cstring>
#include <string>

namespace whvi {

// Whether `s` ends with `suffix` (written in lower case), in any case: DATA.CSV is a CSV file.
inline bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  return true;
}

// A table whvi reads as data: .csv, .tsv (either gzipped) or .npy.
inline bool is_data_file_name(const std::string& path) {
  for (const char* ext : {".csv", ".tsv", ".csv.gz", ".tsv.gz", ".npy"})
    if (ends_with(path, ext)) return true;
  return false;
}

}  // namespace whvi
