// Figures drawn by gnuplot without a shell: gnuplot is run by absolute path
// (/usr/bin/gnuplot, else /usr/local/bin/gnuplot) with an argument vector,
// `-d` (no init file: neither gnuplotrc nor ~/.gnuplot) and its working
// directory at "/", so nothing is found through the caller's working directory
// or home. The gnuplot script is built into whvi; the data travel
// inside it as datablocks (numbers whvi wrote) and the title as a sanitised
// single-quoted string, so no path or config value reaches gnuplot. gnuplot
// writes the PNG to its standard output, and whvi puts it in place with
// write_file_atomic (never through a link, never over a non-regular file).
#pragma once

#include <string>

namespace whvi::report {

// The gnuplot whvi would run ("" when none is installed at the fixed paths).
std::string gnuplot_path();

// A figure: its gnuplot script (terminal and output are set here), run and
// written to `png`. Returns "" on success, else why no figure was written (the
// caller logs it as a warning: a figure is never worth failing a run).
std::string draw_png(const std::string& script, const std::string& png);

// `text` as a gnuplot single-quoted string: printable ASCII only (quotes,
// backquotes, backslashes, '@' and control bytes become spaces), at most 200
// characters.
std::string gnuplot_string(const std::string& text);

// A datablock named `name` ("$name << EOD ... EOD") holding `csv` without its
// header line (comma-separated numbers and plain words written by whvi).
std::string gnuplot_datablock(const std::string& name, const std::string& csv);

// The three figures of `whvi train`. Each takes the CSV whvi wrote beside it.
// Fig. 4 of the WHVI paper: predictive mean, 95% and 75% bands, data points
// (grid CSV: x,mean,std,lo95,hi95,lo75,hi75; data CSV: x,y).
std::string plot_toy(const std::string& grid_csv, const std::string& data_csv, const std::string& title,
                     const std::string& png);
// A reliability diagram (CSV: lo,hi,count,accuracy,confidence).
std::string plot_reliability(const std::string& bins_csv, const std::string& title, const std::string& png);
// Out-of-distribution histograms (CSV: score,lo,hi,in,out).
std::string plot_ood(const std::string& ood_csv, const std::string& title, const std::string& png);

}  // namespace whvi::report
