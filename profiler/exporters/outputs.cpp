#include "profiler/exporters/outputs.h"

#include "common/atomic_file.h"
#include "profiler/exporters/table.h"
#include "profiler/exporters/trace_export.h"
#include "profiler/model/event_model.h"
#include "profiler/model/session_io.h"

namespace xb {

void write_profile_outputs(const RawSession& raw, const std::filesystem::path& dir) {
  const Session session = build_session(raw);  // throws before anything is written
  const Table table = build_table(session);
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "raw_session.json", [&](std::ostream& o) { write_raw_session(raw, o); });
  write_file_atomic(dir / "table.txt", [&](std::ostream& o) { write_table_text(table, o); });
  write_file_atomic(dir / "table.json", [&](std::ostream& o) { write_table_json(table, raw.meta, o); });
  write_file_atomic(dir / "trace_only.json", [&](std::ostream& o) { write_trace_only(raw, o); });
  write_file_atomic(dir / "full.json", [&](std::ostream& o) { write_full_trace(session, o); });
}

}  // namespace xb
