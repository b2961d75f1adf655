// Uses whvi::Predictor from the installed package:
//   consumer CHECKPOINT ROWS.csv S
// prints whvi predict's output for the file's rows (predict_file), then checks
// that the same rows given in memory (predict) give the same text; exit 1 if not.
#include <whvi/predictor.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, ',')) cells.push_back(c);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: consumer CHECKPOINT ROWS.csv S\n";
    return 2;
  }
  try {
    whvi::Predictor p(argv[1]);
    const long S = std::stol(argv[3]);
    const std::string from_file = p.predict_file(argv[2], S);
    std::ifstream in(argv[2]);
    std::string line;
    std::getline(in, line);
    const auto header = split(line);
    std::vector<std::vector<std::string>> rows;
    while (std::getline(in, line))
      if (!line.empty()) rows.push_back(split(line));
    if (p.predict(header, rows, S) != from_file) {
      std::cerr << "consumer: predict (rows in memory) differs from predict_file\n";
      return 1;
    }
    std::cout << from_file;
    std::cerr << "consumer: " << p.columns().size() << " input columns, " << rows.size() << " rows, "
              << (p.classifier() ? "classifier" : "regression") << "\n";
  } catch (const std::exception& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
