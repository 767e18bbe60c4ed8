#!/usr/bin/env python3
"""Records small CPU workloads with torch.profiler and prints key_averages().table() with every
table option PyTorch 2.x has, into tests/torch_oracle/data/cpu-tables/ (see its README.md).

The matrix is generated, not hand-picked: every profile configuration in PROFILES (record_shapes,
with_stack, profile_memory, with_flops) x every table variant in TABLES that the configuration
allows (sort keys, row_limit, group_by_input_shape, group_by_stack_n, top_level_events_only,
max_name_column_width 10/30/80, header, time_unit, group_by_overload_name). Each profile's Chrome
trace is written gzipped beside its tables; index.json lists every table with its options.

    python3 tests/torch_oracle/gen_cpu_tables.py OUT_DIR     # needs torch (a CPU run is enough)
"""
import gzip
import inspect
import json
import os
import shutil
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, record_function

# (name, profile() keyword arguments)
PROFILES = [
    ("plain", {}),
    ("shapes", {"record_shapes": True}),
    ("shapes_mem_flops", {"record_shapes": True, "profile_memory": True, "with_flops": True}),
    ("stack", {"with_stack": True}),
    ("all", {"record_shapes": True, "with_stack": True, "profile_memory": True, "with_flops": True}),
]

SORT_KEYS = ["self_cpu_time_total", "cpu_time_total", "cpu_time", "count", "cpu_memory_usage",
             "self_cpu_memory_usage", "flops"]


def table_variants(opts):
    """(tag, key_averages kwargs, table kwargs) for one profile configuration."""
    out = [("default", {}, {})]
    for key in SORT_KEYS:
        out.append(("sort-%s-rows5" % key, {}, {"sort_by": key, "row_limit": 5}))
    out.append(("unsorted-rows3", {}, {"row_limit": 3}))
    out.append(("toplevel", {}, {"top_level_events_only": True}))
    out.append(("toplevel-sort-cpu", {}, {"sort_by": "cpu_time_total", "top_level_events_only": True}))
    for w in (10, 30, 80):
        out.append(("name%d" % w, {}, {"max_name_column_width": w}))
    out.append(("header", {}, {"header": "crossbench cpu-tables: a header line"}))
    if "time_unit" in inspect.signature(torch.autograd.profiler_util.EventList.table).parameters:
        out.append(("time-ms", {}, {"time_unit": "ms"}))
        out.append(("time-s", {}, {"time_unit": "s", "sort_by": "self_cpu_time_total"}))
    if opts.get("record_shapes"):
        out.append(("by-shape", {"group_by_input_shape": True}, {}))
        out.append(("by-shape-sort-self", {"group_by_input_shape": True}, {"sort_by": "self_cpu_time_total", "row_limit": 8}))
        out.append(("by-shape-shapes20", {"group_by_input_shape": True}, {"max_shapes_column_width": 20}))
    if opts.get("with_stack"):
        out.append(("by-stack3", {"group_by_stack_n": 3}, {}))
        out.append(("by-stack5-sort", {"group_by_stack_n": 5}, {"sort_by": "cpu_time_total", "row_limit": 10}))
        out.append(("by-stack2-src30", {"group_by_stack_n": 2}, {"max_src_column_width": 30}))
    if opts.get("record_shapes") and opts.get("with_stack"):
        out.append(("by-shape-stack2", {"group_by_input_shape": True, "group_by_stack_n": 2}, {"max_name_column_width": 30}))
    return out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = torch.nn.Linear(8 * 8 * 8, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = x.flatten(1)
        return self.fc2(torch.relu(self.fc1(x)))


def workload():
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for batch in (4, 8, 4):  # two input shapes: group_by_input_shape has several rows per name
        with record_function("train_step_with_a_rather_long_annotation_name_for_cutting"):
            x = torch.randn(batch, 3, 8, 8)
            loss = net(x).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    with record_function("matmuls"):
        a = torch.randn(32, 48)
        for n in (16, 64):
            torch.mm(a.t(), torch.randn(32, n))
        torch.add(a, a)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    index = {"torch": torch.__version__, "python": sys.version.split()[0], "tables": []}
    for pname, popts in PROFILES:
        with profile(activities=[ProfilerActivity.CPU], **popts) as prof:
            workload()
        with tempfile.TemporaryDirectory() as tmp:
            raw = os.path.join(tmp, "t.json")
            prof.export_chrome_trace(raw)
            trace = "%s.trace.json.gz" % pname
            with open(raw, "rb") as src, gzip.GzipFile(os.path.join(out_dir, trace), "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
        for tag, ka, tb in table_variants(popts):
            text = prof.key_averages(**ka).table(**tb)
            fname = "%s.%s.txt" % (pname, tag)
            with open(os.path.join(out_dir, fname), "w", encoding="utf-8") as f:
                f.write(text)
            index["tables"].append({"table": fname, "trace": trace, "profile": popts,
                                    "key_averages": ka, "table_kwargs": tb})
        if popts.get("with_stack"):
            # This CPU build records no Python stacks in key_averages (evt.stack stays empty), so
            # PyTorch never prints its Source Location column here. To have PyTorch's own
            # _build_table print one (continuation lines per frame, the blank line after each
            # row, and with with_flops the FLOPs and Source Location cells in swapped order),
            # each row gets a made-up stack of (row index % 4) frames: the FIGURES are the real
            # ones; these tables are for the reader, not for judging stacks against the trace.
            for tag, ka, tb in (("injected-stack", {}, {}),
                                ("injected-stack-src30-name30", {}, {"max_src_column_width": 30, "max_name_column_width": 30})):
                evs = prof.key_averages(**ka)
                for i, evt in enumerate(evs):
                    evt.stack = ["/work/some/long/path/to/model_file_%d.py(%d): forward_%d" % (i, 10 + k, k)
                                 for k in range(i % 4)]
                fname = "%s.%s.txt" % (pname, tag)
                with open(os.path.join(out_dir, fname), "w", encoding="utf-8") as f:
                    f.write(evs.table(**tb))
                index["tables"].append({"table": fname, "trace": trace, "profile": popts, "key_averages": ka,
                                        "table_kwargs": tb, "stack_injected": True})
    with open(os.path.join(out_dir, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%d tables from %d profiles in %s" % (len(index["tables"]), len(PROFILES), out_dir))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gen_cpu_tables.py OUT_DIR")
    main(sys.argv[1])
