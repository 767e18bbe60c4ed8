"""A stand-in for torch and libxb_add_shim.so, just enough for tools/lab/add_vs_torch.py's main() to
run on a CPU (tests/cpu/test_add_vs_torch.py): tensors are Python lists, a CUDA graph records the
calls made while it captures and replays them, and every add run while a profiler session is open
leaves a kernel record (CUPTI's demangled names) that export_chrome_trace writes as PyTorch does.

install() puts the fake into sys.modules as torch and torch.profiler; FakeShim replaces
add_vs_torch.Shim. torch.cuda.profiler.start()/stop() (cudaProfilerStart/Stop, as ncu's
--profile-from-start off sees them) collect the kernels run between them in State.ranges. Knobs for the failure tests: FakeShim.wrong_config (that configuration adds
one too much) and FakeShim.escape_capture (our launches run at once instead of being captured, as
a launch on another stream would); for --swap-outputs, State.slow_second_output: every second
tensor empty_like makes (a point's buffer B) takes that factor longer to write, whichever side
writes it.
"""
import json
import sys
import types

OURS = "void xb::(anonymous namespace)::add_flat_kernel<__nv_bfloat16, (xb::AddCachePolicy)0>(const T1 *, const T1 *, T1 *, int)"
THEIRS = "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>>(int, T2, T3)"


class State:
    capturing = None   # the FakeGraph being captured
    profiling = None   # the open FakeProfile's records
    clock_us = 1000.0
    tensors = {}       # data_ptr -> tensor
    launches = 0
    slow_second_output = 1.0  # write-time factor of every second empty_like tensor
    made = 0           # tensors empty_like has made
    write_factor = {}  # data_ptr -> write-time factor
    ranges = []        # per torch.cuda.profiler.start()/stop() range: its kernel records
    grid_caps = set()  # the max_blocks argument of every FakeShim launch
    residency_caps = set()  # the blocks_per_sm argument of every FakeShim launch


def run_kernel(name, dur_us, fn):
    fn()
    State.launches += 1
    if State.profiling is not None:
        State.profiling.append({"ph": "X", "cat": "kernel", "name": name, "ts": State.clock_us, "dur": dur_us})
    State.clock_us += dur_us + 2.0


class Tensor:
    def __init__(self, vals, dtype):
        self.vals, self.dtype = list(vals), dtype
        State.tensors[id(self)] = self

    def data_ptr(self):
        return id(self)

    def __mul__(self, k):
        return Tensor([v * k for v in self.vals], self.dtype)

    def __sub__(self, k):
        return Tensor([v - k for v in self.vals], self.dtype)

    def to(self, dtype):
        return Tensor(self.vals, dtype)

    def view(self, dtype):
        return self

    def fill_(self, x):
        self.vals = [("poison", x)] * len(self.vals)
        return self

    def __ne__(self, other):
        return Count(sum(1 for x, y in zip(self.vals, other.vals) if x != y))

    def __hash__(self):
        return id(self)


class Count:
    def __init__(self, k):
        self.k = k

    def sum(self):
        return self

    def item(self):
        return self.k


class FakeGraph:
    def __init__(self):
        self.ops = []

    def replay(self):
        for op in self.ops:
            op()


class _Ctx:
    def __init__(self, enter=None, exit_=None):
        self.enter, self.exit_ = enter, exit_

    def __enter__(self):
        if self.enter:
            self.enter()
        return self

    def __exit__(self, *a):
        if self.exit_:
            self.exit_()
        return False


def graph(g, stream=None):
    def enter():
        State.capturing = g

    def leave():
        State.capturing = None
    return _Ctx(enter, leave)


def empty_like(t):
    out = Tensor([0.0] * len(t.vals), t.dtype)
    State.made += 1
    if State.made % 2 == 0:
        State.write_factor[id(out)] = State.slow_second_output
    return out


