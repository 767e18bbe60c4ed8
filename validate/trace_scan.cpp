// The trace reader's parsing (validate/trace_scan.h): the top-level JSON state machine, one
// traceEvents element at a time through the fast paths (validate/trace_fast.h) or the strict slow
// path, and the externalCorrelations entries.
#include "validate/trace_scan.h"

#include <fmt/format.h>

#include "common/errors.h"
#include "validate/trace_fast.h"

namespace xb::trace_detail {

void Reader::parse_id(Cursor& c, Id& id, std::string& scratch) {
  id.set = true;
  const char ch = scan::peek(c);
  if (ch == '"') {
    id.text = true;
    id.str = scan::string(c, scratch);
  } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
    id.text = false;
    id.num = scan::number(c);
  } else {
    scan::skip_value(c, 1);
    id.set = false;
  }
}

void Reader::parse_args(Cursor& c, RawEvent& e) {
  if (scan::peek(c) != '{') {
    scan::skip_value(c, 1);
    return;
  }
  ++c.p;
  if (scan::peek(c) == '}') {
    ++c.p;
    return;
  }
  for (;;) {
    scan::skip_ws(c);
    const std::string_view key = scan::string(c, s_key_);
    scan::expect(c, ':', "':'");
    const char ch = scan::peek(c);
    const bool num = ch == '-' || (ch >= '0' && ch <= '9');
    if (key.size() == 11 && key == "External id") {
      if (!num) not_number(c, "args[\"External id\"] is not a number");
      e.ext = scan::number(c);
    } else if (key.size() == 11 && key == "correlation") {
      if (!num) not_number(c, "args.correlation is not a number");
      e.corr = scan::number(c);
    } else if (key.size() == 9 && key == "Parent id") {
      if (!num) not_number(c, "args[\"Parent id\"] is not a number");
      e.parent = scan::number(c);
    } else if (key.size() == 10 && key == "Input Dims") {
      const char* from = c.p;  // at the value (peek skipped the blanks)
      scan::skip_value(c, 2);
      e.dims = std::string_view(from, static_cast<std::size_t>(c.p - from));
      e.has_dims = true;
    } else {
      scan::skip_value(c, 2);
    }
    const char d = scan::peek(c);
    ++c.p;
    if (d == ',') continue;
    if (d == '}') return;
    --c.p;
    scan::unexpected(c, "',' or '}'");
  }
}

void Reader::parse_event(Cursor& c, RawEvent& e) {
  if (scan::peek(c) != '{') {
    if (*c.p == ']' || *c.p == ',') scan::unexpected(c, "an event object");
    scan::skip_value(c, 1);
    shape("not an object");
  }
  ++c.p;
  if (scan::peek(c) == '}') {
    ++c.p;
    return;
  }
  for (;;) {
    scan::skip_ws(c);
    const std::string_view key = scan::string(c, s_key_);
    scan::expect(c, ':', "':'");
    const char ch = scan::peek(c);
    const bool str = ch == '"';
    const bool num = ch == '-' || (ch >= '0' && ch <= '9');
    switch (key.size()) {
      case 2:
        if (key == "ph") {
          if (!str) not_string(c, "\"ph\" is not a string");
          e.ph = scan::string(c, s_ph_);
          e.has_ph = true;
        } else if (key == "ts") {
          if (!num) not_number(c, "\"ts\" is not a number");
          e.ts = scan::number(c);
        } else if (key == "id") {
          if (num) {
            e.id = scan::number(c);
          } else {
            e.id_text = true;
            scan::skip_value(c, 1);
          }
        } else if (key == "bp") {
          if (!str) not_string(c, "\"bp\" is not a string");
          e.bp = scan::string(c, s_bp_);
          e.has_bp = true;
        } else {
          scan::skip_value(c, 1);
        }
        break;
      case 3:
        if (key == "cat") {
          if (!str) not_string(c, "\"cat\" is not a string");
          e.cat = scan::string(c, s_cat_);
          e.has_cat = true;
        } else if (key == "pid") {
          parse_id(c, e.pid, s_pid_);
        } else if (key == "tid") {
          parse_id(c, e.tid, s_tid_);
        } else if (key == "dur") {
          if (!num) not_number(c, "\"dur\" is not a number");
          e.dur = scan::number(c);
        } else {
          scan::skip_value(c, 1);
        }
        break;
      case 4:
        if (key == "name") {
          if (!str) not_string(c, "\"name\" is not a string");
          e.name = scan::string(c, s_name_);
          e.has_name = true;
        } else if (key == "args") {
          parse_args(c, e);
        } else {
          scan::skip_value(c, 1);
        }
        break;
      default:
        scan::skip_value(c, 1);
        break;
    }
    const char d = scan::peek(c);
    ++c.p;
    if (d == ',') continue;
    if (d == '}') return;
    --c.p;
    scan::unexpected(c, "',' or '}'");
  }
}

