"""The workload families of the PyTorch profile matrix (record.py). Each takes (torch, dev, v) where v
is the batch's variant dict, does its own warm-up outside the profile, and returns (step, settings):
step() runs one profiled iteration; settings describe it for the meta file."""

import os
import threading

# ---------------------------------------------------------------------------------------------
# Workload families. Each takes (torch, dev, v) where v is the batch's variant dict, does its own
# warm-up outside the profile, and returns (step, settings): step() runs one profiled iteration;
# settings describe it for the meta file. Sizes come from v so the holdout batch differs.
# ---------------------------------------------------------------------------------------------

def f_cnn_amp(torch, dev, v):
    nn = torch.nn
    c = v["width"]
    model = nn.Sequential(
        nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
        nn.Conv2d(c, 2 * c, 3, padding=1, stride=2), nn.BatchNorm2d(2 * c), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * c, 10)).to(dev)
    model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(v["batch"], 3, 32, 32, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (v["batch"],), device=dev)
    amp_dtype = torch.float16 if v["seed"] % 2 else torch.bfloat16

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp_dtype):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step, dict(model="conv-bn-relu x2, pool, linear; channels_last; SGD momentum",
                      amp=str(amp_dtype), grad_scaler=True, input=[v["batch"], 3, 32, 32])


def f_sdpa(torch, dev, v):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH]
    be = backends[v["seed"] % len(backends)]
    b, h, s, d = 4, 8, v["seq"], 64
    q, k, w = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))

    def step():
        with sdpa_kernel([be]):
            o = torch.nn.functional.scaled_dot_product_attention(q, k, w, is_causal=True)
        o.float().sum().backward()
    return step, dict(op="scaled_dot_product_attention fwd+bwd, causal", backend=str(be),
                      shape=[b, h, s, d], dtype="bf16")


def f_lstm(torch, dev, v):
    lstm = torch.nn.LSTM(128, v["hidden"], num_layers=2, batch_first=True).to(dev)
    x = torch.randn(8, v["seq"] // 4, 128, device=dev)

    def step():
        out, _ = lstm(x)
        out.sum().backward()
    return step, dict(model="nn.LSTM(128, %d, num_layers=2) fwd+bwd (cuDNN)" % v["hidden"],
                      input=[8, v["seq"] // 4, 128])


def f_embedding_index(torch, dev, v):
    n = v["vocab"]
    emb = torch.nn.Embedding(n, 64).to(dev)
    bag = torch.nn.EmbeddingBag(n, 64, mode="sum").to(dev)
    idx = torch.randint(0, n, (256, 16), device=dev)
    offs = torch.arange(0, 256 * 16, 16, device=dev)
    src = torch.randn(4096, 64, device=dev)

    def step():
        e = emb(idx)
        b_ = bag(idx.flatten(), offs)
        g = torch.gather(src, 0, idx[:, :1].expand(256, 64) % 4096)
        acc = torch.zeros(n, 64, device=dev).index_add_(0, idx[:, 0], b_)
        sel = torch.index_select(src, 0, idx[:, 0] % 4096)
        nz = torch.nonzero(acc.sum(1) > 0)  # synchronizes
        (e.sum() + g.sum() + sel.sum() + nz.numel()).backward() if e.requires_grad else None
        return acc
    return step, dict(ops="Embedding, EmbeddingBag(sum), gather, index_add_, index_select, "
                          "nonzero (a device-to-host sync)", vocab=n)


def f_optimizer(torch, dev, v):
    kind = ["foreach", "fused", "for_loop"][v["seed"] % 3]
    params = [torch.nn.Parameter(torch.randn(64 + 8 * i, 64, device=dev)) for i in range(12)]
    opt = torch.optim.Adam(params, lr=1e-3, foreach=(kind == "foreach"),
                           fused=(kind == "fused") or None)
    sgd = torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=(kind != "for_loop"))

    def step():
        for p in params:
            p.grad = torch.randn_like(p)
        opt.step()
        sgd.step()
    return step, dict(optimizer="Adam + SGD(momentum) over 12 parameters", implementation=kind)


def _compiled(torch, dev, v, mode):
    def f(x, w):
        return torch.nn.functional.gelu(x @ w) * torch.sigmoid(x[:, : w.shape[1]]) + 1.0
    n = v["mm"]
    x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    cf = torch.compile(f, mode=mode) if mode else torch.compile(f)
    for _ in range(3):  # compile (and cudagraph-tree warm-up) outside the profile
        cf(x, w)
    torch.cuda.synchronize()

    def step():
        return cf(x, w)
    return step, dict(function="gelu(x @ w) * sigmoid(x) + 1", n=n, dtype="bf16",
                      compile="torch.compile(mode=%r), 3 calls before the profile" % mode)


def f_compile_default(torch, dev, v):
    return _compiled(torch, dev, v, None)


def f_compile_reduce_overhead(torch, dev, v):
    return _compiled(torch, dev, v, "reduce-overhead")


def f_compile_max_autotune(torch, dev, v):
    return _compiled(torch, dev, v, "max-autotune-no-cudagraphs")


def f_cuda_graph(torch, dev, v):
    from torch.profiler import record_function
    n = v["mm"]
    x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)

    def body():
        return torch.relu(x @ w) + 1.0
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            body()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    g.replay()

    def step():
        with record_function("matrix.graph_replay"):
            g.replay()
        torch.add(x, 1.0)
    return step, dict(graph="relu(x @ w) + 1 captured by hand, replayed under record_function",
                      n=n)


def f_multi_stream(torch, dev, v):
    n = v["mm"]
    s = [torch.cuda.Stream() for _ in range(3)]
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    host = torch.randn(n, n, pin_memory=True)
    done = torch.cuda.Event()

    def step():
        with torch.cuda.stream(s[0]):
            c = a @ a
            done.record()
        with torch.cuda.stream(s[1]):
            d = host.to(dev, non_blocking=True)
        with torch.cuda.stream(s[2]):
            s[2].wait_event(done)
            e = c.float() + 1.0
        torch.cuda.current_stream().wait_stream(s[1])
        torch.cuda.current_stream().wait_stream(s[2])
        return d.sum() + e.sum()
    return step, dict(streams=3, ops="matmul on s0, pinned H2D copy on s1, add on s2 after s0's "
                                     "event", n=n)


def f_threads(torch, dev, v):
    n = v["mm"]
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)

    def worker(k):
        st = torch.cuda.Stream()
        with torch.cuda.stream(st):
            for _ in range(2):
                b = a @ a
                b = b * float(k + 1)
        st.synchronize()

    def step():
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return step, dict(threads=2, ops="each thread: 2 x (matmul, mul) on its own stream", n=n)