def add(a, b, out):
    def op():
        run_kernel(THEIRS, 1.0 * State.write_factor.get(id(out), 1.0), lambda: setattr(out, "vals", [x + y for x, y in zip(a.vals, b.vals)]))
    if State.capturing is not None:
        State.capturing.ops.append(op)
    else:
        op()


class FakeProfile:
    def __init__(self, activities=None):
        self.records = []

    def __enter__(self):
        State.profiling = self.records
        return self

    def __exit__(self, *a):
        State.profiling = None
        return False

    def export_chrome_trace(self, path):
        with open(path, "w") as f:
            json.dump({"traceEvents": self.records}, f)


class Stream:
    cuda_stream = 0x5000


def cuda_profiler_start():
    State.ranges.append([])
    State.profiling = State.ranges[-1]


def cuda_profiler_stop():
    State.profiling = None


def install():
    torch = types.ModuleType("torch")
    torch.__version__ = "2.11.0+fake"
    torch.version = types.SimpleNamespace(cuda="13.0")
    torch.bfloat16, torch.float16, torch.float32, torch.int16, torch.int32 = "bf16", "fp16", "fp32", "i16", "i32"
    seed = [0]

    def rand(shape, dtype=None, device=None):
        n = shape[0] * shape[1] if len(shape) == 2 else shape[0]
        seed[0] += 1
        return Tensor([((i * 7 + seed[0] * 13) % 17) / 17.0 for i in range(n)], dtype)
    torch.rand = rand
    torch.empty_like = empty_like
    torch.add = add
    torch.manual_seed = lambda s: None
    cuda = types.SimpleNamespace(
        is_available=lambda: True, mem_get_info=lambda: (1 << 40, 1 << 40), Stream=Stream,
        stream=lambda s: _Ctx(), synchronize=lambda: None, CUDAGraph=FakeGraph, graph=graph,
        clock_rate=lambda: 1980, get_device_name=lambda: "Fake H200", current_stream=Stream,
        profiler=types.SimpleNamespace(start=cuda_profiler_start, stop=cuda_profiler_stop))
    torch.cuda = cuda
    profiler = types.ModuleType("torch.profiler")
    profiler.ProfilerActivity = types.SimpleNamespace(CPU="cpu", CUDA="cuda")
    profiler.profile = FakeProfile
    torch.profiler = profiler
    sys.modules["torch"] = torch
    sys.modules["torch.profiler"] = profiler


class FakeShim:
    """add_vs_torch.Shim's interface over the fake tensors."""
    wrong_config = None
    escape_capture = False
    CODES = {"bf16": 0, "fp16": 1, "fp32": 2}

    def __init__(self, path):
        self.by_tvp = {}

        def launch(code, pa, pb, pc, count, sp, t, v, p, k, r, g):
            a, b, out = State.tensors[pa], State.tensors[pb], State.tensors[pc]
            State.grid_caps.add(g)
            State.residency_caps.add(r)
            wrong = FakeShim.wrong_config is not None and self.by_tvp.get((t, v, p, k, r, g)) == FakeShim.wrong_config
            extra = 1.0 if wrong else 0.0

            def op():
                run_kernel(OURS, 0.9 * State.write_factor.get(pc, 1.0), lambda: setattr(out, "vals", [x + y + extra for x, y in zip(a.vals, b.vals)]))
            if State.capturing is not None and not FakeShim.escape_capture:
                State.capturing.ops.append(op)
            else:
                op()
            return 0
        self.launch = launch

    def error(self, rc):
        return f"error {rc}"

    def dtype(self, name):
        return self.CODES[name]

    def parse(self, name):
        import add_vs_torch
        base, blocks = add_vs_torch.split_grid_cap(name)
        v, t, _, *lean = base.split("/")
        cap = int(lean[1][1:]) if len(lean) == 2 else 0  # ".../lean/rN"
        tvpk = (int(t[1:]), int(v[1:]), 1, 2 if lean[:1] == ["lean"] else 1, cap, blocks)
        self.by_tvp[tvpk] = name
        return tvpk

    def config_name(self, dtype_code, count, tvpk):
        return "v1/t256/default"