void Reader::ext_corr_entry(Cursor& c) {
  if (scan::peek(c) != '{') {
    if (*c.p == ']' || *c.p == ',') scan::unexpected(c, "an object");
    scan::skip_value(c, 1);
    shape("not an object");
  }
  ++c.p;
  Number corr, ext;
  if (scan::peek(c) != '}') {
    for (;;) {
      scan::skip_ws(c);
      const std::string_view key = scan::string(c, s_key_);
      scan::expect(c, ':', "':'");
      const char ch = scan::peek(c);
      const bool num = ch == '-' || (ch >= '0' && ch <= '9');
      if (key == "correlation") {
        if (!num) not_number(c, "\"correlation\" is not a number");
        corr = scan::number(c);
      } else if (key == "External id") {
        if (!num) not_number(c, "\"External id\" is not a number");
        ext = scan::number(c);
      } else {
        scan::skip_value(c, 2);
      }
      const char d = scan::peek(c);
      ++c.p;
      if (d == ',') continue;
      if (d == '}') break;
      --c.p;
      scan::unexpected(c, "',' or '}'");
    }
  } else {
    ++c.p;
  }
  if (!corr.present()) shape("missing \"correlation\"");
  if (!ext.present()) shape("missing \"External id\"");
  t_.ext_corr.emplace_back(scan::to_u64(corr, "correlation"), scan::to_u64(ext, "External id"));
}

void Reader::member(Cursor& c) {
  scan::skip_ws(c);
  const std::string_view key = scan::string(c, s_tmp_);
  scan::expect(c, ':', "':'");
  const char ch = scan::peek(c);
  if (key == "traceEvents") {
    if (ch != '[') {
      scan::skip_value(c, 1);
      where_ = "";
      shape("\"traceEvents\" is not an array");
    }
    ++c.p;
    saw_events_ = true;
    where_ = "traceEvents";
    index_ = 0;
    if (scan::peek(c) == ']') {
      ++c.p;
      state_ = State::AfterValue;
    } else {
      state_ = State::Events;
    }
    return;
  }
  if (key == "externalCorrelations") {
    if (ch != '[') {
      scan::skip_value(c, 1);
      shape("\"externalCorrelations\" is not an array");
    }
    ++c.p;
    t_.has_ext_corr = true;
    where_ = "externalCorrelations";
    index_ = 0;
    if (scan::peek(c) == ']') {
      ++c.p;
      state_ = State::AfterValue;
    } else {
      state_ = State::ExtCorr;
    }
    return;
  }
  if (key == "crossbench") {
    nlohmann::json meta = scan::value(c, 1);
    if (!meta.is_object()) shape("\"crossbench\" is not an object");
    t_.meta = std::move(meta);
  } else if (key == "deviceProperties") {
    // Kineto: [{"id": 0, "computeMajor": 9, "computeMinor": 0, ...}]; only the capability is
    // kept (stream_overlap: programmatic dependent launch exists from 9.0). Entries without both
    // integers are skipped, as are other shapes (the key is informational).
    const nlohmann::json props = scan::value(c, 1);
    if (props.is_array())
      for (const auto& d : props)
        if (d.is_object() && d.contains("id") && d["id"].is_number_integer() && d.contains("computeMajor") &&
            d["computeMajor"].is_number_integer() && d.contains("computeMinor") &&
            d["computeMinor"].is_number_integer())
          t_.compute_capability[d["id"].get<std::int64_t>()] =
              d["computeMajor"].get<int>() * 10 + d["computeMinor"].get<int>();
  } else if (key == "baseTimeNanoseconds") {
    if (!(ch == '-' || (ch >= '0' && ch <= '9'))) {
      scan::skip_value(c, 1);
      shape("\"baseTimeNanoseconds\" is not an integer");
    }
    const Number n = scan::number(c);
    t_.base_ns = scan::to_i64(n, "baseTimeNanoseconds");
    t_.has_base = true;
  } else {
    scan::skip_value(c, 1);
  }
  state_ = State::AfterValue;
}

