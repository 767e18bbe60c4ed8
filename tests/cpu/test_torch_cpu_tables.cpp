// Every key_averages().table() in tests/torch_oracle/data/cpu-tables (printed by PyTorch itself
// with every table option, see its README.md) is read by the validator's table reader, with the
// columns and row groups its options add.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "validate/table_reader.h"

namespace {

namespace fs = std::filesystem;

fs::path tables_dir() { return fs::path(XB_TEST_DATA_DIR).parent_path() / "torch_oracle" / "data" / "cpu-tables"; }

TEST(TorchCpuTables, EveryCommittedTableParses) {
  std::size_t n = 0, shapes = 0, stacks = 0, mem = 0, flops = 0, top = 0, header = 0;
  for (const auto& e : fs::directory_iterator(tables_dir())) {
    if (e.path().extension() != ".txt") continue;
    ++n;
    const std::string f = e.path().filename().string();
    SCOPED_TRACE(f);
    xb::TableData t;
    ASSERT_NO_THROW(t = xb::read_table(e.path()));
    EXPECT_TRUE(t.has_cpu);
    EXPECT_TRUE(t.has_self_cpu_total);
    for (const auto& r : t.rows) {
      EXPECT_FALSE(r.name.empty());
      EXPECT_GT(r.calls, 0) << r.name;
    }
    shapes += t.has_shapes;
    stacks += t.has_stack;
    mem += t.has_mem;
    flops += t.has_flops;
    top += t.top_level_only;
    header += !t.header_text.empty();
    if (f.find(".by-shape") != std::string::npos) {
      EXPECT_TRUE(t.has_shapes);
      EXPECT_TRUE(t.grouped());
      for (const auto& r : t.rows) EXPECT_EQ(r.input_shapes.substr(0, 1), "[") << r.name;
    }
    if (f.find(".toplevel") != std::string::npos) {
      EXPECT_TRUE(t.top_level_only);
    }
    if (f.find(".header") != std::string::npos) {
      EXPECT_EQ(t.header_text, "crossbench cpu-tables: a header line");
    }
    if (f.find(".injected-stack") != std::string::npos) {
      // Row i of PyTorch's table got a made-up stack of (i % 4) frames (gen_cpu_tables.py).
      ASSERT_TRUE(t.has_stack);
      for (std::size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(t.rows[i].stack.size(), i % 4) << t.rows[i].name;
      if (t.has_flops) {  // PyTorch prints the FLOPs cell under "Source Location": read back as FLOPs
        for (const auto& r : t.rows) {
          for (const auto& s : r.stack) {
            EXPECT_NE(s, "--");
          }
        }
      }
    }
  }
  EXPECT_GE(n, 100u);
  EXPECT_GT(shapes, 0u);
  EXPECT_GT(stacks, 0u);
  EXPECT_GT(mem, 0u);
  EXPECT_GT(flops, 0u);
  EXPECT_GT(top, 0u);
  EXPECT_GT(header, 0u);
}

// PyTorch's cells as _build_table formats them, from a FLOPs + stack + memory table: the first
// row of all.injected-stack.txt.
TEST(TorchCpuTables, CellsOfAStackMemoryFlopsTable) {
  const xb::TableData t = xb::read_table(tables_dir() / "all.injected-stack.txt");
  ASSERT_FALSE(t.rows.empty());
  EXPECT_TRUE(t.has_mem && t.has_flops && t.has_stack);
  EXPECT_EQ(t.rows[0].name, "aten::empty");
  EXPECT_TRUE(t.rows[0].stack.empty());
  EXPECT_EQ(t.rows[2].stack.size(), 2u);
  bool some_flops = false;
  for (const auto& r : t.rows) some_flops = some_flops || r.flops > 0;
  EXPECT_TRUE(some_flops);
}

}  // namespace
