#!/usr/bin/env python3
"""Real library kernels for drgpu's speed-of-light tests: cuBLAS/cuBLASLt GEMMs, cuDNN
attention and convolution, PyTorch elementwise, softmax, layernorm and reduction kernels, and
a Triton kernel made by torch.compile.

Each case knows its own work from its problem size (FLOPs for compute kernels, the bytes a
kernel must at least move for memory kernels), so the achieved TFLOP/s or TB/s recorded in
the manifest is computed here, independently of drgpu and of ncu's counters.

Usage (on a GPU machine with PyTorch):
  workload.py time OUT.json      time every case with CUDA events (median of 20 after warm-up)
  workload.py profile [CASE ...] warm up, then run each case once between
                                 cudaProfilerStart/Stop, inside an NVTX range named after it
                                 (profile with ncu --profile-from-start off)
  workload.py step               one inference step of a small model (bf16 transformer
                                 encoder layer, fp16 conv+batchnorm+relu, softmax and layernorm
                                 on a large tensor, a torch.compile'd function) between
                                 cudaProfilerStart/Stop, after two warm-up steps
  workload.py list               the cases and their work
"""

from __future__ import annotations

import json
import statistics
import sys

import torch
import torch.nn.functional as F

dev = "cuda"
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def _gemm(m, n, k, dtype, tf32=False):
    a = torch.randn(m, k, device=dev).to(dtype)
    b = torch.randn(k, n, device=dev).to(dtype)

    def run():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        r = a @ b
        torch.backends.cuda.matmul.allow_tf32 = False
        return r

    size = a.element_size()
    return run, 2.0 * m * n * k, float(size * (m * k + k * n + m * n))


def _gemm_fp8(m, n, k):
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major B, as _scaled_mm needs
    one = torch.tensor(1.0, device=dev)

    def run():
        return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    return run, 2.0 * m * n * k, float(m * k + k * n + 2 * m * n)


def _sdpa(b, h, s, d, causal=False):
    q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16) for _ in range(3))

    def run():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    return run, flops, float(4 * b * h * s * d * 2)


