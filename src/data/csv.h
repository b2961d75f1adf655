// The user's own data: a CSV or TSV file with a header row (either one may be
// gzip-compressed), read into a RegressionData (regression or classification).
//
//   data.dataset: path/to/file.csv   (.csv, .tsv, .csv.gz, .tsv.gz)
//   data.target: <column>            (default: the last column)
//   data.features: [<column>, ...]   (default: every other column)
//   data.categorical: [<column>, ...] (numeric-looking feature columns to one-hot encode)
//   data.missing: impute | drop | error  (empty cell, NA, N/A, NaN: filled per split from its training
//                                      rows with a missing-indicator column, the row dropped, or an error)
//
// Parsing follows RFC 4180: fields separated by ',' (tab for .tsv), fields in
// double quotes may hold separators, newlines and doubled quotes (""), CRLF or
// LF line ends, a UTF-8 byte-order mark is skipped, and surrounding spaces of
// column names (and of unquoted values) are trimmed. Numbers are parsed in the
// "C" locale. A feature column with any non-numeric value is a text column:
// one-hot encoded, one input column per category (categories sorted); the
// categories a split's training rows do not hold are zeroed in its test rows
// (prepare_split) and counted, so a category unseen in training is encoded as
// all zeros. Classification (likelihood.kind softmax): the target holds class
// labels, numbers or text; classes are sorted (numerically when every label is
// a number) and their names kept. Errors name the file, the row (1-based, the
// header is row 1) and the column: duplicate column names, a missing target or
// feature column, the target also given as a feature, a ragged row, a binary
// file, fewer than 2 rows, a class with one example.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace whvi::data {

// "file.csv", "x.tsv", "x.csv.gz", "x.tsv.gz" (case-insensitive endings).
bool is_csv_path(const std::string& path);

struct CsvOptions {
  std::string target;                 // "" = the last column
  std::vector<std::string> features;  // empty = every column but the target
  std::vector<std::string> categorical;  // feature columns one-hot encoded although they hold numbers
  bool drop_missing = false;          // data.missing: drop
  bool impute_missing = false;        // data.missing: impute (rows missing the target are dropped)
  bool classification = false;        // likelihood.kind softmax
};

// Reads records of a CSV/TSV file (gzip or plain) one at a time, so that a file
// larger than memory can be streamed (whvi predict). Throws whvi::Error naming
// the file and row for a binary file, an unterminated quote or a ragged row.
class CsvReader {
 public:
  explicit CsvReader(const std::string& path);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;
  const std::vector<std::string>& header() const { return header_; }
  // The next record into `fields` (false at the end of the file). Blank lines are skipped.
  bool next(std::vector<std::string>& fields);
  int64_t row() const { return row_; }  // 1-based row of the last record (the header is row 1)
  const std::string& path() const { return path_; }

 private:
  bool read_record(std::vector<std::string>& fields);
  void check_utf8(const std::vector<std::string>& fields) const;
  int get();
  struct Source;
  std::unique_ptr<Source> src_;
  std::string path_;
  char sep_ = ',';
  std::vector<std::string> header_;
  int64_t row_ = 0, line_ = 1;
};

// True for "", "NA", "NaN" (any case), "N/A": a missing value.
bool is_missing_cell(const std::string& s);

// The category a cell names: the cell itself, except in a column data.categorical
// declared (`declared`), where a number is written in its shortest form, so `1`,
// `1.0` and `+1` (or `1e3` and `1000`) are one category.
std::string category_key(const std::string& cell, bool declared);

RegressionData load_csv(const std::string& path, const CsvOptions& o);

// A regression data set whose target holds class labels (a UCI-layout folder
// read with likelihood.kind softmax): y becomes the class index, classes are
// the distinct target values in increasing order, named by the value ("%g").
// A class with one example is an error.
void targets_to_classes(RegressionData& d);

// A data set as CSV text with a header (x1..xD, y): for `whvi data export`,
// an example file made without the internet. classes > 1: y is replaced by a
// text label "q1".."qK", the target's quantile bin (a classification example).
std::string to_csv(const RegressionData& d, int classes = 0);

// The K - 1 inner quantiles of y (sorted y at k n / K, k = 1..K-1): a value v
// falls into bin upper_bound(cuts, v), 0..K-1, bins of nearly equal size.
std::vector<double> quantile_cuts(const torch::Tensor& y, int classes);

// A regression data set whose target becomes its quantile bin (K >= 2 classes
// named q1..qK, as to_csv writes them): a classification problem made from a
// regression one (data.synthetic_classes).
void targets_to_quantile_classes(RegressionData& d, int classes);

// Turns x of a prepared split's one-hot columns that its training rows never
// set to zero in the test rows; returns how many test rows had such a category.
int64_t zero_unseen_categories(const RegressionData& d, torch::Tensor& x_test_raw, const torch::Tensor& x_train_raw);

}  // namespace whvi::data