class _Squares:
    def __init__(self, torch, n):
        self.torch, self.n = torch, n

    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = self.torch.Generator().manual_seed(i)
        return self.torch.randn(self.n, generator=g), i % 10


def f_dataloader(torch, dev, v):
    dl = torch.utils.data.DataLoader(_Squares(torch, 256), batch_size=16, num_workers=2,
                                     pin_memory=True, persistent_workers=True)
    lin = torch.nn.Linear(256, 10).to(dev)
    it = {"it": iter(dl)}

    def step():
        try:
            x, y = next(it["it"])
        except StopIteration:
            it["it"] = iter(dl)
            x, y = next(it["it"])
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        torch.nn.functional.cross_entropy(lin(x), y).backward()
    step()
    return step, dict(loader="DataLoader(num_workers=2, pin_memory=True, persistent_workers)",
                      model="Linear(256, 10)")


def f_collectives(torch, dev, v):
    import torch.distributed as dist
    backend = "nccl" if v["seed"] % 2 == 0 else "gloo"
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + v["seed"] % 100))
        dist.init_process_group(backend, rank=0, world_size=1)
    t = torch.randn(1 << 16, device=dev if backend == "nccl" else "cpu")

    def step():
        dist.all_reduce(t)
        dist.broadcast(t, 0)
        if backend == "gloo":
            t.to(dev).mul_(0.5)
        else:
            t.mul_(0.5)
    step()
    torch.cuda.synchronize()
    return step, dict(collective="one-rank %s process group: all_reduce, broadcast" % backend)