def _conv(n, c, hw, k, r):
    x = torch.randn(n, c, hw, hw, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
    w = torch.randn(k, c, r, r, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)

    def run():
        return F.conv2d(x, w, padding=r // 2)

    return run, 2.0 * n * k * hw * hw * c * r * r, float(2 * (n * c * hw * hw + k * c * r * r + n * k * hw * hw))


def _elementwise(n):
    x, y, z = (torch.randn(n, device=dev) for _ in range(3))

    def run():
        return torch.addcmul(z, x, y)

    return run, 2.0 * n, float(4 * 4 * n)


def _softmax(rows, cols):
    x = torch.randn(rows, cols, device=dev)

    def run():
        return torch.softmax(x, dim=-1)

    return run, 0.0, float(2 * 4 * rows * cols)


def _layernorm(rows, cols):
    x = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
    ln = torch.nn.LayerNorm(cols, device=dev, dtype=torch.bfloat16)

    def run():
        with torch.no_grad():
            return ln(x)

    return run, 0.0, float(2 * 2 * rows * cols)


def _reduction(n):
    x = torch.randn(n, device=dev)

    def run():
        return x.sum()

    return run, float(n), float(4 * n)


def _triton(n):
    x, y = (torch.randn(n, device=dev) for _ in range(2))

    @torch.compile
    def fused(a, b):
        return torch.nn.functional.gelu(a) * b + a

    def run():
        return fused(x, y)

    return run, 0.0, float(3 * 4 * n)


def _tiny(n):
    x = torch.randn(n, device=dev)

    def run():
        return x * 2.0

    return run, float(n), float(2 * 4 * n)


CASES = {
    # name: (builder, kind) -- kind says which figure is the kernel's own measure of work
    "gemm_bf16_8192": (lambda: _gemm(8192, 8192, 8192, torch.bfloat16), "tensor"),
    "gemm_bf16_4096": (lambda: _gemm(4096, 4096, 4096, torch.bfloat16), "tensor"),
    "gemm_fp16_2048": (lambda: _gemm(2048, 2048, 2048, torch.float16), "tensor"),
    "gemm_bf16_512": (lambda: _gemm(512, 512, 512, torch.bfloat16), "tensor"),
    "gemm_tf32_4096": (lambda: _gemm(4096, 4096, 4096, torch.float32, tf32=True), "tensor"),
    "gemm_fp32_4096": (lambda: _gemm(4096, 4096, 4096, torch.float32), "fp32"),
    "gemm_fp8_4096": (lambda: _gemm_fp8(4096, 4096, 4096), "tensor"),
    "gemm_bf16_skinny": (lambda: _gemm(16, 8192, 8192, torch.bfloat16), "memory"),
    "sdpa_bf16": (lambda: _sdpa(4, 16, 4096, 128), "tensor"),
    "conv_fp16": (lambda: _conv(32, 256, 56, 256, 3), "tensor"),
    "elementwise_fp32": (lambda: _elementwise(1 << 26), "memory"),
    "softmax_fp32": (lambda: _softmax(8192, 8192), "memory"),
    "layernorm_bf16": (lambda: _layernorm(16384, 4096), "memory"),
    "reduction_fp32": (lambda: _reduction(1 << 28), "memory"),
    "triton_gelu": (lambda: _triton(1 << 26), "memory"),
    "tiny_scale": (lambda: _tiny(4096), "memory"),
}


def build(names):
    out = {}
    for name in names:
        builder, kind = CASES[name]
        try:
            fn, flops, nbytes = builder()
            fn()
        except Exception as e:  # noqa: BLE001 - e.g. fp8 on a GPU without it
            print(f"skip {name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        out[name] = (fn, flops, nbytes, kind)
    torch.cuda.synchronize()
    return out


def time_cases(path):
    built = build(CASES)
    rows = {}
    for name, (fn, flops, nbytes, kind) in built.items():
        for _ in range(5):
            fn()
        times = []
        for _ in range(20):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e3)
        us = statistics.median(times)
        rows[name] = {
            "kind": kind,
            "flops": flops,
            "min_bytes": nbytes,
            "median_us": round(us, 3),
            "tflops": round(flops / us / 1e6, 2) if flops else None,
            "tbytes_per_s": round(nbytes / us / 1e6, 3),
        }
        print(name, rows[name])
    meta = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
    }
    with open(path, "w") as fh:
        json.dump({"meta": meta, "cases": rows}, fh, indent=1)


def profile(names):
    built = build(names or CASES)
    for fn, *_ in built.values():
        fn()
        fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for name, (fn, *_rest) in built.items():
        torch.cuda.nvtx.range_push(name)
        fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    torch.cuda.profiler.stop()


def model_step():
    layer = torch.nn.TransformerEncoderLayer(
        d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True, device=dev, dtype=torch.bfloat16
    ).eval()
    x = torch.randn(8, 512, 1024, device=dev, dtype=torch.bfloat16)
    block = (
        torch.nn.Sequential(torch.nn.Conv2d(64, 128, 3, padding=1), torch.nn.BatchNorm2d(128), torch.nn.ReLU())
        .to(dev, torch.float16)
        .to(memory_format=torch.channels_last)
        .eval()
    )
    img = torch.randn(16, 64, 112, 112, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
    big = torch.randn(8192, 4096, device=dev)
    ln = torch.nn.LayerNorm(4096, device=dev)
    fused = torch.compile(lambda a, b: torch.nn.functional.silu(a) * b + 1.0)

    def run():
        with torch.no_grad():
            layer(x)
            block(img)
            torch.softmax(big, dim=-1)
            ln(big)
            fused(big, big)

    run()
    run()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    run()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "list"
    if cmd == "time":
        time_cases(sys.argv[2])
    elif cmd == "profile":
        profile(sys.argv[2:])
    elif cmd == "step":
        model_step()
    else:
        for n, (_, kind) in CASES.items():
            print(n, kind)