// the document's first character: an object (Kineto, crossbench) or a bare event array (EventList)
void Reader::start(Cursor& c) {
  const char ch = scan::peek(c);
  if (ch == '[') {
    // torch/autograd/profiler_util.py EventList.export_chrome_trace writes a bare array of
    // events (where Kineto is unavailable, and torch.autograd.profiler_legacy.profile).
    ++c.p;
    array_root_ = saw_events_ = t_.eventlist = true;
    where_ = "the top-level array";
    index_ = 0;
    if (scan::peek(c) == ']') {
      ++c.p;
      state_ = State::End;
    } else {
      state_ = State::Events;
    }
    return;
  }
  if (ch != '{') scan::unexpected(c, "'{' (a JSON object)");
  ++c.p;
  if (scan::peek(c) == '}') {
    ++c.p;
    state_ = State::End;
  } else {
    state_ = State::Member;
  }
}

// after a top-level member: ',' or the closing '}'
void Reader::after_value(Cursor& c) {
  where_ = "";
  const char d = scan::peek(c);
  ++c.p;
  if (d == ',') {
    state_ = State::Member;
  } else if (d == '}') {
    state_ = State::End;
  } else {
    --c.p;
    scan::unexpected(c, "',' or '}'");
  }
}

// one element of the event array: whole elements on the fast path while the window holds many
void Reader::events(Cursor& c) {
  // Fast path over whole elements while the window holds far more than one. Each step()
  // must not commit anything it could re-parse after a NeedMore, so the loop returns when
  // the window runs low and leaves an element the fast path refuses to the slow path.
  constexpr std::ptrdiff_t kSlack = 1 << 16;
  // At the very end of the input (eof and nothing left) the slow path reports the truncation:
  // the fast loop would consume nothing and never leave this state.
  if (g_fast_paths && !slow_next_ && (c.eof ? c.p < c.end : c.end - c.p > kSlack)) {
    c.p = fast::ws(c.p, c.end);
    RawEvent e;
    while (c.eof ? c.p < c.end : c.end - c.p > kSlack) {
      e.reset();
      const char* q = fast::event_layout(c.p, c.end, e, lane_tokens_);
      if (!q) {
        e.reset();
        q = fast::event(c.p, c.end, e);
      }
      if (!q) {
        slow_next_ = true;
        return;
      }
      commit(e);
      ++t_.trace_events;
      q = fast::ws(q, c.end);
      if (q < c.end && *q == ',') {
        ++index_;
        c.p = fast::ws(q + 1, c.end);
        continue;
      }
      c.p = q;
      state_ = State::EventsNext;  // ']' or whatever follows: the slow path handles it
      return;
    }
    return;
  }
  slow_next_ = false;
  RawEvent e;
  parse_event(c, e);
  commit(e);
  ++t_.trace_events;
  state_ = State::EventsNext;
}

// after an event: ',' or the array's ']'
void Reader::events_next(Cursor& c) {
  const char d = scan::peek(c);
  ++c.p;
  if (d == ',') {
    ++index_;
    state_ = State::Events;
  } else if (d == ']') {
    state_ = array_root_ ? State::End : State::AfterValue;
  } else {
    --c.p;
    scan::unexpected(c, "',' or ']'");
  }
}

