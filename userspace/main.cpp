// main.cpp - the levee binary: parse, run, exit.
#include <cstdio>

#include "cli/app.hpp"

int main(int argc, char** argv) {
  auto parsed = levee::cli::parse(argc, argv);
  std::fputs(parsed.out.c_str(), stdout);
  std::fputs(parsed.err.c_str(), stderr);
  if (!parsed.invocation) return parsed.exit_code;
  return levee::cli::run(*parsed.invocation);
}