def f_transformer_train(torch, dev, v):
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                             dropout=0.1, batch_first=True).to(dev)
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
    src = torch.randn(8, v["seq"] // 4, 256, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        layer(src).pow(2).mean().backward()
        opt.step()
    return step, dict(model="TransformerEncoderLayer(256, 4, 1024) + AdamW, fp32",
                      input=[8, v["seq"] // 4, 256])


def f_memset_copy(torch, dev, v):
    n = v["mm"]
    host = torch.randn(n, n)

    def step():
        z = torch.zeros(n, n, device=dev)          # cudaMemsetAsync
        z.fill_(1.5)
        d = host.to(dev)                             # H2D, pageable
        r = (d + z).cpu()                            # D2H, synchronizes
        return float(r[0, 0]) + (d.sum().item())     # .item(): another sync
    return step, dict(ops="zeros (memset), fill_, pageable H2D, D2H, .item()", n=n)


def f_mixed_fp16(torch, dev, v):
    b = torch.randn(16, v["seq"] // 4, 64, device=dev, dtype=torch.float16)
    w = torch.randn(16, 64, 64, device=dev, dtype=torch.float16)
    conv = torch.nn.Conv1d(64, 64, 5, padding=2).to(dev).half()
    ln = torch.nn.LayerNorm(64).to(dev).half()
    tgt = torch.randint(0, 64, (16 * (v["seq"] // 4),), device=dev)

    def step():
        y = torch.baddbmm(b, b, w)
        y = conv(y.transpose(1, 2)).transpose(1, 2)
        y = torch.softmax(ln(y), -1)
        return torch.nn.functional.cross_entropy(y.reshape(-1, 64).float(), tgt)
    return step, dict(ops="baddbmm, conv1d, layer_norm, softmax, cross_entropy; fp16")


def f_nested_ranges(torch, dev, v):
    from torch.profiler import record_function
    a = torch.randn(v["mm"], v["mm"], device=dev, dtype=torch.bfloat16)
    long_name = ("matrix.a_range_name_long_enough_to_be_cut_by_the_table_" + "x" * 30)

    def step():
        with record_function("matrix.outer"):
            with record_function("matrix.outer"):
                a @ a
            with record_function(long_name + "_one"):
                torch.add(a, 1.0)
            with record_function(long_name + "_two"):
                torch.mul(a, 2.0)
    return step, dict(ranges="same-name nesting and two names with one 52-character prefix")


def f_unicode_long_names(torch, dev, v):
    from torch.profiler import record_function
    a = torch.randn(v["mm"], v["mm"], device=dev, dtype=torch.bfloat16)
    # Non-ASCII names (Kineto writes some of them as "unknown") and a name far wider than any
    # name column (200 characters).
    names = ["matrix.\u0441\u043b\u043e\u0439_\u0432\u043d\u0438\u043c\u0430\u043d\u0438\u044f",
             "matrix.\u6ce8\u610f\u529b\u5c42", "matrix.caf\u00e9_r\u00e9sum\u00e9",
             "matrix.emoji_\U0001f680", "matrix." + "very_long_range_name_" * 9 + "end"]

    def step():
        for k, n in enumerate(names):
            with record_function(n):
                torch.add(a, float(k)) if k % 2 else a @ a
    return step, dict(ranges="non-ASCII record_function names (Cyrillic, CJK, Latin-1, emoji) and "
                             "one of 200 characters", names=names)


def f_triton_direct(torch, dev, v):
    import triton
    import triton.language as tl
    from torch.profiler import record_function

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(y_ptr + i, tl.load(x_ptr + i, mask=m) * 2.0 + 1.0, mask=m)
    n = v["mm"] * v["mm"]
    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    scale_kernel[grid](x, y, n, BLOCK=1024)  # compile outside the profile

    def step():
        with record_function("matrix.triton_direct"):
            scale_kernel[grid](x, y, n, BLOCK=1024)  # a driver-API launch without an External id
        with record_function("matrix.torch_then_triton"):
            z = x + 1.0
            scale_kernel[grid](z, y, n, BLOCK=1024)
    return step, dict(kernels="a @triton.jit kernel launched directly (cuLaunchKernel, no op around "
                              "it) inside record_function, alone and after an aten op", n=n)


def f_driver_api(torch, dev, v):
    """A kernel launched through the CUDA driver API by ctypes (cuModuleLoadData + cuLaunchKernel on
    PTX), as a user's extension without PyTorch ops would: no External id."""
    import ctypes
    from torch.profiler import record_function
    cuda = ctypes.CDLL("libcuda.so.1")
    ptx = b"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry twice(.param .u64 p, .param .u32 n) {
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<3>; .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4; setp.ge.u32 %p1, %r5, %r1; @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r5, 4; add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4]; add.f32 %f2, %f1, %f1; st.global.f32 [%rd4], %f2;
DONE: ret; }
"""
    n = v["mm"] * v["mm"]
    x = torch.randn(n, device=dev)  # makes the runtime's primary context current on this thread
    torch.cuda.synchronize()
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()

    def ok(rc, what):
        if rc != 0:
            raise RuntimeError("%s failed: CUresult %d" % (what, rc))
    ok(cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)), "cuModuleLoadData")
    ok(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"twice"), "cuModuleGetFunction")
    p_arg, n_arg = ctypes.c_uint64(x.data_ptr()), ctypes.c_uint32(n)
    args = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(p_arg), ctypes.c_void_p),
                                 ctypes.cast(ctypes.byref(n_arg), ctypes.c_void_p))
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def launch():
        ok(cuda.cuLaunchKernel(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, args, None),
           "cuLaunchKernel")

    def step():
        with record_function("matrix.driver_launch"):
            launch()
        torch.mul(x, 0.5, out=x)
    return step, dict(kernels="a PTX kernel launched with cuLaunchKernel through ctypes inside "
                              "record_function, then torch.mul", n=n)


FAMILIES = {
    "cnn_amp": f_cnn_amp, "sdpa": f_sdpa, "lstm": f_lstm, "embedding_index": f_embedding_index,
    "optimizer": f_optimizer, "compile_default": f_compile_default,
    "compile_reduce_overhead": f_compile_reduce_overhead,
    "compile_max_autotune": f_compile_max_autotune, "cuda_graph": f_cuda_graph,
    "multi_stream": f_multi_stream, "threads": f_threads, "dataloader": f_dataloader,
    "collectives": f_collectives, "transformer_train": f_transformer_train,
    "memset_copy": f_memset_copy, "mixed_fp16": f_mixed_fp16, "nested_ranges": f_nested_ranges,
    "unicode_long_names": f_unicode_long_names, "triton_direct": f_triton_direct,
    "driver_api": f_driver_api,
}
