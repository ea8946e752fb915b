// `rdmasweep mesh` under a real mpirun, for the RDMA tests: what is missing for it,
// the mpirun command line the lab allows, and the small file helpers those tests share.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/process.hpp"

namespace rdmasweep::test {

// What is missing for these tests, or "".
inline std::string mesh_missing() {
  if (find_in_path("mpirun").empty()) return "no mpirun (apt-get install openmpi-bin libopenmpi-dev)";
  if (!have_device()) return "no RDMA device: run these inside tools/rxe-lab";
  Outcome o = run({RDMASWEEP_BIN, "mesh"}, std::chrono::seconds(30));
  if (o.err.find("built without MPI") != std::string::npos) return "rdmasweep was built without MPI";
  return "";
}

#define REQUIRE_MESH()                                                          \
  do {                                                                          \
    std::string why = ::rdmasweep::test::mesh_missing();                                                \
    if (!why.empty()) {                                                         \
      if (std::getenv("RDMASWEEP_REQUIRE_DEVICE")) FAIL() << why << ", but the RDMA tests are required"; \
      GTEST_SKIP() << why;                                                      \
    }                                                                           \
  } while (0)

// mpirun kept off the RDMA device (ob1 over shared memory and TCP), allowed to run
// as root (the lab VM) and more ranks than cores.
inline std::vector<std::string> mpirun(int ranks) {
  std::vector<std::string> a{find_in_path("mpirun")};
  if (getuid() == 0) a.push_back("--allow-run-as-root");
  for (const std::string& s : {std::string("--oversubscribe"), std::string("-np"), std::to_string(ranks)}) a.push_back(s);
  for (const char* s : {"--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp", "--mca", "btl_vader_single_copy_mechanism", "none"})
    a.push_back(s);
  a.push_back(RDMASWEEP_BIN);
  a.push_back("mesh");
  return a;
}

inline std::string temp_dir() {
  char tmpl[] = "/tmp/rdmasweep-mesh-XXXXXX";
  return mkdtemp(tmpl);
}

inline nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json();
  return nlohmann::json::parse(in, nullptr, false);
}

// Runs `ranks` ranks with `args` and a fresh --out; expects success and a results file.
inline void run_ok(int ranks, std::initializer_list<const char*> args, nlohmann::json* doc, Outcome* outcome = nullptr) {
  std::vector<std::string> argv = mpirun(ranks);
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = temp_dir() + "/mesh.json";
  argv.push_back("--out");
  argv.push_back(out);
  Outcome o = run(argv, std::chrono::seconds(300));
  if (outcome) *outcome = o;
  ASSERT_EQ(o.code, 0) << both(o);
  *doc = load(out);
  ASSERT_TRUE(doc->is_object()) << "no valid results file; " << both(o);
}

}  // namespace rdmasweep::test