// one externalCorrelations entry, fast path as events()
void Reader::ext_corr(Cursor& c) {
  constexpr std::ptrdiff_t kSlack = 1 << 16;
  // At the very end of the input (eof and nothing left) the slow path reports the truncation:
  // the fast loop would consume nothing and never leave this state.
  if (g_fast_paths && !slow_next_ && (c.eof ? c.p < c.end : c.end - c.p > kSlack)) {
    c.p = fast::ws(c.p, c.end);
    RawEvent e;  // correlation in e.corr, External id in e.ext
    while (c.eof ? c.p < c.end : c.end - c.p > kSlack) {
      e.reset();
      const char* q = fast::ext_corr_layout(c.p, c.end, e);
      if (!q) {
        e.reset();
        q = fast::args(c.p, c.end, e);
      }
      if (!q || *c.p != '{' || !e.corr.present() || !e.ext.present()) {
        slow_next_ = true;
        return;
      }
      t_.ext_corr.emplace_back(scan::to_u64(e.corr, "correlation"), scan::to_u64(e.ext, "External id"));
      q = fast::ws(q, c.end);
      if (q < c.end && *q == ',') {
        ++index_;
        c.p = fast::ws(q + 1, c.end);
        continue;
      }
      c.p = q;
      state_ = State::ExtCorrNext;
      return;
    }
    return;
  }
  slow_next_ = false;
  ext_corr_entry(c);
  state_ = State::ExtCorrNext;
}

// after an externalCorrelations entry: ',' or ']'
void Reader::ext_corr_next(Cursor& c) {
  const char d = scan::peek(c);
  ++c.p;
  if (d == ',') {
    ++index_;
    state_ = State::ExtCorr;
  } else if (d == ']') {
    state_ = State::AfterValue;
  } else {
    --c.p;
    scan::unexpected(c, "',' or ']'");
  }
}

// after the document: only whitespace, then the end of the input
void Reader::end(Cursor& c) {
  while (c.p != c.end) {
    const char ch = *c.p;
    if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
      ++c.p;
      continue;
    }
    throw ScanError("unexpected " + std::string(1, ch) + " after the end of the JSON document", c.p);
  }
  if (!c.eof) throw scan::NeedMore{};
  state_ = State::Done;
}

void Reader::step(Cursor& c) {
  switch (state_) {
    case State::Start:
      start(c);
      return;
    case State::Member:
      member(c);
      return;
    case State::AfterValue:
      after_value(c);
      return;
    case State::Events:
      events(c);
      return;
    case State::EventsNext:
      events_next(c);
      return;
    case State::ExtCorr:
      ext_corr(c);
      return;
    case State::ExtCorrNext:
      ext_corr_next(c);
      return;
    case State::End:
      end(c);
      return;
    case State::Done:
      return;
  }
}

void Reader::run() {
  Cursor c{src_.begin(), src_.end(), src_.eof()};
  while (state_ != State::Done) {
    const char* mark = c.p;
    try {
      step(c);
    } catch (const scan::NeedMore&) {
      const char* kept = src_.refill(mark);
      c = Cursor{kept, src_.end(), src_.eof()};
    } catch (const ScanError& e) {
      // A key_averages() table given where a trace goes: say so rather than where the JSON broke.
      if (src_.offset(mark) == 0 && (*mark == '-' || *mark == '=')) {
        const std::string head(mark, std::min<std::size_t>(static_cast<std::size_t>(src_.end() - mark), 4096));
        if (head.find("Self CPU") != std::string::npos || head.find("Name") != std::string::npos)
          throw InputError(
              fmt::format("{}: a PyTorch key_averages().table() text, not a trace: pass it with --table", label_));
      }
      std::string in;
      if (*where_) in = fmt::format(" (in {}[{}])", where_, index_);
      if (e.at)
        throw InputError(fmt::format("{}: not valid JSON: {} at byte {}{}", label_, e.what(), src_.offset(e.at), in));
      throw InputError(fmt::format("{}: not valid JSON: {}{}", label_, e.what(), in));
    } catch (const ShapeError& e) {
      if (*where_) throw InputError(fmt::format("{}: {}[{}]: {}", label_, where_, index_, e.what()));
      throw InputError(fmt::format("{}: {}", label_, e.what()));
    }
  }
  t_.bytes = src_.offset(src_.end());
  t_.gzip = src_.gzip();
  finish();
}

}  // namespace xb::trace_detail
